#!/bin/sh
# kernel/boot.sh VARIANT CPUS NODES MODE TORTURE SECS LOG [EXTRA_CMDLINE]
# Boot build-kernel/img-VARIANT's bzImage in qemu (TCG: nested KVM hangs on
# these machines) with CPUS vCPUs spread evenly over NODES NUMA nodes, the busybox
# initramfs, numa_spinlock=MODE; its /init runs locktorture
# (torture_type=TORTURE) for SECS seconds; the serial console goes to LOG. A timeout (SECS + boot
# allowance) kills a hung guest. Exit status: qemu's (124 on timeout).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
KBUILD=${KBUILD:-$(dirname "$HERE")/build-kernel}
variant=$1 CPUS=$2 nodes=$3 mode=$4 torture=$5 secs=$6 log=$7
extra=${8:-}
MEM_PER_NODE=${KERNEL_MEM_PER_NODE:-$((512 / nodes))}
# boot (lockdep makes it slower under TCG) + torture + shutdown
case $variant in debug) allow=${KERNEL_BOOT_ALLOW:-240};; *) allow=${KERNEL_BOOT_ALLOW:-120};; esac
img=$KBUILD/img-$variant/bzImage
[ -f "$img" ] || { echo "kernel: no $img (make kernel first)" >&2; exit 2; }
[ $((CPUS % nodes)) -eq 0 ] || { echo "kernel: $CPUS cpus do not split over $nodes nodes" >&2; exit 2; }

per=$((CPUS / nodes))
numa=""
i=0
while [ $i -lt "$nodes" ]; do
    first=$((i * per)) last=$((i * per + per - 1))
    numa="$numa -object memory-backend-ram,id=m$i,size=${MEM_PER_NODE}M"
    numa="$numa -numa node,nodeid=$i,cpus=$first-$last,memdev=m$i"
    i=$((i + 1))
done

cmdline="console=ttyS0 panic=-1 oops=panic loglevel=7 tsc=reliable numa_spinlock=$mode"
cmdline="$cmdline nltest_torture=$torture nltest_secs=$secs $extra"

# shellcheck disable=SC2086
exec timeout -k 10 $((secs + allow)) ${NICE:-nice -n 19} qemu-system-x86_64 \
    -accel tcg,thread=multi -m $((MEM_PER_NODE * nodes))M -smp $CPUS $numa \
    -kernel "$img" -initrd "$KBUILD/img-$variant/initramfs.cpio.gz" -append "$cmdline" \
    -display none -monitor none -serial "file:$log" -no-reboot

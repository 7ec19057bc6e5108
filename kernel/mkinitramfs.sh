#!/bin/sh
# kernel/mkinitramfs.sh OUT.cpio.gz [MODULE.ko ...]: a busybox initramfs whose
# /init is kernel/init, with the given modules in /lib/modules (loaded by
# /init in the order given). Built with the kernel's own usr/gen_init_cpio
# (device nodes without root); rebuilt only when an input is newer.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=$1
shift
KBUILD=${KBUILD:?set by build.sh}
SRC=$KBUILD/src
BB=$(command -v busybox) || { echo "kernel: no busybox (apt-get install busybox-static)" >&2; exit 1; }
fresh=1
[ -f "$OUT" ] || fresh=0
for f in "$HERE/init" "$BB" "$0" "$@"; do
    [ -f "$f" ] || { echo "kernel: initramfs input $f missing" >&2; exit 1; }
    [ "$fresh" = 1 ] && [ "$f" -nt "$OUT" ] && fresh=0
done
[ "$fresh" = 1 ] && exit 0
GEN=$KBUILD/gen_init_cpio
if [ ! -x "$GEN" ] || [ "$SRC/usr/gen_init_cpio.c" -nt "$GEN" ]; then
    gcc -O2 -o "$GEN" "$SRC/usr/gen_init_cpio.c"
fi
list=$OUT.list
{
    echo "dir /dev 0755 0 0"
    echo "nod /dev/console 0600 0 0 c 5 1"
    echo "nod /dev/null 0666 0 0 c 1 3"
    for d in /bin /proc /sys /tmp /lib /lib/modules; do echo "dir $d 0755 0 0"; done
    echo "file /bin/busybox $BB 0755 0 0"
    for a in sh mount cat echo sleep grep sed dmesg poweroff insmod rmmod lsmod ls date; do
        echo "slink /bin/$a /bin/busybox 0777 0 0"
    done
    i=0
    for m in "$@"; do
        i=$((i + 1))
        echo "file /lib/modules/$i-$(basename "$m") $m 0644 0 0"
    done
    echo "file /init $HERE/init 0755 0 0"
} >"$list"
"$GEN" "$list" | gzip -9 >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "kernel: initramfs $OUT"

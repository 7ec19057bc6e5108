#!/bin/bash
# `make numa-test`: real NUMA nodes on a one-node machine.
# Builds an initramfs holding the project's binaries and the libraries they
# need, boots Debian's cloud kernel in qemu (TCG) as a 2-node (2+2 CPUs) and a
# 4-node (1 CPU each) guest, runs tests/numa/guest.sh inside, and returns the
# guest's exit status; a third guest (levels) has 2 sockets of 4 cores and 2
# nodes per socket (as sub-NUMA clustering), and checks only the topology
# and its levels: node (4) below package (2), the L3 being the socket's. Then it boots the 2-node guest once more, telling it to
# expect 3 nodes: that run must fail, and say why (the checks can fail).
# The quota guest (the 2-node machine) runs kvmap with every queue lock in a
# cgroup v2 group limited to half of one CPU (cpu.max), against pthread.
# Timings inside the guest mean nothing (TCG): behaviour only.
# A guest's console (firmware, kernel, checks) goes to its log,
# build/numa-test/guest-NAME.log; the terminal gets one line per guest, and
# for a guest that failed the log's tail without terminal control sequences.
#
# usage: scripts/numa-test.sh [--build DIR] [--quick] [--guests 2,4,levels,quota] [--no-selfcheck] [--expect-nodes N]
#   --quick: of the C tests only the stress harness at 4 threads, in the 2-node
#            guest, and no quota guest (what `make test` runs); else every C test in the 2-node
#            guest (up to 300 s each under TCG) and the stress harness in the
#            4-node one
# Environment: NUMA_TEST_TIMEOUT (seconds per guest, 1800), NUMA_TEST_BOOT_TIMEOUT
# (seconds from qemu's start to the guest's first line, 120: a guest that
# boots neither then nor at a second boot fails), NUMA_TEST_TEST_TIMEOUT
# (per C test in the guest).
# Exit: 0 passed, 1 failed, 77 skipped (qemu, busybox or the kernel cannot be had:
# "numa-test skipped: <why>").
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build
GUESTS=""
SELFCHECK=1
QUICK=0
EXPECT=""
TIMEOUT=${NUMA_TEST_TIMEOUT:-1800}  # per guest
BOOT_TIMEOUT=${NUMA_TEST_BOOT_TIMEOUT:-120}  # from qemu's start to the guest's first line
TEST_TIMEOUT=${NUMA_TEST_TEST_TIMEOUT:-}  # per C test inside the guest (default below)
while [ $# -gt 0 ]; do
    case "$1" in
        --build) BUILD=$(cd "$2" && pwd) || exit 2; shift 2 ;;
        --guests) GUESTS=$2; shift 2 ;;
        --no-selfcheck) SELFCHECK=0; shift ;;
        --quick) QUICK=1; shift ;;
        --expect-nodes) EXPECT=$2; shift 2 ;;
        *) echo "numa-test: unknown option '$1': valid options are --build DIR, --quick, --guests 2,4,levels,quota, --no-selfcheck, --expect-nodes N" >&2; exit 2 ;;
    esac
done
# the quick run (make test) leaves the quota guest out (minutes under TCG)
[ -z "$GUESTS" ] && { [ $QUICK = 1 ] && GUESTS=2,4,levels || GUESTS=2,4,levels,quota; }
[ -z "$TEST_TIMEOUT" ] && { [ $QUICK = 1 ] && TEST_TIMEOUT=60 || TEST_TIMEOUT=300; }
for g in ${GUESTS//,/ }; do
    case "$g" in 2|4|levels|quota) ;; *) echo "numa-test: unknown guest '$g' in --guests: valid choices are 2, 4, levels, quota" >&2; exit 2 ;; esac
done
skip() { echo "numa-test skipped: $*"; exit 77; }

QEMU=$(command -v qemu-system-x86_64) || skip "qemu-system-x86_64 is not installed (apt-get install qemu-system-x86; make deps does it)"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && "$BUSYBOX" --list >/dev/null 2>&1 && ! ldd "$BUSYBOX" >/dev/null 2>&1 ||
    skip "no static busybox (apt-get install busybox-static; make deps does it)"
command -v cpio >/dev/null || skip "cpio is not installed"
[ -x "$BUILD/bin/numalock" ] || { echo "numa-test: no build in $BUILD (run make build first)" >&2; exit 2; }

WORK=$BUILD/numa-test
mkdir -p "$WORK"

# ---- the guest kernel: Debian's cloud kernel, downloaded, not installed ----
KERNEL=$(ls "$WORK"/boot/vmlinuz-* 2>/dev/null | head -1)
if [ -z "$KERNEL" ]; then
    pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | sed -n 's/.*Depends: \(linux-image-[^ ]*\)/\1/p' | head -1)
    [ -n "$pkg" ] || skip "apt does not know linux-image-cloud-amd64 (no Debian package lists?)"
    (cd "$WORK" && apt-get download "$pkg" >/dev/null 2>&1) || skip "cannot download $pkg with apt-get download"
    deb=$(ls "$WORK"/"$pkg"_*.deb | head -1)
    (cd "$WORK" && dpkg-deb --fsys-tarfile "$deb" | tar -x --wildcards './boot/vmlinuz-*') ||
        skip "cannot unpack $deb"
    rm -f "$deb"
    KERNEL=$(ls "$WORK"/boot/vmlinuz-* | head -1)
fi

# ---- the initramfs -----------------------------------------------------------
R=$WORK/root
rm -rf "$R"
mkdir -p "$R"/bin "$R"/nl/bin "$R"/nl/lib "$R"/proc "$R"/sys "$R"/dev "$R"/tmp
cp "$BUSYBOX" "$R"/bin/busybox
cp "$ROOT"/tests/numa/init "$R"/init
cp "$ROOT"/tests/numa/guest.sh "$R"/nl/guest.sh
chmod +x "$R"/init
for f in "$BUILD"/bin/*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    strip --strip-debug -o "$R/nl/bin/$(basename "$f")" "$f" 2>/dev/null || cp "$f" "$R/nl/bin/"
done
for f in "$BUILD"/lib/*.so*; do
    [ -f "$f" ] && cp -L "$f" "$R/nl/lib/"
done
# the libraries they load, at the paths the dynamic linker looks for them
for f in "$R"/nl/bin/* "$R"/nl/lib/*.so*; do
    ldd "$f" 2>/dev/null | grep -o '/[^ ]*' || true
done | sort -u | while read -r lib; do
    [ -e "$lib" ] || continue
    mkdir -p "$R$(dirname "$lib")"
    cp -L "$lib" "$R$lib"
done
# the C tests, as CTest runs them: --topology auto only, fewer operations and
# threads (TCG is slow), "NAME|EXPECT|COMMAND": EXPECT 0 (must pass), 1 (must
# fail) or re:REGEX (its output must match: a broken variant failing for its
# own reason)
(cd "$BUILD" && ctest --show-only=json-v1) | python3 -c '
import json, os, sys
doc = json.load(sys.stdin)
bindir = sys.argv[1]
for t in doc["tests"]:
    cmd = t.get("command") or []
    if not cmd or os.path.dirname(cmd[0]) != bindir or os.path.basename(cmd[0]) == "numalock":
        continue
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    env = " ".join(props.get("ENVIRONMENT", []) if isinstance(props.get("ENVIRONMENT"), list) else [])
    if "NUMALOCK_TOPOLOGY" in env:
        continue
    args = cmd[1:]
    if any(a.startswith(("virtual:", "cpus:", "measured")) for a in args):
        continue
    if "--threads" in args:
        i = args.index("--threads")
        if int(args[i + 1]) > 4:
            continue
    wf = "1" if props.get("WILL_FAIL") else "0"
    rx = props.get("PASS_REGULAR_EXPRESSION")
    if rx:
        wf = "re:" + (rx[0] if isinstance(rx, list) else rx)
    if "--ops" in args and wf == "0":  # a broken lock must keep enough operations to be caught
        i = args.index("--ops")
        args[i + 1] = str(min(int(args[i + 1]), 3000))
    print("%s|%s|/nl/bin/%s %s" % (t["name"], wf, os.path.basename(cmd[0]), " ".join(args)))
' "$BUILD/bin" >"$R"/nl/tests.txt || { echo "numa-test: cannot list the C tests of $BUILD" >&2; exit 2; }
echo "numa-test: $(wc -l <"$R"/nl/tests.txt) C tests, kernel $(basename "$KERNEL"), initramfs $(du -sh "$R" | cut -f1)"
(cd "$R" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$WORK"/initramfs.gz

# ---- boot -------------------------------------------------------------------
# four_nodes CPUS_PER_NODE: qemu's options for 4 nodes of that many CPUs each
# (CPUs numbered node by node), two pairs of near nodes (0-1 and 2-3), and
# the distance matrix the guest must show
four_nodes() {
    local per=$1 n
    args4=""
    for n in 0 1 2 3; do
        args4="$args4 -object memory-backend-ram,id=m$n,size=192M -numa node,nodeid=$n,cpus=$((per * n))-$((per * n + per - 1)),memdev=m$n"
    done
    args4="$args4 -numa dist,src=0,dst=1,val=16 -numa dist,src=0,dst=2,val=32 -numa dist,src=0,dst=3,val=32
           -numa dist,src=1,dst=2,val=32 -numa dist,src=1,dst=3,val=32 -numa dist,src=2,dst=3,val=16"
    dist4="10,16,32,32;16,10,32,32;32,32,10,16;32,32,16,10"
}

# boot GUEST EXPECTED_NODES ONLY: the guest's console into its log
# ($WORK/guest-GUEST[-ONLY].log), its status returned (124: no status, 125:
# its kernel did not boot, twice)
boot() {
    local nodes=$1 expect=$2 only=$3 args dist log rc tests=all levels="" args4 dist4
    if [ "$nodes" = quota ]; then
        nodes=quota-2 # the 2-node machine, the topology checks and the quota case only
        only=quota
    fi
    if [ "$nodes" = levels ]; then
        four_nodes 2
        args="-smp 8,sockets=2,cores=4,threads=1 $args4"
        dist=$dist4
        levels=node:4,package:2
        tests=none
    elif [ "$nodes" = 2 ] || [ "$nodes" = quota-2 ]; then
        args="-smp 4,sockets=2,cores=2,threads=1
              -object memory-backend-ram,id=m0,size=384M -numa node,nodeid=0,cpus=0-1,memdev=m0
              -object memory-backend-ram,id=m1,size=384M -numa node,nodeid=1,cpus=2-3,memdev=m1
              -numa dist,src=0,dst=1,val=20"
        dist="10,20;20,10"
        [ $QUICK = 1 ] && tests=stress4
    else
        four_nodes 1
        args="-smp 4,sockets=4,cores=1,threads=1 $args4"
        dist=$dist4
        tests=stress # the unit tests ran in the 2-node guest: here the stress harness on 4 nodes
        [ $QUICK = 1 ] && tests=none
    fi
    log=$WORK/guest-${1}${3:+-$3}.log
    local try pid
    # a kernel that panics at boot (under TCG on a busy host its timer check
    # can fail: no_timer_check skips it), or whose /init has not printed its
    # first line BOOT_TIMEOUT seconds after qemu started (a vCPU starved in a
    # boot-time self-test: soft lockups in cryptomgr_test for 10 minutes,
    # hence cryptomgr.notests), is stopped and booted once more
    local t0 bad
    for try in 1 2; do
        rm -f "$WORK/qemu.pid"
        # shellcheck disable=SC2086
        timeout "$TIMEOUT" "$QEMU" -accel tcg,thread=multi -m 768 $args -kernel "$KERNEL" -initrd "$WORK"/initramfs.gz \
            -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check cryptomgr.notests rdinit=/init nl_nodes=$expect nl_dist=$dist nl_only=${levels:+topo}$only nl_levels=$levels nl_test_timeout=$TEST_TIMEOUT nl_tests=$tests" \
            -nographic -no-reboot -monitor none -nic none -pidfile "$WORK/qemu.pid" </dev/null 2>&1 |
            sed -u 's/\r$//' >"$log" &
        pid=$! t0=$(date +%s) bad=""
        while kill -0 "$pid" 2>/dev/null; do
            if [ -z "$bad" ] && grep -q 'Kernel panic - not syncing' "$log" 2>/dev/null; then
                bad=panic
                sleep 2
            elif [ -z "$bad" ] && [ $(($(date +%s) - t0)) -gt "$BOOT_TIMEOUT" ] &&
                ! grep -q 'numa-test guest: [0-9]* CPUs' "$log" 2>/dev/null; then
                bad=stalled
            fi
            [ -n "$bad" ] && [ -s "$WORK/qemu.pid" ] && kill "$(cat "$WORK/qemu.pid")" 2>/dev/null
            sleep 1
        done
        wait "$pid"
        [ -n "$bad" ] || break
        [ "$bad" = stalled ] &&
            echo "numa-test: no first line from the guest within $BOOT_TIMEOUT s of qemu's start (NUMA_TEST_BOOT_TIMEOUT): stopped" >>"$log"
        cp "$log" "$log.$bad$try"
    done
    rc=$(sed -n 's/^NUMA-TEST-RC=\([0-9]*\).*/\1/p' "$log" | tail -1)
    [ -n "$rc" ] || { [ -n "$bad" ] && return 125; return 124; }
    return "$rc"
}

# printable FILE: its text without terminal control sequences (the firmware's
# ESC c, ESC [?7l, ...) or other control characters but tab and newline
printable() {
    sed -e 's|\x1b\[[0-?]*[ -/]*[@-~]||g' -e 's|\x1b[ -/]*.||g' "$1" |
        tr -d '\000-\010\013-\037\177'
}

# report GUEST STATUS SECONDS: one line for the terminal; a failure adds the
# log's tail
report() {
    local g=$1 rc=$2 secs=$3 log=$WORK/guest-$1.log what sum
    case $g in levels) what="levels guest (sockets and nodes)" ;; quota) what="quota guest (2 nodes, cpu.max 1/2 CPU)" ;;
        *) what="$g-node guest" ;; esac
    sum=$(sed -n 's/^numa-test guest: \([0-9]* checks, [0-9]* failed\).*/\1/p' "$log" 2>/dev/null | tail -1)
    if [ "$rc" = 0 ]; then
        echo "numa-test: the $what passed: ${sum:-no summary}, ${secs} s (log $log)"
        return
    fi
    if [ "$rc" = 125 ]; then
        echo "numa-test: the $what FAILED: its kernel did not boot, twice (a panic, or no first line within $BOOT_TIMEOUT s; log $log)"
    elif [ "$rc" = 124 ]; then
        echo "numa-test: the $what FAILED: no exit status on its console within ${TIMEOUT} s (log $log)"
    else
        echo "numa-test: the $what FAILED: status $rc, ${sum:-no summary}, ${secs} s (log $log)"
    fi
    printable "$log" | grep '^FAIL' | sed 's/^/  | /'
    echo "  its last lines:"
    printable "$log" | tail -20 | sed 's/^/  | /'
}

# the 2-node guest's kvmap figures (tests/numa/guest.sh: KVMAP-REAL lines)
# beside the simulator's for its model, the machine qemu-2n (docs/SIMULATION.md)
side_by_side() {
    local log=$WORK/guest-2.log sim=$BUILD/bin/numalock-sim out line lock real model
    grep -q '^KVMAP-REAL' "$log" 2>/dev/null || return 0
    [ -x "$sim" ] || { echo "numa-test: no simulator in $BUILD: the guest's kvmap figures alone"; return 0; }
    out=$WORK/sim-qemu-2n.json
    NUMALOCK_WAIT=yield NUMALOCK_CNA_FAIRNESS=time:100ms "$sim" kvmap --machine qemu-2n --lock cna,qspinlock-cna,mcs --threads 8 --virtual-ms 200 \
        --pin nodes --quiet --json "$out" >/dev/null || { echo "numa-test: the simulator failed on qemu-2n"; return 0; }
    line="numa-test: kvmap, 8 threads bound to 2 nodes, waiters that yield, CNA's stay 100 ms: remote share in"
    line="$line the guest / in its model"
    line="$line (numalock sim --machine qemu-2n):"
    for lock in cna qspinlock-cna mcs; do
        real=$(sed -n "s/^KVMAP-REAL lock=$lock share=\([^ ]*\) handovers=\([0-9]*\).*/\1 (\2 hand-overs)/p" "$log" | tail -1)
        model=$(python3 -c 'import json,sys
for r in json.load(open(sys.argv[1]))["records"]:
    if r["lock"] == sys.argv[2]: print("%.3f (%d hand-overs)" % (r["remote_share"], r["handovers"]))' "$out" "$lock")
        line="$line $lock $real / $model;"
    done
    echo "${line%;}"
}

start=$(date +%s)
status=0
for g in ${GUESTS//,/ }; do
    want=${EXPECT:-$g}
    [ "$g" = levels ] && want=${EXPECT:-4}
    [ "$g" = quota ] && want=${EXPECT:-2}
    t0=$(date +%s)
    boot "$g" "$want" ""
    rc=$?
    report "$g" "$rc" $(($(date +%s) - t0))
    [ $rc -eq 0 ] || status=1
    [ "$g" = 2 ] && side_by_side
done
if [ $SELFCHECK = 1 ] && [ -z "$EXPECT" ]; then
    boot 2 3 topo
    rc=$?
    why=$(printable "$WORK"/guest-2-topo.log | grep '^FAIL' | head -1)
    if [ $rc -ne 0 ] && [ -n "$why" ]; then
        echo "numa-test: self-check: a 2-node guest told to expect 3 nodes fails, as it must: $why"
    else
        echo "numa-test: self-check FAILED: a 2-node guest told to expect 3 nodes passed (status $rc): the checks cannot fail"
        status=1
    fi
fi
echo "numa-test: $([ $status = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start)) s"
exit $status

#!/bin/sh
# kernel/test.sh: `make kernel-test`. Builds what is missing (incremental),
# then boots the patched kernel under qemu TCG on emulated NUMA machines and
# runs locktorture with the CNA slow path on and off (docs/KERNEL.md).
#
#   KERNEL_VARIANT=normal (default)  normal + debug (lockdep) kernels
#   KERNEL_VARIANT=broken            the deliberately broken slow path: the
#                                    CNA-on runs must FAIL, so this exits 1
#   KERNEL_TORTURE_SECS=60           locktorture run length per boot
# Exit status 0 when every run passes and, on 8 vCPUs over 2 nodes, the
# cross-node share of queue hand-overs with CNA on is at most a quarter of the
# share with it off.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
KBUILD=${KBUILD:-$ROOT/build-kernel}
export KBUILD
VARIANT=${KERNEL_VARIANT:-normal}
SECS=${KERNEL_TORTURE_SECS:-60}
LOGS=$KBUILD/test-logs
t0=$(date +%s)

case $VARIANT in
normal) builds="normal debug"
        # variant:vCPUs:nodes:numa_spinlock:torture_type[:extra kernel parameter]
        runs="normal:4:2:on:spin_lock normal:4:2:off:spin_lock
              normal:4:4:on:spin_lock normal:4:4:off:spin_lock
              normal:8:2:on:spin_lock normal:8:2:off:spin_lock
              normal:8:4:on:spin_lock normal:4:2:auto:spin_lock_irq
              debug:4:2:on:spin_lock debug:4:2:off:spin_lock debug:8:4:on:spin_lock_irq" ;;
broken) builds="broken"
        # the broken CNA path must fail; the same kernel with CNA off must not
        runs="broken:4:2:on:spin_lock broken:4:2:off:spin_lock" ;;
*) echo "kernel: unknown KERNEL_VARIANT '$VARIANT' (valid: normal, broken)" >&2; exit 2 ;;
esac

# shellcheck disable=SC2086
"$HERE/build.sh" $builds || { echo "kernel: build failed"; exit 1; }
tb=$(date +%s)

rm -rf "$LOGS" && mkdir -p "$LOGS"
failed=0
for r in $runs; do
    IFS=: read -r v c n m t x <<EOT
$r
EOT
    name=$v-${c}cpu-${n}node-$m-$t${x:+-$(echo "$x" | tr -c 'a-z0-9\n' '-')}
    echo "kernel: boot $name: $c vCPUs over $n nodes, numa_spinlock=$m${x:+ $x}, locktorture $t for ${SECS}s"
    s0=$(date +%s)
    "$HERE/boot.sh" "$v" "$c" "$n" "$m" "$t" "$SECS" "$LOGS/$name.log" "$x"
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "kernel: $name: killed by the timeout (hang)"; fi
    dbg=""; [ "$v" = debug ] && dbg=--debug
    python3 "$HERE/parse.py" "$LOGS/$name.log" --mode "$m" --nodes "$n" $dbg \
        --label "$name ($(($(date +%s) - s0)) s)" --json "$LOGS/$name.json" || failed=$((failed + 1))
done

# the locality criterion: same guest (2 nodes), same run length, on vs off
python3 - "$LOGS" <<'PYEOF' || failed=$((failed + 1))
import json, os, sys
logs = sys.argv[1]
def get(name):
    p = os.path.join(logs, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
bad = 0
# enforced on 8 vCPUs over 2 nodes: with 4 CPUs per node a waiter of the
# holder's node is nearly always queued. With 2 CPUs per node (4/2, 8/4) the
# one other local CPU must re-queue before the head claims the lock, which
# depends on how the emulator's threads get the host: printed, not enforced
for v in ("normal", "debug"):
    for c, n, enforce in ((8, 2, True), (4, 2, False), (8, 4, False)):
        on = get(f"{v}-{c}cpu-{n}node-on-spin_lock")
        off = get(f"{v}-{c}cpu-{n}node-off-spin_lock")
        if not on or not off:
            continue
        a, b = on.get("remote_share"), off.get("remote_share")
        if a is None or b is None:
            print(f"FAIL {v} {c} vCPUs/{n} nodes: no hand-over counts to compare"); bad |= enforce; continue
        ok = a <= b / 4
        tag = ("PASS" if ok else "FAIL") if enforce else "info"
        print(f"{tag} {v} {c} vCPUs/{n} nodes: cross-node share of queue hand-overs "
              f"CNA on {100*a:.1f}% vs off {100*b:.1f}% (ratio {a/b if b else float('nan'):.3f}, "
              f"{'need' if enforce else 'criterion'} <= 0.25)")
        bad |= enforce and not ok
sys.exit(bad)
PYEOF

te=$(date +%s)
echo "kernel: build $((tb - t0)) s, boots $((te - tb)) s, total $((te - t0)) s; logs in $LOGS"
if [ $failed -ne 0 ]; then
    echo "kernel-test: FAIL ($failed check(s) failed, KERNEL_VARIANT=$VARIANT)"
    exit 1
fi
echo "kernel-test: PASS (KERNEL_VARIANT=$VARIANT)"

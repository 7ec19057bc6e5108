#!/bin/sh
# Build the patched kernel(s) for the CNA kernel test (docs/KERNEL.md).
#
#   kernel/build.sh [normal] [debug] [broken]     (default: normal debug)
#
# Everything goes under $KBUILD (default build-kernel/, git-ignored):
#   src/             Debian's linux-source-6.1, unpacked once, with the patch
#                    series applied (src/.numalock-applied/ keeps the applied
#                    copies; a changed series is reversed and re-applied, so
#                    only the files it touches get new times)
#   obj-normal/, obj-debug/  out-of-tree builds (make O=...): a second run
#                    rebuilds only what changed; broken is built in obj-normal
#   img-<variant>/   what a boot uses: bzImage, the locktorture modules and
#                    initramfs.cpio.gz (busybox, kernel/init, the modules)
# Variants: normal = base.config + patches/series; debug = the same plus
# config/debug.config (DEBUG_SPINLOCK, PROVE_LOCKING); broken = normal plus
# patches/broken/series (a deliberately wrong slow path the test must catch).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
KBUILD=${KBUILD:-$ROOT/build-kernel}
export KBUILD
JOBS=${JOBS:-2}
NICE=${NICE:-nice -n 19}
TARBALL=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
SRC=$KBUILD/src

say() { echo "kernel: $*"; }
die() { echo "kernel: $*" >&2; exit 1; }

[ $# -gt 0 ] || set -- normal debug
VARIANTS="$*"
for v in "$@"; do
    case $v in normal|debug|broken) ;; *) die "unknown variant '$v' (valid: normal, debug, broken)";; esac
done

sh "$HERE/deps.sh"
mkdir -p "$KBUILD"

# ---- source ---------------------------------------------------------------
if [ ! -f "$SRC/Makefile" ]; then
    [ -f "$TARBALL" ] || die "no kernel source tarball at $TARBALL (apt-get install linux-source-6.1)"
    say "unpacking $TARBALL"
    rm -rf "$KBUILD/src.tmp" && mkdir -p "$KBUILD/src.tmp"
    $NICE tar xf "$TARBALL" -C "$KBUILD/src.tmp"
    mv "$KBUILD/src.tmp"/linux-source-* "$SRC" && rmdir "$KBUILD/src.tmp"
fi

# wanted_patches VARIANT: the patch files, in order
wanted_patches() {
    sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$HERE/patches/series" | while read -r p; do echo "$HERE/patches/$p"; done
    if [ "$1" = broken ]; then
        sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$HERE/patches/broken/series" |
            while read -r p; do echo "$HERE/patches/broken/$p"; done
    fi
}

# apply_series VARIANT: make src/ = tarball + that variant's patches
apply_series() {
    applied=$SRC/.numalock-applied
    want=$KBUILD/.want.$$
    rm -rf "$want" && mkdir -p "$want"
    i=0
    for p in $(wanted_patches "$1"); do
        i=$((i + 1))
        cp "$p" "$want/$(printf %02d $i)-$(basename "$p")"
    done
    if [ -d "$applied" ] && diff -r "$applied" "$want" >/dev/null 2>&1; then
        rm -rf "$want"
        return 0
    fi
    if [ -d "$applied" ]; then
        for p in $(ls "$applied" | sort -r); do
            if ! patch -s -R -p1 -d "$SRC" --no-backup-if-mismatch <"$applied/$p"; then
                say "could not reverse $p: unpacking the source again"
                rm -rf "$SRC"
                exec "$0" $VARIANTS
            fi
        done
        rm -rf "$applied"
    fi
    for p in $(ls "$want" | sort); do
        say "applying $p"
        patch -s -p1 -d "$SRC" --no-backup-if-mismatch <"$want/$p" || die "patch $p does not apply"
    done
    mv "$want" "$applied"
}

# configure VARIANT OBJ
configure() {
    frags="$HERE/config/base.config"
    [ "$1" = debug ] && frags="$frags $HERE/config/debug.config"
    stamp=$(cat $frags | cksum)
    if [ -f "$2/.config" ] && [ "$(cat "$2/.numalock-config" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    say "configuring $1 (tinyconfig + $(echo $frags | sed "s|$HERE/||g"))"
    $NICE make -s -C "$SRC" O="$2" tinyconfig >/dev/null
    # shellcheck disable=SC2086
    (cd "$SRC" && $NICE scripts/kconfig/merge_config.sh -m -O "$2" "$2/.config" $frags >/dev/null)
    $NICE make -s -C "$SRC" O="$2" olddefconfig >/dev/null
    missing=""
    for f in $frags; do
        for line in $(grep '^CONFIG_' "$f"); do
            sym=${line%%=*} val=${line#*=}
            if [ "$val" = n ]; then
                grep -q "^$sym=" "$2/.config" && missing="$missing $line"
            else
                grep -qx "$line" "$2/.config" || missing="$missing $line"
            fi
        done
    done
    [ -z "$missing" ] || die "config for $1 lacks:$missing"
    echo "$stamp" >"$2/.numalock-config"
}

for v in "$@"; do
    # broken has normal's config and differs in one source file: it is built
    # in obj-normal (a switch recompiles qspinlock.o and relinks; a copied
    # object folder would rebuild everything)
    case $v in broken) obj=$KBUILD/obj-normal;; *) obj=$KBUILD/obj-$v;; esac
    img=$KBUILD/img-$v
    apply_series "$v"
    mkdir -p "$obj"
    configure "$v" "$obj"
    say "building $v in $obj (make -j$JOBS bzImage modules)"
    t0=$(date +%s)
    $NICE make -s -C "$SRC" O="$obj" -j"$JOBS" bzImage modules
    # what the boots use: the image, and an initramfs with busybox, /init and
    # this build's locktorture modules
    mkdir -p "$img"
    for f in arch/x86/boot/bzImage kernel/torture.ko kernel/locking/locktorture.ko; do
        cmp -s "$obj/$f" "$img/${f##*/}" || cp "$obj/$f" "$img/${f##*/}"
    done
    sh "$HERE/mkinitramfs.sh" "$img/initramfs.cpio.gz" "$img/torture.ko" "$img/locktorture.ko"
    say "$v: $img/bzImage ($(($(date +%s) - t0)) s)"
done

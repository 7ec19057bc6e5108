#!/bin/sh
# Real NUMA nodes: libnuma for placing memory on a node (bench
# contention), and for `make numa-test`: qemu (TCG) and a static busybox for
# the guest's initramfs (the guest kernel is fetched with `apt-get download`
# by scripts/numa-test.sh, not installed). Idempotent, quiet when present.
pkgs="libnuma-dev qemu-system-x86 busybox-static cpio"
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "installing (NUMA tests):$missing"
$SUDO apt-get update -qq >/dev/null 2>&1 || true
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

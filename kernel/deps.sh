#!/bin/sh
# Install what the kernel build and test need (Debian 12), once; quiet when
# everything is there.
set -eu
PKGS="linux-source-6.1 qemu-system-x86 busybox-static bc bison flex libelf-dev libssl-dev cpio xz-utils gcc make python3 patch"
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "kernel: installing:$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing

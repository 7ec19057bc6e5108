#!/bin/sh
# Install what the kernel build and test need (Debian 12), once; quiet when
# everything is there.
set -eu
PKGS="linux-source-6.1 qemu-system-x86 busybox-static bc bison flex libelf-dev libssl-dev cpio xz-utils gcc make python3 patch"
exec "$(dirname "$0")/../scripts/apt-missing.sh" kernel $PKGS

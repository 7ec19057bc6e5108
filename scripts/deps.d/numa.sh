#!/bin/sh
# Real NUMA nodes: libnuma for placing memory on a node (bench
# contention), and for `make numa-test`: qemu (TCG) and a static busybox for
# the guest's initramfs (the guest kernel is fetched with `apt-get download`
# by scripts/numa-test.sh, not installed). Idempotent, quiet when present.
exec "$(dirname "$0")/../apt-missing.sh" --no-recommends "NUMA tests" libnuma-dev qemu-system-x86 busybox-static cpio

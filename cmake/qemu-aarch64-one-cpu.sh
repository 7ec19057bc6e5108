#!/bin/sh
# The test emulator of the aarch64 build: qemu-user, pinned to one host CPU
# (chosen by process id, so that parallel tests spread). On an x86-64 host
# qemu-user does not order an aarch64 store-release before a later
# load-acquire (a store-buffering test shows the outcome that C11 forbids
# for seq_cst), which breaks handshakes such as the gate's; on one CPU the
# emulated threads share one store buffer and see each other in order.
cpus=$(nproc 2>/dev/null || echo 1)
exec taskset -c $(( $$ % cpus )) qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"

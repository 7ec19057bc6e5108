#!/bin/sh
# The test emulator of the aarch64 build: qemu-user, pinned to one host CPU.
# On an x86-64 host qemu-user does not order an aarch64 store-release before
# a later load-acquire (a store-buffering test shows the outcome that C11
# forbids for seq_cst), which breaks handshakes such as the gate's; on one
# CPU the emulated threads share one store buffer and see each other in
# order. The CPU is the first one no other emulated test holds (a lock file
# per CPU, held by the emulator for its life), so that parallel tests spread
# over the CPUs; with every CPU held (or without flock), one chosen by
# process id.
cpus=$(nproc 2>/dev/null || echo 1)
if command -v flock >/dev/null 2>&1; then
    n=0
    while [ $n -lt "$cpus" ]; do
        exec 9>"${TMPDIR:-/tmp}/numalock-qemu-cpu.$(id -u).$n"
        flock -n 9 && exec taskset -c $n qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"
        n=$((n + 1))
    done
    exec 9>&-
fi
exec taskset -c $(( $$ % cpus )) qemu-aarch64 -L /usr/aarch64-linux-gnu "$@"

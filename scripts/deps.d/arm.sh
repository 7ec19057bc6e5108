#!/bin/sh
# The aarch64 cross build and its emulator (make test-arm).
exec "$(dirname "$0")/../apt-missing.sh" "aarch64 build and tests" \
    gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user

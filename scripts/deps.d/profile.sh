#!/bin/sh
# The lock profile (numalock run --stats) names functions and source lines
# with elfutils' libdw; without it the preload library falls back to dladdr.
exec "$(dirname "$0")/../apt-missing.sh" "lock profile symbols" libdw-dev

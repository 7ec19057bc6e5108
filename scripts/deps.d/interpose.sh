#!/bin/sh
# Programs the interposition tests run under the preload library.
exec "$(dirname "$0")/../apt-missing.sh" "interposition tests" pigz pbzip2 lbzip2 xz-utils zstd sqlite3 nodejs python3 g++

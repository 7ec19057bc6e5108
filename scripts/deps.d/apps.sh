#!/bin/sh
# Programs of the applications suite (numalock report --suite apps): LevelDB's
# library for the project's driver (built only when CMake finds it), Kyoto
# Cabinet's and RocksDB's test programs, sysbench and pigz.
exec "$(dirname "$0")/../apt-missing.sh" --no-recommends "applications suite" \
    libleveldb-dev libsnappy-dev kyotocabinet-utils rocksdb-tools sysbench pigz

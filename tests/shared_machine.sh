#!/bin/sh
# Run a command the way programs run on a shared server:
#   shared_machine.sh cpu0 CMD ARGS...   bound to CPU 0 (taskset), as a
#                                        cpuset or a job scheduler binds it
#   shared_machine.sh busy CMD ARGS...   beside one busy loop per online CPU
#                                        (other processes using the machine)
# Exit status: the command's; 2 for a bad mode.
mode=$1; shift
case $mode in
cpu0)
    exec taskset -c 0 "$@" ;;
busy)
    n=$(nproc); pids=""
    i=0
    while [ "$i" -lt "$n" ]; do
        sh -c 'while :; do :; done' & pids="$pids $!"
        i=$((i + 1))
    done
    trap 'kill $pids 2>/dev/null' EXIT INT TERM
    "$@"; rc=$?
    exit $rc ;;
*)
    echo "shared_machine.sh: unknown mode '$mode': valid modes are cpu0, busy" >&2
    exit 2 ;;
esac

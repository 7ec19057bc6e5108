/* `numalock sim WORKLOAD --machine NAME ...` and `numalock sim --machines`: the
 * simulator (sim/, docs/SIMULATION.md) is a program of its own, numalock-sim,
 * beside this one; this command runs it with the same arguments. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "numalock_cli.h"

int nl_cli_sim(int argc, char **argv)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
    if (n <= 0) {
        fprintf(stderr, "numalock sim: cannot find this program's folder: %s\n", strerror(errno));
        return 1;
    }
    path[n] = 0;
    char *slash = strrchr(path, '/');
    snprintf(slash ? slash + 1 : path, sizeof path - (size_t)(slash ? slash + 1 - path : 0), "numalock-sim");
    if (access(path, X_OK)) {
        fprintf(stderr, "numalock sim: the simulator is not installed beside this command (%s is missing; it is "
                        "built on x86-64 hosts with GCC or Clang)\n", path);
        return 2;
    }
    (void)argc;
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "numalock sim: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}

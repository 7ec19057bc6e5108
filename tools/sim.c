/* `numalock sim WORKLOAD --machine NAME ...` and `numalock sim --machines`: the
 * simulator (sim/, docs/SIMULATION.md) is a program of its own, numalock-sim,
 * beside this one; this command runs it with the same arguments. Its usage
 * is here, so that it is shown where the simulator is not built. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

/* The simulator's options (sim/main.c parses them; the workload's own are
 * those of `numalock bench`). */
static const nl_opt_t sim_opts[] = {
    { "--machine", "NAME", "the simulated machine (sim --machines lists them; local: this one's shape)", NULL,
      NULL },
    { "--machines", NULL, "list the machines", NULL, NULL },
    { "--machines-file", "FILE", "the machines (default: machines.txt beside the simulator)", NULL, NULL },
    { "--virtual-ms", "MS", "simulated milliseconds per measurement (default 10)", NULL, NULL },
    { "--seed", "N", "the seed (default 1): the same seed, the same records", NULL, NULL },
    { "--placement", "spread|fill", "how threads without an affinity take CPUs: sockets in turn (default), or one "
      "socket after the other", NULL, NULL },
    { "--lock", "A,B|all", "lock names, comma-separated, or all", NULL, NULL },
    { "--threads", "1,2,4", "thread counts, comma-separated", NULL, NULL },
    { "--json", "FILE", "the JSON file to write", NULL, NULL },
    { "--quiet", NULL, "no table", NULL, NULL },
    { 0 },
};

int nl_cli_sim(int argc, char **argv, const nl_cli_command_t *self)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            nl_cli_help(self, sim_opts, "workloads: kvmap, contention, rwhash, with their options of "
                                        "`numalock bench` (numalock bench --help)\n");
            return 0;
        }
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
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "numalock sim: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}

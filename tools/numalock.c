/* The numalock command: main and the dispatch table. Each command is a file
 * of its own (cli.h lists them); `numalock --help` prints the table, and
 * `numalock COMMAND --help` the command's usage with all its options. */
#include <stdio.h>
#include <string.h>
#include "numalock/numalock.h"
#include "bench.h"
#include "cli.h"

static const nl_cli_command_t commands[] = {
    { "list", nl_cli_list, "list [--json|--markdown]", "the lock algorithms and their properties" },
    { "topo", nl_cli_topo,
      "topo [--topology SPEC] [--json]\n"
      "topo --measure [--method cas|store] [--budget S] [--cpus LIST] [--json FILE] [...]",
      "the NUMA topology in use; --measure: core-to-core latency and the clusters it implies" },
    { "bench", nl_cli_bench,
      "bench WORKLOAD [--lock A,B|all] [--threads 1,2,4] [--duration S] [--topology SPEC] [--json FILE] "
      "[workload options]",
      "one workload over locks and thread counts (workloads below)" },
    { "report", nl_cli_report, "report [--out DIR] [--suite FILE|NAME] [--no-render]",
      "the benchmark suite: JSON, PNG plots, report.md (--suite apps: real programs, through compare)" },
    { "run", nl_cli_run,
      "run [--lock NAME] [--rwlock NAME] [--spin NAME] [--topology SPEC] [--stats] [--stats-stacks N] "
      "[--stats-format text|json] [--futex-hash N] -- PROGRAM [ARGS...]",
      "run a program with its pthread locks replaced" },
    { "compare", nl_cli_compare,
      "compare --lock glibc,hbo,... [--runs N] [--metric REGEX] [--threads-env VAR=1,2,4] [--json FILE] "
      "[--plot FILE.png] ... -- PROGRAM [ARGS...]",
      "a program under glibc and each lock: which helps" },
    { "calibrate", nl_cli_calibrate, "calibrate sanl [--threads N] [--duration S] [--out FILE] [--dry-run]",
      "measure SANL's thresholds on this machine" },
    { "sim", nl_cli_sim,
      "sim WORKLOAD --machine NAME [--virtual-ms MS] [--seed N] [--placement spread|fill] [--lock A,B] "
      "[--threads 1,2] [workload options] [--json FILE]\n"
      "sim --machines",
      "the workload on a simulated machine" },
};
enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *f)
{
    fprintf(f, "usage: numalock COMMAND [OPTIONS]     (numalock COMMAND --help: the command's options)\n"
               "commands:\n");
    for (int i = 0; i < NCOMMANDS; i++) {
        const char *s = commands[i].synopsis;
        fprintf(f, "  ");
        for (; *s; s++) { /* a second form on a line of its own */
            fputc(*s, f);
            if (*s == '\n')
                fprintf(f, "  ");
        }
        fprintf(f, "\n      %s\n", commands[i].summary);
    }
    fprintf(f, "topology SPEC: auto | sysfs:DIR | virtual:N | virtual:NxM... | cpus:LIST/LIST/... | measured   "
               "(also NUMALOCK_TOPOLOGY)\n"
               "workloads:\n");
    bench_list_workloads(f);
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("numalock %s\n", NL_VERSION);
        return 0;
    }
    char names[256];
    size_t off = 0;
    for (int i = 0; i < NCOMMANDS; i++) {
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1, &commands[i]);
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", commands[i].name);
    }
    fprintf(stderr, "numalock: unknown command '%s': valid commands are %s\n", argv[1], names);
    return 2;
}

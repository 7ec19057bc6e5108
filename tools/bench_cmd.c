/* `numalock bench WORKLOAD [options]`: one workload of bench/ over locks and
 * thread counts (bench.h: bench_main). */
#include <stdio.h>
#include <string.h>
#include "bench.h"
#include "cli.h"
#include "words.h"

int nl_cli_bench(int argc, char **argv, const nl_cli_command_t *self)
{
    int help = 0;
    for (int i = 1; i < argc; i++)
        help |= !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h");
    if (argc < 2 || help) {
        if (argc < 2) { /* the usage on stderr, and a failure */
            fprintf(stderr, "usage: numalock %s\n", self->synopsis);
            bench_usage(stderr);
            return 2;
        }
        nl_cli_help(self, NULL, NULL);
        bench_usage(stdout);
        return 0;
    }
    char line[2048];
    nl_cli_join_args(line, sizeof line, argc, argv);
    return bench_main(argc - 1, argv + 1, line);
}

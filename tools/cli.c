/* The helpers of the command's files (cli.h): option parsing with --help,
 * the usage of a command, the topology option. */
#include <stdio.h>
#include <string.h>
#include "numalock/topology.h"
#include "cli.h"

int nl_cli_opts(const nl_cli_command_t *self, const nl_opt_t *opts, int argc, char **argv, int start,
                unsigned flags, int *first)
{
    char err[1536];
    int i = nl_opts_parse(opts, argc, argv, start, flags | NL_OPTS_HELP, NULL, err, sizeof err);
    if (i == NL_OPTS_HELP_ASKED) {
        nl_cli_help(self, opts, NULL);
        return 1;
    }
    if (i < 0) {
        fprintf(stderr, "numalock %s: %s\n", self->name, err);
        return -1;
    }
    if (first)
        *first = i;
    return 0;
}

void nl_cli_help(const nl_cli_command_t *self, const nl_opt_t *opts, const char *more)
{
    const char *s = self->synopsis;
    printf("usage: numalock ");
    for (; *s; s++) { /* a second form goes on its own line, under the first */
        putchar(*s);
        if (*s == '\n')
            printf("       numalock ");
    }
    printf("\n%s\n", self->summary);
    if (opts && opts->name) {
        printf("options:\n");
        nl_opts_help(stdout, opts);
    }
    if (more)
        fputs(more, stdout);
}

int nl_cli_apply_topology(const char *spec, const char *prog)
{
    char err[512];
    if (spec) {
        if (nl_topology_set(spec, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return 2;
        }
    } else if (nl_topology_env_error()) {
        fprintf(stderr, "%s: NUMALOCK_TOPOLOGY: %s\n", prog, nl_topology_env_error());
        return 2;
    }
    return 0;
}

#ifndef NUMALOCK_CLI_H
#define NUMALOCK_CLI_H
/* `numalock run` (tools/run.c); argv[0] is "run". Returns the exit status. */
int nl_cli_run(int argc, char **argv);
/* Apply --topology (or check NUMALOCK_TOPOLOGY); prints one sentence on error. */
int nl_cli_apply_topology(const char *spec, const char *prog);
#endif

#ifndef NUMALOCK_CLI_H
#define NUMALOCK_CLI_H
/* `numalock run` (tools/run.c); argv[0] is "run". Returns the exit status. */
int nl_cli_run(int argc, char **argv);
/* Apply --topology (or check NUMALOCK_TOPOLOGY); prints one sentence on error. */
int nl_cli_apply_topology(const char *spec, const char *prog);
/* what --topology takes, for option tables (opts.h) */
#define NL_CLI_TOPOLOGY_FORMS "a topology: auto, sysfs:DIR, virtual:N, virtual:NxM..., cpus:LIST/LIST/... or measured"

/* `numalock topo --measure` (tools/topo_measure.c); argv[0] is "topo". */
int nl_cli_topo_measure(int argc, char **argv);
/* The real nodes' distances from sysfs: text lines, or JSON members (", \"real_distances\": ..."). */
void nl_cli_topo_distances(int json);
/* `numalock calibrate sanl` (tools/calibrate.c); argv[0] is "calibrate". */
int nl_cli_calibrate(int argc, char **argv);
/* `numalock sim`: runs numalock-sim (tools/sim.c) */
int nl_cli_sim(int argc, char **argv);
/* list --json: a lock's extra members ("thresholds": sanl's, with their source) */
struct nl_lock_ops;
void nl_cli_list_lock_json(const struct nl_lock_ops *o);
#endif

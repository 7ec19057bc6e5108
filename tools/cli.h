/*
 * The numalock command's pieces: the commands, one file each, behind the
 * dispatch table of numalock.c, and the helpers they share (cli.c).
 *
 * Layers, top down (no file calls one above it):
 *   numalock.c                 main and the table
 *   list.c topo.c bench_cmd.c report.c compare.c run.c calibrate.c sim.c
 *                              the commands (report runs compare, sim and
 *                              bench lines; topo runs topo_measure.c)
 *   cli.c words.c paths.c      option parsing and usage, shell words, files
 *   bench/ (bench.h, opts.h), src/interpose/policy.h, the library
 */
#ifndef NUMALOCK_CLI_H
#define NUMALOCK_CLI_H

#include <stdio.h>
#include "opts.h"

/* A command of the table: its name, its function (argv[0] is the name),
 * its synopsis (what follows "numalock " in a usage line; a second line
 * after "\n" when it has two forms) and what it does, one phrase. */
typedef struct nl_cli_command {
    const char *name;
    int (*run)(int argc, char **argv, const struct nl_cli_command *self);
    const char *synopsis;
    const char *summary;
} nl_cli_command_t;

/* ---- the commands (their files) ---------------------------------------- */
int nl_cli_list(int argc, char **argv, const nl_cli_command_t *self);      /* list.c */
void nl_cli_list_markdown(FILE *f); /* the docs' table of the locks (list.c), also in every report */
int nl_cli_topo(int argc, char **argv, const nl_cli_command_t *self);      /* topo.c */
int nl_cli_bench(int argc, char **argv, const nl_cli_command_t *self);     /* bench_cmd.c */
int nl_cli_report(int argc, char **argv, const nl_cli_command_t *self);    /* report.c */
int nl_cli_run(int argc, char **argv, const nl_cli_command_t *self);       /* run.c */
int nl_cli_compare(int argc, char **argv, const nl_cli_command_t *self);   /* compare.c */
int nl_cli_calibrate(int argc, char **argv, const nl_cli_command_t *self); /* calibrate.c */
int nl_cli_sim(int argc, char **argv, const nl_cli_command_t *self);       /* sim.c */

/* `numalock topo --measure` (topo_measure.c; argv[0] is "topo"), its
 * options for topo's usage, and the real nodes' distances from sysfs: text
 * lines, or JSON members (", \"real_distances\": ..."). */
int nl_cli_topo_measure(int argc, char **argv);
void nl_cli_topo_measure_help(void);
void nl_cli_topo_distances(int json);
/* list --json: a lock's extra members ("thresholds": sanl's, with their
 * source; calibrate.c) */
struct nl_lock_ops;
void nl_cli_list_lock_json(const struct nl_lock_ops *o);

/* ---- helpers (cli.c) ----------------------------------------------------- */
/* Parses a command's options from argv[start] on (opts.h; `flags` as there,
 * NL_OPTS_HELP always on). 0: parsed, *first the first operand when asked
 * for (NL_OPTS_OPERANDS); 1: --help asked for and the usage printed (the
 * command exits 0); -1: one sentence printed ("numalock NAME: ..."; the
 * command exits 2). */
int nl_cli_opts(const nl_cli_command_t *self, const nl_opt_t *opts, int argc, char **argv, int start,
                unsigned flags, int *first);
/* The command's usage on stdout: "usage: numalock SYNOPSIS", what it does,
 * its options one a line, then `more` (NULL: nothing). */
void nl_cli_help(const nl_cli_command_t *self, const nl_opt_t *opts, const char *more);
/* Apply --topology (or check NUMALOCK_TOPOLOGY); prints one sentence on
 * error and returns 2. */
int nl_cli_apply_topology(const char *spec, const char *prog);
/* what --topology takes, for option tables (opts.h) */
#define NL_CLI_TOPOLOGY_FORMS "a topology: auto, sysfs:DIR, virtual:N, virtual:NxM..., cpus:LIST/LIST/... or measured"

#endif

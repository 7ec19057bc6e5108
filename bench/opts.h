/*
 * (In bench/, the command's lowest layer: tools/ includes bench/, bench/
 * includes nothing of tools/.)
 * The numalock command's one option parser: every subcommand (and bench's
 * workload options) declares its options in a table, so a missing value, an
 * unknown option or a value given to a flag is named the same way
 * everywhere:
 *   numalock run: option '--lock' needs a value: NAME, the lock for pthread mutexes
 *   numalock run: unknown option '--x': valid options are --lock NAME, --stats, ...
 *
 * Declaring options (a table ended by an all-zero entry):
 *   const char *lock = NULL; int stats = 0;
 *   const nl_opt_t opts[] = {
 *       { "--lock", "NAME", "the lock for pthread mutexes", &lock, NULL },
 *       { "--stats", NULL, "print a lock profile", NULL, &stats },
 *       { 0 } };
 *   char err[1024];
 *   int i = nl_opts_parse(opts, argc, argv, 1, NL_OPTS_OPERANDS, NULL, err, sizeof err);
 *   if (i < 0) { fprintf(stderr, "numalock run: %s\n", err); return 2; }
 * An option with `arg` takes a value, as "--lock NAME" or "--lock=NAME"; one
 * without is a flag (set to 1). A value that is missing, empty, or looks like
 * an option ("--...") is refused. The last of repeated options wins.
 */
#ifndef NUMALOCK_OPTS_H
#define NUMALOCK_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef struct nl_opt {
    const char *name;   /* "--lock" */
    const char *arg;    /* the value's placeholder ("NAME"); NULL: a flag */
    const char *help;   /* what the value is (or what the flag does), a phrase */
    const char **value; /* options with arg: where the value goes */
    int *flag;          /* flags: set to 1 */
} nl_opt_t;

enum {
    /* the first argument that is not an option ends the options (the
     * program of `numalock run`), as does "--"; the index of that argument
     * is returned. Without it, such an argument is an error. */
    NL_OPTS_OPERANDS = 1u << 0,
    /* "--help" or "-h" where an option may stand asks for the usage: the
     * parser returns NL_OPTS_HELP_ASKED. Without it, they are unknown
     * options (or, with NL_OPTS_OPERANDS, "-h" is the first operand). */
    NL_OPTS_HELP = 1u << 1,
};
#define NL_OPTS_HELP_ASKED (-2)

/* Parses argv[start..argc). Returns the index of the first operand (argc when
 * there is none), NL_OPTS_HELP_ASKED (with NL_OPTS_HELP), or -1 with one
 * sentence in err (without the program name).
 * `context` (may be NULL) is added after an unknown option's name, e.g.
 * "for workload kvmap". */
int nl_opts_parse(const nl_opt_t *opts, int argc, char **argv, int start, unsigned flags, const char *context,
                  char *err, size_t errlen);

/* "--lock NAME, --stats, ..." */
const char *nl_opts_list(const nl_opt_t *opts, char *buf, size_t len);

/* The options one a line, each with its help phrase, for a usage text:
 *   "  --lock NAME          the lock for pthread mutexes" */
void nl_opts_help(FILE *f, const nl_opt_t *opts);

/* The sentence for a missing value, for code that reports it itself:
 * "option '--lock' needs a value: NAME, the lock for pthread mutexes" */
const char *nl_opt_missing_value(const nl_opt_t *opt, char *buf, size_t len);

#endif

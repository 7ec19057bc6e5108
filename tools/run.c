/*
 * `numalock run [--lock NAME] [--rwlock NAME] [--spin NAME] [--topology SPEC]
 *               [--stats] [--stats-stacks N] [--stats-format text|json]
 *               [--futex-hash N] -- PROGRAM ARGS...`
 *
 * Runs an unmodified program with libnumalock-preload.so, so that its pthread
 * mutexes (with their condition variables and rwlocks) run on a numalock
 * algorithm. Every choice is checked before the program starts, whether an
 * option or the environment gives it (NUMALOCK_LOCK, NUMALOCK_RWLOCK,
 * NUMALOCK_SPIN, NUMALOCK_TOPOLOGY, NUMALOCK_WAIT, NUMALOCK_CNA_FAIRNESS,
 * NUMALOCK_STATS, NUMALOCK_STATS_TOP, _STACKS, _FORMAT; an option wins over
 * its variable): a bad one is refused with one sentence and status 2, by the
 * checks the preload applies (src/interpose/policy.c). The program's exit
 * status is returned (128 + N when a signal N ended it). With --stats (or
 * NUMALOCK_STATS=1) the preload library writes its lock profile to a
 * temporary file at exit, which is printed here to stderr (the program's
 * stdout stays the program's). --stats-stacks N adds the N-frame stack where
 * each listed object was first locked; --stats-format json writes one JSON
 * object per process, one a line. Either implies --stats. --futex-hash N
 * (NUMALOCK_FUTEX_HASH) sizes the program's private futex hash at its start
 * (N slots, or 0: the system's global hash); a kernel without private
 * hashes gets one sentence from the preload and runs the program as it is.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "numalock/cna.h"
#include "policy.h"
#include "cli.h"
#include "paths.h"

#define PRELOAD_NAME "libnumalock-preload.so"

/* the choices, as the options give them (NULL, 0: not given) */
typedef struct {
    const char *lock, *rwlock, *spin, *topo, *stacks, *format, *futex_hash;
    int stats;
} run_choices_t;

static volatile pid_t child_pid;

/* a termination request for `numalock run` goes to the program it runs */
static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

static void print_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, stderr);
    fclose(f);
}

/* The algorithms: `what` is the option ("--lock") or the variable
 * ("NUMALOCK_LOCK: "), said before the sentence of an error; the options
 * keep their sentences of old (a variable's is the same, named). 0 or 2. */
static int check_algorithms(const char *lock, const char *rwlock, const char *spin, const char *what)
{
    char why[2048];
    const nl_lock_ops_t *ops;
    if (lock && nlp_check_lock(lock, &ops, why, sizeof why))
        fprintf(stderr, "numalock run: %s%s\n", what, why);
    else if (rwlock && nlp_check_rwlock(rwlock, &ops, why, sizeof why))
        fprintf(stderr, "numalock run: %s%s\n", what, why);
    else if (spin && nlp_check_spin(spin, &ops, why, sizeof why))
        fprintf(stderr, "numalock run: %s%s\n", what, why);
    else
        return 0;
    return 2;
}

/* A value of the profile: NAME 'value' is not valid: the valid forms. */
static int check_value(const char *name, const char *v, int (*parse)(const char *, unsigned *, char *, size_t))
{
    char why[256];
    unsigned x;
    if (!v || !*v || parse(v, &x, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "numalock run: %s '%s' is not valid: %s\n", name, v, why);
    return 2;
}

static int parse_format(const char *v, unsigned *x, char *why, size_t len)
{
    int json;
    int rc = nlp_parse_stats_format(v, &json, why, len);
    *x = (unsigned)json;
    return rc;
}

static int parse_futex_hash(const char *v, unsigned *x, char *why, size_t len)
{
    return nlp_parse_futex_hash(v, x, why, len);
}

static int parse_flag(const char *v, unsigned *x, char *why, size_t len)
{
    int on = 0;
    int rc = nlp_parse_flag(v, &on, why, len);
    *x = (unsigned)on;
    return rc;
}

/* The options' values. 0 or 2 (one sentence said). */
static int check_options(run_choices_t *c)
{
    if (check_value("--stats-stacks", c->stacks, nlp_parse_stats_stacks) ||
        check_value("--stats-format", c->format, parse_format) ||
        check_value("--futex-hash", c->futex_hash, parse_futex_hash) ||
        check_algorithms(c->lock, c->rwlock, c->spin, ""))
        return 2;
    if (c->stacks || c->format)
        c->stats = 1;
    if (c->topo) {
        nl_topology_t *t = malloc(sizeof *t);
        char err[512];
        if (!t)
            return 1;
        int rc = nl_topology_parse(c->topo, t, err, sizeof err);
        free(t);
        if (rc) {
            fprintf(stderr, "numalock run: %s\n", err);
            return 2;
        }
    }
    return 0;
}

/* The environment's values for what no option gave, by the same checks:
 * a bad one refuses the run as a bad option does. 0 or 2. */
static int check_environment(run_choices_t *c)
{
    char err[512];
    const char *v;
    if (check_algorithms(c->lock ? NULL : getenv(NLP_ENV_LOCK), NULL, NULL, NLP_ENV_LOCK ": ") ||
        check_algorithms(NULL, c->rwlock ? NULL : getenv(NLP_ENV_RWLOCK), NULL, NLP_ENV_RWLOCK ": ") ||
        check_algorithms(NULL, NULL, c->spin ? NULL : getenv(NLP_ENV_SPIN), NLP_ENV_SPIN ": ") ||
        (!c->topo && nl_cli_apply_topology(NULL, "numalock run")))
        return 2;
    if ((v = getenv(NLP_ENV_WAIT)) && *v && nl_wait_set_policy(v, err, sizeof err)) {
        fprintf(stderr, "numalock run: %s: %s\n", NLP_ENV_WAIT, err);
        return 2;
    }
    if ((v = getenv(NLP_ENV_CNA_FAIRNESS)) && *v && nl_cna_set_fairness(v, err, sizeof err)) {
        fprintf(stderr, "numalock run: %s: %s\n", NLP_ENV_CNA_FAIRNESS, err);
        return 2;
    }
    if ((v = getenv(NLP_ENV_FUTEX)) && *v && nl_futex_set_path(v, err, sizeof err)) {
        fprintf(stderr, "numalock run: %s: %s\n", NLP_ENV_FUTEX, err);
        return 2;
    }
    if (!c->futex_hash && check_value(NLP_ENV_FUTEX_HASH, getenv(NLP_ENV_FUTEX_HASH), parse_futex_hash))
        return 2;
    if (check_value(NLP_ENV_STATS_TOP, getenv(NLP_ENV_STATS_TOP), nlp_parse_stats_top) ||
        (!c->stacks && check_value(NLP_ENV_STATS_STACKS, getenv(NLP_ENV_STATS_STACKS), nlp_parse_stats_stacks)) ||
        (!c->format && check_value(NLP_ENV_STATS_FORMAT, getenv(NLP_ENV_STATS_FORMAT), parse_format)) ||
        (!c->stats && check_value(NLP_ENV_STATS, getenv(NLP_ENV_STATS), parse_flag)))
        return 2;
    v = getenv(NLP_ENV_STATS);
    if (!c->stats && v && !strcmp(v, "1"))
        c->stats = 1; /* as --stats */
    return 0;
}

/* LD_PRELOAD: the preload library (beside this executable's ../lib,
 * paths.h) first, then whatever the caller had. 0, 1 or 2. */
static int set_preload(void)
{
    char lib[PATH_MAX + 64];
    if (nl_cli_lib_file(PRELOAD_NAME, lib, sizeof lib)) {
        fprintf(stderr, "numalock run: cannot find the preload library '%s': build or install it with the command\n",
                lib);
        return 2;
    }
    char *real = realpath(lib, NULL);
    if (real) {
        snprintf(lib, sizeof lib, "%s", real);
        free(real);
    }
    const char *old = getenv("LD_PRELOAD");
    size_t plen = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(plen);
    if (!preload)
        return 1;
    snprintf(preload, plen, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    return 0;
}

/* The program's environment: the options' choices, and the profile's file
 * (statsfile, created here) when the profile is on. 0 or 1. */
static int set_environment(const run_choices_t *c, char *statsfile)
{
    if (c->lock)
        setenv(NLP_ENV_LOCK, c->lock, 1);
    if (c->rwlock)
        setenv(NLP_ENV_RWLOCK, c->rwlock, 1);
    if (c->spin)
        setenv(NLP_ENV_SPIN, c->spin, 1);
    if (c->topo)
        setenv("NUMALOCK_TOPOLOGY", c->topo, 1);
    if (c->futex_hash)
        setenv(NLP_ENV_FUTEX_HASH, c->futex_hash, 1);
    if (!c->stats) {
        unsetenv(NLP_ENV_STATS);
        unsetenv(NLP_ENV_STATS_FILE);
        return 0;
    }
    int fd = mkstemp(statsfile);
    if (fd < 0) {
        fprintf(stderr, "numalock run: cannot create a file for the lock profile in /tmp: %s\n", strerror(errno));
        return 1;
    }
    close(fd);
    setenv(NLP_ENV_STATS, "1", 1);
    setenv(NLP_ENV_STATS_FILE, statsfile, 1);
    if (c->stacks)
        setenv(NLP_ENV_STATS_STACKS, c->stacks, 1);
    if (c->format)
        setenv(NLP_ENV_STATS_FORMAT, c->format, 1);
    return 0;
}

/* Runs argv[0] with its arguments, waits for it (passing on the requests to
 * terminate sent to us alone: the program owns the terminal's signals),
 * prints the profile; its status. */
static int run_program(char **argv, const char *statsfile)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "numalock run: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "numalock run: cannot run '%s': %s\n", argv[0], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (statsfile)
        print_file(statsfile);
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

int nl_cli_run(int argc, char **argv, const nl_cli_command_t *self)
{
    run_choices_t c = { 0 };
    const nl_opt_t opts[] = {
        { "--lock", "NAME", "the lock algorithm for pthread mutexes (NUMALOCK_LOCK)", &c.lock, NULL },
        { "--rwlock", "NAME", "the read-write algorithm for pthread rwlocks (NUMALOCK_RWLOCK)", &c.rwlock, NULL },
        { "--spin", "NAME", "the lock algorithm for pthread spin locks (NUMALOCK_SPIN)", &c.spin, NULL },
        { "--topology", "SPEC", NL_CLI_TOPOLOGY_FORMS " (NUMALOCK_TOPOLOGY)", &c.topo, NULL },
        { "--stats", NULL, "print a lock profile at exit (NUMALOCK_STATS=1)", NULL, &c.stats },
        { "--stats-stacks", "N", "frames of the stack shown where each object was first locked, 0 to 64 (implies --stats)",
          &c.stacks, NULL },
        { "--stats-format", "FORMAT", "the profile as text (the default) or json, one object per process a line (implies --stats)",
          &c.format, NULL },
        { "--futex-hash", "N", "slots of the program's private futex hash, a power of two, or 0: the global hash "
          "(NUMALOCK_FUTEX_HASH)", &c.futex_hash, NULL },
        { 0 },
    };
    /* the program starts at the first argument that is no option, or after "--" */
    int i, rc = nl_cli_opts(self, opts, argc, argv, 1, NL_OPTS_OPERANDS, &i);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (i >= argc) {
        fprintf(stderr, "numalock run: no program given (usage: numalock %s)\n", self->synopsis);
        return 2;
    }
    if ((rc = check_options(&c)) || (rc = check_environment(&c)) || (rc = set_preload()))
        return rc;
    char statsfile[] = "/tmp/numalock-stats.XXXXXX";
    if (set_environment(&c, statsfile))
        return 1;
    rc = run_program(argv + i, c.stats ? statsfile : NULL);
    if (c.stats)
        unlink(statsfile);
    return rc;
}

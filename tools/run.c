/*
 * `numalock run --lock NAME [--rwlock NAME] [--spin NAME] [--topology SPEC] [--stats]
 *               [--stats-stacks N] [--stats-format text|json] -- PROGRAM ARGS...`
 *
 * Runs an unmodified program with libnumalock-preload.so, so that its pthread
 * mutexes (with their condition variables and rwlocks) run on a numalock
 * algorithm. Names are checked before the program starts; the program's exit
 * status is returned (128 + N when a signal N ended it). With --stats the
 * preload library writes its lock profile to a temporary file at exit, which
 * is printed here to stderr (the program's stdout stays the program's).
 * --stats-stacks N adds the N-frame stack where each listed object was first
 * locked; --stats-format json writes one JSON object per process, one a line.
 * Either implies --stats.
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
#include "policy.h"
#include "numalock_cli.h"
#include "../bench/opts.h"
#include "paths.h"

#define PRELOAD_NAME "libnumalock-preload.so"

static int usage(void)
{
    fprintf(stderr, "usage: numalock run [--lock NAME] [--rwlock NAME] [--spin NAME] [--topology SPEC] [--stats] "
                    "[--stats-stacks N] [--stats-format text|json] -- PROGRAM [ARGS...]\n");
    return 2;
}

/* The preload library: beside this executable's ../lib (paths.h). */
static int find_preload(char *out, size_t len)
{
    return nl_cli_lib_file(PRELOAD_NAME, out, len);
}

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

int nl_cli_run(int argc, char **argv)
{
    const char *lock = NULL, *topo = NULL, *rwlock = NULL, *spin = NULL, *stacks = NULL, *format = NULL;
    int stats = 0, i;
    char names[1024], why[512], err[1536];
    const nl_opt_t opts[] = {
        { "--lock", "NAME", "the lock algorithm for pthread mutexes", &lock, NULL },
        { "--rwlock", "NAME", "the read-write algorithm for pthread rwlocks", &rwlock, NULL },
        { "--spin", "NAME", "the lock algorithm for pthread spin locks", &spin, NULL },
        { "--topology", "SPEC", NL_CLI_TOPOLOGY_FORMS, &topo, NULL },
        { "--stats", NULL, "print a lock profile at exit", NULL, &stats },
        { "--stats-stacks", "N", "frames of the stack shown where each object was first locked, 0 to 64 (implies --stats)",
          &stacks, NULL },
        { "--stats-format", "FORMAT", "the profile as text (the default) or json, one object per process a line (implies --stats)",
          &format, NULL },
        { 0 },
    };
    /* the program starts at the first argument that is no option, or after "--" */
    i = nl_opts_parse(opts, argc, argv, 1, NL_OPTS_OPERANDS, NULL, err, sizeof err);
    if (i < 0) {
        fprintf(stderr, "numalock run: %s\n", err);
        return 2;
    }
    if (i >= argc) {
        fprintf(stderr, "numalock run: no program given\n");
        return usage();
    }
    if (stacks) {
        unsigned frames;
        if (nlp_parse_stats_stacks(stacks, &frames, why, sizeof why)) {
            fprintf(stderr, "numalock run: --stats-stacks '%s' is not valid: %s\n", stacks, why);
            return 2;
        }
        stats = 1;
    }
    if (format) {
        int json;
        if (nlp_parse_stats_format(format, &json, why, sizeof why)) {
            fprintf(stderr, "numalock run: --stats-format '%s' is not valid: %s\n", format, why);
            return 2;
        }
        stats = 1;
    }
    if (lock) {
        const nl_lock_ops_t *ops = nl_lock_find(lock);
        if (!ops) {
            fprintf(stderr, "numalock run: unknown lock '%s': valid locks are %s\n", lock,
                    nlp_interposable_names(names, sizeof names));
            return 2;
        }
        if (nlp_interposable(ops, why, sizeof why)) {
            fprintf(stderr, "numalock run: lock '%s' cannot replace pthread mutexes: %s; valid locks are %s\n", lock,
                    why, nlp_interposable_names(names, sizeof names));
            return 2;
        }
    }
    if (rwlock) {
        const nl_lock_ops_t *ops = nl_lock_find(rwlock);
        if (!ops || nlp_rw_usable(ops, why, sizeof why)) {
            if (!ops)
                snprintf(why, sizeof why, "'%s' is not a registered lock", rwlock);
            fprintf(stderr, "numalock run: unknown rwlock algorithm '%s': %s; valid are %s (default: the built-in reader-preferring lock)\n",
                    rwlock, why, nlp_rw_names(names, sizeof names));
            return 2;
        }
    }
    if (spin) {
        const nl_lock_ops_t *ops = nl_lock_find(spin);
        if (!ops || nlp_spin_usable(ops, why, sizeof why)) {
            if (!ops)
                snprintf(why, sizeof why, "'%s' is not a registered lock", spin);
            fprintf(stderr, "numalock run: unknown spin lock algorithm '%s': %s; valid are %s\n", spin, why,
                    nlp_spin_names(names, sizeof names));
            return 2;
        }
    }
    if (topo) {
        nl_topology_t *t = malloc(sizeof *t);
        char err[512];
        if (!t)
            return 1;
        int rc = nl_topology_parse(topo, t, err, sizeof err);
        free(t);
        if (rc) {
            fprintf(stderr, "numalock run: %s\n", err);
            return 2;
        }
    } else if (nl_cli_apply_topology(NULL, "numalock run")) {
        return 2;
    }
    char lib[PATH_MAX + 64];
    if (find_preload(lib, sizeof lib)) {
        fprintf(stderr, "numalock run: cannot find the preload library '%s': build or install it with the command\n",
                lib);
        return 2;
    }
    char *real = realpath(lib, NULL);
    if (real) {
        snprintf(lib, sizeof lib, "%s", real);
        free(real);
    }

    /* LD_PRELOAD: ours first, then whatever the caller had */
    const char *old = getenv("LD_PRELOAD");
    size_t plen = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *preload = malloc(plen);
    if (!preload)
        return 1;
    snprintf(preload, plen, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    free(preload);
    if (lock)
        setenv(NLP_ENV_LOCK, lock, 1);
    if (rwlock)
        setenv(NLP_ENV_RWLOCK, rwlock, 1);
    if (spin)
        setenv(NLP_ENV_SPIN, spin, 1);
    if (topo)
        setenv("NUMALOCK_TOPOLOGY", topo, 1);
    char statsfile[] = "/tmp/numalock-stats.XXXXXX";
    if (stats) {
        int fd = mkstemp(statsfile);
        if (fd < 0) {
            fprintf(stderr, "numalock run: cannot create a file for the lock profile in /tmp: %s\n", strerror(errno));
            return 1;
        }
        close(fd);
        setenv(NLP_ENV_STATS, "1", 1);
        setenv(NLP_ENV_STATS_FILE, statsfile, 1);
        if (stacks)
            setenv(NLP_ENV_STATS_STACKS, stacks, 1);
        if (format)
            setenv(NLP_ENV_STATS_FORMAT, format, 1);
    } else {
        unsetenv(NLP_ENV_STATS);
        unsetenv(NLP_ENV_STATS_FILE);
    }

    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "numalock run: fork failed: %s\n", strerror(errno));
        if (stats)
            unlink(statsfile);
        return 1;
    }
    if (pid == 0) {
        execvp(argv[i], argv + i);
        fprintf(stderr, "numalock run: cannot run '%s': %s\n", argv[i], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    /* the program owns the terminal's signals; we only wait for it, and pass
     * on the requests to terminate that are sent to us alone */
    child_pid = pid;
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGTERM, forward_signal);
    signal(SIGHUP, forward_signal);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (stats) {
        print_file(statsfile);
        unlink(statsfile);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}

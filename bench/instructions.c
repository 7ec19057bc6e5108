/*
 * Instructions per uncontended acquire+release pair, counted by valgrind's
 * callgrind: repeatable where wall time is not (the same binary and inputs give
 * the same count whatever else the machine does).
 *
 * For each lock, the command re-runs itself under
 *   valgrind --tool=callgrind --instr-atstart=no
 * with NUMALOCK_INSTR_CHILD=PAIRS; the child switches instrumentation on only
 * around PAIRS acquire+release pairs (through the generic API) and valgrind
 * reports the instructions collected. Read-write locks are measured twice:
 * the write pair (instructions_per_pair) and, with NUMALOCK_INSTR_READ=1 in
 * the child, the read pair (read_instructions_per_pair). Locks with an
 * inline explicit API (include/numalock/spinlocks.h, cna.h) are measured a
 * third way, NUMALOCK_INSTR_READ=inline: the header's functions called
 * directly, as a C program would (inline_instructions_per_pair).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"
#include "numalock/cna.h"
#include "numalock/spinlocks.h"
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#else
#define HAVE_CALLGRIND 0
#endif

/* The explicit inline API of a lock: `pairs` acquire+release pairs on a lock
 * (and queue node) of this stack frame, counted; false if it has none. */
#define INLINE_PAIRS(T, ACQ, REL)                                                   \
    do {                                                                            \
        static T lk;                                                                \
        for (int i = 0; i < 1000; i++) { ACQ; REL; }                               \
        CALLGRIND_START_INSTRUMENTATION;                                            \
        for (long i = 0; i < pairs; i++) { ACQ; REL; }                             \
        CALLGRIND_STOP_INSTRUMENTATION;                                             \
        return true;                                                                \
    } while (0)

static bool inline_pairs(const char *name, long pairs)
{
#if HAVE_CALLGRIND
    nl_mcs_node_t mn;
    nl_cna_node_t cn;
    if (!strcmp(name, "tas"))
        INLINE_PAIRS(nl_tas_t, nl_tas_acquire(&lk), nl_tas_release(&lk));
    if (!strcmp(name, "ttas"))
        INLINE_PAIRS(nl_ttas_t, nl_ttas_acquire(&lk), nl_ttas_release(&lk));
    if (!strcmp(name, "ticket"))
        INLINE_PAIRS(nl_ticket_t, nl_ticket_acquire(&lk), nl_ticket_release(&lk));
    if (!strcmp(name, "hbo"))
        INLINE_PAIRS(nl_hbo_t, nl_hbo_acquire(&lk), nl_hbo_release(&lk));
    if (!strcmp(name, "mcs"))
        INLINE_PAIRS(nl_mcs_t, nl_mcs_lock(&lk, &mn), nl_mcs_unlock(&lk, &mn));
    if (!strcmp(name, "cna"))
        INLINE_PAIRS(nl_cna_t, nl_cna_lock(&lk, &cn), nl_cna_unlock(&lk, &cn));
    if (!strcmp(name, "cna-opt"))
        INLINE_PAIRS(nl_cna_t, nl_cna_lock(&lk, &cn), nl_cna_opt_unlock(&lk, &cn));
    if (!strcmp(name, "qspinlock"))
        INLINE_PAIRS(nl_qspinlock_t, nl_qspin_lock(&lk), nl_qspin_unlock(&lk));
    if (!strcmp(name, "qspinlock-cna"))
        INLINE_PAIRS(nl_qspinlock_t, nl_qspin_cna_lock(&lk), nl_qspin_cna_unlock(&lk));
#endif
    (void)name; (void)pairs;
    return false;
}

static bool has_inline_api(const char *name)
{
    static const char *const names[] = { "tas", "ttas", "ticket", "hbo", "mcs", "cna", "cna-opt",
                                         "qspinlock", "qspinlock-cna" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

/* Child side: called from bench_main when NUMALOCK_INSTR_CHILD is set. */
static int child(const nl_lock_ops_t *ops, long pairs)
{
#if HAVE_CALLGRIND
    bench_become_multithreaded();
    const char *mode = getenv("NUMALOCK_INSTR_READ");
    if (mode && !strcmp(mode, "inline"))
        return inline_pairs(ops->name, pairs) ? 0 : 1;
    nl_lock_t *l = nl_lock_create_ops(ops, NULL);
    if (!l)
        return 1;
    /* the read side of a read-write lock with NUMALOCK_INSTR_READ=1 */
    const char *rd = getenv("NUMALOCK_INSTR_READ");
    void (*acquire)(nl_lock_t *) = rd && *rd == '1' ? nl_lock_read_acquire : nl_lock_acquire;
    void (*release)(nl_lock_t *) = rd && *rd == '1' ? nl_lock_read_release : nl_lock_release;
    for (int i = 0; i < 1000; i++) {
        acquire(l);
        release(l);
    }
    CALLGRIND_START_INSTRUMENTATION;
    for (long i = 0; i < pairs; i++) {
        acquire(l);
        release(l);
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    nl_lock_destroy(l);
    return 0;
#else
    (void)ops; (void)pairs;
    return 1;
#endif
}

/* read: 0 the write pair, 1 the read pair, 2 the inline explicit API */
static int measure(bench_ctx_t *c, const nl_lock_ops_t *ops, long pairs, int read, double *per_pair)
{
    char exe[PATH_MAX], pairs_s[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(c->err, sizeof c->err, "cannot find the numalock executable: %s", strerror(errno));
        return EIO;
    }
    exe[n] = 0;
    snprintf(pairs_s, sizeof pairs_s, "%ld", pairs);
    int pipefd[2];
    if (pipe(pipefd))
        return errno;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pipefd[1], 2);
        close(pipefd[0]);
        close(pipefd[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        setenv("NUMALOCK_INSTR_CHILD", pairs_s, 1);
        setenv("NUMALOCK_INSTR_READ", read == 2 ? "inline" : read ? "1" : "0", 1);
        execlp("valgrind", "valgrind", "--tool=callgrind", "--instr-atstart=no",
               "--callgrind-out-file=/dev/null", exe, "bench", "instructions", "--lock", ops->name,
               "--quiet", (char *)NULL);
        _exit(127);
    }
    close(pipefd[1]);
    FILE *f = fdopen(pipefd[0], "r");
    char line[512];
    long long collected = -1;
    while (f && fgets(line, sizeof line, f)) {
        char *p = strstr(line, "Collected :");
        if (p)
            collected = atoll(p + strlen("Collected :"));
    }
    if (f)
        fclose(f);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) == 127) {
        snprintf(c->err, sizeof c->err,
                 "cannot run valgrind: install it (apt-get install valgrind) to count instructions");
        return ENOENT;
    }
    if (WEXITSTATUS(st) || collected < 0) {
        snprintf(c->err, sizeof c->err, "callgrind run for lock '%s' failed (exit %d)", ops->name,
                 WEXITSTATUS(st));
        return EIO;
    }
    *per_pair = (double)collected / (double)pairs;
    return 0;
}

static int instr_run(bench_ctx_t *c)
{
    long pairs = bench_opt_long(c, "pairs");
    const char *child_pairs = getenv("NUMALOCK_INSTR_CHILD");
    if (child_pairs)
        return child(c->locks[0], atol(child_pairs)) ? EIO : 0;
    if (!HAVE_CALLGRIND) {
        snprintf(c->err, sizeof c->err, "this build has no valgrind/callgrind.h: install valgrind and rebuild");
        return ENOENT;
    }
    if (pairs < 1) {
        snprintf(c->err, sizeof c->err, "bad instructions parameters: --pairs must be at least 1");
        return EINVAL;
    }
    /* pthread is always measured: the ratios are against it */
    const nl_lock_ops_t *locks[BENCH_MAX_LOCKS + 1];
    size_t n = bench_locks_with(c, "pthread", locks);
    double per[BENCH_MAX_LOCKS + 1], rper[BENCH_MAX_LOCKS + 1], iper[BENCH_MAX_LOCKS + 1], base = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = measure(c, locks[i], pairs, 0, &per[i]);
        /* read-write locks: the read side too; inline explicit APIs too */
        rper[i] = iper[i] = -1;
        if (!rc && (locks[i]->props & NL_PROP_RW))
            rc = measure(c, locks[i], pairs, 1, &rper[i]);
        if (!rc && has_inline_api(locks[i]->name))
            rc = measure(c, locks[i], pairs, 2, &iper[i]);
        if (rc)
            return rc;
        if (!strcmp(locks[i]->name, "pthread"))
            base = per[i];
    }
    for (size_t i = 0; i < n; i++) {
        bench_record_t *r = bench_new_record(c, locks[i], 1);
        if (!r)
            return ENOMEM;
        r->ops = (uint64_t)pairs;
        r->per_thread_ops = malloc(sizeof(uint64_t));
        if (r->per_thread_ops)
            r->per_thread_ops[0] = r->ops;
        r->throughput = r->duration_s = NAN; /* counts, not a rate */
        r->ratio = base > 0 ? base / per[i] : NAN; /* above 1: fewer instructions than pthread */
        snprintf(r->baseline, sizeof r->baseline, "pthread");
        snprintf(r->extra, sizeof r->extra, "\"instructions_per_pair\": %.2f", per[i]);
        if (rper[i] >= 0) {
            size_t len = strlen(r->extra);
            snprintf(r->extra + len, sizeof r->extra - len, ", \"read_instructions_per_pair\": %.2f",
                     rper[i]);
        }
        if (iper[i] >= 0) {
            size_t len = strlen(r->extra);
            snprintf(r->extra + len, sizeof r->extra - len, ", \"inline_instructions_per_pair\": %.2f",
                     iper[i]);
        }
    }
    return 0;
}

static const bench_opt_t instr_opts[] = {
    { "pairs", "20000", "acquire+release pairs counted per lock" },
    { NULL, NULL, NULL },
};

const bench_workload_t bench_instructions = {
    .name = "instructions",
    .description = "instructions per uncontended acquire+release (valgrind callgrind), ratio to pthread",
    .opts = instr_opts,
    .default_locks = "all",
    .default_threads = "1",
    .default_duration = "1",
    .run = instr_run,
};

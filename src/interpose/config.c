/*
 * Configuration of the preload library from the environment, read once at
 * start-up (the constructor, or the first intercepted call if that comes
 * first), and the per-thread kernel tid.
 *
 * Every variable with a bad value gets one line on stderr that names it, the
 * value and the valid forms, and the program runs on that variable's default
 * (include/numalock/interpose.h lists the variables, policy.c checks their
 * values as `numalock run` does; docs/PRELOAD.md the table). The library
 * itself never prints: its parsers return one sentence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "numalock/cna.h"
#include "preload.h"
#include "../core/roomy.h"
#include "../wait/load.h"

nlp_config_t nlp_g;

/* One line, from the first thread that stops; the others wait for its abort(). */
static void __attribute__((noreturn)) stop(const char *msg)
{
    static _Atomic int said;
    if (atomic_exchange(&said, 1))
        for (;;)
            pause();
    nlp_say(msg);
    abort();
}

void *nlp_block_get_slow(_Atomic(void *) *slot, const nl_lock_ops_t *ops, size_t size, size_t align)
{
    void *p = NULL;
    char msg[160];
    /* no memory for a lock: nothing sane to return from pthread_*_lock */
    if (posix_memalign(&p, align, size) || !p) {
        snprintf(msg, sizeof msg, "numalock preload: no memory for a %s lock (%zu bytes); stopping\n", ops->name,
                 size);
        stop(msg);
    }
    memset(p, 0, size);
    int rc = ops->init ? ops->init(p, NULL) : 0;
    if (rc) {
        snprintf(msg, sizeof msg, "numalock preload: cannot initialise a %s lock (%s); stopping\n", ops->name,
                 strerror(rc));
        stop(msg);
    }
    void *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(slot, &expect, p, memory_order_acq_rel, memory_order_acquire))
        return p;
    if (ops->destroy)
        ops->destroy(p);
    free(p);
    return expect;
}
_Atomic int nlp_fast;
_Atomic int nlp_ready;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

NL_TLS pid_t nlp_tls_tid;

pid_t nlp_gettid(void) { return nlp_tls_tid = (pid_t)syscall(SYS_gettid); }

static void atfork_child(void) { nlp_tls_tid = 0; }

/* "numalock preload: VAR='value' is not valid: REASON; using DEFAULT\n" */
static void bad_env(const char *var, const char *value, const char *reason, const char *fallback)
{
    char msg[2400];
    snprintf(msg, sizeof msg, "numalock preload: %s='%s' is not valid: %s; using %s\n", var, value, reason, fallback);
    nlp_say(msg);
}

/* a boolean variable: unset or empty = dflt, "0" or "1"; anything else is
 * reported and gives dflt */
static int env_bool(const char *var, int dflt)
{
    char why[64];
    int on;
    const char *v = getenv(var);
    if (!v || !*v)
        return dflt;
    if (nlp_parse_flag(v, &on, why, sizeof why) == 0)
        return on;
    bad_env(var, v, why, dflt ? "1" : "0");
    return dflt;
}

/* The release the preload calls for a lock whose release on a free lock is
 * not harmless (no NL_PROP_FREE_RELEASE): glibc's normal mutex ignores an
 * unlock of a free mutex, so a stray unlock must leave the lock working. */
static void release_if_held(void *l)
{
    if (NL_LIKELY(nlp_g.held(l)))
        nlp_g.ops->release(l);
}

static void spin_release_if_held(void *l)
{
    if (NL_LIKELY(nlp_g.spin_ops->held(l)))
        nlp_g.spin_ops->release(l);
}

static const nl_lock_ops_t *choose_mutex_lock(void)
{
    char why[1536];
    const nl_lock_ops_t *ops;
    const char *name = getenv(NLP_ENV_LOCK);
    if (!name || !*name)
        return nlp_default_lock();
    if (nlp_check_lock(name, &ops, why, sizeof why)) {
        bad_env(NLP_ENV_LOCK, name, why, "glibc's mutexes");
        return nl_lock_find(NLP_GLIBC_NAME);
    }
    return ops;
}

static void configure_rwlock(void)
{
    char why[1536];
    const nl_lock_ops_t *rw;
    const char *rwname = getenv(NLP_ENV_RWLOCK);
    if (!rwname || !*rwname)
        return;
    if (nlp_check_rwlock(rwname, &rw, why, sizeof why)) {
        bad_env(NLP_ENV_RWLOCK, rwname, why,
                nlp_g.mode == NLP_MODE_GLIBC ? "glibc's rwlocks" : "the built-in read-write lock");
        return;
    }
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return; /* --lock pthread: every object is glibc's */
    nlp_g.rw_ops = rw;
    nlp_g.rw_align = rw->align > NL_CACHELINE ? rw->align : NL_CACHELINE;
    nlp_g.rw_size = (rw->size + nlp_g.rw_align - 1) / nlp_g.rw_align * nlp_g.rw_align;
}

static void configure_spin(void)
{
    char why[1536];
    const nl_lock_ops_t *ops = NULL;
    const char *name = getenv(NLP_ENV_SPIN);
    if (name && *name && nlp_check_spin(name, &ops, why, sizeof why)) {
        const nl_lock_ops_t *d = nlp_g.mode == NLP_MODE_GLIBC ? NULL : nlp_default_spin_lock();
        bad_env(NLP_ENV_SPIN, name, why, d && strcmp(d->name, NLP_GLIBC_NAME) ? d->name : "glibc's spin locks");
        ops = NULL;
        name = NULL;
    }
    if (!name || !*name) /* the default; glibc's when the mutexes are glibc's (--lock pthread) */
        ops = nlp_g.mode == NLP_MODE_GLIBC ? NULL : nlp_default_spin_lock();
    if (!ops || !strcmp(ops->name, NLP_GLIBC_NAME))
        return; /* glibc's spin locks */
    nlp_g.spin_ops = ops;
    nlp_g.spin_acquire = ops->acquire;
    nlp_g.spin_try = ops->try_acquire;
    nlp_g.spin_release = (ops->props & NL_PROP_FREE_RELEASE) ? ops->release : spin_release_if_held;
}

static void configure_stats(const char *lock_name)
{
    nlp_profile_opts_t o = { .top = 20 };
    char why[256];
    const char *t = getenv(NLP_ENV_STATS_TOP);
    if (t && *t && nlp_parse_stats_top(t, &o.top, why, sizeof why))
        bad_env(NLP_ENV_STATS_TOP, t, why, "20");
    const char *v = getenv(NLP_ENV_STATS_STACKS);
    if (v && *v && nlp_parse_stats_stacks(v, &o.stacks, why, sizeof why))
        bad_env(NLP_ENV_STATS_STACKS, v, why, "0 (no stacks)");
    v = getenv(NLP_ENV_STATS_FORMAT);
    if (v && *v && nlp_parse_stats_format(v, &o.json, why, sizeof why))
        bad_env(NLP_ENV_STATS_FORMAT, v, why, "text");
    if (env_bool(NLP_ENV_STATS, 0) && !(nlp_g.stats = nlp_profile_init(lock_name, &o) == 0))
        nlp_say("numalock preload: no memory for the lock profile (NUMALOCK_STATS=1); running without it\n");
}

/* The futex path, and the program's private futex hash (sized before its
 * threads start, as far as the preload's start comes first). */
static void configure_futex(void)
{
    char why[512], msg[1024];
    unsigned slots;
    const char *v = getenv(NLP_ENV_FUTEX);
    if (v && *v && nl_futex_set_path(v, why, sizeof why))
        bad_env(NLP_ENV_FUTEX, v, why, "auto");
    v = getenv(NLP_ENV_FUTEX_HASH);
    if (!v || !*v)
        return;
    if (nlp_parse_futex_hash(v, &slots, why, sizeof why)) {
        bad_env(NLP_ENV_FUTEX_HASH, v, why, "the kernel's own futex hash");
    } else if (nlp_futex_hash_apply(slots, why, sizeof why)) {
        snprintf(msg, sizeof msg, "numalock preload: %s=%s: %s\n", NLP_ENV_FUTEX_HASH, v, why);
        nlp_say(msg);
    }
}

static void do_init(void)
{
    char msg[1200], err[512];
    nlp_resolve_real();
    const nl_lock_ops_t *ops = choose_mutex_lock();
    nl_topology_current();
    if (nl_topology_env_error()) {
        snprintf(msg, sizeof msg, "numalock preload: NUMALOCK_TOPOLOGY: %s; using auto\n", nl_topology_env_error());
        nlp_say(msg);
    }
    const char *w = getenv(NLP_ENV_WAIT);
    if (w && *w && nl_wait_set_policy(w, err, sizeof err))
        bad_env(NLP_ENV_WAIT, w, err, "the default waiting policy");
    const char *f = getenv(NLP_ENV_CNA_FAIRNESS);
    if (f && *f && nl_cna_set_fairness(f, err, sizeof err))
        bad_env(NLP_ENV_CNA_FAIRNESS, f, err, "the default, time:1ms");
    configure_futex();
    int external = env_bool("NUMALOCK_PRELOAD_EXTERNAL", 0); /* tests: force out-of-place storage */
    /* tests: the load sample reads the cgroup files every time (they run
     * in waiters, on the program's stacks: tests/interpose/small_stack.c) */
    if (env_bool("NUMALOCK_PRELOAD_SAMPLE_ALL", 0))
        nl_load_sample_cgroups_always();
    /* tests: call the lock's release even on a free lock (the deliberately
     * broken variant the stray-unlock test must catch) */
    int trust_release = env_bool("NUMALOCK_PRELOAD_TRUST_RELEASE", 0);
    nlp_g.ops = ops;
    if (!ops || !strcmp(ops->name, NLP_GLIBC_NAME)) {
        nlp_g.mode = NLP_MODE_GLIBC;
    } else {
        nlp_g.acquire = ops->acquire;
        nlp_g.try_acquire = ops->try_acquire;
        nlp_g.held = ops->held;
        nlp_g.release = (ops->props & NL_PROP_FREE_RELEASE) || trust_release ? ops->release : release_if_held;
        if ((ops->props & NL_PROP_ZERO_INIT) && ops->size <= NLP_INPLACE_BYTES && ops->align <= 8 && !external) {
            nlp_g.mode = NLP_MODE_INPLACE;
        } else {
            nlp_g.mode = NLP_MODE_EXTERNAL;
            nlp_g.ext_align = ops->align > NL_CACHELINE ? ops->align : NL_CACHELINE;
            nlp_g.ext_size = (ops->size + nlp_g.ext_align - 1) / nlp_g.ext_align * nlp_g.ext_align;
        }
    }
    configure_rwlock();
    configure_spin();
    /* tests: the broken variant the process-shared spin test must catch */
    nlp_g.spin_pshared_too = env_bool("NUMALOCK_PRELOAD_SPIN_PSHARED", 0);
    configure_stats(ops ? ops->name : NLP_GLIBC_NAME);
    pthread_atfork(NULL, NULL, atfork_child);
    atomic_store(&nlp_ready, 1);
    atomic_store(&nlp_fast, nlp_g.mode == NLP_MODE_INPLACE && !nlp_g.stats);
}

/* do_init reads the environment and the topology: on a roomy stack (the
 * first pthread call may come from a thread with a small one) */
static void do_init_roomy(void) { nl_on_roomy_stack(do_init); }

void nlp_init_slow(void) { pthread_once(&init_once, do_init_roomy); }

__attribute__((constructor)) static void nlp_ctor(void) { nlp_ensure_init(); }

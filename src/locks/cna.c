/*
 * CNA: compact NUMA-aware lock (Dice & Kogan, EuroSys 2019, sections 4-6,
 * figures 2-5). The lock is one word, the tail of the main queue; acquiring
 * performs one atomic instruction (the swap of figure 3). The unlock passes
 * the lock to a waiter on the holder's node when there is one, moving the
 * waiters before it to a secondary queue whose head travels in the
 * successor's spin field (see cna_impl.h), and sends the secondary queue back
 * when the main queue has no local waiter or the fairness rule says so.
 *
 * Waiting (src/wait/wait.h): the gate while the process is overloaded, then
 * the spin field, a 64-bit grant word (nl_wait_grant64: spin while the
 * waiter has a CPU, park when the wait is long); the granter wakes it only
 * if it parked.
 * The unlock's wait for a successor that has swapped the tail but not linked
 * itself yet spins then yields.
 *
 * cna-opt adds section 6's shuffle reduction (cna_pass(..., true)).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cna_impl.h"

_Static_assert(sizeof(nl_cna_node_t) <= 120, "CNA node fits a pool slot");
_Static_assert(_Alignof(nl_cna_node_t) >= 8, "CNA nodes are 8-aligned (grant values)");

/* ---- fairness rule (process-wide) --------------------------------------- */
_Atomic int nl_cna_mode;
_Atomic uint64_t nl_cna_limit_ns = 1000000;
_Atomic uint64_t nl_cna_mask = 0xffff;
static char fairness_name[64] = "time:1ms";

static int parse_fairness(const char *spec, int *mode, uint64_t *value)
{
    char *end;
    if (!strncmp(spec, "time:", 5)) {
        const char *p = spec + 5;
        if (*p < '0' || *p > '9')
            return -1;
        unsigned long long v = strtoull(p, &end, 10);
        uint64_t mul;
        if (!strcmp(end, "ns")) mul = 1;
        else if (!strcmp(end, "us")) mul = 1000;
        else if (!strcmp(end, "ms")) mul = 1000000;
        else if (!strcmp(end, "s")) mul = 1000000000;
        else return -1;
        if (v == 0 || v > 60000000000ull / mul)
            return -1;
        *mode = NL_CNA_MODE_TIME;
        *value = v * mul;
        return 0;
    }
    if (!strncmp(spec, "random:", 7)) {
        const char *p = spec + 7;
        if (*p < '0' || *p > '9')
            return -1;
        unsigned long long v = strtoull(p, &end, 10);
        if (*end || v < 2 || v > (1ull << 40) || (v & (v - 1)))
            return -1;
        *mode = NL_CNA_MODE_RANDOM;
        *value = v - 1; /* mask */
        return 0;
    }
    return -1;
}

int nl_cna_set_fairness(const char *spec, char *err, size_t errlen)
{
    int mode;
    uint64_t value;
    if (!spec || parse_fairness(spec, &mode, &value)) {
        if (err && errlen)
            snprintf(err, errlen,
                     "unknown CNA fairness rule '%s': valid forms are time:N{ns,us,ms,s} (N > 0, at "
                     "most 60 s) and random:N (N a power of two, at least 2)",
                     spec ? spec : "(null)");
        return EINVAL;
    }
    if (mode == NL_CNA_MODE_TIME)
        atomic_store_explicit(&nl_cna_limit_ns, value, memory_order_relaxed);
    else
        atomic_store_explicit(&nl_cna_mask, value, memory_order_relaxed);
    snprintf(fairness_name, sizeof fairness_name, "%s", spec);
    atomic_store_explicit(&nl_cna_mode, mode, memory_order_release);
    return 0;
}

const char *nl_cna_fairness(void)
{
    if (atomic_load_explicit(&nl_cna_mode, memory_order_acquire) == NL_CNA_MODE_UNSET)
        nl_cna_fairness_init();
    return fairness_name;
}

int nl_cna_fairness_init(void)
{
    const char *env = getenv("NUMALOCK_CNA_FAIRNESS");
    int mode;
    uint64_t value;
    if (env && *env && !parse_fairness(env, &mode, &value)) {
        int expect = NL_CNA_MODE_UNSET;
        if (mode == NL_CNA_MODE_TIME)
            atomic_store_explicit(&nl_cna_limit_ns, value, memory_order_relaxed);
        else
            atomic_store_explicit(&nl_cna_mask, value, memory_order_relaxed);
        if (atomic_compare_exchange_strong(&nl_cna_mode, &expect, mode))
            snprintf(fairness_name, sizeof fairness_name, "%s", env);
    } else {
        int expect = NL_CNA_MODE_UNSET; /* unset or bad: the default, time:1ms */
        atomic_compare_exchange_strong(&nl_cna_mode, &expect, NL_CNA_MODE_TIME);
    }
    return atomic_load_explicit(&nl_cna_mode, memory_order_acquire);
}

/* ---- figure 3: lock ------------------------------------------------------ */
/* lines 10-13, out of line so the uncontended path stays small; the tail
 * was not empty. As MCS (mcs.c): the gate first while the system is
 * overloaded, and a waiter that parked wakes its successor once granted. */
static bool cna_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_cna_t *)l)->tail, memory_order_relaxed) != NULL;
}

void nl_cna_lock_slow(nl_cna_t *l, nl_cna_node_t *me)
{
    nl_waiter_t w;
    nl_wait_begin(&w, l, cna_busy, true); /* as MCS: the tail does not tell */
    nl_cna_node_t *tail = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);
    if (tail) {
        me->numa = nl_self_node(w.self);
        me->leaf = w.self->leaf;
        atomic_store_explicit(&tail->next, me, memory_order_release);
        NL_QUEUE_AWAIT(&w, me, spin);
    }
    nl_wait_end(&w);
}

/* The fast path is inline (nl_cna_lock, include/numalock/cna.h): one CAS of
 * an empty tail (figure 3 swaps; the CAS lets the slow path pass the gate
 * before it queues). numa and since are left alone: unlock ignores them while
 * spin is 0 (figure 3's socket = -1, without the store). */

static inline int cna_trylock(nl_cna_t *l, nl_cna_node_t *me) { return NL_QUEUE_TRY(&l->tail, me, spin); }

/* ---- figure 4: unlock ---------------------------------------------------- */
/* The fast path is inline (nl_cna_unlock): both queues empty, CAS the tail
 * back to empty. Here: a successor, a secondary queue, or a lost CAS. */
static void cna_unlock_slow(nl_cna_t *l, nl_cna_node_t *me, bool reduce)
{
    nl_cna_node_t *next = atomic_load_explicit(&me->next, memory_order_acquire);
    if (!next) {
        nl_cna_node_t *sec = cna_sec_head(me);
        nl_cna_node_t *expect = me;
        if (!sec) {
            /* the CAS to NULL failed: a waiter is linking itself */
        } else if (atomic_compare_exchange_strong_explicit(&l->tail, &expect, sec->sec_tail,
                                                           memory_order_acq_rel,
                                                           memory_order_relaxed)) {
            /* the secondary queue becomes the main queue; its head gets the lock */
            sec->since = 0;
            nl_grant64(&sec->spin, NL_CNA_GRANTED);
            return;
        }
        /* a waiter swapped the tail: wait until it links itself */
        nl_waiter_t w;
        nl_waiter_init(&w);
        next = NL_QUEUE_NEXT(&w, me);
    }
    cna_pass(me, next, reduce);
}

int nl_cna_trylock(nl_cna_t *l, nl_cna_node_t *me) { return cna_trylock(l, me); }
void nl_cna_unlock_slow(nl_cna_t *l, nl_cna_node_t *me) { cna_unlock_slow(l, me, false); }
void nl_cna_opt_unlock_slow(nl_cna_t *l, nl_cna_node_t *me) { cna_unlock_slow(l, me, true); }

/* ---- node-free form: the node comes from the thread's pool --------------- */
void nl_cna_acquire(nl_cna_t *l) { nl_cna_lock(l, nl_qnode_get(l)); }

int nl_cna_try(nl_cna_t *l)
{
    nl_cna_node_t *me = nl_qnode_get(l);
    if (cna_trylock(l, me) == 0)
        return 0;
    nl_qnode_put(me);
    return EBUSY;
}

static inline __attribute__((always_inline)) void cna_unlock(nl_cna_t *l, nl_cna_node_t *me,
                                                             bool reduce)
{
    if (reduce)
        nl_cna_opt_unlock(l, me);
    else
        nl_cna_unlock(l, me);
}

static inline __attribute__((always_inline)) void cna_release(nl_cna_t *l, bool reduce)
{
    nl_self_t *s = nl_self();
    nl_cna_node_t *me = nl_qnode_top(s, l); /* the usual LIFO case */
    if (NL_LIKELY(me)) {
        cna_unlock(l, me, reduce);
        nl_qnode_pop(s);
        return;
    }
    me = nl_qnode_find(l);
    cna_unlock(l, me, reduce);
    nl_qnode_put(me);
}

void nl_cna_release(nl_cna_t *l) { cna_release(l, false); }
void nl_cna_opt_release(nl_cna_t *l) { cna_release(l, true); }

static void op_acquire(void *l) { nl_cna_acquire(l); }
static int op_try(void *l) { return nl_cna_try(l); }
static void op_release(void *l) { nl_cna_release(l); }
static void op_opt_release(void *l) { nl_cna_opt_release(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_cna = {
    .name = "cna",
    .description = "compact NUMA-aware MCS variant: one word, secondary queue for remote waiters",
    .paper = "Dice & Kogan 2019 (CNA) sec. 4-5, fig. 2-5",
    .size = sizeof(nl_cna_t), .align = 8,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
};

NL_HIDDEN const nl_lock_ops_t nl_ops_cna_opt = {
    .name = "cna-opt",
    .description = "CNA with the shuffle reduction (scan 1 hand-over in 128 while the secondary queue is empty)",
    .paper = "Dice & Kogan 2019 (CNA) sec. 6",
    .size = sizeof(nl_cna_t), .align = 8,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_opt_release,
};

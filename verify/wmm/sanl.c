/* SANL (src/locks/sanl_impl.h, as sanl.c wraps it): each thread executes
 * one request whose function is the critical section (client_deleg.h); the
 * in-place lock ll is the library's qspinlock-cna (its own check:
 * qspinlock.c). The lock's fields are set by sanl_init_impl and the
 * parameters below (nl_sanl_init resolves them from a file and the
 * environment, which the checker has not); the request slots as in fc.c's
 * check (deleg_env.h), each thread's slot joined at init (NL_SANL_FIRST_USE:
 * by the thread's first request: the chunk of slots allocated by whichever
 * thread comes first, the joined count and the slots' high-water mark).
 *
 * Delegation mode, forced by the parameters (the vote, which samples one
 * section in SANL_SAMPLE and needs SANL_MIN_JOINED threads, cannot be driven
 * in a run this small): a thread becomes the server by a try on a free ll,
 * or sends its request and waits for the answer, and takes ll (and its
 * request back) when it sees no server and ll free. A server walks the
 * request array once (t_s = 1), then downgrades and walks it a last time.
 * The verification clock does not advance, so no client's T_w runs out:
 * NL_SANL_VERIFY_TW has it over at the first poll (sanl_impl.h), so that the
 * client takes the paths after it (sleep on the answer when it sees a server
 * up, else queue on ll). NL_SANL_FLIP: thread 0 turns the lock to in-place
 * mode before its request, so either thread may run in place (qspinlock-cna)
 * while the other delegates, as around a switch. Requests never wait on a
 * condition (sanl_cond_wait's hand-back is not checked). */
#define NL_VERIFY_POOL_BYTES 32768 /* a chunk of 64 two-line slots per thread, tail nodes */
#include "env.h"
#include "locks/qspinlock.c"
#include "locks/tail_nodes.c"
#include "locks/sanl_impl.h"
#include "env.c"
#include "deleg_env.h"

/* CNA's fairness rule for ll, as in qspinlock.c's check */
_Atomic int nl_cna_mode = NL_CNA_MODE_RANDOM;
_Atomic uint64_t nl_cna_limit_ns, nl_cna_mask = 1;
int nl_cna_fairness_init(void) { return NL_CNA_MODE_RANDOM; }

static void sanl_verify_init(nl_sanl_t *l)
{
    sanl_init_impl(l);
    l->cfg.policy = NL_SANL_SERVING_FIRST;
    l->cfg.mode = NL_SANL_DELEGATE;
    l->cfg.theta_l = 174;
    l->cfg.theta_f = 573;
    l->cfg.ls_k = 1;
    l->cfg.t_s = 1;
    l->cfg.t_w_ns = 4000;
    l->cfg.boundary = 4;
    qs_pending_patience = 1;
#ifndef NL_SANL_FIRST_USE
    for (int id = 0; id < NL_THREADS; id++)
        (void)sanl_slot(l, id);
#endif
}

/* NL_SANL_FLIP: thread 0 turns the lock to in-place mode before its request
 * (a relaxed store, as the lock's tests flip it); each thread's request
 * reads either mode */
static void *sanl_verify_execute(nl_sanl_t *l, nl_deleg_fn fn, void *arg, int tid)
{
#ifdef NL_SANL_FLIP
    if (tid == 0)
        __atomic_store_n(&l->cfg.mode, NL_SANL_INPLACE, __ATOMIC_RELAXED);
#endif
    (void)tid;
    return sanl_execute_impl(l, fn, arg);
}

#define NL_DELEG_T nl_sanl_t
#define NL_DELEG_INIT(l) sanl_verify_init(l)
#define NL_EXECUTE(l, fn, arg) sanl_verify_execute(l, fn, arg, tid)
#include "client_deleg.h"

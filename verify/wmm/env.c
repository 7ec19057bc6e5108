#include <errno.h>
#include "wait/load.h"  /* the layer's state and futex, which this environment stands in for */
#include "wait/knobs.h"
#include "wait/futex.h"

/*
 * The verification environment: what the locks call outside their own
 * files (src/wait, src/core, src/topology), reduced to what a model checker
 * can read. A check compiles one lock's source file and this file into one
 * program under NL_VERIFY (GenMC takes one translation unit).
 *
 *   - Waiting: the spin policy (nl_wait_policy.kind is NL_WAIT_SPIN, so no
 *     lock reaches the load sampler or the gate), where a waiter polls its
 *     word; with NL_VERIFY_PARK it parks at its first step instead, on the
 *     futex model below, through the library's own grant-word protocol
 *     (src/wait/grant.c, compiled here unchanged). A poll loop is an await:
 *     GenMC explores it as "the loop ends once the word changes" (its
 *     spin-assume), so each execution is finite.
 *   - The clock never advances and the pause instruction is nothing
 *     (the model checker's machine in src/core/machine.h).
 *   - The thread record is the library's own (a TLS pointer to a zeroed
 *     block per thread); a thread's node is the one the client gave it
 *     (nl_verify_set_node), so node-aware hand-overs have both cases.
 *   - Statistics are off: the counters are never read.
 */
#define NL_VERIFY_MAX_THREADS 8

NL_TLS nl_self_t *nl_self_tls;
nl_wait_policy_t nl_wait_policy = { .kind = NL_WAIT_SPIN };
_Atomic uint64_t nl_ticks_per_ms = 1000000;
_Atomic uint32_t nl_topo_gen = 1;
_Atomic uint64_t nl_load_next = UINT64_MAX;
_Atomic uint32_t nl_load_runnable, nl_budget_cpus = 1024, nl_count_spinners, nl_spinning, nl_parked,
    nl_gate_waiters, nl_preempted;
_Atomic uint32_t nl_gate_passive[NL_GATE_BUCKETS];

static NL_TLS int verify_node, verify_leaf;

/* The topology: 2 nodes and no other level (leaf d = node d). A check that
 * defines NL_VERIFY_LEVELS as 2 gets a second level above the nodes, one
 * domain holding both (the N-level locks' tree: a lock per node, one for
 * that domain, the root). */
#if defined(NL_VERIFY_LEVELS) && NL_VERIFY_LEVELS == 2
static nl_topology_t verify_topo = { .nnodes = 2, .nlevels = 2, .ndomains = { 2, 1 },
                                     .up = { { 0, 1 }, { 0, 0 } } };
#else
static nl_topology_t verify_topo = { .nnodes = 2, .nlevels = 1, .ndomains = { 2 } };
#endif
const nl_topology_t *nl_topology_current(void) { return &verify_topo; }
int nl_topology_nodes(void) { return verify_topo.nnodes; }
/* the machine's CPUs: as many as nodes (a wake-up batch, as CST's
 * nl_cst_wake_batch sizes it, of one parked waiter) */
int nl_cpus_online(void) { return 2; }

/* src/core/thread.c's allocation for good (mapped chunks there), and its stop */
void *nl_forever_alloc(size_t size)
{
    void *p = NULL;
    posix_memalign(&p, NL_CACHELINE, size);
    memset(p, 0, size);
    return p;
}
void nl_no_memory(const char *what)
{
    (void)what;
    abort();
}

nl_self_t *nl_self_create(void)
{
    static nl_self_t records[NL_VERIFY_MAX_THREADS];
    static _Atomic int used;
    int id = atomic_fetch_add_explicit(&used, 1, memory_order_relaxed);
    nl_self_t *s = &records[id];
    s->id = id;
    s->pinned_node = s->pinned_leaf = -1;
    s->topo = &verify_topo;
    s->rng = 0x9E3779B97F4A7C15ull;
    nl_self_tls = s;
    nl_self_node_refresh(s);
    return s;
}

/* The calling thread's node (and leaf) from now on. */
static void nl_verify_set_node(int node, int leaf)
{
    verify_node = node;
    verify_leaf = leaf;
    nl_self_node_refresh(nl_self());
}

int nl_self_node_refresh(nl_self_t *s)
{
    s->node = verify_node;
    s->leaf = verify_leaf;
    s->topo_gen = 1;
    s->refresh = UINT32_MAX;
    return s->node;
}

int nl_current_node(void) { return nl_self_node(nl_self()); }

void nl_wait_step_slow(nl_waiter_t *w) { (void)w; }

/* Random draws (nl_rand): GenMC's __VERIFIER_nondet_int is a pseudo-random
 * number, not a choice it explores. A draw here reads a coin of its own
 * (the thread's record id, its count of draws) that the coin thread sets
 * to 1: the read takes the coin's initial 0 or the 1, and GenMC explores
 * both. The client starts the coin thread (NL_VERIFY_COINS, workers.h)
 * before its workers; a draw without it is an error. */
#ifndef NL_VERIFY_DRAWS
#define NL_VERIFY_DRAWS 4
#endif
static _Atomic uint32_t verify_coins[NL_VERIFY_MAX_THREADS][NL_VERIFY_DRAWS];
static int verify_coins_on;
static NL_TLS int verify_draws;

uint64_t nl_verify_draw(void)
{
    assert(verify_coins_on && verify_draws < NL_VERIFY_DRAWS);
    return atomic_load_explicit(&verify_coins[nl_self()->id][verify_draws++], memory_order_relaxed);
}

/* every record's coins (main's among them if its init made one); the loop
 * unrolled, so that a check whose loops are bounded (-u) keeps its bound
 * for the waits it checks */
static void *verify_coin_thread(void *arg)
{
    (void)arg;
#pragma GCC unroll 32
    for (int c = 0; c < NL_VERIFY_MAX_THREADS * NL_VERIFY_DRAWS; c++)
        atomic_store_explicit(&verify_coins[c / NL_VERIFY_DRAWS][c % NL_VERIFY_DRAWS], 1, memory_order_relaxed);
    return NULL;
}

/* The futex, as the kernel gives it: a wait sleeps only if the word still
 * holds `expected` once the wait is announced, and a wake after a store to
 * the word ends every sleep on it that began before the store (the fences
 * stand for the kernel's hash-bucket lock). A sleep ends only by a wake of
 * its own word's bucket; a sleep nobody ends is a non-terminating loop that
 * --check-liveness reports (a lost wake-up). Sleepers of a bucket wake
 * together: spurious wake-ups, which every caller must survive anyway.
 *
 * Two paths, as the library has (src/core/machine.h): the classic call
 * (the default here), and with NL_VERIFY_FUTEX2 futex_wait/futex_wake with
 * FUTEX2_NUMA, where a two-word futex (nl_futex_wait_node) is found in the
 * bucket of the node its second word names when the kernel reads it, at
 * the wait and again at the wake (there before the wake's barrier): a wake
 * that reads another node than its sleep did misses it. The waiter's node written there is 1 + its node
 * (never the word's initial 0), so a wake that reads the half before the
 * waiter's write looks in another bucket. */
#define FUTEX_BUCKETS 16
static _Atomic uint32_t futex_wakes[FUTEX_BUCKETS];
static _Atomic uint32_t *futex_bucket(void *addr, uint32_t node)
{
    return &futex_wakes[(((uintptr_t)addr >> 3) + 5u * node) % FUTEX_BUCKETS];
}

/* A 64-bit grant word's futex is its whole word here (nl_futex64 tags the
 * address): the checker has no mixed-size accesses. */
static uint64_t futex_value(void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    if (a & 1)
        return atomic_load_explicit((_Atomic uint64_t *)(a & ~(uintptr_t)1), memory_order_relaxed);
    return atomic_load_explicit((_Atomic uint32_t *)addr, memory_order_relaxed);
}

/* the node a two-word futex is hashed on: its second word (futex2), none
 * (the classic call) */
static uint32_t futex_node(void *addr)
{
#ifdef NL_VERIFY_FUTEX2
    return atomic_load_explicit((_Atomic uint32_t *)addr + 1, memory_order_relaxed);
#else
    (void)addr;
    return 0;
#endif
}

static int futex_sleep(void *addr, uint32_t node, uint32_t expected)
{
    _Atomic uint32_t *b = futex_bucket(addr, node);
    uint32_t seen = atomic_load_explicit(b, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (futex_value(addr) != expected)
        return EAGAIN;
    while (atomic_load_explicit(b, memory_order_relaxed) == seen)
        ;
    atomic_thread_fence(memory_order_seq_cst);
    return 0;
}

/* The kernel reads a two-word futex's node (to find its bucket) before the
 * barrier of the wake (its bucket's lock): nothing orders that read after
 * the waker's own store to the word, only what the waker saw before. */
static int futex_wake_bucket(void *addr, bool node)
{
    uint32_t n = node ? futex_node(addr) : 0;
    atomic_thread_fence(memory_order_seq_cst);
    atomic_fetch_add_explicit(futex_bucket(addr, n), 1, memory_order_relaxed);
    return 0; /* the statistics are off */
}

int nl_futex_wait(void *addr, uint32_t expected) { return futex_sleep(addr, 0, expected); }
int nl_futex_wake(void *addr, int n) { return (void)n, futex_wake_bucket(addr, false); }
int nl_futex_wait_node(void *addr, uint32_t expected) { return futex_sleep(addr, futex_node(addr), expected); }
int nl_futex_wake_node(void *addr, int n) { return (void)n, futex_wake_bucket(addr, true); }
void nl_futex_node_claim(void *addr)
{
    atomic_store_explicit((_Atomic uint32_t *)addr + 1, 1u + (uint32_t)verify_node, memory_order_relaxed);
}

void nl_gate_wait(nl_waiter_t *w, const void *lock, nl_busy_fn busy) { (void)w, (void)lock, (void)busy; __VERIFIER_assume(0); }
void nl_gate_leave(nl_waiter_t *w) { (void)w; }
bool nl_gate_behind_slow(const void *lock) { (void)lock; return false; }
bool nl_gate_elsewhere_slow(const void *lock, int node) { (void)lock, (void)node; return false; }
void nl_load_sample(void) {}

#include "wait/grant.c"

/* Per-thread record: dense recycled thread ids, cached node, queue-node pool. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "self.h"
#include "numalock/clock.h" /* the API's clock, on the machine's (machine.h) */

NL_TLS nl_self_t *nl_self_tls;

static pthread_key_t self_key;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

/* Thread ids: a bitmap guarded by a tiny spin lock (never held for long). */
#define ID_WORDS ((NL_MAX_THREADS + 63) / 64)
static uint64_t id_bits[ID_WORDS];
static atomic_flag id_guard = ATOMIC_FLAG_INIT;
static _Atomic uint64_t rng_seed = 0x9E3779B97F4A7C15ull;
static _Atomic uint32_t live;

uint32_t nl_threads_live(void) { return atomic_load_explicit(&live, memory_order_relaxed); }

static void id_lock(void)
{
    /* held for a few instructions: pause, and yield in case its holder is
     * off its CPU (this layer sits below src/wait) */
    for (uint32_t n = 0; atomic_flag_test_and_set_explicit(&id_guard, memory_order_acquire); n++) {
        if (n < 64)
            nl_cpu_relax();
        else
            nl_machine_yield();
    }
}
static void id_unlock(void) { atomic_flag_clear_explicit(&id_guard, memory_order_release); }

static int id_alloc(void)
{
    int id = -1;
    id_lock();
    for (int w = 0; w < ID_WORDS && id < 0; w++) {
        uint64_t free_bits = ~id_bits[w];
        if (w == ID_WORDS - 1 && NL_MAX_THREADS % 64)
            free_bits &= (1ull << (NL_MAX_THREADS % 64)) - 1;
        if (free_bits) {
            int b = __builtin_ctzll(free_bits);
            id_bits[w] |= 1ull << b;
            id = w * 64 + b;
        }
    }
    id_unlock();
    return id;
}

static void id_free(int id)
{
    if (id < 0)
        return;
    id_lock();
    id_bits[id / 64] &= ~(1ull << (id % 64));
    id_unlock();
}

/* Thread records for threads whose malloc fails: a few in the library's
 * data, given back at thread exit; with those taken, the thread stops. */
#define NL_RECORD_RESERVE 4
static nl_self_t record_reserve[NL_RECORD_RESERVE];
static _Atomic uint32_t record_reserve_used;

static nl_self_t *record_reserve_get(void)
{
    uint32_t used = atomic_load_explicit(&record_reserve_used, memory_order_relaxed);
    while (used != (1u << NL_RECORD_RESERVE) - 1) {
        int i = __builtin_ctz(~used);
        if (atomic_compare_exchange_weak_explicit(&record_reserve_used, &used, used | 1u << i, memory_order_acquire,
                                                  memory_order_relaxed))
            return &record_reserve[i];
    }
    nl_no_memory("a thread's record");
}

static void record_free(nl_self_t *s)
{
    if (s >= record_reserve && s < record_reserve + NL_RECORD_RESERVE)
        atomic_fetch_and_explicit(&record_reserve_used, ~(1u << (s - record_reserve)), memory_order_release);
    else
        free(s);
}

static void self_destroy(void *p)
{
    nl_self_t *s = p;
    if (!s)
        return;
    nl_self_tls = NULL;
    atomic_fetch_sub_explicit(&live, 1, memory_order_relaxed);
    id_free(s->id);
    nl_extra_node_t *e = s->extra;
    while (e) {
        nl_extra_node_t *n = e->next;
        free(e);
        e = n;
    }
    record_free(s);
}

static void self_key_init(void)
{
    pthread_key_create(&self_key, self_destroy);
}

/* The guess until the sampler measures the rate: x86's time-stamp counter
 * runs at a few GHz; aarch64's virtual counter states its frequency (read
 * at the first thread record); nanoseconds elsewhere. */
#if defined(__x86_64__) || defined(__i386__)
_Atomic uint64_t nl_ticks_per_ms = 2500000;
#else
_Atomic uint64_t nl_ticks_per_ms = 1000000;
#endif

static void clock_guess(void)
{
#if defined(__aarch64__)
    static _Atomic int done;
    if (atomic_exchange_explicit(&done, 1, memory_order_relaxed))
        return;
    uint64_t hz;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
    if (hz >= 1000)
        atomic_store_explicit(&nl_ticks_per_ms, hz / 1000, memory_order_relaxed);
#endif
}

nl_self_t *nl_self_create(void)
{
    pthread_once(&self_once, self_key_init);
    clock_guess();
    nl_self_t *s = NULL;
    if (posix_memalign((void **)&s, NL_CACHELINE, sizeof *s) || !s)
        s = record_reserve_get();
    memset(s, 0, sizeof *s);
    s->id = id_alloc();
    s->pinned_node = -1;
    s->pinned_leaf = -1;
    s->node = 0;
    s->refresh = 0;
    s->topo_gen = UINT32_MAX;
    uint64_t seed = atomic_fetch_add_explicit(&rng_seed, 0x9E3779B97F4A7C15ull, memory_order_relaxed);
    s->rng = seed ^ ((uint64_t)(uintptr_t)s << 1) ^ 0xD1B54A32D192ED03ull;
    if (!s->rng)
        s->rng = 1;
    nl_self_tls = s;
    pthread_setspecific(self_key, s);
    atomic_fetch_add_explicit(&live, 1, memory_order_relaxed);
    return s;
}

#define FOREVER_CHUNK (256u * 1024u)
typedef struct forever_chunk {
    _Alignas(NL_CACHELINE) _Atomic size_t used; /* bytes handed out, the header's line included */
} forever_chunk_t;
static _Atomic(forever_chunk_t *) forever_chunk;

void *nl_forever_alloc(size_t size)
{
    size = (size + NL_CACHELINE - 1) / NL_CACHELINE * NL_CACHELINE;
    if (size > FOREVER_CHUNK / 4) { /* large: a mapping of its own */
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        return m == MAP_FAILED ? NULL : m;
    }
    for (;;) {
        forever_chunk_t *c = atomic_load_explicit(&forever_chunk, memory_order_acquire);
        if (c) {
            size_t off = atomic_fetch_add_explicit(&c->used, size, memory_order_relaxed);
            if (off + size <= FOREVER_CHUNK)
                return (unsigned char *)c + off;
        }
        void *m = mmap(NULL, FOREVER_CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        forever_chunk_t *n = m;
        atomic_store_explicit(&n->used, NL_CACHELINE, memory_order_relaxed);
        if (!atomic_compare_exchange_strong_explicit(&forever_chunk, &c, n, memory_order_acq_rel,
                                                     memory_order_acquire))
            munmap(m, FOREVER_CHUNK); /* another thread's chunk came first */
    }
}

void nl_no_memory(const char *what)
{
    /* one line, from the first thread that stops; the others wait for its abort() */
    static _Atomic int said;
    if (atomic_exchange(&said, 1))
        for (;;)
            pause();
    char line[160] = "numalock: no memory for ";
    size_t n = strlen(line), w = strlen(what);
    if (w > sizeof line - n - 12)
        w = sizeof line - n - 12;
    memcpy(line + n, what, w);
    memcpy(line + n + w, "; stopping\n", 11);
    ssize_t r = write(2, line, n + w + 11);
    (void)r;
    abort();
}

int nl_thread_id(void) { return nl_self()->id; }

/* ---- queue nodes past the pool ----------------------------------------------
 * A reserve of nodes shared by the process, taken with one atomic step (a
 * signal handler may take it whatever its thread was doing, unlike malloc),
 * before the thread's own heap nodes are allocated: a handler that nests
 * locks past the pool while its thread is inside malloc gets a node here
 * (NL_QNODE_RESERVE of them at once), and so does a thread whose malloc
 * fails. A reserve node is the thread's from get to put. */
#define NL_QNODE_RESERVE 64
static nl_qnode_slot_t qnode_reserve[NL_QNODE_RESERVE];
static _Atomic(const nl_self_t *) qnode_reserve_self[NL_QNODE_RESERVE]; /* whose it is, NULL: free */
static _Atomic uint64_t qnode_reserve_used;

static void *reserve_get(const nl_self_t *s, const void *lock)
{
    uint64_t used = atomic_load_explicit(&qnode_reserve_used, memory_order_relaxed);
    while (~used) {
        int i = __builtin_ctzll(~used);
        if (atomic_compare_exchange_weak_explicit(&qnode_reserve_used, &used, used | 1ull << i,
                                                  memory_order_acquire, memory_order_relaxed)) {
            atomic_store_explicit(&qnode_reserve_self[i], s, memory_order_relaxed);
            qnode_reserve[i].owner = lock;
            return qnode_reserve[i].mem;
        }
    }
    return NULL;
}

static bool reserve_put(void *node)
{
    uintptr_t off = (uintptr_t)node - (uintptr_t)qnode_reserve[0].mem;
    if ((uintptr_t)node < (uintptr_t)qnode_reserve[0].mem || off / sizeof(nl_qnode_slot_t) >= NL_QNODE_RESERVE)
        return false;
    uint64_t i = off / sizeof(nl_qnode_slot_t);
    qnode_reserve[i].owner = NULL;
    atomic_store_explicit(&qnode_reserve_self[i], NULL, memory_order_relaxed);
    atomic_fetch_and_explicit(&qnode_reserve_used, ~(1ull << i), memory_order_release);
    return true;
}

static void *reserve_find(const nl_self_t *s, const void *lock)
{
    /* the other threads' nodes are theirs to write: a snapshot of the
     * bits, then only the nodes this thread took are read */
    uint64_t used = atomic_load_explicit(&qnode_reserve_used, memory_order_acquire);
    for (int i = 0; used; i++, used >>= 1)
        if ((used & 1) && atomic_load_explicit(&qnode_reserve_self[i], memory_order_relaxed) == s &&
            qnode_reserve[i].owner == lock)
            return qnode_reserve[i].mem;
    return NULL;
}

void *nl_qnode_get_slow(nl_self_t *s, const void *lock)
{
    /* the stack is full: reuse a hole, a free heap node of this thread, a
     * reserve node, or allocate one (each claim made before it counts: see
     * self.h) */
    for (uint32_t i = 0; s->holes && i < s->depth; i++) {
        if (!s->pool[i].owner) {
            s->pool[i].owner = lock;
            atomic_signal_fence(memory_order_seq_cst);
            s->holes--;
            return s->pool[i].mem;
        }
    }
    for (nl_extra_node_t *e = s->extra; e; e = e->next) {
        if (!e->slot.owner) {
            e->slot.owner = lock;
            return e->slot.mem;
        }
    }
    void *r = reserve_get(s, lock);
    if (r)
        return r;
    nl_extra_node_t *e = NULL;
    if (posix_memalign((void **)&e, NL_CACHELINE, sizeof *e) || !e)
        nl_no_memory("a queue node past the thread's pool and the process's reserve");
    memset(e, 0, sizeof *e);
    e->slot.owner = lock;
    /* pushed with one step: a handler may push its own meanwhile */
    nl_extra_node_t *head = __atomic_load_n(&s->extra, __ATOMIC_RELAXED);
    do
        e->next = head;
    while (!__atomic_compare_exchange_n(&s->extra, &head, e, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return e->slot.mem;
}

void *nl_qnode_find_slow(nl_self_t *s, const void *lock)
{
    for (uint32_t i = s->depth; i-- > 0;)
        if (s->pool[i].owner == lock)
            return s->pool[i].mem;
    for (nl_extra_node_t *e = s->extra; e; e = e->next)
        if (e->slot.owner == lock)
            return e->slot.mem;
    return reserve_find(s, lock); /* NULL: released without being acquired by this thread */
}

void nl_qnode_put_slow(nl_self_t *s, void *node)
{
    for (uint32_t i = 0; i < s->depth; i++) {
        if (s->pool[i].mem != (unsigned char *)node)
            continue;
        if (i + 1 < s->depth) {
            s->holes++; /* out of order: leave a hole (counted before it is one) */
            atomic_signal_fence(memory_order_seq_cst);
            s->pool[i].owner = NULL;
            return;
        }
        /* top of the stack: pop it and every hole beneath it (each leaves
         * the depth before its owner, or its count, is cleared) */
        s->depth = i;
        atomic_signal_fence(memory_order_seq_cst);
        s->pool[i].owner = NULL;
        while (s->depth && !s->pool[s->depth - 1].owner) {
            s->depth--;
            atomic_signal_fence(memory_order_seq_cst);
            s->holes--;
        }
        return;
    }
    for (nl_extra_node_t *e = s->extra; e; e = e->next) {
        if (e->slot.mem == (unsigned char *)node) {
            e->slot.owner = NULL;
            return;
        }
    }
    reserve_put(node);
}

uint64_t nl_clock_ns(void) { return nl_machine_ns(); }

uint64_t nl_clock_ticks_to_ns(uint64_t ticks) { return nl_ticks_to_ns(ticks); }
uint64_t nl_clock_ns_to_ticks(uint64_t ns) { return nl_ns_to_ticks(ns); }

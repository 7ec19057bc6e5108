/* The scheduler (sim.h): virtual time, the earliest fiber first.
 *
 * The running fiber's clock advances with every event it causes (sim_advance);
 * as soon as another fiber's clock is earlier, that one runs. Ties go to the
 * lower fiber id, so a run is a function of its inputs and its seed.
 *
 * A fiber runs on one hardware thread (its cpu). Fibers that share a CPU take
 * turns: the owner keeps it while it runs or spins; one that blocks (futex,
 * join, sleep), yields or ends gives it to the next in that CPU's queue, and
 * an owner that ran a whole time slice while others waited goes to the back.
 * A fiber that sleeps on watched lines (a spinning waiter, memory.c) keeps
 * its CPU, as a spinning thread does.
 *
 * Futexes: a wait sleeps while the word holds the value; a wake costs the
 * waker the system call and readies each woken fiber after the kernel's
 * wake-up latency. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define SLICE_NS 3000000.0 /* CFS's minimum granularity times the CPU's runnable count, roughly */

/* ---- the heap of ready and timed fibers ---------------------------------- */
typedef struct {
    sim_time_t t;
    int id;
    uint64_t gen;
} ev_t;

static ev_t *heap;
static size_t nheap, capheap;
static uint64_t rng;

static bool ev_less(const ev_t *a, const ev_t *b) { return a->t < b->t || (a->t == b->t && a->id < b->id); }

static void heap_push(sim_fiber_t *f, sim_time_t t)
{
    if (nheap == capheap) {
        capheap = capheap ? capheap * 2 : 256;
        heap = realloc(heap, capheap * sizeof *heap);
        if (!heap)
            abort();
    }
    size_t i = nheap++;
    ev_t e = { t, f->id, ++f->heap_gen };
    while (i && ev_less(&e, &heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = e;
}

static ev_t heap_pop(void)
{
    ev_t top = heap[0], last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheap)
            break;
        if (c + 1 < nheap && ev_less(&heap[c + 1], &heap[c]))
            c++;
        if (!ev_less(&heap[c], &last))
            break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap)
        heap[i] = last;
    return top;
}

/* drop entries that no longer stand for their fiber */
static void heap_clean(void)
{
    while (nheap) {
        sim_fiber_t *f = sim_fibers[heap[0].id];
        if (f && f->heap_gen == heap[0].gen && (f->state == SIM_READY || f->state == SIM_BLOCKED))
            return;
        heap_pop();
    }
}

/* ---- CPUs ------------------------------------------------------------------------ */
typedef struct {
    int owner;          /* fiber id, -1 */
    int queue[SIM_MAX_FIBERS];
    int head, n;
    sim_time_t slice_end;
} cpu_t;
static cpu_t *cpus;

void sim_sched_init(uint64_t seed)
{
    rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (!rng)
        rng = 1;
    cpus = calloc((size_t)sim_m.ncpus, sizeof *cpus);
    if (!cpus)
        abort();
    for (int i = 0; i < sim_m.ncpus; i++)
        cpus[i].owner = -1;
}

uint64_t sim_random(void)
{
    uint64_t x = rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

sim_time_t sim_now(void) { return sim_cur->clock; }

static void cpu_enqueue(cpu_t *c, sim_fiber_t *f)
{
    c->queue[(c->head + c->n++) % SIM_MAX_FIBERS] = f->id;
}

/* the CPU passes to the next fiber of its queue, which runs from time t */
static void cpu_release(sim_fiber_t *f, sim_time_t t)
{
    if (f->cpu < 0)
        return;
    cpu_t *c = &cpus[f->cpu];
    if (c->owner != f->id)
        return;
    c->owner = -1;
    while (c->n) {
        sim_fiber_t *next = sim_fibers[c->queue[c->head]];
        c->head = (c->head + 1) % SIM_MAX_FIBERS;
        c->n--;
        if (!next || next->state != SIM_READY)
            continue;
        c->owner = next->id;
        c->slice_end = t + SIM_NS(SLICE_NS);
        if (next->clock < t)
            next->clock = t;
        heap_push(next, next->clock);
        return;
    }
}

/* a fiber that became ready takes its CPU, or waits for it */
static void make_ready(sim_fiber_t *f)
{
    f->state = SIM_READY;
    if (f->cpu >= 0) {
        cpu_t *c = &cpus[f->cpu];
        if (c->owner >= 0 && c->owner != f->id) {
            cpu_enqueue(c, f);
            f->heap_gen++; /* no heap entry stands for it while it waits */
            return;
        }
        if (c->owner != f->id) {
            c->owner = f->id;
            c->slice_end = f->clock + SIM_NS(SLICE_NS);
        }
    }
    heap_push(f, f->clock);
}

static void deadlock(void) __attribute__((noreturn));
static void deadlock(void)
{
    fprintf(stderr, "numalock sim: every simulated thread waits (a lost wake-up or a deadlock) at %.3f ms:\n",
            (double)sim_cur->clock / 1e9);
    for (int i = 0; i < sim_nfibers; i++) {
        sim_fiber_t *f = sim_fibers[i];
        if (f && f->state != SIM_DONE)
            fprintf(stderr, "  thread %d on CPU %d: %s%s, clock %.3f ms\n", f->id, f->cpu,
                    f->state == SIM_BLOCKED ? "blocked" : "ready", f->futex ? " on a futex" : "",
                    (double)f->clock / 1e9);
    }
    exit(3);
}

/* switch to the earliest fiber in the heap (the current one has been put
 * wherever it belongs); returns when the current fiber runs again */
static void run_next(void)
{
    heap_clean();
    if (!nheap)
        deadlock();
    ev_t e = heap_pop();
    sim_fiber_t *f = sim_fibers[e.id];
    if (f->state == SIM_BLOCKED) { /* its deadline */
        f->timed_out = 1;
        f->clock = e.t > f->clock ? e.t : f->clock;
        f->futex = NULL;
        sim_unwatch(f);
    }
    sim_fiber_switch(sim_cur, f);
}

void sim_advance(sim_time_t cost)
{
    sim_fiber_t *me = sim_cur;
    me->clock += cost;
    if (me->cpu >= 0) {
        cpu_t *c = &cpus[me->cpu];
        if (c->n && me->clock >= c->slice_end) { /* a time slice while others waited */
            me->state = SIM_READY;
            cpu_release(me, me->clock);
            cpu_enqueue(c, me);
            me->heap_gen++;
            run_next();
            return;
        }
    }
    heap_clean();
    if (nheap && ev_less(&heap[0], &(ev_t){ me->clock, me->id, 0 })) {
        me->state = SIM_READY;
        heap_push(me, me->clock);
        run_next();
    }
}

void sim_yield_point(void) { sim_advance(0); }

int sim_block(sim_time_t deadline)
{
    sim_fiber_t *me = sim_cur;
    me->state = SIM_BLOCKED;
    me->timed_out = 0;
    me->heap_gen++;
    if (deadline)
        heap_push(me, deadline);
    if (!me->watching) /* a spinner keeps its CPU */
        cpu_release(me, me->clock);
    run_next();
    return me->timed_out;
}

void sim_wake(sim_fiber_t *f, sim_time_t t)
{
    if (f->state != SIM_BLOCKED)
        return;
    if (f->clock < t)
        f->clock = t;
    f->timed_out = 0;
    make_ready(f);
}

void sim_exit_fiber(void *ret)
{
    sim_fiber_t *me = sim_cur;
    me->ret = ret;
    me->state = SIM_DONE;
    me->heap_gen++;
    cpu_release(me, me->clock);
    if (me->joiner >= 0 && sim_fibers[me->joiner])
        sim_wake(sim_fibers[me->joiner], me->clock);
    run_next();
    abort(); /* a finished fiber never runs again */
}

int sim_runnable(void)
{
    int n = 0;
    for (int i = 0; i < sim_nfibers; i++)
        n += sim_fibers[i] && (sim_fibers[i]->state == SIM_READY || sim_fibers[i]->state == SIM_RUNNING);
    return n;
}

/* ---- yield ------------------------------------------------------------------------ */
void sim_sched_yield(void)
{
    sim_fiber_t *me = sim_cur;
    me->clock += sim_m.c_yield;
    if (me->cpu >= 0 && cpus[me->cpu].n) {
        cpu_t *c = &cpus[me->cpu];
        me->state = SIM_READY;
        cpu_release(me, me->clock);
        cpu_enqueue(c, me);
        me->heap_gen++;
        run_next();
        return;
    }
    sim_advance(0);
}

/* ---- futexes ------------------------------------------------------------------------ */
#define FUTEX_BUCKETS 1024
static int futex_head[FUTEX_BUCKETS];
static bool futex_ready;

static int *bucket(void *word)
{
    if (!futex_ready) {
        for (int i = 0; i < FUTEX_BUCKETS; i++)
            futex_head[i] = -1;
        futex_ready = true;
    }
    return &futex_head[((uintptr_t)word >> 2) % FUTEX_BUCKETS];
}

int sim_futex_wait(void *word, uint32_t val, uint64_t timeout_ns)
{
    sim_fiber_t *me = sim_cur;
    sim_access(word, 4, SIM_LOAD); /* the kernel reads the word */
    if (__atomic_load_n((uint32_t *)word, __ATOMIC_RELAXED) != val) {
        sim_advance(sim_m.c_futex_wait);
        return 11; /* EAGAIN */
    }
    me->clock += sim_m.c_futex_wait;
    int *b = bucket(word); /* woken in the order they came (as the kernel does) */
    while (*b >= 0)
        b = &sim_fibers[*b]->futex_next;
    me->futex = word;
    me->futex_next = -1;
    *b = me->id;
    b = bucket(word);
    int timed = sim_block(timeout_ns ? me->clock + SIM_NS((double)timeout_ns) : 0);
    if (timed) { /* take it off the bucket's list */
        for (int *p = b; *p >= 0; p = &sim_fibers[*p]->futex_next)
            if (*p == me->id) {
                *p = me->futex_next;
                break;
            }
        me->futex = NULL;
        return 110; /* ETIMEDOUT */
    }
    return 0;
}

int sim_futex_wake(void *word, int n)
{
    sim_fiber_t *me = sim_cur;
    int *b = bucket(word), woken = 0;
    me->clock += sim_m.c_futex_wake;
    for (int *p = b; *p >= 0 && woken < n;) {
        sim_fiber_t *f = sim_fibers[*p];
        if (f->futex != word) {
            p = &f->futex_next;
            continue;
        }
        *p = f->futex_next;
        f->futex = NULL;
        sim_wake(f, me->clock + sim_m.c_wakeup);
        woken++;
    }
    sim_advance(0);
    return woken;
}

/* the running fiber moves to another CPU (sched_setaffinity): it gives up
 * its own and takes the new one, or waits in its queue */
void sim_move_cpu(sim_fiber_t *f, int cpu)
{
    cpu_release(f, f->clock);
    f->cpu = cpu;
    f->clock += sim_m.c_yield; /* a migration: about a pass through the scheduler */
    f->state = SIM_READY;
    make_ready(f);
    run_next();
}

/* The cache-coherence cost model (sim.h).
 *
 * A directory entry per 64-byte line: the cores that hold a copy, the one
 * that holds it modified or exclusive, the socket of its memory (the first
 * toucher's, or where the workload placed it), a version bumped by every
 * write, and the time until which the line is busy serving a request.
 *
 *   a hit              the core holds the line (to read), or holds it
 *                      exclusively (to write): hit_ns, no queueing
 *   a read miss        from the core that holds it modified (by distance:
 *                      the same cache domain, socket, or 1 or 2 hops away),
 *                      else from the nearest copy (this domain's last-level
 *                      cache: llc_ns) or from memory (local or remote),
 *                      whichever is nearer; a copy on its way to a cache
 *                      serves only once it has arrived, and a request from
 *                      a domain whose cache awaits a copy waits for that one
 *   a write or atomic  as a read miss for the data, and every other copy
 *                      invalidated (the farthest one's distance); an atomic
 *                      adds atomic_cycles
 * Requests for one line are served one at a time: a miss starts when the
 * line is free; one that moves the modified copy or takes the line
 * exclusively holds it for its whole cost (what makes a contended line
 * collapse), and so does a read whose data comes from another socket (or
 * remote memory): it goes through the line's home agent, which resolves one
 * request per line at a time. A read of a clean copy within the socket holds
 * it for hit_ns (copies go out back to back), and so does one from a socket
 * two hops from the home, through node controllers (UNSURE: they are taken
 * to answer for their sockets; docs/SIMULATION.md). A miss's cost is its
 * request's way there and the data's way back: the core that held the line
 * modified or exclusive keeps it until the request arrives, halfway through
 * the transfer, and its own accesses until then hit (a releasing core that
 * takes its lock again before the waiter's request arrives keeps it; the
 * waiter reads the value at the end of its transfer). The directory's state
 * changes when a miss is issued, so that later requests queue behind it.
 * Caches have no capacity limit: only coherence and first-touch misses
 * occur. Each miss's cost varies by +-5% (the seeded generator).
 *
 * Spinning: a fiber that pauses (nl_cpu_relax) after only reading lines
 * nobody wrote since (and writing none that others hold) would read the
 * same values again: it sleeps until one of them is written, or for a
 * quantum (its own last loop period, doubled at every quiet wake-up, at
 * most 2 us), so that a spinning waiter costs almost no host time and loops
 * that watch the clock still see it move. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define SIM_COMING 8 /* copies of one line on their way at once (more: the oldest forgotten) */

typedef struct line {
    uint64_t tag;            /* (address >> 6) + 1; 0: free slot */
    sim_time_t busy_until;
    uint32_t version;
    int16_t owner;           /* core holding it modified or exclusive, -1 */
    int16_t keeper[2];       /* previous owners while requests travel, -1 */
    sim_time_t keep_until[2]; /* ... until then (each request's arrival) */
    int16_t home;            /* socket of its memory, -1 until touched */
    int16_t coming_domain[SIM_COMING]; /* copies on their way: to which cache domain, */
    sim_time_t coming_at[SIM_COMING];  /* ... arriving when (past: there, slot free) */
    int watch;               /* first watcher (index into watchers), -1 */
    uint32_t misses;         /* for NUMALOCK_SIM_DEBUG's report */
    uint64_t sharers[SIM_WORDS];
} line_t;

static line_t *lines;
static size_t nlines, caplines;
static uint64_t n_access, n_miss, n_llc_miss;

/* placed ranges (numa_alloc_onnode) */
typedef struct {
    uintptr_t lo, hi;
    int node;
} home_t;
static home_t homes[64];
static int nhomes;

/* watchers: (fiber, line) pairs, one list per line */
typedef struct {
    int fiber;
    int next;
    line_t *line;
} watcher_t;
static watcher_t *watchers;
static int nwatch, capwatch, free_watch = -1;

#define MAX_QUANTUM SIM_NS(2000.0)

void sim_mem_init(void)
{
    caplines = 1u << 14;
    lines = calloc(caplines, sizeof *lines);
    if (!lines)
        abort();
}

static line_t *find(uint64_t tag)
{
    size_t mask = caplines - 1, i = (size_t)(tag * 0x9E3779B97F4A7C15ull >> 20) & mask;
    while (lines[i].tag && lines[i].tag != tag)
        i = (i + 1) & mask;
    return &lines[i];
}

static void grow(void)
{
    line_t *old = lines;
    size_t oldcap = caplines;
    caplines *= 2;
    lines = calloc(caplines, sizeof *lines);
    if (!lines)
        abort();
    /* watchers point at lines: none may be registered while growing */
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].tag)
            *find(old[i].tag) = old[i];
    for (int w = 0; w < nwatch; w++)
        if (watchers[w].line)
            watchers[w].line = find(watchers[w].line->tag);
    free(old);
}

static line_t *line_of(const volatile void *addr)
{
    uint64_t tag = ((uintptr_t)addr >> 6) + 1;
    line_t *l = find(tag);
    if (l->tag)
        return l;
    if (2 * (nlines + 1) > caplines) {
        grow();
        l = find(tag);
    }
    nlines++;
    l->tag = tag;
    l->owner = -1;
    l->keeper[0] = l->keeper[1] = -1;
    l->home = -1;
    l->watch = -1;
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < nhomes; i++)
        if (a >= homes[i].lo && a < homes[i].hi)
            l->home = (int16_t)homes[i].node;
    return l;
}

void sim_mem_home(const void *addr, size_t len, int node)
{
    if (nhomes < 64)
        homes[nhomes++] = (home_t){ (uintptr_t)addr, (uintptr_t)addr + len, node };
    /* lines already known there (memory used before) move home too */
    for (uintptr_t a = (uintptr_t)addr & ~(uintptr_t)63; a < (uintptr_t)addr + len; a += 64) {
        line_t *l = find((a >> 6) + 1);
        if (l->tag)
            l->home = (int16_t)node;
    }
}

void sim_mem_unhome(const void *addr)
{
    for (int i = 0; i < nhomes; i++)
        if (homes[i].lo == (uintptr_t)addr) {
            for (uintptr_t a = homes[i].lo; a < homes[i].hi; a += 64) {
                line_t *l = find((a >> 6) + 1);
                if (l->tag)
                    l->home = -1; /* the next user's first touch decides */
            }
            homes[i] = homes[--nhomes];
            return;
        }
}

int sim_mem_home_of(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < nhomes; i++)
        if (a >= homes[i].lo && a < homes[i].hi)
            return homes[i].node;
    line_t *l = find((a >> 6) + 1);
    return l->tag ? l->home : -1;
}

void sim_mem_stats(uint64_t *accesses, uint64_t *misses, uint64_t *llc_misses, uint64_t *n)
{
    *accesses = n_access;
    *misses = n_miss;
    *llc_misses = n_llc_miss;
    *n = nlines;
}

/* when the copy on its way to domain d arrives, if after `at`; else 0 */
static sim_time_t coming(const line_t *l, int d, sim_time_t at)
{
    for (int i = 0; i < SIM_COMING; i++)
        if (l->coming_at[i] > at && l->coming_domain[i] == d)
            return l->coming_at[i];
    return 0;
}

/* a read miss from domain d at `now`, its data arriving at `at` */
static void note_coming(line_t *l, int d, sim_time_t now, sim_time_t at)
{
    int k = 0;
    for (int i = 0; i < SIM_COMING; i++) {
        if (l->coming_at[i] > now && l->coming_domain[i] == d)
            return; /* this cache awaits one already (the request waited for it) */
        if (l->coming_at[i] < l->coming_at[k])
            k = i;
    }
    l->coming_domain[k] = (int16_t)d;
    l->coming_at[k] = at;
}

static inline bool has(const line_t *l, int core) { return (l->sharers[core >> 6] >> (core & 63)) & 1; }
static inline int socket_of(int core) { return sim_m.cpu_socket[core]; }
static inline int domain_of(int core) { return sim_m.cpu_domain[core]; }

/* a transfer between two sockets' caches (0 within one) */
static sim_time_t leg(int s1, int s2)
{
    return s1 == s2 ? 0 : sim_m.c_remote[sim_hops(s1, s2)];
}

/* from core c to a copy in core o's cache. Within a socket the caches
 * answer each other; across sockets the request goes through the line's
 * home (its memory's socket: Intel's home snoop, AMD's home agent), so a
 * line homed on a third socket takes three legs instead of two: remote_ns
 * stands for a request and its answer, half of it each way. */
static sim_time_t dist(int c, int o, bool modified, int home)
{
    if (domain_of(c) == domain_of(o))
        return modified ? sim_m.c_c2c_domain : sim_m.c_llc;
    int sc = socket_of(c), so = socket_of(o);
    if (sc == so)
        return sim_m.c_c2c_socket;
    if (home < 0 || home == sc || home == so)
        return leg(sc, so);
    return (leg(sc, home) + leg(home, so) + leg(so, sc)) / 2;
}

static sim_time_t memory(int c, const line_t *l)
{
    return sim_m.c_mem[l->home < 0 ? 0 : sim_hops(socket_of(c), l->home)];
}

/* the data for core c, asked for at `at`: from the modified copy, the nearest
 * other copy, or memory; how long after `at` it arrives */
static sim_time_t fetch(int c, const line_t *l, sim_time_t at, bool *off_socket)
{
    if (l->owner >= 0 && l->owner != c) {
        *off_socket = socket_of(l->owner) != socket_of(c);
        return dist(c, l->owner, true, l->home);
    }
    sim_time_t own = coming(l, domain_of(c), at);
    if (own) { /* our cache has asked for it already: the request waits there */
        *off_socket = false;
        return own - at + sim_m.c_llc;
    }
    sim_time_t best = memory(c, l);
    *off_socket = true;
    for (int w = 0; w < SIM_WORDS; w++)
        for (uint64_t bits = l->sharers[w]; bits; bits &= bits - 1) {
            int o = w * 64 + __builtin_ctzll(bits);
            sim_time_t d = dist(c, o, false, l->home), there = coming(l, domain_of(o), at);
            if (there)
                d += there - at;
            if (d < best || (d == best && socket_of(o) == socket_of(c))) {
                best = d;
                *off_socket = socket_of(o) != socket_of(c);
            }
        }
    if (*off_socket && l->home >= 0 && l->home == socket_of(c) && best == memory(c, l))
        *off_socket = false; /* local memory */
    return best;
}

/* the farthest other copy that a write must invalidate */
static sim_time_t invalidate(int c, const line_t *l)
{
    sim_time_t worst = 0;
    for (int w = 0; w < SIM_WORDS; w++)
        for (uint64_t bits = l->sharers[w]; bits; bits &= bits - 1) {
            int o = w * 64 + __builtin_ctzll(bits);
            if (o != c) {
                sim_time_t d = dist(c, o, false, l->home);
                worst = d > worst ? d : worst;
            }
        }
    return worst;
}

static sim_time_t jitter(sim_time_t t)
{
    return t - t / 20 + (sim_time_t)(sim_random() % (t / 10 + 1));
}

static void wake_watchers(line_t *l, sim_time_t t);

/* the running fiber's record of what its polling loop reads */
static void note_read(sim_fiber_t *f, const line_t *l)
{
    for (int i = 0; i < f->nreads; i++)
        if (f->read_line[i] == l->tag)
            return;
    if (f->nreads < 8) {
        f->read_line[f->nreads] = l->tag;
        f->read_ver[f->nreads++] = l->version;
    } else {
        f->wrote = true; /* too much to watch: not a simple poll */
    }
}

/* A write by the running fiber to line l, which it holds now (its state
 * already settled): the new version, the atomic's cycles, the fiber's own
 * record of the line, the watchers woken when the write completes. `others`:
 * another core holds or is about to hold the line. Returns the cost. */
static sim_time_t write_done(sim_fiber_t *f, line_t *l, int kind, sim_time_t now, sim_time_t cost, bool others)
{
    l->version++;
    if (kind == SIM_RMW)
        cost += sim_m.c_atomic;
    if (others)
        f->wrote = true;
    for (int i = 0; i < f->nreads; i++) /* its own write: it knows the new value */
        if (f->read_line[i] == l->tag)
            f->read_ver[i] = l->version;
    if (l->watch >= 0)
        wake_watchers(l, now + cost);
    return cost;
}

void sim_access(const volatile void *addr, size_t size, int kind)
{
    sim_fiber_t *f = sim_cur;
    (void)size;
    if (__builtin_expect(!f, 0))
        return; /* before the simulation starts (the program's constructors) */
    n_access++;
    f->accesses++;
    int core = f->cpu >= 0 ? sim_m.cpu_core[f->cpu] : 0;
    line_t *l = line_of(addr);
    if (l->home < 0)
        l->home = (int16_t)socket_of(core);
    sim_time_t now = f->clock, cost;
    if ((l->keeper[0] == core && now < l->keep_until[0]) ||
        (l->keeper[1] == core && now < l->keep_until[1])) {
        /* our copy, until the request that takes it arrives (another core
         * is about to hold it) */
        cost = sim_m.c_hit;
        if (kind == SIM_LOAD)
            note_read(f, l);
        else
            cost = write_done(f, l, kind, now, cost, true);
        sim_advance(cost);
        return;
    }
    bool hit = kind == SIM_LOAD ? has(l, core) : l->owner == core;
    if (hit) {
        cost = sim_m.c_hit;
    } else {
        bool off = false;
        /* a read of a clean copy within the socket leaves the line free
         * again at once (caches hand out copies back to back); moving the
         * modified copy, taking the line exclusively, or a read from another
         * socket by one that reaches the home directly (not through a node
         * controller) holds it for the whole transfer */
        bool shared_read = kind == SIM_LOAD && (l->owner < 0 || l->owner == core);
        sim_time_t start = l->busy_until > now ? l->busy_until : now;
        sim_time_t data = has(l, core) ? sim_m.c_llc : fetch(core, l, start, &off);
        if (kind != SIM_LOAD) {
            sim_time_t inv = invalidate(core, l);
            data = inv > data ? inv : data;
        }
        cost = jitter(data);
        bool via_home = off && sim_hops(socket_of(core), l->home) <= 1;
        sim_time_t occupancy = shared_read && !via_home ? sim_m.c_hit : cost;
        if (start + occupancy > l->busy_until)
            l->busy_until = start + occupancy;
        if (l->owner >= 0 && l->owner != core) {
            /* two windows: the holder's, and the next owner's, which
             * starts only once its own data has arrived */
            int k = l->keep_until[0] <= l->keep_until[1] ? 0 : 1;
            l->keeper[k] = l->owner;
            l->keep_until[k] = start + cost / 2;
        }
        if (kind == SIM_LOAD)
            note_coming(l, domain_of(core), now, start + cost);
        cost = start + cost - now;
        n_miss++;
        f->misses++;
        l->misses++;
        if (off) {
            n_llc_miss++;
            f->llc_misses++;
        }
    }
    if (kind == SIM_LOAD) {
        if (!has(l, core) && l->owner >= 0 && l->owner != core)
            l->owner = -1; /* the modified copy is now shared */
        else if (!has(l, core) && !l->sharers[0] && l->owner < 0) {
            bool any = false;
            for (int w = 1; w < SIM_WORDS && !any; w++)
                any = l->sharers[w] != 0;
            if (!any)
                l->owner = (int16_t)core; /* the only copy: exclusive */
        }
        l->sharers[core >> 6] |= 1ull << (core & 63);
        note_read(f, l);
    } else {
        bool others = l->owner >= 0 && l->owner != core;
        for (int w = 0; w < SIM_WORDS && !others; w++)
            others = (l->sharers[w] & ~(w == core >> 6 ? 1ull << (core & 63) : 0)) != 0;
        others = others || l->watch >= 0;
        memset(l->sharers, 0, sizeof l->sharers);
        memset(l->coming_at, 0, sizeof l->coming_at); /* copies on their way too */
        l->sharers[core >> 6] = 1ull << (core & 63);
        l->owner = (int16_t)core;
        cost = write_done(f, l, kind, now, cost, others);
    }
    sim_advance(cost);
}

/* ---- spinning ---------------------------------------------------------------- */
static int watcher_new(void)
{
    if (free_watch >= 0) {
        int w = free_watch;
        free_watch = watchers[w].next;
        return w;
    }
    if (nwatch == capwatch) {
        capwatch = capwatch ? capwatch * 2 : 1024;
        watchers = realloc(watchers, (size_t)capwatch * sizeof *watchers);
        if (!watchers)
            abort();
    }
    return nwatch++;
}

void sim_unwatch(sim_fiber_t *f)
{
    if (!f->watching)
        return;
    f->watching = 0;
    for (int i = 0; i < f->nreads; i++) {
        line_t *l = find(f->read_line[i]);
        for (int *p = &l->watch; *p >= 0;) {
            int w = *p;
            if (watchers[w].fiber == f->id) {
                *p = watchers[w].next;
                watchers[w].line = NULL;
                watchers[w].next = free_watch;
                free_watch = w;
            } else {
                p = &watchers[w].next;
            }
        }
    }
}

static void wake_watchers(line_t *l, sim_time_t t)
{
    while (l->watch >= 0) {
        sim_fiber_t *f = sim_fibers[watchers[l->watch].fiber];
        sim_unwatch(f); /* takes it off every line, this one too */
        f->spin_quantum = 0;
        sim_wake(f, t);
    }
}

uint64_t sim_pause_stats[4]; /* quiet, wrote, no reads, changed */
void sim_pause(void)
{
    sim_fiber_t *f = sim_cur;
    if (!f)
        return;
    sim_time_t period = f->clock - f->last_pause; /* the loop's period */
    f->clock += sim_m.c_pause;
    bool quiet = !f->wrote && f->nreads > 0;
    for (int i = 0; quiet && i < f->nreads; i++)
        quiet = find(f->read_line[i])->version == f->read_ver[i];
    sim_pause_stats[quiet ? 0 : f->wrote ? 1 : !f->nreads ? 2 : 3]++;
    if (quiet) {
        /* sleep on every line the loop read until one changes */
        for (int i = 0; i < f->nreads; i++) {
            line_t *l = find(f->read_line[i]);
            int w = watcher_new();
            watchers[w] = (watcher_t){ f->id, l->watch, l };
            l->watch = w;
        }
        f->watching = 1;
        sim_time_t q = f->spin_quantum ? f->spin_quantum * 2 : period + sim_m.c_pause;
        f->spin_quantum = q < MAX_QUANTUM ? q : MAX_QUANTUM;
        sim_block(f->clock + f->spin_quantum);
        sim_unwatch(f);
    } else {
        f->spin_quantum = 0;
        sim_advance(0);
    }
    f->nreads = 0;
    f->wrote = false;
    f->last_pause = f->clock;
}

/* the lines with the most misses, for NUMALOCK_SIM_DEBUG */
void sim_mem_report(FILE *out, int top)
{
    for (int k = 0; k < top; k++) {
        line_t *best = NULL;
        for (size_t i = 0; i < caplines; i++)
            if (lines[i].tag && lines[i].misses && (!best || lines[i].misses > best->misses))
                best = &lines[i];
        if (!best)
            return;
        fprintf(out, "  line %#llx: %u misses, %u writes, home socket %d\n",
                (unsigned long long)((best->tag - 1) << 6), best->misses, best->version, best->home);
        best->misses = 0;
    }
}

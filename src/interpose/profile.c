/*
 * The lock profile of `numalock run --stats` (NUMALOCK_STATS=1): per mutex and
 * rwlock, acquisitions, contended acquisitions and the time they waited,
 * hand-overs and the share of them that crossed nodes, and where the object
 * was first locked. Printed at exit to stderr, or appended to
 * NUMALOCK_STATS_FILE; never to the program's stdout.
 *
 * Storage: a table of NLP_STAT_SLOTS cache-line blocks mapped once at start-up
 * (only when statistics are on), indexed by a hash of the object's address with
 * linear probing: no global lock and no shared counter on the way to a block.
 * Objects beyond the table's capacity share one overflow block.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "preload.h"

#define NLP_STAT_BITS 16
#define NLP_STAT_SLOTS (1u << NLP_STAT_BITS)
#define NLP_STAT_PROBES 64
#define KEY_BUSY ((uintptr_t)1)

static nlp_stat_t *table;
static nlp_stat_t overflow;
static char lock_name[64];

int nlp_profile_init(const char *name)
{
    void *p = mmap(NULL, (size_t)NLP_STAT_SLOTS * sizeof(nlp_stat_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return ENOMEM;
    table = p;
    nl_stats_init(&overflow.st);
    overflow.key = 2;
    snprintf(lock_name, sizeof lock_name, "%s", name);
    return 0;
}

nlp_stat_t *nlp_profile_get(const void *obj, uint32_t kind, void *caller)
{
    uintptr_t a = (uintptr_t)obj;
    size_t h = (size_t)(((uint64_t)(a >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - NLP_STAT_BITS));
    for (unsigned i = 0; i < NLP_STAT_PROBES; i++) {
        nlp_stat_t *e = &table[(h + i) & (NLP_STAT_SLOTS - 1)];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == 0) {
            if (atomic_compare_exchange_strong_explicit(&e->key, &k, KEY_BUSY, memory_order_acquire,
                                                        memory_order_acquire)) {
                nl_stats_init(&e->st);
                e->caller = (uintptr_t)caller;
                e->kind = kind;
                atomic_store_explicit(&e->key, a, memory_order_release);
                return e;
            }
        }
        while (k == KEY_BUSY) { /* another thread is setting this block up */
            sched_yield();
            k = atomic_load_explicit(&e->key, memory_order_acquire);
        }
        if (k == a)
            return e;
    }
    return &overflow;
}

#define BUMP(x, v) atomic_store_explicit(&(x), atomic_load_explicit(&(x), memory_order_relaxed) + (v), \
                                         memory_order_relaxed)

void nlp_profile_write(nlp_stat_t *s, int contended, uint64_t wait_ns)
{
    nl_stats_on_acquire(&s->st, contended != 0);
    if (contended)
        BUMP(s->wait_ns, wait_ns);
}

void nlp_profiled_acquire(const void *obj, uint32_t kind, void *caller, void (*acquire)(void *), void *l)
{
    nlp_stat_t *s = nlp_profile_get(obj, kind, caller);
    nl_self_t *self = nl_self();
    nl_wait_counts_t before = self->wc;
    uint64_t t0 = nl_clock_ticks();
    acquire(l);
    int contended = self->wc.slow != before.slow;
    nlp_profile_write(s, contended, contended ? nl_ticks_to_ns(nl_clock_ticks() - t0) : 0);
    nl_stats_add_waiting(&s->st, &before); /* parks, gate waits, grants while parked */
}

int nlp_profiled_call_slow(void *obj, uint32_t kind, int read, void *caller, int rc,
                           int (*lock_fn)(void *obj, const void *ctx), const void *ctx)
{
    int contended = 0;
    uint64_t t0 = 0;
    if (rc == EBUSY && lock_fn) {
        contended = 1;
        t0 = nl_clock_ns();
        rc = lock_fn(obj, ctx);
    }
    if (rc == 0 || rc == EOWNERDEAD) {
        nlp_stat_t *s = nlp_profile_get(obj, kind, caller);
        uint64_t dt = contended ? nl_clock_ns() - t0 : 0;
        read ? nlp_profile_read(s, contended, dt) : nlp_profile_write(s, contended, dt);
    }
    return rc;
}

void nlp_profile_read(nlp_stat_t *s, int contended, uint64_t wait_ns)
{
    nl_stats_on_read_acquire(&s->st);
    if (contended) {
        atomic_fetch_add_explicit(&s->read_contended, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&s->read_wait_ns, wait_ns, memory_order_relaxed);
    }
}

/* ---- the report ----------------------------------------------------------- */
typedef struct {
    nlp_stat_t *e;
    nl_stats_snapshot_t s;
    uint64_t contended, wait_ns, read_contended;
} row_t;

static int by_contention(const void *pa, const void *pb)
{
    const row_t *a = pa, *b = pb;
    if (a->contended != b->contended)
        return a->contended < b->contended ? 1 : -1;
    if (a->wait_ns != b->wait_ns)
        return a->wait_ns < b->wait_ns ? 1 : -1;
    uint64_t x = a->s.acquisitions + a->s.read_acquisitions, y = b->s.acquisitions + b->s.read_acquisitions;
    return x < y ? 1 : x > y ? -1 : 0;
}

typedef struct {
    char *buf;
    size_t len, cap;
} out_t;

static void put(out_t *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out_t *o, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(o->buf ? o->buf + o->len : NULL, o->buf ? o->cap - o->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (o->buf && o->len + (size_t)n < o->cap) {
            o->len += (size_t)n;
            return;
        }
        size_t cap = (o->cap ? o->cap * 2 : 8192) + (size_t)n;
        char *b = realloc(o->buf, cap);
        if (!b)
            return;
        o->buf = b;
        o->cap = cap;
    }
}

static void where(uintptr_t pc, char *buf, size_t len)
{
    Dl_info info;
    if (!pc || !dladdr((void *)pc, &info) || !info.dli_fname) {
        snprintf(buf, len, "%#lx", (unsigned long)pc);
        return;
    }
    const char *file = strrchr(info.dli_fname, '/');
    file = file ? file + 1 : info.dli_fname;
    if (!*file)
        file = program_invocation_short_name;
    if (info.dli_sname && info.dli_saddr)
        snprintf(buf, len, "%s(%s+%#lx)", file, info.dli_sname, (unsigned long)(pc - (uintptr_t)info.dli_saddr));
    else
        snprintf(buf, len, "%s(+%#lx)", file, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void report(void)
{
    if (!table)
        return;
    size_t n = 0, cap = 256;
    row_t *rows = malloc(cap * sizeof *rows);
    if (!rows)
        return;
    uint64_t total = 0, total_cont = 0, nmutex = 0, nrw = 0, nspin = 0, total_reads = 0;
    for (size_t i = 0; i <= NLP_STAT_SLOTS; i++) {
        nlp_stat_t *e = i < NLP_STAT_SLOTS ? &table[i] : &overflow;
        if (atomic_load_explicit(&e->key, memory_order_acquire) <= KEY_BUSY)
            continue;
        row_t r = { .e = e };
        nl_stats_read(&e->st, &r.s);
        if (!r.s.acquisitions && !r.s.read_acquisitions)
            continue;
        r.read_contended = atomic_load_explicit(&e->read_contended, memory_order_relaxed);
        r.contended = r.s.contended + r.read_contended;
        r.wait_ns = atomic_load_explicit(&e->wait_ns, memory_order_relaxed) +
                    atomic_load_explicit(&e->read_wait_ns, memory_order_relaxed);
        total += r.s.acquisitions + r.s.read_acquisitions;
        total_reads += r.s.read_acquisitions;
        total_cont += r.contended;
        if (e->kind == NLP_OBJ_RWLOCK)
            nrw++;
        else if (e->kind == NLP_OBJ_SPIN)
            nspin++;
        else
            nmutex++;
        if (n == cap) {
            row_t *nr = realloc(rows, (cap *= 2) * sizeof *rows);
            if (!nr)
                break;
            rows = nr;
        }
        rows[n++] = r;
    }
    if (!n) {
        free(rows);
        return; /* a process that never locked anything (a shell, say): no profile */
    }
    qsort(rows, n, sizeof *rows, by_contention);
    size_t ncont = 0;
    while (ncont < n && rows[ncont].contended)
        ncont++;
    unsigned top = nlp_g.stats_top ? nlp_g.stats_top : 20; /* NUMALOCK_STATS_TOP, checked at start-up */

    out_t o = { 0 };
    const nl_topology_t *topo = nl_topology_current();
    put(&o, "numalock: lock profile of pid %d (%s), lock %s, topology %s (%d node%s)\n", (int)getpid(),
        program_invocation_name, lock_name, topo->spec, topo->nnodes, topo->nnodes == 1 ? "" : "s");
    put(&o, "numalock: %zu objects locked (%llu mutexes, %llu rwlocks, %llu spin locks), %zu contended; %llu acquisitions (%llu of them rwlock reads), %.2f%% contended\n",
        n, (unsigned long long)nmutex, (unsigned long long)nrw, (unsigned long long)nspin, ncont, (unsigned long long)total,
        (unsigned long long)total_reads, pct(total_cont, total));
    /* the contended objects, most contended first; when none was contended,
     * the most acquired ones */
    size_t shown = ncont ? ncont : n;
    {
        put(&o, ncont ? "numalock: contended locks, most contended first:\n"
                      : "numalock: no contended locks; most acquired:\n");
        /* the share of hand-overs that crossed each level of the hierarchy
         * other than the nodes' (remote%) */
        char lvh[96] = "";
        for (int l = 0, off = 0; l < topo->nlevels && topo->nlevels > 1; l++)
            if (l != topo->node_level && off < (int)sizeof lvh)
                off += snprintf(lvh + off, sizeof lvh - (size_t)off, " %9.7s%%", topo->level_name[l]);
        put(&o, "numalock: %4s %-16s %-6s %12s %10s %10s %7s %10s %10s %8s%s %8s %8s %8s  %s\n", "rank", "object",
            "type", "acquired", "reads", "contended", "cont%", "wait-ms", "handovers", "remote%", lvh, "parks",
            "gated", "parked%", "first locked at");
        for (size_t i = 0; i < shown && i < top; i++) {
            row_t *r = &rows[i];
            char at[256];
            if (r->e == &overflow)
                snprintf(at, sizeof at, "(objects beyond the profile table, together)");
            else
                where(r->e->caller, at, sizeof at);
            uint64_t all = r->s.acquisitions + r->s.read_acquisitions;
            char lv[96] = "";
            for (int l = 0, off = 0; l < topo->nlevels && topo->nlevels > 1; l++)
                if (l != topo->node_level && off < (int)sizeof lv)
                    off += snprintf(lv + off, sizeof lv - (size_t)off, " %9.2f%%", pct(r->s.crossings[l], r->s.handovers));
            put(&o, "numalock: %4zu %-16p %-6s %12llu %10llu %10llu %6.2f%% %10.3f %10llu %7.2f%%%s %8llu %8llu %7.2f%%  %s\n", i + 1,
                r->e == &overflow ? NULL : (void *)r->e->key, r->e->kind == NLP_OBJ_RWLOCK ? "rwlock" : r->e->kind == NLP_OBJ_SPIN ? "spin" : "mutex",
                (unsigned long long)r->s.acquisitions, (unsigned long long)r->s.read_acquisitions,
                (unsigned long long)r->contended, pct(r->contended, all), (double)r->wait_ns / 1e6,
                (unsigned long long)r->s.handovers, pct(r->s.remote_handovers, r->s.handovers), lv,
                (unsigned long long)r->s.parks, (unsigned long long)r->s.gate_waits,
                pct(r->s.handovers_to_parked, r->s.handovers), at);
        }
        if (shown > top)
            put(&o, "numalock: ... %zu more (NUMALOCK_STATS_TOP=N shows more)\n", shown - top);
    }
    if (n > shown)
        put(&o, "numalock: %zu uncontended objects not shown\n", n - shown);
    free(rows);

    int fd = 2, close_fd = 0;
    const char *file = getenv(NLP_ENV_STATS_FILE);
    if (file && *file) {
        fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0) {
            char msg[PATH_MAX + 256];
            snprintf(msg, sizeof msg, "numalock preload: NUMALOCK_STATS_FILE='%s' cannot be written: %s; the lock "
                     "profile follows on stderr\n", file, strerror(errno));
            nlp_say(msg);
            fd = 2;
        } else {
            close_fd = 1;
        }
    }
    const char *p = o.buf;
    size_t left = o.len;
    while (p && left) {
        ssize_t w = write(fd, p, left);
        if (w <= 0)
            break;
        p += w;
        left -= (size_t)w;
    }
    if (close_fd)
        close(fd);
    free(o.buf);
}

__attribute__((destructor)) static void nlp_profile_fini(void) { report(); }

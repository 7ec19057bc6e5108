/*
 * The lock profile of `numalock run --stats` (NUMALOCK_STATS=1): per mutex and
 * rwlock, acquisitions, contended acquisitions and the time they waited,
 * hand-overs and the share of them that crossed nodes, and where the object
 * was first locked (with NUMALOCK_STATS_STACKS=N, the N frames of the stack
 * there). Printed at exit to stderr, or appended to NUMALOCK_STATS_FILE; never
 * to the program's stdout. As text, or with NUMALOCK_STATS_FORMAT=json as one
 * JSON object on one line per process (several processes may append to one
 * file). Code addresses are named only then (symbolize.c).
 *
 * Storage: a table of NLP_STAT_SLOTS cache-line blocks mapped once at start-up
 * (only when statistics are on), indexed by a hash of the object's address with
 * linear probing: no global lock and no shared counter on the way to a block.
 * Objects beyond the table's capacity share one overflow block. The stacks,
 * when asked for, lie in a second mapping of N return addresses per block
 * (block i's at stacks[i * N], ended by a 0 when shorter than N).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>
#include "preload.h"
#include "numalock/clock.h"
#include "../stats.h"

#define NLP_STAT_BITS 16
#define NLP_STAT_SLOTS (1u << NLP_STAT_BITS)
#define NLP_STAT_PROBES 64
#define KEY_BUSY ((uintptr_t)1)

static nlp_stat_t *table;
static nlp_stat_t overflow;
static char lock_name[64];
static uintptr_t *stacks; /* NULL unless NUMALOCK_STATS_STACKS > 0 */
static unsigned depth;    /* frames per block in stacks */
static unsigned top_rows; /* NUMALOCK_STATS_TOP */
static int as_json;       /* NUMALOCK_STATS_FORMAT=json */

int nlp_profile_init(const char *name, const nlp_profile_opts_t *opts)
{
    void *p = mmap(NULL, (size_t)NLP_STAT_SLOTS * sizeof(nlp_stat_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return ENOMEM;
    table = p;
    nl_stats_init(&overflow.st);
    overflow.key = 2;
    snprintf(lock_name, sizeof lock_name, "%s", name);
    top_rows = opts->top;
    as_json = opts->json;
    if (opts->stacks) {
        p = mmap(NULL, (size_t)NLP_STAT_SLOTS * opts->stacks * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) { /* else the profile goes on without stacks */
            stacks = p;
            depth = opts->stacks;
        }
    }
    return 0;
}

/* ---- the stack where an object was first locked ---------------------------
 * Walked with libgcc's unwinder on the unwind tables (.eh_frame): no frame
 * pointers needed, no memory allocated, no dlopen (libgcc_s is linked, unlike
 * glibc's backtrace(), which loads it on first use). A lock taken during the
 * walk (an unwinder's or allocator's, in another library) reaches
 * nlp_profile_get again; `walking` makes that inner call skip its stack, so
 * the walk neither recurses nor waits on itself. */
static NL_TLS int walking;

typedef struct {
    uintptr_t *pcs;
    uintptr_t caller;
    unsigned n, max, skipped;
    int found;
} walk_t;

static _Unwind_Reason_Code walk_frame(struct _Unwind_Context *ctx, void *arg)
{
    walk_t *w = arg;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
    if (!ip)
        return _URC_END_OF_STACK;
    if (!w->found) { /* the preload's own frames, up to the program's call */
        if (ip != w->caller)
            return ++w->skipped < 32 ? _URC_NO_REASON : _URC_END_OF_STACK;
        w->found = 1;
    }
    w->pcs[w->n++] = ip;
    return w->n < w->max ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* Up to max return addresses from `caller` (the return address of the
 * program's lock call) outwards; just caller when the walk cannot reach it. */
static unsigned walk_stack(uintptr_t *pcs, unsigned max, uintptr_t caller)
{
    walk_t w = { pcs, caller, 0, max, 0, 0 };
    walking = 1;
    _Unwind_Backtrace(walk_frame, &w);
    walking = 0;
    if (!w.found) {
        pcs[0] = caller;
        return 1;
    }
    return w.n;
}

nlp_stat_t *nlp_profile_get(const void *obj, uint32_t kind, void *caller)
{
    uintptr_t a = (uintptr_t)obj;
    size_t h = (size_t)(((uint64_t)(a >> 3) * 0x9E3779B97F4A7C15ull) >> (64 - NLP_STAT_BITS));
    uintptr_t pcs[NLP_STATS_STACKS_MAX];
    unsigned npcs = 0;
    int walked = 0;
    for (unsigned i = 0; i < NLP_STAT_PROBES; i++) {
        size_t slot = (h + i) & (NLP_STAT_SLOTS - 1);
        nlp_stat_t *e = &table[slot];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == 0) {
            /* walked before the block is claimed: a lock taken during the walk
             * may probe this block and must not find it busy */
            if (stacks && !walked && !walking) {
                npcs = walk_stack(pcs, depth, (uintptr_t)caller);
                walked = 1;
            }
            if (atomic_compare_exchange_strong_explicit(&e->key, &k, KEY_BUSY, memory_order_acquire,
                                                        memory_order_acquire)) {
                nl_stats_init(&e->st);
                e->caller = (uintptr_t)caller;
                e->kind = kind;
                if (npcs)
                    memcpy(&stacks[slot * depth], pcs, npcs * sizeof *pcs);
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

int nlp_profiled_call_slow(void *obj, uint32_t kind, int read, void *caller, int (*try_fn)(void *obj),
                           int (*lock_fn)(void *obj, const void *ctx), const void *ctx)
{
    nlp_stat_t *s = nlp_profile_get(obj, kind, caller);
    int contended = 0;
    uint64_t t0 = 0;
    int rc = try_fn(obj);
    if (rc == EBUSY && lock_fn) {
        contended = 1;
        t0 = nl_clock_ns();
        rc = lock_fn(obj, ctx);
    }
    if (rc == 0 || rc == EOWNERDEAD) {
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

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* What the report is made of: the objects (rows, most contended first), the
 * totals over all of them, and how many rows are listed. */
typedef struct {
    row_t *rows;
    size_t n, ncont, listed;
    uint64_t total, total_reads, total_cont, total_wait_ns, total_handovers, total_remote;
    uint64_t nmutex, nrw, nspin;
    const nl_topology_t *topo;
    nlp_symbolizer_t *sym;
} profile_t;

static const char *kind_name(uint32_t kind)
{
    return kind == NLP_OBJ_RWLOCK ? "rwlock" : kind == NLP_OBJ_SPIN ? "spin" : "mutex";
}

#define OVERFLOW_TEXT "(objects beyond the profile table, together)"

/* The stack kept for a row's block: its frame count, the frames in *pcs. */
static unsigned stack_of(const row_t *r, const uintptr_t **pcs)
{
    if (!stacks || r->e == &overflow)
        return 0;
    const uintptr_t *p = &stacks[(size_t)(r->e - table) * depth];
    unsigned n = 0;
    while (n < depth && p[n])
        n++;
    *pcs = p;
    return n;
}

static void text_report(out_t *o, const profile_t *p)
{
    const nl_topology_t *topo = p->topo;
    put(o, "numalock: lock profile of pid %d (%s), lock %s, topology %s (%d node%s)\n", (int)getpid(),
        program_invocation_name, lock_name, topo->spec, topo->nnodes, topo->nnodes == 1 ? "" : "s");
    put(o, "numalock: %zu objects locked (%llu mutexes, %llu rwlocks, %llu spin locks), %zu contended; %llu acquisitions (%llu of them rwlock reads), %.2f%% contended\n",
        p->n, (unsigned long long)p->nmutex, (unsigned long long)p->nrw, (unsigned long long)p->nspin, p->ncont,
        (unsigned long long)p->total, (unsigned long long)p->total_reads, pct(p->total_cont, p->total));
    /* the contended objects, most contended first; when none was contended,
     * the most acquired ones */
    size_t shown = p->ncont ? p->ncont : p->n;
    put(o, p->ncont ? "numalock: contended locks, most contended first:\n"
                    : "numalock: no contended locks; most acquired:\n");
    /* the share of hand-overs that crossed each level of the hierarchy
     * other than the nodes' (remote%) */
    char lvh[96] = "";
    for (int l = 0, off = 0; l < topo->nlevels && topo->nlevels > 1; l++)
        if (l != topo->node_level && off < (int)sizeof lvh)
            off += snprintf(lvh + off, sizeof lvh - (size_t)off, " %9.7s%%", topo->level_name[l]);
    put(o, "numalock: %4s %-16s %-6s %12s %10s %10s %7s %10s %10s %8s%s %8s %8s %8s  %s\n", "rank", "object",
        "type", "acquired", "reads", "contended", "cont%", "wait-ms", "handovers", "remote%", lvh, "parks",
        "gated", "parked%", "first locked at");
    nlp_site_t site;
    for (size_t i = 0; i < p->listed; i++) {
        const row_t *r = &p->rows[i];
        if (r->e == &overflow)
            snprintf(site.text, sizeof site.text, OVERFLOW_TEXT);
        else
            nlp_sym_lookup(p->sym, r->e->caller, &site);
        uint64_t all = r->s.acquisitions + r->s.read_acquisitions;
        char lv[96] = "";
        for (int l = 0, off = 0; l < topo->nlevels && topo->nlevels > 1; l++)
            if (l != topo->node_level && off < (int)sizeof lv)
                off += snprintf(lv + off, sizeof lv - (size_t)off, " %9.2f%%", pct(r->s.crossings[l], r->s.handovers));
        put(o, "numalock: %4zu %-16p %-6s %12llu %10llu %10llu %6.2f%% %10.3f %10llu %7.2f%%%s %8llu %8llu %7.2f%%  %s\n", i + 1,
            r->e == &overflow ? NULL : (void *)r->e->key, kind_name(r->e->kind),
            (unsigned long long)r->s.acquisitions, (unsigned long long)r->s.read_acquisitions,
            (unsigned long long)r->contended, pct(r->contended, all), (double)r->wait_ns / 1e6,
            (unsigned long long)r->s.handovers, pct(r->s.remote_handovers, r->s.handovers), lv,
            (unsigned long long)r->s.parks, (unsigned long long)r->s.gate_waits,
            pct(r->s.handovers_to_parked, r->s.handovers), site.text);
        /* the stack where it was first locked, innermost (the site above) first */
        const uintptr_t *pcs = NULL;
        unsigned nf = stack_of(r, &pcs);
        for (unsigned f = 0; f < nf; f++) {
            nlp_sym_lookup(p->sym, pcs[f], &site);
            put(o, "numalock:        #%-2u %s\n", f, site.text);
        }
    }
    if (shown > p->listed)
        put(o, "numalock: ... %zu more (NUMALOCK_STATS_TOP=N shows more)\n", shown - p->listed);
    if (p->n > shown)
        put(o, "numalock: %zu uncontended objects not shown\n", p->n - shown);
}

/* Length of the valid UTF-8 sequence at s (2 to 4 bytes), 0 if there is none. */
static size_t utf8_seq(const unsigned char *s)
{
    size_t n;
    uint32_t min;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, min = 0x80;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, min = 0x800;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, min = 0x10000;
    else
        return 0;
    uint32_t cp = s[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++) { /* a NUL ends the check: it is no continuation byte */
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    return cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : n;
}

/* A JSON string; bytes that are not UTF-8 (a file name may hold any) become
 * U+FFFD, so the line always parses. NULL or "" with null_if_empty: null. */
static void json_str(out_t *o, const char *str, int null_if_empty)
{
    if (!str || (null_if_empty && !*str)) {
        put(o, "null");
        return;
    }
    put(o, "\"");
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        size_t run = 0; /* characters that need no escape, copied together */
        while (s[run] >= 0x20 && s[run] < 0x80 && s[run] != '"' && s[run] != '\\')
            run++;
        if (run) {
            put(o, "%.*s", (int)run, (const char *)s);
            s += run;
            continue;
        }
        if (*s == '"' || *s == '\\') {
            put(o, "\\%c", *s);
            s++;
        } else if (*s < 0x20) {
            put(o, "\\u%04x", *s);
            s++;
        } else if ((run = utf8_seq(s)) != 0) {
            put(o, "%.*s", (int)run, (const char *)s);
            s += run;
        } else {
            put(o, "\\ufffd");
            s++;
        }
    }
    put(o, "\"");
}

static void json_site(out_t *o, const nlp_site_t *s)
{
    if (s->pc)
        put(o, "{\"pc\":\"%#lx\",\"object\":", (unsigned long)s->pc);
    else
        put(o, "{\"pc\":null,\"object\":");
    json_str(o, s->object, 1);
    put(o, ",\"function\":");
    json_str(o, s->function, 1);
    if (s->inlined_in[0]) {
        put(o, ",\"inlined_in\":");
        json_str(o, s->inlined_in, 1);
    }
    put(o, ",\"file\":");
    json_str(o, s->file, 1);
    if (s->line)
        put(o, ",\"line\":%d,\"text\":", s->line);
    else
        put(o, ",\"line\":null,\"text\":");
    json_str(o, s->text, 0);
    put(o, "}");
}

#define U(x) ((unsigned long long)(x))

static void json_report(out_t *o, const profile_t *p)
{
    const nl_topology_t *topo = p->topo;
    put(o, "{\"pid\":%d,\"program\":", (int)getpid());
    json_str(o, program_invocation_name, 0);
    put(o, ",\"lock\":");
    json_str(o, lock_name, 0);
    put(o, ",\"topology\":");
    json_str(o, topo->spec, 0);
    put(o, ",\"nodes\":%d,\"levels\":[", topo->nnodes);
    for (int l = 0; l < topo->nlevels; l++) {
        put(o, l ? "," : "");
        json_str(o, topo->level_name[l], 0);
    }
    put(o, "],\"objects\":%zu,\"mutexes\":%llu,\"rwlocks\":%llu,\"spins\":%llu,\"contended_objects\":%zu,"
           "\"acquisitions\":%llu,\"reads\":%llu,\"contended\":%llu,\"wait_ns\":%llu,\"handovers\":%llu,"
           "\"remote_handovers\":%llu,\"stack_frames\":%u,\"locks\":[",
        p->n, U(p->nmutex), U(p->nrw), U(p->nspin), p->ncont, U(p->total), U(p->total_reads), U(p->total_cont),
        U(p->total_wait_ns), U(p->total_handovers), U(p->total_remote), stacks ? depth : 0);
    nlp_site_t site;
    for (size_t i = 0; i < p->listed; i++) {
        const row_t *r = &p->rows[i];
        put(o, "%s{\"rank\":%zu,\"address\":", i ? "," : "", i + 1);
        if (r->e == &overflow)
            put(o, "null");
        else
            put(o, "\"%#lx\"", (unsigned long)r->e->key);
        put(o, ",\"type\":\"%s\",\"acquired\":%llu,\"reads\":%llu,\"contended\":%llu,\"wait_ns\":%llu,"
               "\"handovers\":%llu,\"remote_handovers\":%llu,\"crossings\":{",
            kind_name(r->e->kind), U(r->s.acquisitions), U(r->s.read_acquisitions), U(r->contended), U(r->wait_ns),
            U(r->s.handovers), U(r->s.remote_handovers));
        for (int l = 0; l < topo->nlevels; l++) {
            put(o, l ? "," : "");
            json_str(o, topo->level_name[l], 0);
            put(o, ":%llu", U(r->s.crossings[l]));
        }
        put(o, "},\"parks\":%llu,\"gated\":%llu,\"handovers_to_parked\":%llu,\"site\":", U(r->s.parks),
            U(r->s.gate_waits), U(r->s.handovers_to_parked));
        if (r->e == &overflow) {
            memset(&site, 0, sizeof site);
            snprintf(site.text, sizeof site.text, OVERFLOW_TEXT);
        } else {
            nlp_sym_lookup(p->sym, r->e->caller, &site);
        }
        json_site(o, &site);
        if (stacks) {
            const uintptr_t *pcs = NULL;
            unsigned nf = stack_of(r, &pcs);
            put(o, ",\"stack\":[");
            for (unsigned f = 0; f < nf; f++) {
                nlp_sym_lookup(p->sym, pcs[f], &site);
                put(o, f ? "," : "");
                json_site(o, &site);
            }
            put(o, "]");
        }
        put(o, "}");
    }
    put(o, "]}\n");
}

static void report(void)
{
    if (!table)
        return;
    size_t cap = 256;
    profile_t p = { .rows = malloc(cap * sizeof(row_t)) };
    if (!p.rows) {
        nlp_say("numalock preload: no memory to write the lock profile\n");
        return;
    }
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
        p.total += r.s.acquisitions + r.s.read_acquisitions;
        p.total_reads += r.s.read_acquisitions;
        p.total_cont += r.contended;
        p.total_wait_ns += r.wait_ns;
        p.total_handovers += r.s.handovers;
        p.total_remote += r.s.remote_handovers;
        if (e->kind == NLP_OBJ_RWLOCK)
            p.nrw++;
        else if (e->kind == NLP_OBJ_SPIN)
            p.nspin++;
        else
            p.nmutex++;
        if (p.n == cap) {
            row_t *nr = realloc(p.rows, (cap *= 2) * sizeof *nr);
            if (!nr)
                break;
            p.rows = nr;
        }
        p.rows[p.n++] = r;
    }
    if (!p.n) {
        free(p.rows);
        return; /* a process that never locked anything (a shell, say): no profile */
    }
    qsort(p.rows, p.n, sizeof *p.rows, by_contention);
    while (p.ncont < p.n && p.rows[p.ncont].contended)
        p.ncont++;
    /* the contended objects, most contended first, or when none was
     * contended the most acquired; at most NUMALOCK_STATS_TOP of them */
    unsigned top = top_rows ? top_rows : 20;
    size_t shown = p.ncont ? p.ncont : p.n;
    p.listed = shown < top ? shown : top;
    p.topo = nl_topology_current();
    p.sym = nlp_sym_open();

    out_t o = { 0 };
    if (as_json)
        json_report(&o, &p);
    else
        text_report(&o, &p);
    nlp_sym_close(p.sym);
    free(p.rows);

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
    const char *w = o.buf;
    size_t left = o.len;
    while (w && left) {
        ssize_t n = write(fd, w, left);
        if (n <= 0)
            break;
        w += n;
        left -= (size_t)n;
    }
    if (close_fd)
        close(fd);
    free(o.buf);
}

__attribute__((destructor)) static void nlp_profile_fini(void) { report(); }

/*
 * The HP cache-line contention test (Bueso & Norton, "An Overview of Kernel
 * Lock Improvements", LinuxCon 2014: "Demonstrating Cache Line Contention
 * Effects"):
 * one thread pinned per CPU, CPUs taken fill-first (one node, then the next),
 * round-robin across nodes, or from an explicit list; the lock (and K data
 * lines) allocated on a chosen memory node; a synchronised start; a tight
 * acquire/release loop. Reported per CPU (operations per second), in total,
 * and as the spread between the fastest and the slowest CPU.
 *
 * Deviation from the slides: each run lasts --duration seconds rather than a
 * fixed 1,000,000 iterations, so that every CPU contends until the end (with a
 * fixed count the first to finish leaves the others a quieter line).
 * A non-atomic counter in the critical section checks mutual exclusion
 * (--count 0 leaves it out: the slides' sections were empty).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "nodes.h"

#define CT_MAX_CPUS 1024
#define CT_MAX_LINES 64

typedef struct {
    int order[CT_MAX_CPUS];  /* the CPUs in the order threads take them */
    int norder;
    int node_of[CT_MAX_CPUS]; /* node of order[i] (topology in use) */
    const char *placement;    /* fill, rr, or the list as given */
    int mem_node;             /* sysfs node id, -1: any */
    int lines;
    int count;
    int real_nodes;
} ct_plan_t;

typedef struct {
    _Alignas(64) _Atomic int go;
    _Alignas(64) _Atomic int stop;
    _Alignas(64) _Atomic int ready;
    _Atomic int started;      /* threads that saw go: the run is timed from all of them */
    const nl_lock_ops_t *ops;
    void *lock;
    uint64_t *counter;        /* non-atomic, in the critical section */
    int count;                /* 0: no counter (an empty section, as in the slides) */
    uint64_t *data;           /* lines * 8 words */
    int lines;
} ct_shared_t;

typedef struct {
    _Alignas(64) ct_shared_t *sh;
    uint64_t ops;
    double seconds;
} ct_thread_t;

static void *ct_thread(void *p)
{
    ct_thread_t *t = p;
    ct_shared_t *sh = t->sh;
    const nl_lock_ops_t *ops = sh->ops;
    void *lock = sh->lock;
    uint64_t n = 0;
    /* the library's record of this thread, set up before the timed loop (its
     * first contended acquisition would otherwise do it, under the process's
     * thread-id lock, inside the measurement) */
    (void)nl_thread_id();
    atomic_fetch_add(&sh->ready, 1);
    while (!atomic_load_explicit(&sh->go, memory_order_acquire))
        ;
    uint64_t t0 = nl_clock_ns();
    atomic_fetch_add(&sh->started, 1);
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        ops->acquire(lock);
        if (sh->count)
            (*sh->counter)++;
        for (int k = 0; k < sh->lines; k++)
            sh->data[k * 8]++;
        ops->release(lock);
        n++;
    }
    t->seconds = (double)(nl_clock_ns() - t0) / 1e9;
    t->ops = n;
    return NULL;
}

static int allowed_cpu(int cpu)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return 1;
    return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
}

/* the CPU order of --cpus; 0 or EINVAL with c->err set */
static int make_plan(bench_ctx_t *c, ct_plan_t *p)
{
    const char *spec = bench_opt(c, "cpus");
    const nl_topology_t *cur = nl_topology_current();
    static nl_topology_t real;
    nl_topology_parse("auto", &real, NULL, 0);
    p->real_nodes = bench_real_nodes();
    /* fill/rr follow the nodes in use; a virtual topology has no CPUs: the real nodes */
    const nl_topology_t *t = cur->kind == NL_TOPO_VIRTUAL ? &real : cur;
    p->placement = spec;
    p->norder = 0;
    if (!strcmp(spec, "fill") || !strcmp(spec, "rr")) {
        int per[NL_MAX_NODES] = { 0 };
        static int cpus_of[NL_MAX_NODES][CT_MAX_CPUS];
        for (int cpu = 0; cpu < t->ncpus && cpu < CT_MAX_CPUS; cpu++) {
            int nd = t->cpu_to_node[cpu];
            if (nd >= 0 && nd < NL_MAX_NODES && allowed_cpu(cpu))
                cpus_of[nd][per[nd]++] = cpu;
        }
        if (!strcmp(spec, "fill")) {
            for (int nd = 0; nd < t->nnodes; nd++)
                for (int i = 0; i < per[nd]; i++)
                    p->order[p->norder++] = cpus_of[nd][i];
        } else {
            for (int i = 0; i < CT_MAX_CPUS; i++) {
                int any = 0;
                for (int nd = 0; nd < t->nnodes; nd++)
                    if (i < per[nd]) {
                        p->order[p->norder++] = cpus_of[nd][i];
                        any = 1;
                    }
                if (!any)
                    break;
            }
        }
    } else {
        const char *s = spec;
        while (*s) {
            char *e;
            if (!isdigit((unsigned char)*s))
                goto bad_list;
            long a = strtol(s, &e, 10), b = a;
            s = e;
            if (*s == '-') {
                if (!isdigit((unsigned char)s[1]))
                    goto bad_list;
                b = strtol(s + 1, &e, 10);
                s = e;
            }
            if (b < a || b >= CT_MAX_CPUS)
                goto bad_list;
            for (long cpu = a; cpu <= b; cpu++) {
                for (int k = 0; k < p->norder; k++)
                    if (p->order[k] == cpu)
                        goto bad_list;
                if (!allowed_cpu((int)cpu)) {
                    snprintf(c->err, sizeof c->err,
                             "--cpus %s: CPU %ld is not one this process may run on (see `numalock topo`)",
                             spec, cpu);
                    return EINVAL;
                }
                p->order[p->norder++] = (int)cpu;
            }
            if (*s == ',' && s[1])
                s++;
            else if (*s)
                goto bad_list;
        }
    }
    for (int i = 0; i < p->norder; i++) {
        int cpu = p->order[i];
        p->node_of[i] = cpu < t->ncpus && t->cpu_to_node[cpu] >= 0 ? t->cpu_to_node[cpu] : 0;
    }
    if (!p->norder)
        goto bad_list;
    return 0;
bad_list:
    snprintf(c->err, sizeof c->err,
             "bad value '%s' for --cpus: expected fill, rr, or distinct CPUs like 0,2,4-7", spec);
    return EINVAL;
}

static int parse_mem_node(bench_ctx_t *c, ct_plan_t *p)
{
    const char *v = bench_opt(c, "mem-node");
    if (!strcmp(v, "any")) {
        p->mem_node = -1;
        return 0;
    }
    char *e;
    errno = 0;
    long n = strtol(v, &e, 10);
    if (e == v || *e || errno || n < 0 || n >= 1024 || !bench_node_exists((int)n)) {
        snprintf(c->err, sizeof c->err,
                 "bad value '%s' for --mem-node: expected any, or a NUMA node of this machine "
                 "(it has %d; see `numalock topo`)", v, p->real_nodes);
        return EINVAL;
    }
    p->mem_node = (int)n;
    char why[256];
    if (p->real_nodes > 1 && bench_numa_usable(why, sizeof why)) {
        snprintf(c->err, sizeof c->err, "--mem-node %s: %s", v, why);
        return EINVAL;
    }
    return 0;
}

static int ct_run_one(bench_ctx_t *c, const ct_plan_t *p, const nl_lock_ops_t *ops, int T, bench_record_t *r)
{
    size_t lock_bytes = (ops->size + 63) & ~(size_t)63;
    size_t bytes = (lock_bytes + 64 + (size_t)p->lines * 64 + 4095) & ~(size_t)4095;
    int placed; /* memory for the lock, the counter and the data lines, on p->mem_node */
    unsigned char *mem = bench_alloc_on_node(bytes, p->real_nodes > 1 ? p->mem_node : -1, &placed);
    ct_thread_t *th = aligned_alloc(64, (size_t)T * sizeof *th);
    pthread_t *tid = malloc((size_t)T * sizeof *tid);
    ct_shared_t *sh = aligned_alloc(64, sizeof *sh);
    r->per_thread_ops = calloc((size_t)T, sizeof(uint64_t));
    if (!mem || !th || !tid || !sh || !r->per_thread_ops) {
        if (mem)
            bench_free_on_node(mem, bytes, placed);
        free(th); free(tid); free(sh);
        snprintf(c->err, sizeof c->err, "out of memory for %d threads", T);
        return ENOMEM;
    }
    memset(sh, 0, sizeof *sh);
    sh->ops = ops;
    sh->lock = mem;
    sh->counter = (uint64_t *)(mem + lock_bytes);
    sh->count = p->count;
    sh->data = (uint64_t *)(mem + lock_bytes + 64);
    sh->lines = p->lines;
    int rc = ops->init ? ops->init(mem, NULL) : 0;
    if (rc) {
        snprintf(c->err, sizeof c->err, "cannot create lock '%s': %s", ops->name, strerror(rc));
        bench_free_on_node(mem, bytes, placed);
        free(th); free(tid); free(sh);
        return rc;
    }
    int lock_node = bench_page_node(mem);
    int created = 0;
    for (int i = 0; i < T; i++) {
        th[i] = (ct_thread_t){ .sh = sh };
        pthread_attr_t at;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(p->order[i], &set);
        pthread_attr_init(&at);
        rc = pthread_attr_setaffinity_np(&at, sizeof set, &set);
        if (!rc)
            rc = pthread_create(&tid[i], &at, ct_thread, &th[i]);
        pthread_attr_destroy(&at);
        if (rc) {
            snprintf(c->err, sizeof c->err, "cannot start a thread on CPU %d: %s", p->order[i], strerror(rc));
            break;
        }
        created++;
    }
    if (!rc) {
        while (atomic_load(&sh->ready) < T)
            sched_yield();
        atomic_store_explicit(&sh->go, 1, memory_order_release);
        while (atomic_load(&sh->started) < T) /* a busy machine may be slow to run them all */
            sched_yield();
        if (bench_window)
            bench_window(1, r);
        struct timespec ts = { (time_t)c->duration, (long)((c->duration - (double)(time_t)c->duration) * 1e9) };
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
    } else {
        atomic_store(&sh->go, 1);
    }
    atomic_store(&sh->stop, 1);
    for (int i = 0; i < created; i++)
        pthread_join(tid[i], NULL);
    if (!rc) {
        double maxs = 0, sum_rate = 0, fast = 0, slow = INFINITY;
        char rates[1024 * 12];
        size_t off = 0;
        r->ops = 0;
        for (int i = 0; i < T; i++) {
            double rate = th[i].seconds > 0 ? (double)th[i].ops / th[i].seconds : 0;
            r->per_thread_ops[i] = th[i].ops;
            r->ops += th[i].ops;
            maxs = th[i].seconds > maxs ? th[i].seconds : maxs;
            sum_rate += rate;
            fast = rate > fast ? rate : fast;
            slow = rate < slow ? rate : slow;
            off += (size_t)snprintf(rates + off, off < sizeof rates ? sizeof rates - off : 0, "%s%.0f",
                                    i ? ", " : "", rate);
        }
        if (sh->count && *sh->counter != r->ops) {
            snprintf(c->err, sizeof c->err,
                     "lock '%s' lost mutual exclusion at %d threads: %llu acquisitions counted %llu",
                     ops->name, T, (unsigned long long)r->ops, (unsigned long long)*sh->counter);
            rc = EPROTO;
        }
        r->duration_s = maxs;
        r->throughput = sum_rate;
        r->fairness = bench_fairness(r->per_thread_ops, T);
        if (bench_window)
            bench_window(0, r);
        char cpus[1024 * 6] = "", nodes[1024 * 6] = "";
        size_t o1 = 0, o2 = 0;
        for (int i = 0; i < T; i++) {
            o1 += (size_t)snprintf(cpus + o1, o1 < sizeof cpus ? sizeof cpus - o1 : 0, "%s%d", i ? ", " : "", p->order[i]);
            o2 += (size_t)snprintf(nodes + o2, o2 < sizeof nodes ? sizeof nodes - o2 : 0, "%s%d", i ? ", " : "",
                                   p->node_of[i]);
        }
        char memnode[16] = "null", locknode[16] = "null", spread[32] = "null"; /* null: a CPU starved */
        if (slow > 0)
            snprintf(spread, sizeof spread, "%.3f", fast / slow);
        if (p->mem_node >= 0)
            snprintf(memnode, sizeof memnode, "%d", p->mem_node);
        if (lock_node >= 0)
            snprintf(locknode, sizeof locknode, "%d", lock_node);
        int used[NL_MAX_NODES] = { 0 }, nused = 0;
        for (int i = 0; i < T; i++)
            if (p->node_of[i] >= 0 && p->node_of[i] < NL_MAX_NODES && !used[p->node_of[i]]++)
                nused++;
        snprintf(r->extra, sizeof r->extra,
                 "\"placement\": \"%s\", \"cpus\": [%s], \"cpu_nodes\": [%s], \"nodes_used\": %d, "
                 "\"mem_node\": %s, \"lock_node\": %s, \"lines\": %d, \"ops_per_s_per_cpu\": %.0f, "
                 "\"spread\": %s, \"per_cpu_ops_per_s\": [%s]",
                 !strcmp(p->placement, "fill") || !strcmp(p->placement, "rr") ? p->placement : "list", cpus,
                 nodes, nused, memnode, locknode, p->lines, sum_rate / T, spread, rates);
        if (strlen(r->extra) >= sizeof r->extra - 1) /* many CPUs: keep the JSON valid, drop the long lists */
            snprintf(r->extra, sizeof r->extra,
                     "\"placement\": \"%s\", \"nodes_used\": %d, \"mem_node\": %s, \"lock_node\": %s, "
                     "\"lines\": %d, \"ops_per_s_per_cpu\": %.0f, \"spread\": %s",
                     p->placement, nused, memnode, locknode, p->lines, sum_rate / T,
                     spread);
    }
    if (ops->destroy)
        ops->destroy(mem);
    bench_free_on_node(mem, bytes, placed);
    free(th);
    free(tid);
    free(sh);
    return rc;
}

static double extra_num(const char *extra, const char *key)
{
    const char *s = strstr(extra, key);
    if (!s || !strncmp(s + strlen(key), "null", 4))
        return NAN;
    return strtod(s + strlen(key), NULL);
}

/* the slides' table: per lock, CPUs used, ops/s per CPU, % decrease from the
 * first row and from the previous one */
static void print_hp_table(const bench_ctx_t *c, const ct_plan_t *p)
{
    printf("contention: CPUs %s (order %s), memory node %s, %d data line%s, %.2g s per run\n",
           !strcmp(p->placement, "fill") ? "fill-first" : !strcmp(p->placement, "rr") ? "round-robin" : "as listed",
           p->placement, p->mem_node >= 0 ? bench_opt(c, "mem-node") : "any", p->lines, p->lines == 1 ? "" : "s",
           c->duration);
    printf("%-14s %5s %6s %15s %15s %8s %10s %10s\n", "lock", "cpus", "nodes", "ops/s per cpu", "total ops/s",
           "spread", "%dec 1st", "%dec prev");
    for (size_t li = 0; li < c->nlocks; li++) {
        double first = NAN, prev = NAN;
        for (size_t i = 0; i < c->nrecords; i++) {
            const bench_record_t *r = &c->records[i];
            if (strcmp(r->lock, c->locks[li]->name))
                continue;
            double per = extra_num(r->extra, "\"ops_per_s_per_cpu\": ");
            double spread = extra_num(r->extra, "\"spread\": "); /* NAN for null: a CPU starved */
            double nodes = extra_num(r->extra, "\"nodes_used\": ");
            char d1[16] = "-", d2[16] = "-";
            if (!isnan(first) && first > 0)
                snprintf(d1, sizeof d1, "%.1f%%", 100 * (1 - per / first));
            if (!isnan(prev) && prev > 0)
                snprintf(d2, sizeof d2, "%.1f%%", 100 * (1 - per / prev));
            char sp[16] = "starved";
            if (!isnan(spread))
                snprintf(sp, sizeof sp, "%.2fx", spread);
            printf("%-14s %5d %6.0f %15.0f %15.0f %8s %10s %10s\n", r->lock, r->threads, nodes, per,
                   r->throughput, sp, d1, d2);
            if (isnan(first))
                first = per;
            prev = per;
        }
    }
    printf("\n");
}

static int ct_run(bench_ctx_t *c)
{
    static ct_plan_t plan;
    ct_plan_t *p = &plan;
    memset(p, 0, sizeof *p);
    int rc = make_plan(c, p);
    if (rc)
        return rc;
    if ((rc = parse_mem_node(c, p)))
        return rc;
    long lines = bench_opt_long(c, "lines");
    if (lines > CT_MAX_LINES) {
        snprintf(c->err, sizeof c->err, "bad value '%ld' for --lines: at most %d data lines", lines, CT_MAX_LINES);
        return EINVAL;
    }
    p->lines = (int)lines;
    long count = bench_opt_long(c, "count");
    if (count > 1) {
        snprintf(c->err, sizeof c->err, "bad value '%ld' for --count: 1 counts every section (the check of "
                 "mutual exclusion), 0 leaves the section empty", count);
        return EINVAL;
    }
    p->count = (int)count;
    for (size_t ti = 0; ti < c->nthreads; ti++)
        if (c->threads[ti] > p->norder) {
            snprintf(c->err, sizeof c->err,
                     "--threads %d: one thread per CPU, and --cpus %s gives %d CPU%s this process may use",
                     c->threads[ti], p->placement, p->norder, p->norder == 1 ? "" : "s");
            return EINVAL;
        }
    bench_become_multithreaded();
    for (size_t ti = 0; ti < c->nthreads; ti++)
        for (size_t li = 0; li < c->nlocks; li++) {
            bench_record_t *r = bench_new_record(c, c->locks[li], c->threads[ti]);
            if (!r)
                return ENOMEM;
            if ((rc = ct_run_one(c, p, c->locks[li], c->threads[ti], r)))
                return rc;
        }
    bench_ratios(c, "pthread");
    if (!c->quiet)
        print_hp_table(c, p);
    return 0;
}

static const bench_opt_t ct_opts[] = {
    { "cpus", "fill", "fill (one node, then the next), rr (round-robin across nodes), or a CPU list 0,2,4-7",
    },
    { "mem-node", "any", "NUMA node of the lock and data lines (sysfs id; libnuma), or any" },
    { "lines", "0", "data cache lines written in each critical section (on the same node)" },
    { "count", "1", "1: a counter in each critical section checks mutual exclusion; 0: empty sections, as the slides'" },
    { NULL, NULL, NULL },
};

static const char *const ct_text_opts[] = { "cpus", "mem-node", NULL };

const bench_workload_t bench_contention = {
    .name = "contention",
    .description = "HP cache-line contention test: one pinned thread per CPU, tight acquire/release, per-CPU ops/s",
    .opts = ct_opts,
    .default_locks = "all",
    .default_threads = "1,2",
    .default_duration = "0.5",
    .run = ct_run,
    .own_table = 1,
    .text_opts = ct_text_opts,
};

/* `numalock bench`: argument parsing, the throughput runner, records, JSON. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "opts.h"

static const bench_workload_t *const workloads[] = {
    &bench_kvmap,
    &bench_latency,
    &bench_instructions,
    &bench_rwhash,
    &bench_footprint,
    &bench_contention,
    &bench_delegation,
#ifndef NL_SIM /* the kernel's futexes themselves: not in the simulator */
    &bench_futex_hash,
    &bench_futex_wake,
    &bench_futex_wake_parallel,
    &bench_futex_requeue,
#endif
};
#define N_WORKLOADS (sizeof workloads / sizeof workloads[0])

const bench_workload_t *bench_find_workload(const char *name)
{
    for (size_t i = 0; i < N_WORKLOADS; i++)
        if (!strcmp(workloads[i]->name, name))
            return workloads[i];
    return NULL;
}

const char *bench_workload_names(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < N_WORKLOADS && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", workloads[i]->name);
    return buf;
}

void bench_list_workloads(FILE *f)
{
    for (size_t i = 0; i < N_WORKLOADS; i++) {
        const bench_workload_t *w = workloads[i];
        fprintf(f, "  %-12s %s\n", w->name, w->description);
        for (const bench_opt_t *o = w->opts; o && o->name; o++)
            fprintf(f, "      --%-16s %s (default %s)\n", o->name, o->help, o->defval);
    }
}

const char *bench_opt(const bench_ctx_t *c, const char *name)
{
    for (int i = 0; c->opts && c->opts[i].name; i++)
        if (!strcmp(c->opts[i].name, name))
            return c->optval[i] ? c->optval[i] : c->opts[i].defval;
    return NULL;
}

long bench_opt_long(const bench_ctx_t *c, const char *name)
{
    const char *v = bench_opt(c, name);
    return v ? strtol(v, NULL, 10) : 0;
}

bench_record_t *bench_new_record(bench_ctx_t *c, const nl_lock_ops_t *ops, int threads)
{
    if (c->nrecords == c->caprecords) {
        size_t cap = c->caprecords ? c->caprecords * 2 : 32;
        bench_record_t *r = realloc(c->records, cap * sizeof *r);
        if (!r)
            return NULL;
        c->records = r;
        c->caprecords = cap;
    }
    bench_record_t *r = &c->records[c->nrecords++];
    memset(r, 0, sizeof *r);
    snprintf(r->workload, sizeof r->workload, "%s", c->workload);
    snprintf(r->lock, sizeof r->lock, "%s", ops ? ops->name : "-");
    r->threads = threads;
    snprintf(r->topology, sizeof r->topology, "%s", nl_topology_current()->spec);
    r->fairness = NAN;
    r->ratio = NAN;
    return r;
}

double bench_fairness(const uint64_t *per_thread, int n)
{
    if (n < 2)
        return NAN;
    uint64_t *v = malloc((size_t)n * sizeof *v);
    if (!v)
        return NAN;
    memcpy(v, per_thread, (size_t)n * sizeof *v);
    /* sort decreasing */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] < v[j]; j--) {
            uint64_t x = v[j]; v[j] = v[j - 1]; v[j - 1] = x;
        }
    double total = 0, top = 0;
    for (int i = 0; i < n; i++)
        total += (double)v[i];
    for (int i = 0; i < n / 2; i++)
        top += (double)v[i];
    if (n % 2)
        top += (double)v[n / 2] / 2.0; /* the middle thread counts half */
    free(v);
    return total > 0 ? top / total : NAN;
}

/* ---- throughput runner ------------------------------------------------- */
typedef struct {
    _Alignas(64) _Atomic uint64_t ops;
} tp_counter_t;

typedef struct {
    const bench_tp_args_t *a;
    const nl_topology_t *pin;      /* bind thread i to node i mod nnodes of this topology, or NULL */
    nl_lock_t *lock;
    tp_counter_t *counters;
    _Atomic int stop;
    _Atomic int ready;
    int nleaves;
    int virtual_topo;
} tp_shared_t;

typedef struct {
    tp_shared_t *sh;
    int tid;
} tp_arg_t;

void (*bench_window)(int begin, bench_record_t *r);
const char *bench_meta;

static void *tp_thread(void *p)
{
    tp_arg_t *ta = p;
    tp_shared_t *sh = ta->sh;
    int tid = ta->tid;
    if (sh->virtual_topo) /* round-robin over the finest domains (the nodes of virtual:N) */
        nl_thread_set_leaf(tid % sh->nleaves);
    if (sh->pin) { /* --pin nodes: the CPUs of node tid mod nodes */
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int cpu = 0; cpu < sh->pin->ncpus && cpu < CPU_SETSIZE; cpu++)
            if (sh->pin->cpu_to_node[cpu] == tid % sh->pin->nnodes)
                CPU_SET(cpu, &set);
        if (CPU_COUNT(&set))
            sched_setaffinity(0, sizeof set, &set);
    }
    if (sh->a->thread_init)
        sh->a->thread_init(sh->a->state, tid);
    atomic_fetch_add(&sh->ready, 1);
    _Atomic uint64_t *cnt = &sh->counters[tid].ops;
    uint64_t n = 0;
    while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
        sh->a->op(sh->a->state, tid, sh->lock);
        atomic_store_explicit(cnt, ++n, memory_order_relaxed);
    }
    return NULL;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

int bench_throughput(bench_ctx_t *c, const bench_tp_args_t *a, bench_record_t *r)
{
    int T = a->threads;
    nl_attr_t attr = { .stats = true };
    tp_shared_t sh = { .a = a };
    const nl_topology_t *topo = nl_topology_current();
    sh.nleaves = topo->ndomains[0];
    sh.virtual_topo = topo->kind == NL_TOPO_VIRTUAL;
    sh.pin = c->pin_nodes && !sh.virtual_topo ? topo : NULL;
    sh.lock = nl_lock_create_ops(a->ops, &attr);
    if (!sh.lock) {
        snprintf(c->err, sizeof c->err, "cannot create lock '%s': %s", a->ops->name, strerror(errno));
        return errno;
    }
    sh.counters = aligned_alloc(64, (size_t)T * sizeof(tp_counter_t));
    pthread_t *th = malloc((size_t)T * sizeof *th);
    tp_arg_t *args = malloc((size_t)T * sizeof *args);
    uint64_t *start = calloc((size_t)T, sizeof *start);
    r->per_thread_ops = calloc((size_t)T, sizeof(uint64_t));
    if (!sh.counters || !th || !args || !start || !r->per_thread_ops) {
        snprintf(c->err, sizeof c->err, "out of memory for %d threads", T);
        return ENOMEM;
    }
    for (int i = 0; i < T; i++)
        atomic_init(&sh.counters[i].ops, 0);
    int created = 0, rc = 0;
    for (int i = 0; i < T; i++) {
        args[i] = (tp_arg_t){ &sh, i };
        if ((rc = pthread_create(&th[i], NULL, tp_thread, &args[i]))) {
            snprintf(c->err, sizeof c->err, "cannot create thread %d of %d: %s", i + 1, T, strerror(rc));
            atomic_store(&sh.stop, 1);
            break;
        }
        created++;
    }
    if (!rc) {
        while (atomic_load(&sh.ready) < T)
            sched_yield();
        double warm = a->duration * 0.1 < 0.2 ? a->duration * 0.1 : 0.2;
        sleep_s(warm);
        nl_stats_snapshot_t s0, s1;
        nl_lock_stats(sh.lock, &s0);
        for (int i = 0; i < T; i++)
            start[i] = atomic_load_explicit(&sh.counters[i].ops, memory_order_relaxed);
        if (bench_window)
            bench_window(1, r);
        uint64_t t0 = nl_clock_ns();
        sleep_s(a->duration);
        for (int i = 0; i < T; i++)
            r->per_thread_ops[i] = atomic_load_explicit(&sh.counters[i].ops, memory_order_relaxed) - start[i];
        nl_lock_stats(sh.lock, &s1);
        uint64_t t1 = nl_clock_ns();
        atomic_store(&sh.stop, 1);
        double secs = (double)(t1 - t0) / 1e9;
        r->duration_s = secs;
        r->ops = 0;
        for (int i = 0; i < T; i++)
            r->ops += r->per_thread_ops[i];
        r->throughput = secs > 0 ? (double)r->ops / secs : 0;
        r->fairness = bench_fairness(r->per_thread_ops, T);
        if (bench_window)
            bench_window(0, r);
        r->has_stats = 1;
        r->stats.acquisitions = s1.acquisitions - s0.acquisitions;
        r->stats.contended = s1.contended - s0.contended;
        r->stats.handovers = s1.handovers - s0.handovers;
        r->stats.remote_handovers = s1.remote_handovers - s0.remote_handovers;
        r->stats.read_acquisitions = s1.read_acquisitions - s0.read_acquisitions;
        r->stats.parks = s1.parks - s0.parks;
        r->stats.gate_waits = s1.gate_waits - s0.gate_waits;
        r->stats.wakes = s1.wakes - s0.wakes;
        r->stats.woken = s1.woken - s0.woken;
        r->stats.handovers_to_parked = s1.handovers_to_parked - s0.handovers_to_parked;
        for (int i = 0; i < NL_STATS_EXTRA; i++)
            r->stats.extra[i] = s1.extra[i] - s0.extra[i];
        for (int i = 0; i < NL_STATS_LEVELS; i++)
            r->stats.crossings[i] = s1.crossings[i] - s0.crossings[i];
    }
    for (int i = 0; i < created; i++)
        pthread_join(th[i], NULL);
    nl_lock_destroy(sh.lock);
    free(sh.counters);
    free(th);
    free(args);
    free(start);
    return rc;
}

int bench_sweep(bench_ctx_t *c, const bench_sweep_t *s, void *state)
{
    for (size_t ti = 0; ti < c->nthreads; ti++) {
        for (size_t li = 0; li < c->nlocks; li++) {
            int T = c->threads[ti];
            int rc = s->setup(state, T);
            if (rc)
                return rc;
            bench_record_t *r = bench_new_record(c, c->locks[li], T);
            if (!r) {
                s->teardown(state, T);
                return ENOMEM;
            }
            bench_tp_args_t a = { c->locks[li], T, c->duration, state, s->op, s->thread_init };
            rc = bench_throughput(c, &a, r);
            s->describe(state, c->locks[li], r->extra, sizeof r->extra);
            s->teardown(state, T);
            if (rc)
                return rc;
        }
    }
    bench_ratios(c, s->baseline);
    return 0;
}

static void *noop_thread(void *arg) { return arg; }

void bench_become_multithreaded(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, noop_thread, NULL) == 0)
        pthread_join(t, NULL);
}

size_t bench_locks_with(const bench_ctx_t *c, const char *baseline, const nl_lock_ops_t **out)
{
    size_t n = 0;
    int has = 0;
    for (size_t i = 0; i < c->nlocks; i++) {
        out[n++] = c->locks[i];
        has |= !strcmp(c->locks[i]->name, baseline);
    }
    if (!has && nl_lock_find(baseline))
        out[n++] = nl_lock_find(baseline);
    return n;
}

void bench_ratios(bench_ctx_t *c, const char *baseline)
{
    for (size_t i = 0; i < c->nrecords; i++) {
        bench_record_t *r = &c->records[i];
        for (size_t j = 0; j < c->nrecords; j++) {
            bench_record_t *b = &c->records[j];
            if (!strcmp(b->lock, baseline) && b->threads == r->threads &&
                !strcmp(b->topology, r->topology) && b->throughput > 0) {
                r->ratio = r->throughput / b->throughput;
                snprintf(r->baseline, sizeof r->baseline, "%s", baseline);
            }
        }
    }
}

/* ---- JSON ------------------------------------------------------------- */
void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void json_num(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else if (v == (double)(int64_t)v && fabs(v) < 1e15)
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.6g", v);
}

static void write_record(FILE *f, const bench_record_t *r)
{
    fprintf(f, "    {\"workload\": ");
    json_str(f, r->workload);
    fprintf(f, ", \"lock\": ");
    json_str(f, r->lock);
    fprintf(f, ", \"threads\": %d, \"topology\": ", r->threads);
    json_str(f, r->topology);
    fprintf(f, ", \"duration_s\": ");
    json_num(f, r->duration_s);
    fprintf(f, ", \"ops\": %llu, \"throughput_ops_per_s\": ", (unsigned long long)r->ops);
    json_num(f, r->throughput);
    fprintf(f, ", \"per_thread_ops\": [");
    for (int i = 0; r->per_thread_ops && i < r->threads; i++)
        fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->per_thread_ops[i]);
    fprintf(f, "], \"fairness_factor\": ");
    json_num(f, r->fairness);
    if (r->has_stats) {
        fprintf(f, ", \"acquisitions\": %llu, \"contended\": %llu, \"handovers\": %llu, "
                   "\"remote_handovers\": %llu, \"read_acquisitions\": %llu, \"remote_share\": ",
                (unsigned long long)r->stats.acquisitions, (unsigned long long)r->stats.contended,
                (unsigned long long)r->stats.handovers, (unsigned long long)r->stats.remote_handovers,
                (unsigned long long)r->stats.read_acquisitions);
        json_num(f, r->stats.handovers ? (double)r->stats.remote_handovers / (double)r->stats.handovers : NAN);
        fprintf(f, ", \"parks\": %llu, \"gate_waits\": %llu, \"wakes\": %llu, \"woken\": %llu, "
                   "\"handovers_to_parked\": %llu",
                (unsigned long long)r->stats.parks, (unsigned long long)r->stats.gate_waits,
                (unsigned long long)r->stats.wakes, (unsigned long long)r->stats.woken,
                (unsigned long long)r->stats.handovers_to_parked);
        /* the share of hand-overs that crossed each level of the hierarchy */
        const nl_topology_t *topo = nl_topology_current();
        fprintf(f, ", \"crossings\": {");
        for (int l = 0; l < topo->nlevels; l++) {
            fprintf(f, "%s\"%s\": ", l ? ", " : "", topo->level_name[l]);
            json_num(f, r->stats.handovers ? (double)r->stats.crossings[l] / (double)r->stats.handovers : NAN);
        }
        fprintf(f, "}");
        /* the lock's own events, under the names its ops table gives */
        const nl_lock_ops_t *lops = nl_lock_find(r->lock);
        for (int i = 0; lops && i < NL_STATS_EXTRA; i++)
            if (lops->extra_names[i]) {
                fprintf(f, ", ");
                json_str(f, lops->extra_names[i]);
                fprintf(f, ": %llu", (unsigned long long)r->stats.extra[i]);
            }
    } else {
        fprintf(f, ", \"acquisitions\": null, \"contended\": null, \"handovers\": null, "
                   "\"remote_handovers\": null, \"remote_share\": null, \"parks\": null, "
                   "\"gate_waits\": null, \"wakes\": null, \"woken\": null, \"handovers_to_parked\": null");
    }
    if (!isnan(r->ratio)) {
        fprintf(f, ", \"ratio_to_baseline\": ");
        json_num(f, r->ratio);
        fprintf(f, ", \"baseline\": ");
        json_str(f, r->baseline);
    }
    if (r->extra[0])
        fprintf(f, ", %s", r->extra);
    if (r->more[0])
        fprintf(f, ", %s", r->more);
    fputc('}', f);
}

static int write_json(bench_ctx_t *c, const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(c->err, sizeof c->err, "cannot write JSON file '%s': %s", path, strerror(errno));
        return errno;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f, "{\n  \"meta\": {\"tool\": \"numalock\", \"version\": \"%s\", \"command\": ", NL_VERSION);
    json_str(f, c->command);
    fprintf(f, ", \"started_utc\": \"%s\", \"host\": ", when);
    json_str(f, host);
    nl_topology_t real;
    nl_topology_parse("auto", &real, NULL, 0);
    fprintf(f, ", \"online_cpus\": %ld, \"real_nodes\": %d, %s%s\"workload\": ",
            sysconf(_SC_NPROCESSORS_ONLN), real.nnodes, bench_meta ? bench_meta : "", bench_meta ? ", " : "");
    json_str(f, c->workload);
    fprintf(f, ", \"wait_policy\": ");
    json_str(f, nl_wait_policy_name());
    fprintf(f, ", \"params\": {");
    for (int i = 0; c->opts && c->opts[i].name; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_str(f, c->opts[i].name);
        fprintf(f, ": ");
        json_str(f, bench_opt(c, c->opts[i].name));
    }
    fprintf(f, "}},\n  \"records\": [\n");
    for (size_t i = 0; i < c->nrecords; i++) {
        write_record(f, &c->records[i]);
        fprintf(f, "%s\n", i + 1 < c->nrecords ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fflush(f) || ferror(f)) {
        fclose(f);
        unlink(tmp);
        snprintf(c->err, sizeof c->err, "cannot write JSON file '%s': %s", path, strerror(errno));
        return EIO;
    }
    fclose(f);
    if (rename(tmp, path)) {
        unlink(tmp);
        snprintf(c->err, sizeof c->err, "cannot write JSON file '%s': %s", path, strerror(errno));
        return errno;
    }
    return 0;
}

/* ---- argument parsing ------------------------------------------------- */
static int parse_list_int(const char *s, int *out, size_t max, size_t *n)
{
    *n = 0;
    while (*s) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 1 || v > BENCH_MAX_THREADS || *n >= max)
            return -1;
        out[(*n)++] = (int)v;
        s = end;
        if (*s == ',')
            s++;
        else if (*s)
            return -1;
    }
    return *n ? 0 : -1;
}

static int parse_locks(bench_ctx_t *c, const char *spec)
{
    char names[1024];
    c->nlocks = 0;
    if (!strcmp(spec, "all")) {
        for (size_t i = 0; i < nl_lock_count() && c->nlocks < BENCH_MAX_LOCKS; i++)
            c->locks[c->nlocks++] = nl_lock_at(i);
        return 0;
    }
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        const nl_lock_ops_t *ops = nl_lock_find(tok);
        if (!ops) {
            snprintf(c->err, sizeof c->err, "unknown lock '%s': valid choices are all, %s", tok,
                     nl_lock_names(names, sizeof names));
            return EINVAL;
        }
        if (c->nlocks < BENCH_MAX_LOCKS)
            c->locks[c->nlocks++] = ops;
    }
    if (!c->nlocks) {
        snprintf(c->err, sizeof c->err, "empty lock list '%s': valid choices are all, %s", spec,
                 nl_lock_names(names, sizeof names));
        return EINVAL;
    }
    return 0;
}

/* The options every workload takes (the command's parser, opts.h), their
 * values going to `a`, c->json_path and c->quiet; ended by a zero entry.
 * Returns their count. */
typedef struct {
    const char *lock, *threads, *duration, *topology, *pin;
} bench_common_t;

static int common_opts(nl_opt_t *opts, bench_common_t *a, bench_ctx_t *c)
{
    int n = 0;
    opts[n++] = (nl_opt_t){ "--lock", "A,B|all", "lock names, comma-separated, or all", &a->lock, NULL };
    opts[n++] = (nl_opt_t){ "--locks", "A,B|all", "lock names, comma-separated, or all", &a->lock, NULL };
    opts[n++] = (nl_opt_t){ "--threads", "1,2,4", "thread counts, comma-separated", &a->threads, NULL };
    opts[n++] = (nl_opt_t){ "--duration", "S", "seconds per measurement", &a->duration, NULL };
    opts[n++] = (nl_opt_t){ "--topology", "SPEC", "a topology: auto, virtual:N, cpus:LIST/LIST/... or measured",
                            &a->topology, NULL };
    opts[n++] = (nl_opt_t){ "--json", "FILE", "the JSON file to write", &c->json_path, NULL };
    opts[n++] = (nl_opt_t){ "--quiet", NULL, "no table", NULL, &c->quiet };
    opts[n++] = (nl_opt_t){ "--pin", "nodes|none", "nodes: thread i runs on the CPUs of node i mod nodes "
                            "(topologies with CPUs; the default none leaves placement to the OS)", &a->pin, NULL };
    opts[n] = (nl_opt_t){ 0 };
    return n;
}

void bench_usage(FILE *f)
{
    nl_opt_t opts[16];
    bench_common_t a;
    bench_ctx_t c;
    common_opts(opts, &a, &c);
    fprintf(f, "options of every workload:\n");
    nl_opts_help(f, opts);
    fprintf(f, "workloads, each with its own options (--NAME N):\n");
    bench_list_workloads(f);
}

int bench_main(int argc, char **argv, const char *command_line)
{
    char names[1024];
    if (argc < 1 || !argv[0] || argv[0][0] == '-') {
        fprintf(stderr, "numalock bench: missing workload: valid choices are %s\n",
                bench_workload_names(names, sizeof names));
        return 2;
    }
    const bench_workload_t *w = bench_find_workload(argv[0]);
    if (!w) {
        fprintf(stderr, "numalock bench: unknown workload '%s': valid choices are %s\n", argv[0],
                bench_workload_names(names, sizeof names));
        return 2;
    }
    bench_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return 1;
    c->workload = w->name;
    c->opts = w->opts;
    snprintf(c->command, sizeof c->command, "%s", command_line);
    bench_common_t a = { .lock = w->default_locks, .threads = w->default_threads,
                         .duration = w->default_duration };
    int rc = 2;
    {
        /* the command's one option parser (opts.h): the common options,
         * then the workload's own, "--NAME VALUE" or "--NAME=VALUE" */
        nl_opt_t opts[48];
        char names[32][40], context[64];
        int n = common_opts(opts, &a, c);
        for (int k = 0; w->opts && w->opts[k].name && k < 32 && n < 47; k++) {
            snprintf(names[k], sizeof names[k], "--%s", w->opts[k].name);
            opts[n++] = (nl_opt_t){ names[k], "N", w->opts[k].help, &c->optval[k], NULL };
        }
        opts[n] = (nl_opt_t){ 0 };
        snprintf(context, sizeof context, "for workload %s", w->name);
        if (nl_opts_parse(opts, argc, argv, 1, 0, context, c->err, sizeof c->err) < 0)
            goto fail;
    }
    /* validate numeric workload options */
    for (int k = 0; w->opts && w->opts[k].name; k++) {
        int text = 0;
        for (const char *const *t = w->text_opts; t && *t; t++)
            text |= !strcmp(*t, w->opts[k].name);
        if (text)
            continue;
        const char *v = bench_opt(c, w->opts[k].name);
        char *end;
        errno = 0;
        long x = strtol(v, &end, 10);
        if (end == v || *end || errno || x < 0) {
            snprintf(c->err, sizeof c->err, "bad value '%s' for --%s: expected a non-negative integer",
                     v, w->opts[k].name);
            goto fail;
        }
    }
    if (parse_locks(c, a.lock))
        goto fail;
    if (parse_list_int(a.threads, c->threads, BENCH_MAX_THREADS_LIST, &c->nthreads)) {
        snprintf(c->err, sizeof c->err,
                 "bad thread list '%s': expected comma-separated counts from 1 to %d, e.g. 1,2,4,8",
                 a.threads, BENCH_MAX_THREADS);
        goto fail;
    }
    {
        char *end;
        c->duration = strtod(a.duration, &end);
        if (end == a.duration || *end || !(c->duration > 0) || c->duration > 3600) {
            snprintf(c->err, sizeof c->err,
                     "bad duration '%s': expected seconds, a number above 0 and at most 3600",
                     a.duration);
            goto fail;
        }
    }
    if (a.pin && strcmp(a.pin, "nodes") && strcmp(a.pin, "none")) {
        snprintf(c->err, sizeof c->err, "bad value '%s' for --pin: valid choices are nodes and none", a.pin);
        goto fail;
    }
    c->pin_nodes = a.pin && !strcmp(a.pin, "nodes");
    if (a.topology) {
        if (nl_topology_set(a.topology, c->err, sizeof c->err))
            goto fail;
    } else if (nl_topology_env_error()) {
        snprintf(c->err, sizeof c->err, "NUMALOCK_TOPOLOGY: %s", nl_topology_env_error());
        goto fail;
    }
    snprintf(c->topology, sizeof c->topology, "%s", nl_topology_current()->spec);
    if (c->json_path) { /* fail early, before running, if the file cannot be written */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", c->json_path);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            snprintf(c->err, sizeof c->err, "cannot write JSON file '%s': %s", c->json_path,
                     strerror(errno));
            goto fail;
        }
        fclose(f);
        unlink(tmp);
    }
    rc = w->run(c);
    if (rc) {
        rc = 1;
        goto fail;
    }
    if (!c->quiet && !w->own_table)
        bench_print_table(c);
    if (c->json_path && write_json(c, c->json_path)) {
        rc = 1;
        goto fail;
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "numalock bench: %s\n", c->err[0] ? c->err : "failed");
done:
    for (size_t i = 0; i < c->nrecords; i++)
        free(c->records[i].per_thread_ops);
    free(c->records);
    free(c);
    return rc;
}

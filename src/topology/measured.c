/* Core-to-core latency: two threads pinned to a CPU pair bounce one
 * cache line, by compare-and-swap or by plain stores; the best of several
 * rounds is the pair's one-way latency. And the stored measurement behind
 * `--topology measured` (measured.h: the spec it gives; topology.c parses it). The library never prints: progress goes through a
 * callback. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "numalock/measure.h"
#include "measured.h"

#define STOP_VALUE UINT64_MAX /* odd: seen by the responder, which then leaves */
#define CALIBRATE_TRIPS 32

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int nl_affinity_cpus(int *cpus, int max)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE && n < max; c++)
            if (CPU_ISSET(c, &set))
                cpus[n++] = c;
    }
    if (n == 0) {
        long on = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < on && n < max; c++)
            cpus[n++] = (int)c;
    }
    if (n == 0)
        cpus[n++] = 0;
    return n;
}

/* ---- one pair ------------------------------------------------------------- */
typedef struct {
    _Alignas(64) _Atomic uint64_t line; /* the bounced cache line, alone in it */
    char pad[64 - sizeof(uint64_t)];
    int cas;
    int rounds, trips_max;
    double share_ns;          /* time this pair may take */
    double best_ns;           /* result: best one-way latency */
    int rounds_done, trips_used;
} pair_t;

static void *responder(void *p)
{
    pair_t *pr = p;
    uint64_t next = 1;
    if (pr->cas) {
        for (;;) {
            uint64_t e = next;
            if (atomic_compare_exchange_weak_explicit(&pr->line, &e, next + 1, memory_order_acq_rel,
                                                      memory_order_relaxed)) {
                next += 2;
                continue;
            }
            if (e == STOP_VALUE)
                break;
        }
    } else {
        for (;;) {
            uint64_t x = atomic_load_explicit(&pr->line, memory_order_acquire);
            if (x == next) {
                atomic_store_explicit(&pr->line, next + 1, memory_order_release);
                next += 2;
            } else if (x == STOP_VALUE) {
                break;
            }
        }
    }
    return NULL;
}

/* the initiator's side of `trips` round trips, starting at *next (even) */
static void bounce(pair_t *pr, uint64_t *next, int trips)
{
    uint64_t v = *next;
    for (int i = 0; i < trips; i++) {
        if (pr->cas) {
            uint64_t e;
            do
                e = v;
            while (!atomic_compare_exchange_weak_explicit(&pr->line, &e, v + 1, memory_order_acq_rel,
                                                          memory_order_relaxed));
        } else {
            while (atomic_load_explicit(&pr->line, memory_order_acquire) != v)
                ;
            atomic_store_explicit(&pr->line, v + 1, memory_order_release);
        }
        v += 2;
    }
    while (atomic_load_explicit(&pr->line, memory_order_acquire) != v) /* the last reply */
        ;
    *next = v;
}

static void *initiator(void *p)
{
    pair_t *pr = p;
    uint64_t next = 0;
    uint64_t t0 = now_ns();
    bounce(pr, &next, CALIBRATE_TRIPS); /* warm-up: both threads are running */
    uint64_t t1 = now_ns();
    bounce(pr, &next, CALIBRATE_TRIPS); /* the pace of this pair */
    t1 = now_ns() - t1;
    double per_trip = (double)t1 / CALIBRATE_TRIPS;
    if (per_trip < 1)
        per_trip = 1;
    double fit = pr->share_ns / (double)pr->rounds / per_trip;
    int trips = fit > pr->trips_max ? pr->trips_max : fit < 16 ? 16 : (int)fit;
    uint64_t deadline = t0 + (uint64_t)pr->share_ns;
    pr->best_ns = INFINITY;
    for (int r = 0; r < pr->rounds; r++) {
        uint64_t a = now_ns();
        bounce(pr, &next, trips);
        uint64_t b = now_ns();
        double one_way = (double)(b - a) / (2.0 * trips);
        if (one_way < pr->best_ns)
            pr->best_ns = one_way;
        pr->rounds_done = r + 1;
        if (b > deadline)
            break;
    }
    pr->trips_used = trips;
    atomic_store_explicit(&pr->line, STOP_VALUE, memory_order_release); /* our turn: next is even */
    return NULL;
}

static int spawn_pinned(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
    pthread_attr_t at;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_attr_init(&at);
    int rc = pthread_attr_setaffinity_np(&at, sizeof set, &set);
    if (!rc)
        rc = pthread_create(th, &at, fn, arg);
    pthread_attr_destroy(&at);
    return rc;
}

int nl_c2c_measure(const nl_c2c_opts_t *o, nl_c2c_t *out, char *err, size_t errlen)
{
    nl_c2c_opts_t d = { 0 };
    if (o)
        d = *o;
    memset(out, 0, sizeof *out);
    if (!d.method || !*d.method)
        d.method = "cas";
    if (strcmp(d.method, "cas") && strcmp(d.method, "store")) {
        snprintf(err, errlen, "unknown method '%s': valid choices are cas, store", d.method);
        return EINVAL;
    }
    if (d.rounds <= 0)
        d.rounds = 5;
    if (d.trips <= 0)
        d.trips = 1000;
    if (!(d.budget_s > 0))
        d.budget_s = 10;
    if (d.cpus && d.ncpus > 0) {
        if (d.ncpus > NL_C2C_MAX_CPUS) {
            snprintf(err, errlen, "%d CPUs asked for: at most %d can be measured", d.ncpus, NL_C2C_MAX_CPUS);
            return EINVAL;
        }
        out->n = d.ncpus;
        memcpy(out->cpus, d.cpus, (size_t)d.ncpus * sizeof *d.cpus);
    } else {
        out->n = nl_affinity_cpus(out->cpus, NL_C2C_MAX_CPUS);
    }
    int n = out->n;
    snprintf(out->method, sizeof out->method, "%s", d.method);
    out->rounds = d.rounds;
    out->rounds_min = d.rounds;
    out->trips = d.trips;
    out->ns = calloc((size_t)n * (size_t)n, sizeof *out->ns);
    pair_t *pr = aligned_alloc(64, sizeof *pr);
    if (!out->ns || !pr) {
        free(pr);
        nl_c2c_free(out);
        snprintf(err, errlen, "out of memory for a %dx%d latency matrix", n, n);
        return ENOMEM;
    }
    int total = n * (n - 1) / 2, done = 0;
    uint64_t start = now_ns();
    double budget_ns = d.budget_s * 1e9;
    for (int i = 0; i < n; i++) {
        for (int j = i + 1; j < n; j++) {
            memset(pr, 0, sizeof *pr);
            atomic_init(&pr->line, 0);
            pr->cas = !strcmp(d.method, "cas");
            pr->rounds = d.rounds;
            pr->trips_max = d.trips;
            double left = budget_ns - (double)(now_ns() - start);
            pr->share_ns = left / (double)(total - done);
            if (pr->share_ns < 1e6)
                pr->share_ns = 1e6; /* over budget: one short round per pair */
            pthread_t ta, tb;
            int rc = spawn_pinned(&tb, out->cpus[j], responder, pr);
            if (!rc) {
                rc = spawn_pinned(&ta, out->cpus[i], initiator, pr);
                if (rc) { /* let the responder go */
                    atomic_store(&pr->line, STOP_VALUE);
                    pthread_join(tb, NULL);
                }
            }
            if (rc) {
                snprintf(err, errlen, "cannot run a thread on CPU %d or %d: %s", out->cpus[i],
                         out->cpus[j], strerror(rc));
                free(pr);
                nl_c2c_free(out);
                return rc;
            }
            pthread_join(ta, NULL);
            pthread_join(tb, NULL);
            out->ns[i * n + j] = out->ns[j * n + i] = pr->best_ns;
            if (pr->rounds_done < out->rounds_min)
                out->rounds_min = pr->rounds_done;
            done++;
            if (d.progress)
                d.progress(d.progress_arg, done, total, (double)(now_ns() - start) / 1e9);
        }
    }
    free(pr);
    out->seconds = (double)(now_ns() - start) / 1e9;
    return 0;
}

void nl_c2c_free(nl_c2c_t *m)
{
    free(m->ns);
    m->ns = NULL;
}

/* ---- the stored measurement --------------------------------------------- */
const char *nl_measured_path(char *buf, size_t len)
{
    const char *env = getenv("NUMALOCK_TOPOLOGY_FILE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (env && *env)
        snprintf(buf, len, "%s", env);
    else if (xdg && *xdg == '/')
        snprintf(buf, len, "%s/numalock/measured-topology", xdg);
    else if (home && *home == '/')
        snprintf(buf, len, "%s/.cache/numalock/measured-topology", home);
    else
        snprintf(buf, len, "/tmp/numalock-measured-topology-%u", (unsigned)getuid());
    return buf;
}

static void mkdir_parents(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0777);
            *p = '/';
        }
}

/* The spec of a measurement's clustering, with a second level where the
 * data shows one ('|' between a node's finer domains). */
static void measured_spec(const nl_c2c_t *m, const nl_clusters_t *c, char *spec, size_t len)
{
    int *node = malloc((size_t)m->n * sizeof *node), *leaf = malloc((size_t)m->n * sizeof *leaf);
    if (node && leaf && nl_cluster_levels(m->ns, m->n, c, NL_CLUSTER_MIN_CLARITY, node, leaf))
        nl_cluster_spec_levels(node, leaf, m->n, m->cpus, spec, len);
    else
        nl_cluster_spec(c, m->cpus, spec, len);
    free(node);
    free(leaf);
}

int nl_measured_store(const char *path, const nl_c2c_t *m, const nl_clusters_t *c, char *err, size_t errlen)
{
    char spec[NL_C2C_MAX_CPUS * 6 + 64];
    unsigned char all[NL_C2C_MAX_CPUS];
    char cpus[NL_C2C_MAX_CPUS * 6 + 16], tmp[4200];
    memset(all, 1, sizeof all);
    nl_cpulist_format(m->cpus, all, m->n, cpus, sizeof cpus);
    measured_spec(m, c, spec, sizeof spec);
    mkdir_parents(path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write the measured topology to '%s': %s", path, strerror(errno));
        return errno;
    }
    fprintf(f, "numalock measured topology 1\ncpus %s\nspec %s\nclusters %d\nclarity %.3f\n"
               "method %s\nrounds %d\ntrips %d\nmatrix_ns %d\n",
            cpus, spec, c->k, c->clarity, m->method, m->rounds, m->trips, m->n);
    for (int i = 0; i < m->n; i++)
        for (int j = 0; j < m->n; j++)
            fprintf(f, "%.1f%c", m->ns[i * m->n + j], j + 1 < m->n ? ' ' : '\n');
    int bad = fflush(f) || ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        snprintf(err, errlen, "cannot write the measured topology to '%s': %s", path, strerror(e));
        return e;
    }
    return 0;
}

int nl_measured_load(const char *path, const int *cpus, int n, char *spec, size_t speclen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return ENOENT;
    char line[NL_C2C_MAX_CPUS * 8 + 64];
    int ids[NL_C2C_MAX_CPUS], nids = -1, have_spec = 0, header = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strcmp(line, "numalock measured topology 1"))
            header = 1;
        else if (!strncmp(line, "cpus ", 5))
            nids = nl_cpulist_parse(line + 5, strlen(line + 5), ids, NL_C2C_MAX_CPUS);
        else if (!strncmp(line, "spec cpus:", 10) && strlen(line + 5) < speclen) {
            snprintf(spec, speclen, "%s", line + 5);
            have_spec = 1;
        } else if (!strncmp(line, "matrix_ns", 9))
            break;
    }
    fclose(f);
    if (!header || nids < 1 || !have_spec)
        return EINVAL;
    if (nids != n || memcmp(ids, cpus, (size_t)n * sizeof *cpus))
        return ESTALE;
    return 0;
}

int nl_measured_spec(char *spec, size_t speclen, char *err, size_t errlen)
{
    char path[4096], e2[256];
    int cpus[NL_C2C_MAX_CPUS];
    int n = nl_affinity_cpus(cpus, NL_C2C_MAX_CPUS);
    nl_measured_path(path, sizeof path);
    if (nl_measured_load(path, cpus, n, spec, speclen) == 0)
        return 0;
    nl_c2c_opts_t o = { .cpus = cpus, .ncpus = n, .budget_s = 10 };
    nl_c2c_t m;
    nl_clusters_t *c = malloc(sizeof *c);
    if (!c)
        return ENOMEM;
    int rc = nl_c2c_measure(&o, &m, e2, sizeof e2);
    if (!rc)
        rc = nl_cluster_latency(m.ns, m.n, NL_CLUSTER_MIN_CLARITY, c);
    if (rc) {
        if (err && errlen)
            snprintf(err, errlen, "topology 'measured': measuring failed: %s", rc == EINVAL ? "bad matrix" : e2);
        nl_c2c_free(&m);
        free(c);
        return rc;
    }
    measured_spec(&m, c, spec, speclen);
    nl_measured_store(path, &m, c, e2, sizeof e2); /* best effort: the result is used anyway */
    nl_c2c_free(&m);
    free(c);
    return 0;
}

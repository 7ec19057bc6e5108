/*
 * `numalock calibrate sanl`: SANL's threshold profiler (paper sec. 3.4.3 and
 * 4.1). It runs the RCL/SANL microbenchmark (critical section: 5 shared
 * lines; local work: an interval of cycles) on this machine and stores what
 * it finds where the library reads it (nl_sanl_params_path()):
 *
 *  - theta_l: over intervals from 100 to 300,000 cycles, SANL fixed in place
 *    (its qspinlock-cna) against SANL fixed in delegation mode (no NUMA policy);
 *    theta_l is the contention level C_l (the threads' time share in critical
 *    sections, measured in place) where delegation stops being faster, from
 *    the shortest interval on: the mean of C_l at the last interval where it
 *    wins and the first where it loses. Delegation slower already at the
 *    shortest interval: theta_l = 1 (SANL stays in place); faster at every
 *    interval: the lowest C_l measured.
 *  - theta_f: the same between the no-NUMA and the distance-first policy,
 *    on a machine with two nodes or more; with one node the two are the same
 *    lock and the built-in value is kept (said so).
 *  - L_s: in delegation mode at intervals 100, 1,000 and 10,000, ls_k from 1
 *    to 256 (L_s = ls_k / C_l); the median of the fastest ls_k per interval.
 *
 * Deviation: the paper fits a second-order polynomial L_s(1/C_l) and runs
 * for about 45 minutes; here L_s is proportional to 1/C_l (one constant) and
 * a run takes a few seconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "numalock/delegation.h"
#include "numalock/topology.h"
#include "bench.h"
#include "cli.h"

static struct {
    nl_sanl_t lock;
    bench_line_t lines[5];
    uint64_t interval;
    _Atomic int stop;
    _Atomic int ready;
} cal;

typedef struct {
    _Alignas(64) uint64_t ops;
    uint64_t in_cs, total; /* sampled cycles */
} cal_thread_t;

static void *cal_cs(void *p)
{
    for (int i = 0; i < 5; i++)
        cal.lines[i].v[0]++;
    return p;
}

static void *cal_worker(void *p)
{
    cal_thread_t *t = p;
    atomic_fetch_add(&cal.ready, 1);
    uint64_t n = 0;
    while (!atomic_load_explicit(&cal.stop, memory_order_relaxed)) {
        int sample = (n & 7) == 0;
        uint64_t a = sample ? nl_clock_ticks() : 0;
        nl_sanl_execute(&cal.lock, cal_cs, NULL);
        uint64_t b = nl_clock_ticks();
        while (nl_clock_ticks() - b < cal.interval)
            ;
        if (sample) {
            t->in_cs += b - a;
            t->total += nl_clock_ticks() - a;
        }
        n++;
    }
    t->ops = n;
    return NULL;
}

/* one point: throughput (ops/s) and mean C_l (0..1) */
static int cal_point(const nl_sanl_config_t *cfg, uint64_t interval, int threads, double secs, double *tput,
                     double *c_l)
{
    memset(&cal, 0, sizeof cal);
    if (nl_sanl_init(&cal.lock, cfg))
        return EINVAL;
    cal.interval = interval;
    cal_thread_t *ts = aligned_alloc(64, (size_t)threads * sizeof *ts);
    pthread_t *th = malloc((size_t)threads * sizeof *th);
    if (!ts || !th) {
        free(ts);
        free(th);
        return ENOMEM;
    }
    memset(ts, 0, (size_t)threads * sizeof *ts);
    int made = 0;
    for (; made < threads; made++)
        if (pthread_create(&th[made], NULL, cal_worker, &ts[made]))
            break;
    uint64_t t0 = nl_clock_ns();
    struct timespec d = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
    nanosleep(&d, NULL);
    atomic_store(&cal.stop, 1);
    for (int i = 0; i < made; i++)
        pthread_join(th[i], NULL);
    double el = (double)(nl_clock_ns() - t0) / 1e9;
    uint64_t ops = 0;
    double share = 0;
    for (int i = 0; i < made; i++) {
        ops += ts[i].ops;
        share += ts[i].total ? (double)ts[i].in_cs / (double)ts[i].total : 0;
    }
    *tput = (double)ops / el;
    *c_l = made ? share / made : 0;
    nl_sanl_destroy(&cal.lock);
    free(ts);
    free(th);
    return made == threads ? 0 : EAGAIN;
}

static int mkdirs_for(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST)
                return errno;
            *p = '/';
        }
    return 0;
}

/* what a run measures with, and where it stores */
typedef struct {
    long threads;
    double secs;
    int dry;
    char path[512];
} cal_run_t;

/* The arguments: "sanl" and the options. 0, or the status to exit with
 * (the usage printed: 0; one sentence printed: 2). -1: go on. */
static int cal_args(int argc, char **argv, const nl_cli_command_t *self, cal_run_t *r)
{
    const char *threads_s = NULL, *dur_s = NULL, *out = NULL;
    const nl_opt_t opts[] = {
        { "--threads", "N", "threads contending (default: the online CPUs, at least 2)", &threads_s, NULL },
        { "--duration", "S", "seconds per measured point (default 0.2)", &dur_s, NULL },
        { "--out", "FILE", "where to store the thresholds (default: the library's path)", &out, NULL },
        { "--dry-run", NULL, "measure and print, store nothing", NULL, &r->dry },
        { 0 } };
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            nl_cli_help(self, opts, "locks: sanl (its thresholds theta_l, theta_f and L_s)\n");
            return 0;
        }
    if (argc < 2 || argv[1][0] == '-' || strcmp(argv[1], "sanl")) {
        if (argc < 2 || argv[1][0] == '-')
            fprintf(stderr, "numalock calibrate: missing lock: valid choices are sanl\n");
        else
            fprintf(stderr, "numalock calibrate: unknown lock '%s': valid choices are sanl\n", argv[1]);
        return 2;
    }
    if (nl_cli_opts(self, opts, argc, argv, 2, 0, NULL))
        return 2;
    r->threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (r->threads < 2)
        r->threads = 2;
    char *e;
    if (threads_s && ((r->threads = strtol(threads_s, &e, 10)), *e || r->threads < 2 || r->threads > 1024)) {
        fprintf(stderr, "numalock calibrate: bad value '%s' for --threads: expected 2 to 1024\n", threads_s);
        return 2;
    }
    r->secs = 0.2;
    if (dur_s && ((r->secs = strtod(dur_s, &e)), *e || !(r->secs >= 0.01 && r->secs <= 60))) {
        fprintf(stderr, "numalock calibrate: bad value '%s' for --duration: expected 0.01 to 60 seconds\n", dur_s);
        return 2;
    }
    if (out)
        snprintf(r->path, sizeof r->path, "%s", out);
    else if (!r->dry && nl_sanl_params_path(r->path, sizeof r->path)) {
        fprintf(stderr, "numalock calibrate: no place to store the thresholds: set NUMALOCK_SANL_PARAMS or HOME, "
                        "or give --out FILE\n");
        return 2;
    }
    return -1;
}

static const uint64_t cal_iv[] = { 100, 300, 1000, 3000, 10000, 30000, 100000, 300000 };
enum { CAL_NIV = sizeof cal_iv / sizeof cal_iv[0] };
static const nl_sanl_config_t cal_deleg = { .mode = NL_SANL_DELEGATE, .policy = NL_SANL_NO_NUMA };

/* theta_l: in place against delegation over the intervals, from the
 * highest contention (shortest interval) on: where does delegation stop
 * winning? 0, or 1 (threads could not run). */
static int cal_theta_l(const cal_run_t *r, double *theta_l, const char **why)
{
    double tin[CAL_NIV], tdel[CAL_NIV], cl[CAL_NIV];
    nl_sanl_config_t inplace = { .mode = NL_SANL_INPLACE };
    printf("%10s %14s %14s %8s\n", "interval", "in place/s", "delegated/s", "C_l");
    for (int i = 0; i < CAL_NIV; i++) {
        double dummy;
        if (cal_point(&inplace, cal_iv[i], (int)r->threads, r->secs, &tin[i], &cl[i]) ||
            cal_point(&cal_deleg, cal_iv[i], (int)r->threads, r->secs, &tdel[i], &dummy)) {
            fprintf(stderr, "numalock calibrate: cannot run %ld threads\n", r->threads);
            return 1;
        }
        printf("%10llu %14.0f %14.0f %8.3f\n", (unsigned long long)cal_iv[i], tin[i], tdel[i], cl[i]);
    }
    int wins = 0;
    while (wins < CAL_NIV && tdel[wins] > tin[wins])
        wins++;
    if (wins == 0) {
        *theta_l = 1.0;
        *why = "delegation lost even at the shortest interval: sanl stays in place";
    } else if (wins == CAL_NIV) {
        *theta_l = cl[CAL_NIV - 1];
        *why = "delegation won at every interval: the lowest C_l measured";
    } else {
        *theta_l = (cl[wins - 1] + cl[wins]) / 2;
        *why = "mean C_l of the last interval where delegation wins and the next";
    }
    return 0;
}

/* theta_f: no-NUMA against distance-first, on two nodes or more (with one
 * the two are the same lock: the built-in value `def` is kept). */
static double cal_theta_f(const cal_run_t *r, double def, const char **why)
{
    *why = "one node: no-NUMA and distance-first are the same lock, built-in value kept";
    if (nl_topology_nodes() < 2)
        return def;
    nl_sanl_config_t df = { .mode = NL_SANL_DELEGATE, .policy = NL_SANL_DISTANCE_FIRST };
    double prev_cl = -1, found = -1;
    for (int i = 0; i < CAL_NIV; i++) {
        double a, b, c, dummy;
        cal_point(&cal_deleg, cal_iv[i], (int)r->threads, r->secs, &a, &c);
        cal_point(&df, cal_iv[i], (int)r->threads, r->secs, &b, &dummy);
        if (b > a && prev_cl < 0)
            prev_cl = c;
        else if (b <= a && prev_cl >= 0 && found < 0)
            found = (prev_cl + c) / 2;
    }
    if (found < 0) {
        *why = "no crossing between no-NUMA and distance-first: built-in value kept";
        return def;
    }
    *why = "mean C_l where distance-first stops beating no-NUMA";
    return found;
}

/* L_s: in delegation mode at three intervals, the median of the fastest
 * ls_k per interval (`def` where none ran). */
static uint32_t cal_ls_k(const cal_run_t *r, uint32_t def)
{
    static const uint64_t ivl[] = { 100, 1000, 10000 };
    static const uint32_t ks[] = { 1, 4, 16, 64, 256 };
    uint32_t best[3];
    for (int i = 0; i < 3; i++) {
        double bt = -1;
        best[i] = def;
        for (int k = 0; k < 5; k++) {
            nl_sanl_config_t c = { .mode = NL_SANL_DELEGATE, .policy = NL_SANL_NO_NUMA, .ls_k = ks[k] };
            double t, dummy;
            cal_point(&c, ivl[i], (int)r->threads, r->secs, &t, &dummy);
            if (t > bt) {
                bt = t;
                best[i] = ks[k];
            }
        }
        printf("L_s: interval %llu: fastest ls_k %u\n", (unsigned long long)ivl[i], best[i]);
    }
    uint32_t a = best[0], b = best[1], c = best[2]; /* median of three */
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* The thresholds into r->path (through a temporary file). 0 or 1. */
static int cal_store(const cal_run_t *r, double theta_l, double theta_f, uint32_t ls_k)
{
    int rc = mkdirs_for(r->path);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->path);
    FILE *f = rc ? NULL : fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "numalock calibrate: cannot write '%s': %s\n", r->path, strerror(rc ? rc : errno));
        return 1;
    }
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# numalock calibrate sanl, %s, %ld threads, %.2f s per point\n", when, r->threads, r->secs);
    fprintf(f, "theta_l = %.4f\ntheta_f = %.4f\nls_k = %u\n", theta_l, theta_f, ls_k);
    if (fclose(f) || rename(tmp, r->path)) {
        unlink(tmp);
        fprintf(stderr, "numalock calibrate: cannot write '%s': %s\n", r->path, strerror(errno));
        return 1;
    }
    printf("stored in %s (sanl reads it at its first use in a process)\n", r->path);
    return 0;
}

int nl_cli_calibrate(int argc, char **argv, const nl_cli_command_t *self)
{
    cal_run_t r = { 0 };
    int rc = cal_args(argc, argv, self, &r);
    if (rc >= 0)
        return rc;
    nl_sanl_config_t def;
    const char *src, *why, *why_f;
    nl_sanl_params(&def, &src);
    printf("calibrating sanl: %ld threads, %.2f s per point, 5 shared lines (now using %s)\n", r.threads, r.secs,
           src);
    double theta_l;
    if (cal_theta_l(&r, &theta_l, &why))
        return 1;
    double theta_f = cal_theta_f(&r, (double)def.theta_f / 1024.0, &why_f);
    uint32_t ls_k = cal_ls_k(&r, def.ls_k);
    printf("theta_l = %.3f (%s)\ntheta_f = %.3f (%s)\nls_k = %u\n", theta_l, why, theta_f, why_f, ls_k);
    if (r.dry) {
        printf("dry run: nothing stored\n");
        return 0;
    }
    return cal_store(&r, theta_l, theta_f, ls_k);
}

/* `numalock list --json`: the thresholds sanl uses and where they come from */
void nl_cli_list_lock_json(const nl_lock_ops_t *o)
{
    if (strcmp(o->name, "sanl"))
        return;
    nl_sanl_config_t p;
    const char *src;
    nl_sanl_params(&p, &src);
    printf("\"thresholds\": {\"theta_l\": %.4f, \"theta_f\": %.4f, \"ls_k\": %u, \"t_s\": %u, \"t_w_ns\": %u, "
           "\"source\": ",
           p.theta_l / 1024.0, p.theta_f / 1024.0, p.ls_k, p.t_s, p.t_w_ns);
    json_str(stdout, src);
    printf("}, ");
}

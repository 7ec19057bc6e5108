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
#include "numalock_cli.h"
#include "../bench/bench.h"
#include "../bench/opts.h"

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

int nl_cli_calibrate(int argc, char **argv)
{
    const char *threads_s = NULL, *dur_s = NULL, *out = NULL;
    int dry = 0;
    const nl_opt_t opts[] = {
        { "--threads", "N", "threads contending (default: the online CPUs, at least 2)", &threads_s, NULL },
        { "--duration", "S", "seconds per measured point (default 0.2)", &dur_s, NULL },
        { "--out", "FILE", "where to store the thresholds (default: the library's path)", &out, NULL },
        { "--dry-run", NULL, "measure and print, store nothing", NULL, &dry },
        { 0 } };
    if (argc < 2 || argv[1][0] == '-' || strcmp(argv[1], "sanl")) {
        if (argc < 2 || argv[1][0] == '-')
            fprintf(stderr, "numalock calibrate: missing lock: valid choices are sanl\n");
        else
            fprintf(stderr, "numalock calibrate: unknown lock '%s': valid choices are sanl\n", argv[1]);
        return 2;
    }
    char err[1024];
    if (nl_opts_parse(opts, argc, argv, 2, 0, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "numalock calibrate: %s\n", err);
        return 2;
    }
    long threads = sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 2)
        threads = 2;
    if (threads_s) {
        char *e;
        threads = strtol(threads_s, &e, 10);
        if (*e || threads < 2 || threads > 1024) {
            fprintf(stderr, "numalock calibrate: bad value '%s' for --threads: expected 2 to 1024\n", threads_s);
            return 2;
        }
    }
    double secs = 0.2;
    if (dur_s) {
        char *e;
        secs = strtod(dur_s, &e);
        if (*e || !(secs >= 0.01 && secs <= 60)) {
            fprintf(stderr, "numalock calibrate: bad value '%s' for --duration: expected 0.01 to 60 seconds\n",
                    dur_s);
            return 2;
        }
    }
    char path[512];
    if (out)
        snprintf(path, sizeof path, "%s", out);
    else if (!dry && nl_sanl_params_path(path, sizeof path)) {
        fprintf(stderr, "numalock calibrate: no place to store the thresholds: set NUMALOCK_SANL_PARAMS or HOME, "
                        "or give --out FILE\n");
        return 2;
    }
    nl_sanl_config_t def;
    const char *src;
    nl_sanl_params(&def, &src);
    printf("calibrating sanl: %ld threads, %.2f s per point, 5 shared lines (now using %s)\n", threads, secs, src);

    /* theta_l */
    static const uint64_t iv[] = { 100, 300, 1000, 3000, 10000, 30000, 100000, 300000 };
    enum { NIV = sizeof iv / sizeof iv[0] };
    double tin[NIV], tdel[NIV], cl[NIV];
    nl_sanl_config_t inplace = { .mode = NL_SANL_INPLACE }, deleg = { .mode = NL_SANL_DELEGATE,
                                                                       .policy = NL_SANL_NO_NUMA };
    printf("%10s %14s %14s %8s\n", "interval", "in place/s", "delegated/s", "C_l");
    for (int i = 0; i < NIV; i++) {
        double dummy;
        if (cal_point(&inplace, iv[i], (int)threads, secs, &tin[i], &cl[i]) ||
            cal_point(&deleg, iv[i], (int)threads, secs, &tdel[i], &dummy)) {
            fprintf(stderr, "numalock calibrate: cannot run %ld threads\n", threads);
            return 1;
        }
        printf("%10llu %14.0f %14.0f %8.3f\n", (unsigned long long)iv[i], tin[i], tdel[i], cl[i]);
    }
    /* from the highest contention (shortest interval) on: where does
     * delegation stop winning? */
    int wins = 0;
    while (wins < NIV && tdel[wins] > tin[wins])
        wins++;
    double theta_l;
    const char *why;
    if (wins == 0) {
        theta_l = 1.0;
        why = "delegation lost even at the shortest interval: sanl stays in place";
    } else if (wins == NIV) {
        theta_l = cl[NIV - 1];
        why = "delegation won at every interval: the lowest C_l measured";
    } else {
        theta_l = (cl[wins - 1] + cl[wins]) / 2;
        why = "mean C_l of the last interval where delegation wins and the next";
    }

    /* theta_f */
    double theta_f = (double)def.theta_f / 1024.0;
    const char *why_f = "one node: no-NUMA and distance-first are the same lock, built-in value kept";
    int nodes = nl_topology_nodes();
    if (nodes >= 2) {
        nl_sanl_config_t df = { .mode = NL_SANL_DELEGATE, .policy = NL_SANL_DISTANCE_FIRST };
        double prev_cl = -1, found = -1;
        for (int i = 0; i < NIV; i++) {
            double a, b, c, dummy;
            cal_point(&deleg, iv[i], (int)threads, secs, &a, &c);
            cal_point(&df, iv[i], (int)threads, secs, &b, &dummy);
            if (b > a && prev_cl < 0)
                prev_cl = c;
            else if (b <= a && prev_cl >= 0 && found < 0)
                found = (prev_cl + c) / 2;
        }
        if (found >= 0) {
            theta_f = found;
            why_f = "mean C_l where distance-first stops beating no-NUMA";
        } else
            why_f = "no crossing between no-NUMA and distance-first: built-in value kept";
    }

    /* L_s */
    static const uint64_t ivl[] = { 100, 1000, 10000 };
    static const uint32_t ks[] = { 1, 4, 16, 64, 256 };
    uint32_t best[3];
    for (int i = 0; i < 3; i++) {
        double bt = -1;
        best[i] = def.ls_k;
        for (int k = 0; k < 5; k++) {
            nl_sanl_config_t c = { .mode = NL_SANL_DELEGATE, .policy = NL_SANL_NO_NUMA, .ls_k = ks[k] };
            double t, dummy;
            cal_point(&c, ivl[i], (int)threads, secs, &t, &dummy);
            if (t > bt) {
                bt = t;
                best[i] = ks[k];
            }
        }
        printf("L_s: interval %llu: fastest ls_k %u\n", (unsigned long long)ivl[i], best[i]);
    }
    uint32_t a = best[0], b = best[1], c = best[2]; /* median of three */
    uint32_t ls_k = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));

    printf("theta_l = %.3f (%s)\ntheta_f = %.3f (%s)\nls_k = %u\n", theta_l, why, theta_f, why_f, ls_k);
    if (dry) {
        printf("dry run: nothing stored\n");
        return 0;
    }
    int rc = mkdirs_for(path);
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = rc ? NULL : fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "numalock calibrate: cannot write '%s': %s\n", path, strerror(rc ? rc : errno));
        return 1;
    }
    time_t now = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(f, "# numalock calibrate sanl, %s, %ld threads, %.2f s per point\n", when, threads, secs);
    fprintf(f, "theta_l = %.4f\ntheta_f = %.4f\nls_k = %u\n", theta_l, theta_f, ls_k);
    if (fclose(f) || rename(tmp, path)) {
        unlink(tmp);
        fprintf(stderr, "numalock calibrate: cannot write '%s': %s\n", path, strerror(errno));
        return 1;
    }
    printf("stored in %s (sanl reads it at its first use in a process)\n", path);
    return 0;
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

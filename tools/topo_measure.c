/* `numalock topo --measure`: the core-to-core latency matrix, the
 * clusters it implies, a verdict, JSON for the report's heat map, and the
 * stored measurement behind `--topology measured`. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "numalock/measure.h"
#include "bench.h"
#include "cli.h"
#include "words.h"

#define PROG "numalock topo --measure"

static void progress(void *arg, int done, int total, double elapsed)
{
    const double *budget = arg;
    static double last = -1;
    if (!isatty(2))
        return;
    if (done < total && elapsed - last < 0.2)
        return;
    last = elapsed;
    fprintf(stderr, "\rmeasuring: %d/%d pairs, %.1f s (at most about %.0f s)%s", done, total, elapsed,
            *budget, done == total ? "\n" : "");
}

/* A matrix as `numalock topo --measure` prints it (and as c2c.txt holds it):
 * a header line "cpu ID ID ...", then one row per CPU "ID v v ...", '-' on
 * the diagonal. Returns 0, or 2 with one sentence printed. */
static int read_matrix(const char *path, nl_c2c_t *m)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "%s: cannot read matrix file '%s': %s\n", PROG, path, strerror(errno));
        return 2;
    }
    char word[64];
    memset(m, 0, sizeof *m);
    if (fscanf(f, "%63s", word) != 1 || strcmp(word, "cpu")) {
        fprintf(stderr, "%s: matrix file '%s' must start with a header line 'cpu ID ID ...'\n", PROG, path);
        fclose(f);
        return 2;
    }
    int c;
    while (fscanf(f, " %d", &c) == 1 && m->n < NL_C2C_MAX_CPUS) {
        m->cpus[m->n++] = c;
        int ch = fgetc(f);
        ungetc(ch, f);
        if (ch == '\n')
            break;
    }
    int n = m->n;
    m->ns = calloc((size_t)n * (size_t)n, sizeof *m->ns);
    if (!n || !m->ns) {
        fprintf(stderr, "%s: matrix file '%s' names no CPUs in its header\n", PROG, path);
        fclose(f);
        free(m->ns);
        return 2;
    }
    for (int i = 0; i < n; i++) {
        int id;
        if (fscanf(f, " %d", &id) != 1 || id != m->cpus[i])
            goto bad;
        for (int j = 0; j < n; j++) {
            if (fscanf(f, " %63s", word) != 1)
                goto bad;
            char *e;
            double v = strtod(word, &e);
            if (i == j && !strcmp(word, "-"))
                v = 0;
            else if (*e || !(v >= 0))
                goto bad;
            m->ns[i * n + j] = v;
        }
    }
    fclose(f);
    snprintf(m->method, sizeof m->method, "file");
    return 0;
bad:
    fprintf(stderr, "%s: matrix file '%s' has a bad row: expected %d rows 'ID v v ...' in header order "
                    "with %d numbers or '-' each\n", PROG, path, n, n);
    fclose(f);
    free(m->ns);
    m->ns = NULL;
    return 2;
}

static void print_matrix(const nl_c2c_t *m)
{
    printf("cpu");
    for (int j = 0; j < m->n; j++)
        printf(" %5d", m->cpus[j]);
    printf("\n");
    for (int i = 0; i < m->n; i++) {
        printf("%3d", m->cpus[i]);
        for (int j = 0; j < m->n; j++) {
            if (i == j)
                printf(" %5s", "-");
            else
                printf(" %5.0f", m->ns[i * m->n + j]);
        }
        printf("\n");
    }
}

static void verdict_text(const nl_clusters_t *c, const char *spec, char *buf, size_t len)
{
    if (c->k > 1)
        snprintf(buf, len, "%d clusters (%.1fx apart): use --topology %s (or --topology measured)", c->k,
                 c->clarity, spec);
    else
        snprintf(buf, len, "no clear clusters: one node (%s)", c->why);
}

static int write_json(const char *path, const char *command, const nl_c2c_t *m, const nl_clusters_t *c,
                      const char *spec, const char *verdict, double budget)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "%s: cannot write JSON file '%s': %s\n", PROG, path, strerror(errno));
        return 2;
    }
    char host[256] = "unknown", when[64];
    gethostname(host, sizeof host - 1);
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    nl_topology_t real;
    nl_topology_parse("auto", &real, NULL, 0);
    fprintf(f, "{\n  \"meta\": {\"tool\": \"numalock\", \"version\": \"%s\", \"command\": ", NL_VERSION);
    json_str(f, command);
    fprintf(f, ", \"started_utc\": \"%s\", \"host\": ", when);
    json_str(f, host);
    fprintf(f, ", \"online_cpus\": %ld, \"real_nodes\": %d, \"workload\": \"c2c\", \"params\": "
               "{\"method\": \"%s\", \"rounds\": %d, \"trips\": %d, \"budget_s\": ",
            sysconf(_SC_NPROCESSORS_ONLN), real.nnodes, m->method, m->rounds, m->trips);
    json_num(f, budget);
    fprintf(f, "}},\n  \"records\": [\n    {\"workload\": \"c2c\", \"lock\": \"-\", \"topology\": \"measured\", "
               "\"method\": \"%s\", \"rounds\": %d, \"rounds_min\": %d, \"trips\": %d, \"seconds\": ",
            m->method, m->rounds, m->rounds_min, m->trips);
    json_num(f, m->seconds);
    fprintf(f, ",\n     \"cpus\": [");
    for (int i = 0; i < m->n; i++)
        fprintf(f, "%s%d", i ? ", " : "", m->cpus[i]);
    fprintf(f, "],\n     \"matrix_ns\": [");
    for (int i = 0; i < m->n; i++) {
        fprintf(f, "%s[", i ? ",\n                   " : "");
        for (int j = 0; j < m->n; j++) {
            fprintf(f, "%s", j ? ", " : "");
            if (i == j)
                fprintf(f, "null");
            else
                fprintf(f, "%.1f", m->ns[i * m->n + j]);
        }
        fprintf(f, "]");
    }
    fprintf(f, "],\n     \"clusters\": %d, \"labels\": [", c->k);
    for (int i = 0; i < m->n; i++)
        fprintf(f, "%s%d", i ? ", " : "", c->label[i]);
    fprintf(f, "], \"spec\": ");
    json_str(f, spec);
    int part = c->candidate_k > 1; /* else no partition was possible: no figures */
    fprintf(f, ", \"clarity\": ");
    json_num(f, part ? c->clarity : NAN);
    fprintf(f, ", \"within_ns\": ");
    json_num(f, part ? c->within_ns : NAN);
    fprintf(f, ", \"between_ns\": ");
    json_num(f, part ? c->between_ns : NAN);
    fprintf(f, ", \"verdict\": ");
    json_str(f, verdict);
    fprintf(f, "}\n  ]\n}\n");
    int bad = fflush(f) || ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path)) {
        fprintf(stderr, "%s: cannot write JSON file '%s': %s\n", PROG, path, strerror(errno));
        unlink(tmp);
        return 2;
    }
    return 0;
}

static int positive(const char *opt, const char *v, double max, double *out)
{
    char *e;
    errno = 0;
    double x = strtod(v, &e);
    if (e == v || *e || errno || !(x > 0) || x > max) {
        fprintf(stderr, "%s: bad value '%s' for %s: expected a number above 0 and at most %g\n", PROG, v, opt,
                max);
        return 2;
    }
    *out = x;
    return 0;
}

static int whole(const char *opt, const char *v, long max, int *out)
{
    char *e;
    errno = 0;
    long x = strtol(v, &e, 10);
    if (e == v || *e || errno || x < 1 || x > max) {
        fprintf(stderr, "%s: bad value '%s' for %s: expected a whole number from 1 to %ld\n", PROG, v, opt, max);
        return 2;
    }
    *out = (int)x;
    return 0;
}

/* the options of `topo --measure`, as given */
typedef struct {
    const char *method, *rounds, *trips, *budget, *cpus, *matrix, *json;
    int measure, no_store;
} measure_args_t;

static void measure_opts(nl_opt_t *opts, measure_args_t *a)
{
    const nl_opt_t table[] = {
        { "--measure", NULL, "measure core-to-core latency", NULL, &a->measure },
        { "--method", "cas|store", "how the cache line is bounced (default cas)", &a->method, NULL },
        { "--rounds", "N", "rounds per pair, the best kept (default 5)", &a->rounds, NULL },
        { "--trips", "N", "round trips per round, at most (default 1000)", &a->trips, NULL },
        { "--budget", "S", "seconds the whole measurement may take (default 10)", &a->budget, NULL },
        { "--cpus", "LIST", "the CPUs to measure (default: all this process may use)", &a->cpus, NULL },
        { "--matrix", "FILE", "cluster a saved matrix instead of measuring", &a->matrix, NULL },
        { "--json", "FILE", "write the matrix and verdict as JSON", &a->json, NULL },
        { "--no-store", NULL, "do not store the result for --topology measured", NULL, &a->no_store },
        { 0 },
    };
    memcpy(opts, table, sizeof table);
}
enum { MEASURE_OPTS = 10 };

void nl_cli_topo_measure_help(void)
{
    nl_opt_t opts[MEASURE_OPTS];
    measure_args_t a;
    measure_opts(opts, &a);
    nl_opts_help(stdout, opts);
}

/* --method, --rounds, --trips, --budget into o. 0 or 2. */
static int measure_settings(const measure_args_t *a, nl_c2c_opts_t *o)
{
    if (a->method) {
        if (strcmp(a->method, "cas") && strcmp(a->method, "store")) {
            fprintf(stderr, "%s: unknown method '%s': valid choices are cas, store\n", PROG, a->method);
            return 2;
        }
        o->method = a->method;
    }
    if ((a->rounds && whole("--rounds", a->rounds, 1000, &o->rounds)) ||
        (a->trips && whole("--trips", a->trips, 10000000, &o->trips)) ||
        (a->budget && positive("--budget", a->budget, 3600, &o->budget_s)))
        return 2;
    return 0;
}

/* --cpus: CPUs this process may run on, in increasing order (the matrix and
 * the spec list CPUs in order). 0 or 2. */
static int measure_cpus(const char *list, nl_c2c_opts_t *o)
{
    static int cpus[NL_C2C_MAX_CPUS];
    int n = nl_cpulist_parse(list, strlen(list), cpus, NL_C2C_MAX_CPUS);
    if (n < 1) {
        fprintf(stderr, "%s: bad CPU list '%s': expected distinct CPUs like 0-3,8\n", PROG, list);
        return 2;
    }
    int allowed[NL_C2C_MAX_CPUS], na = nl_affinity_cpus(allowed, NL_C2C_MAX_CPUS);
    for (int i = 0; i < n; i++) {
        int ok = 0;
        for (int k = 0; k < na; k++)
            ok |= allowed[k] == cpus[i];
        if (!ok) {
            fprintf(stderr, "%s: CPU %d in '%s' is not one this process may run on (see `numalock topo`)\n", PROG,
                    cpus[i], list);
            return 2;
        }
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cpus[j - 1] > cpus[j]; j--) {
            int t = cpus[j]; cpus[j] = cpus[j - 1]; cpus[j - 1] = t;
        }
    o->cpus = cpus;
    o->ncpus = n;
    return 0;
}

/* The matrix: read from --matrix, or measured (checking first that --json
 * can be written). *store: whether it describes this process's CPUs.
 * 0, 1 or 2. */
static int measure_matrix(const measure_args_t *a, nl_c2c_opts_t *o, nl_c2c_t *m, int *store)
{
    char err[512];
    if (a->matrix) {
        *store = 0; /* a file's matrix says nothing about this machine */
        return read_matrix(a->matrix, m) ? 2 : 0;
    }
    if (a->cpus) {
        if (measure_cpus(a->cpus, o))
            return 2;
        *store = 0; /* `measured` is for the process's whole CPU set */
    }
    if (a->json) { /* fail early, before measuring */
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.tmp", a->json);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            fprintf(stderr, "%s: cannot write JSON file '%s': %s\n", PROG, a->json, strerror(errno));
            return 2;
        }
        fclose(f);
        unlink(tmp);
    }
    o->progress = progress;
    o->progress_arg = &o->budget_s;
    if (nl_c2c_measure(o, m, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", PROG, err);
        return 1;
    }
    return 0;
}

/* The matrix, its clusters, the verdict and the spec on stdout; the spec
 * and the verdict into spec and verdict. */
static void measure_print(const measure_args_t *a, const nl_c2c_t *m, const nl_clusters_t *c, char *spec,
                          size_t speclen, char *verdict, size_t verdictlen)
{
    /* a second level where the data shows one ('|' in the spec) */
    static int node[NL_C2C_MAX_CPUS], leaf[NL_C2C_MAX_CPUS];
    if (nl_cluster_levels(m->ns, m->n, c, NL_CLUSTER_MIN_CLARITY, node, leaf))
        nl_cluster_spec_levels(node, leaf, m->n, m->cpus, spec, speclen);
    else
        nl_cluster_spec(c, m->cpus, spec, speclen);
    verdict_text(c, spec, verdict, verdictlen);
    if (a->matrix)
        printf("core-to-core one-way latency (ns) from %s, %d CPUs\n", a->matrix, m->n);
    else
        printf("core-to-core one-way latency (ns): %s ping-pong, best of %d round%s (at least %d) of up to %d "
               "round trips per pair, %d CPUs, %.2f s\n",
               m->method, m->rounds, m->rounds == 1 ? "" : "s", m->rounds_min, m->trips, m->n, m->seconds);
    print_matrix(m);
    if (c->k > 1 || c->candidate_k > 1)
        printf("clusters: median %.0f ns within, %.0f ns between (%s%d clusters)\n", c->within_ns, c->between_ns,
               c->k > 1 ? "" : "best rejected split: ", c->candidate_k);
    printf("verdict: %s\n", verdict);
    printf("spec: %s\n", spec);
}

int nl_cli_topo_measure(int argc, char **argv)
{
    nl_c2c_opts_t o = { .method = "cas", .rounds = 5, .trips = 1000, .budget_s = 10 };
    measure_args_t a = { 0 };
    nl_opt_t opts[MEASURE_OPTS];
    char command[2048], perr[1024], err[512];
    nl_cli_join_args(command, sizeof command, argc, argv);
    measure_opts(opts, &a);
    if (nl_opts_parse(opts, argc, argv, 1, 0, NULL, perr, sizeof perr) < 0) {
        fprintf(stderr, "%s: %s\n", PROG, perr);
        return 2;
    }
    int store = !a.no_store, rc;
    nl_c2c_t m;
    if (measure_settings(&a, &o) || (rc = measure_matrix(&a, &o, &m, &store)) == 2)
        return 2;
    if (rc)
        return rc;
    static nl_clusters_t c;
    if (nl_cluster_latency(m.ns, m.n, NL_CLUSTER_MIN_CLARITY, &c)) {
        fprintf(stderr, "%s: the matrix cannot be clustered (a negative or missing latency)\n", PROG);
        nl_c2c_free(&m);
        return 1;
    }
    static char spec[NL_C2C_MAX_CPUS * 6 + 64], verdict[NL_C2C_MAX_CPUS * 6 + 256];
    measure_print(&a, &m, &c, spec, sizeof spec, verdict, sizeof verdict);
    if (store) {
        char path[4096];
        nl_measured_path(path, sizeof path);
        if (nl_measured_store(path, &m, &c, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", PROG, err);
            rc = 1;
        } else {
            printf("stored: %s (read by --topology measured)\n", path);
        }
    }
    if (a.json && !rc)
        rc = write_json(a.json, command, &m, &c, spec, verdict, a.matrix ? NAN : o.budget_s);
    nl_c2c_free(&m);
    return rc;
}

/* ---- real node distances (sysfs), for `numalock topo` ------------------- */
/* sysfs node ids in increasing order (as `auto` numbers them); the count */
static int sysfs_nodes(int *ids, int max)
{
    int n = 0;
    for (int id = 0; id < 1024 && n < max; id++) {
        char path[96];
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d", id);
        if (access(path, F_OK) == 0)
            ids[n++] = id;
    }
    return n;
}

void nl_cli_topo_distances(int json)
{
    int ids[NL_MAX_NODES], n = sysfs_nodes(ids, NL_MAX_NODES);
    if (json)
        printf(", \"real_node_ids\": [");
    for (int i = 0; json && i < n; i++)
        printf("%s%d", i ? ", " : "", ids[i]);
    if (json)
        printf("], \"real_distances\": [");
    else if (n)
        printf("real node distances (sysfs):\n");
    for (int i = 0; i < n; i++) {
        char path[96], buf[1024] = "";
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/distance", ids[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(buf, sizeof buf, f))
                buf[0] = 0;
            fclose(f);
        }
        buf[strcspn(buf, "\n")] = 0;
        if (json) {
            printf("%s[", i ? ", " : "");
            int first = 1;
            for (char *save, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
                printf("%s%s", first ? "" : ", ", tok);
                first = 0;
            }
            printf("]");
        } else {
            printf("  node%d: %s\n", ids[i], buf[0] ? buf : "(unknown)");
        }
    }
    if (json)
        printf("]");
}

/* Topology by measurement: clustering of synthetic latency
 * matrices, the spec it implies, the stored measurement, `--topology measured`,
 * and one real measurement on this machine.
 * The CPU-list parser that sysfs lists, cpus: specs, the stored measurement
 * and `topo --measure --cpus` share.
 * The hierarchy: the sysfs reader on fixtures of real machines' layouts
 * (levels), virtual hierarchies and bad specs (virtual).
 *   test_topo [cpulist|cluster|store|measured|measure|levels|virtual|all] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "numalock/topology.h"
#include "numalock/measure.h"

static int failures;
#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            failures++;                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) /* [0, 1) */
{
    rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27;
    return (double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

/* n CPUs, group[i] their true cluster; latency near[g]/far, with relative
 * noise +-noise (uniform), asymmetric like a real measurement */
static void synth(double *m, int n, const int *group, double near, double far, double noise)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double base = i == j ? 0 : group[i] == group[j] ? near : far;
            m[i * n + j] = base * (1 + noise * (2 * urand() - 1));
        }
}

static const char *spec_of(const double *m, int n, const int *cpus, nl_clusters_t *c)
{
    static char buf[4096];
    int rc = nl_cluster_latency(m, n, NL_CLUSTER_MIN_CLARITY, c);
    if (rc)
        return "error";
    nl_cluster_spec(c, cpus, buf, sizeof buf);
    return buf;
}

static void test_cluster(void)
{
    int cpus[64], group[64];
    double m[64 * 64];
    nl_clusters_t c;
    for (int i = 0; i < 64; i++)
        cpus[i] = i;

    /* two sockets of 8, the 16-core shape: ~80 ns near, ~190 ns far */
    for (int i = 0; i < 16; i++)
        group[i] = i / 8;
    synth(m, 16, group, 80, 190, 0);
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0-7/8-15"), "got %s", spec_of(m, 16, cpus, &c));
    CHECK(c.k == 2 && fabs(c.clarity - 190.0 / 80) < 1e-9, "k %d clarity %f", c.k, c.clarity);

    /* interleaved sockets (even/odd CPU ids) */
    for (int i = 0; i < 16; i++)
        group[i] = i % 2;
    synth(m, 16, group, 70, 200, 0);
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0,2,4,6,8,10,12,14/1,3,5,7,9,11,13,15"), "got %s",
          spec_of(m, 16, cpus, &c));

    /* CPU ids that are not 0..n-1: the spec names the ids */
    int ids[8] = { 0, 1, 4, 5, 8, 9, 12, 13 };
    int g8[8] = { 0, 0, 1, 1, 0, 0, 1, 1 };
    synth(m, 8, g8, 50, 150, 0);
    CHECK(!strcmp(spec_of(m, 8, ids, &c), "cpus:0-1,8-9/4-5,12-13"), "got %s", spec_of(m, 8, ids, &c));

    /* flat: one node, and the sentence says why */
    for (int i = 0; i < 16; i++)
        group[i] = 0;
    synth(m, 16, group, 190, 190, 0);
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0-15") && c.k == 1 && c.why[0], "got %s k %d", spec_of(m, 16, cpus, &c), c.k);
    {
        int node[16], leaf[16];
        CHECK(nl_cluster_levels(m, 16, &c, NL_CLUSTER_MIN_CLARITY, node, leaf) == 0, "flat: no second level");
    }
    /* two sockets of 8 with nothing finer: no second level */
    for (int i = 0; i < 16; i++)
        group[i] = i / 8;
    synth(m, 16, group, 80, 190, 0.02);
    spec_of(m, 16, cpus, &c);
    {
        int node[16], leaf[16];
        CHECK(c.k == 2 && nl_cluster_levels(m, 16, &c, NL_CLUSTER_MIN_CLARITY, node, leaf) == 0,
              "two sockets: no second level");
    }

    /* two levels: 4 sockets, pairs of sockets nearer: the finest clear level wins */
    for (int i = 0; i < 16; i++)
        group[i] = i / 4;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            m[i * 16 + j] = i == j ? 0 : group[i] == group[j] ? 50 : group[i] / 2 == group[j] / 2 ? 100 : 200;
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0-3/4-7/8-11/12-15"), "got %s", spec_of(m, 16, cpus, &c));
    /* ... and the level above it: the pairs of sockets, a spec of two levels
     * that parses into cache (the sockets) below node (the pairs) */
    {
        int node[16], leaf[16];
        char spec[256], err[256];
        CHECK(nl_cluster_levels(m, 16, &c, NL_CLUSTER_MIN_CLARITY, node, leaf) == 2, "two coarser domains");
        nl_cluster_spec_levels(node, leaf, 16, cpus, spec, sizeof spec);
        CHECK(!strcmp(spec, "cpus:0-3|4-7/8-11|12-15"), "two levels: got %s", spec);
        static nl_topology_t t;
        int ok = 1;
        for (int i = 0; i < 16; i++) /* the spec names CPUs this machine may lack: check the shape only */
            ok &= node[i] == i / 8 && leaf[i] == i / 4;
        CHECK(ok, "node and leaf labels");
        CHECK(nl_topology_parse("cpus:0|1", &t, err, sizeof err) == 0 && t.nlevels == 2 && t.ndomains[0] == 2 &&
                  t.nnodes == 1 && !strcmp(t.level_name[0], "cache"), "cpus:0|1: %s", err);
    }

    /* halves of a real cluster are no cluster: 2, not 4 */
    for (int i = 0; i < 16; i++)
        group[i] = i / 8;
    synth(m, 16, group, 80, 190, 0);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            if (i != j && group[i] == group[j] && (i % 8) / 4 != (j % 8) / 4)
                m[i * 16 + j] = 84; /* a hair slower across the halves */
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0-7/8-15"), "got %s", spec_of(m, 16, cpus, &c));

    /* one CPU far from all others (a busy CPU) is noise, not a node */
    for (int i = 0; i < 16; i++)
        group[i] = 0;
    synth(m, 16, group, 100, 100, 0);
    for (int j = 0; j < 16; j++)
        if (j != 5)
            m[5 * 16 + j] = m[j * 16 + 5] = 400;
    CHECK(!strcmp(spec_of(m, 16, cpus, &c), "cpus:0-15"), "got %s", spec_of(m, 16, cpus, &c));

    /* too few CPUs: one node */
    m[0] = 0; m[1] = 120; m[2] = 118; m[3] = 0;
    CHECK(!strcmp(spec_of(m, 2, cpus, &c), "cpus:0-1") && c.k == 1, "got %s", spec_of(m, 2, cpus, &c));
    CHECK(nl_cluster_latency(m, 1, 1.5, &c) == 0 && c.k == 1, "one CPU");

    /* bad input */
    m[1] = NAN;
    CHECK(nl_cluster_latency(m, 2, 1.5, &c) == EINVAL, "NaN latency accepted");
    CHECK(nl_cluster_latency(m, 0, 1.5, &c) == EINVAL, "n = 0 accepted");

    /* noise does not flap the verdict: 200 noisy draws each */
    int flaps = 0;
    for (int s = 0; s < 200; s++) {
        for (int i = 0; i < 16; i++)
            group[i] = i / 8;
        synth(m, 16, group, 80, 190, 0.25);
        flaps += strcmp(spec_of(m, 16, cpus, &c), "cpus:0-7/8-15") != 0;
    }
    CHECK(flaps == 0, "clear clusters with 25%% noise: %d of 200 draws gave another spec", flaps);
    flaps = 0;
    for (int s = 0; s < 200; s++) {
        for (int i = 0; i < 16; i++)
            group[i] = 0;
        synth(m, 16, group, 190, 190, 0.25);
        flaps += strcmp(spec_of(m, 16, cpus, &c), "cpus:0-15") != 0;
    }
    CHECK(flaps == 0, "flat with 25%% noise: %d of 200 draws gave clusters", flaps);
    flaps = 0;
    for (int s = 0; s < 200; s++) { /* 4 sockets of 8, 32 CPUs */
        for (int i = 0; i < 32; i++)
            group[i] = i / 8;
        synth(m, 32, group, 60, 240, 0.3);
        flaps += strcmp(spec_of(m, 32, cpus, &c), "cpus:0-7/8-15/16-23/24-31") != 0;
    }
    CHECK(flaps == 0, "4 sockets with 30%% noise: %d of 200 draws gave another spec", flaps);
    printf("cluster: ok\n");
}

static void tmpname(char *buf, size_t len, const char *what)
{
    snprintf(buf, len, "%s/numalock-test-topo-%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid(), what);
}

static void test_store(void)
{
    char path[512], spec[4096], err[256];
    tmpname(path, sizeof path, "store");
    nl_c2c_t m = { .n = 4, .cpus = { 0, 1, 2, 3 }, .method = "cas", .rounds = 5, .trips = 100 };
    double ns[16] = { 0, 50, 150, 150, 50, 0, 150, 150, 150, 150, 0, 50, 150, 150, 50, 0 };
    m.ns = ns;
    nl_clusters_t c;
    CHECK(nl_cluster_latency(ns, 4, NL_CLUSTER_MIN_CLARITY, &c) == 0 && c.k == 2, "k %d", c.k);
    CHECK(nl_measured_store(path, &m, &c, err, sizeof err) == 0, "%s", err);
    int same[4] = { 0, 1, 2, 3 }, other[3] = { 0, 1, 2 };
    CHECK(nl_measured_load(path, same, 4, spec, sizeof spec) == 0 && !strcmp(spec, "cpus:0-1/2-3"), "spec %s", spec);
    CHECK(nl_measured_load(path, other, 3, spec, sizeof spec) == ESTALE, "another CPU set is stale");
    unlink(path);
    CHECK(nl_measured_load(path, same, 4, spec, sizeof spec) == ENOENT, "missing file");
    FILE *f = fopen(path, "w");
    fputs("not a measurement\n", f);
    fclose(f);
    CHECK(nl_measured_load(path, same, 4, spec, sizeof spec) == EINVAL, "garbage file");
    unlink(path);
    CHECK(nl_measured_store("/proc/nonexistent/x", &m, &c, err, sizeof err) != 0 &&
              strstr(err, "/proc/nonexistent/x"), "unwritable path: %s", err);
    printf("store: ok\n");
}

static void test_measured_spec(void)
{
    char path[512], err[512];
    tmpname(path, sizeof path, "measured");
    setenv("NUMALOCK_TOPOLOGY_FILE", path, 1);
    int cpus[NL_C2C_MAX_CPUS];
    int n = nl_affinity_cpus(cpus, NL_C2C_MAX_CPUS);
    unsigned char all[NL_C2C_MAX_CPUS];
    memset(all, 1, sizeof all);
    char list[4096];
    nl_cpulist_format(cpus, all, n, list, sizeof list);

    /* a stored measurement for this CPU set is used as it is: a spec no
     * measurement here would give (each CPU its own node) proves it */
    FILE *f = fopen(path, "w");
    fprintf(f, "numalock measured topology 1\ncpus %s\nspec cpus:", list);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "/" : "", cpus[i]);
    fprintf(f, "\nclusters %d\n", n);
    fclose(f);
    nl_topology_t t;
    CHECK(nl_topology_parse("measured", &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.nnodes == n && !strcmp(t.spec, "measured") && t.kind == NL_TOPO_CPUS, "nodes %d spec %s",
          t.nnodes, t.spec);
    CHECK(nl_topology_set("measured", err, sizeof err) == 0 && nl_topology_nodes() == n, "set: %s", err);

    /* stored for another CPU set: measured again, and the file rewritten */
    f = fopen(path, "w");
    fprintf(f, "numalock measured topology 1\ncpus 0-4095\nspec cpus:0/1\n");
    fclose(f);
    CHECK(nl_topology_parse("measured", &t, err, sizeof err) == 0, "%s", err);
    char spec[4096];
    CHECK(nl_measured_load(path, cpus, n, spec, sizeof spec) == 0, "file not rewritten for this CPU set");
    CHECK(t.nnodes >= 1 && !strcmp(t.spec, "measured"), "nodes %d", t.nnodes);
    if (n < 4) /* fewer than 4 CPUs never form clusters */
        CHECK(t.nnodes == 1, "%d CPUs gave %d nodes", n, t.nnodes);
    unlink(path);

    /* missing: measured and stored */
    CHECK(nl_topology_parse("measured", &t, err, sizeof err) == 0 && access(path, R_OK) == 0, "%s", err);
    int nodes = t.nnodes;
    unlink(path);
    unsetenv("NUMALOCK_TOPOLOGY_FILE");
    /* the error sentence lists measured among the valid forms */
    CHECK(nl_topology_parse("measure", &t, err, sizeof err) == EINVAL && strstr(err, "measured"), "%s", err);
    printf("measured: ok (%d CPUs, %d node%s)\n", n, nodes, nodes == 1 ? "" : "s");
}

static void test_measure(void)
{
    for (int method = 0; method < 2; method++) {
        nl_c2c_opts_t o = { .method = method ? "store" : "cas", .rounds = 3, .trips = 200, .budget_s = 2 };
        nl_c2c_t m;
        char err[256];
        CHECK(nl_c2c_measure(&o, &m, err, sizeof err) == 0, "%s", err);
        for (int i = 0; i < m.n; i++)
            for (int j = 0; j < m.n; j++) {
                double v = m.ns[i * m.n + j];
                if (i == j)
                    CHECK(v == 0, "diagonal %d: %f", i, v);
                else
                    CHECK(v > 0 && isfinite(v) && v == m.ns[j * m.n + i], "pair %d,%d: %f", i, j, v);
            }
        CHECK(m.rounds_min >= 1 && m.rounds_min <= 3, "rounds_min %d", m.rounds_min);
        printf("measure %s: %d CPUs, %.2f s", m.method, m.n, m.seconds);
        if (m.n > 1)
            printf(", cpu %d <-> %d: %.1f ns", m.cpus[0], m.cpus[1], m.ns[1]);
        printf("\n");
        nl_c2c_free(&m);
    }
    nl_c2c_opts_t bad = { .method = "xchg" };
    nl_c2c_t m;
    char err[256];
    CHECK(nl_c2c_measure(&bad, &m, err, sizeof err) == EINVAL && strstr(err, "xchg"), "%s", err);
}

static void test_cpulist(void)
{
    static const struct { const char *s; int n; int first, last; } cases[] = {
        { "0-3,8", 5, 0, 8 }, { "0", 1, 0, 0 }, { "1,0", 2, 1, 0 }, { "10-11,12", 3, 10, 12 },
        { "4095", 1, 4095, 4095 },
        /* bad: each must give -1 */
        { "", -1, 0, 0 }, { "3-", -1, 0, 0 }, { "0,", -1, 0, 0 }, { ",1", -1, 0, 0 },
        { "a", -1, 0, 0 }, { "3-1", -1, 0, 0 }, { "0-3,2", -1, 0, 0 }, { "4096", -1, 0, 0 },
        { "0-1-2", -1, 0, 0 }, { "0--1", -1, 0, 0 }, { "0 1", -1, 0, 0 }, { "0-20", -1, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int cpus[16];
        int n = nl_cpulist_parse(cases[i].s, strlen(cases[i].s), cpus, 16);
        CHECK(n == cases[i].n, "'%s': %d CPUs, expected %d", cases[i].s, n, cases[i].n);
        if (n > 0 && n == cases[i].n)
            CHECK(cpus[0] == cases[i].first && cpus[n - 1] == cases[i].last, "'%s': %d..%d", cases[i].s,
                  cpus[0], cpus[n - 1]);
    }
    /* the length bounds the list: "0-3" of "0-3/4-7" */
    int cpus[8];
    CHECK(nl_cpulist_parse("0-3/4-7", 3, cpus, 8) == 4, "a list inside a cpus: spec");
}

/* ---- levels: the sysfs reader on fixtures of real machines' layouts ------- */
/* A machine: per CPU its core, LLC group, cluster, node and package (group
 * ids; lists are written as sysfs writes them, the group's CPUs). */
typedef struct {
    const char *name;
    int ncpus;
    int core[256], llc[256], cluster[256], node[256], package[256];
} machine_t;

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(2);
    }
    fprintf(f, "%s\n", text);
    fclose(f);
}

/* the CPUs i with g[i] == v as a sysfs list ("0-3,64-67") */
static void group_list(const int *g, int n, int v, char *out, size_t len)
{
    size_t off = 0;
    out[0] = 0;
    for (int c = 0; c < n; c++) {
        if (g[c] != v)
            continue;
        int e = c;
        while (e + 1 < n && g[e + 1] == v)
            e++;
        off += (size_t)snprintf(out + off, len - off, "%s%d", off ? "," : "", c);
        if (e > c)
            off += (size_t)snprintf(out + off, len - off, "-%d", e);
        c = e;
    }
}

static void mkdirs(const char *path)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static void write_machine(const char *root, const machine_t *m)
{
    char path[512], list[2048];
    snprintf(path, sizeof path, "%s/devices/system/cpu", root);
    mkdirs(path);
    snprintf(path, sizeof path, "%s/devices/system/cpu/present", root);
    snprintf(list, sizeof list, "0-%d", m->ncpus - 1);
    write_file(path, list);
    int maxnode = 0;
    for (int c = 0; c < m->ncpus; c++) {
        char dir[512];
        snprintf(dir, sizeof dir, "%s/devices/system/cpu/cpu%d/topology", root, c);
        mkdirs(dir);
        static const struct { const char *file; int which; } topo[] = {
            { "thread_siblings_list", 0 }, { "cluster_cpus_list", 2 },
            { "die_cpus_list", 4 }, { "package_cpus_list", 4 }, { "core_siblings_list", 4 },
        };
        for (size_t i = 0; i < sizeof topo / sizeof topo[0]; i++) {
            const int *g = topo[i].which == 0 ? m->core : topo[i].which == 2 ? m->cluster : m->package;
            group_list(g, m->ncpus, g[c], list, sizeof list);
            snprintf(path, sizeof path, "%s/%s", dir, topo[i].file);
            write_file(path, list);
        }
        /* L1d, L1i, L2 per core; L3 per LLC group */
        static const struct { int level; const char *type; } caches[] = {
            { 1, "Data" }, { 1, "Instruction" }, { 2, "Unified" }, { 3, "Unified" },
        };
        for (int i = 0; i < 4; i++) {
            snprintf(dir, sizeof dir, "%s/devices/system/cpu/cpu%d/cache/index%d", root, c, i);
            mkdirs(dir);
            char v[16];
            snprintf(v, sizeof v, "%d", caches[i].level);
            snprintf(path, sizeof path, "%s/level", dir);
            write_file(path, v);
            snprintf(path, sizeof path, "%s/type", dir);
            write_file(path, caches[i].type);
            const int *g = i < 3 ? m->core : m->llc;
            group_list(g, m->ncpus, g[c], list, sizeof list);
            snprintf(path, sizeof path, "%s/shared_cpu_list", dir);
            write_file(path, list);
        }
        if (m->node[c] > maxnode)
            maxnode = m->node[c];
    }
    for (int n = 0; n <= maxnode; n++) {
        snprintf(path, sizeof path, "%s/devices/system/node/node%d", root, n);
        mkdirs(path);
        group_list(m->node, m->ncpus, n, list, sizeof list);
        snprintf(path, sizeof path, "%s/devices/system/node/node%d/cpulist", root, n);
        write_file(path, list);
    }
}

/* what the reader must find: levels finest first, "name:domains" */
static void check_levels(const machine_t *m, const char *want, int want_nodes)
{
    char root[] = "/tmp/nl_sysfs_XXXXXX";
    if (!mkdtemp(root)) {
        CHECK(0, "mkdtemp");
        return;
    }
    write_machine(root, m);
    char spec[128], err[512];
    snprintf(spec, sizeof spec, "sysfs:%s", root);
    static nl_topology_t t;
    int rc = nl_topology_parse(spec, &t, err, sizeof err);
    CHECK(rc == 0, "%s: %s", m->name, err);
    char got[256] = "";
    size_t off = 0;
    for (int l = 0; rc == 0 && l < t.nlevels; l++)
        off += (size_t)snprintf(got + off, sizeof got - off, "%s%s:%d", l ? " " : "", t.level_name[l],
                                t.ndomains[l]);
    CHECK(!strcmp(got, want), "%s: levels '%s', expected '%s'", m->name, got, want);
    CHECK(t.nnodes == want_nodes, "%s: %d nodes, expected %d", m->name, t.nnodes, want_nodes);
    /* every CPU's leaf lies in its node, and each level nests in the next */
    for (int c = 0; rc == 0 && c < m->ncpus; c++) {
        int leaf = t.cpu_to_leaf[c];
        CHECK(leaf >= 0 && t.up[t.node_level][leaf] == t.cpu_to_node[c], "%s: CPU %d leaf %d not in node %d",
              m->name, c, leaf, t.cpu_to_node[c]);
    }
    printf("topo levels: %s: %s (%d nodes)\n", m->name, got, t.nnodes);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
}

static void test_levels(void)
{
    static machine_t m;
    /* AMD EPYC (Zen 2), 2 sockets in NPS1 (a node per socket), 8 CCXs of 4
     * cores per socket, SMT 2: CPUs 0-63 the cores' first threads, 64-127
     * their siblings; an L3 per CCX; x86 reports a cluster per core */
    memset(&m, 0, sizeof m);
    m.name = "EPYC 2x64 NPS1, 8 CCX per node";
    m.ncpus = 128;
    for (int c = 0; c < 128; c++) {
        int core = c % 64;
        m.core[c] = core;
        m.llc[c] = core / 4;
        m.cluster[c] = core;
        m.node[c] = core / 32;
        m.package[c] = core / 32;
    }
    check_levels(&m, "cache:16 node:2", 2);
    /* Intel Xeon, 2 sockets with sub-NUMA clustering (2 nodes per socket),
     * 16 cores per socket, SMT 2; one L3 per socket (wider than a node) */
    memset(&m, 0, sizeof m);
    m.name = "Xeon 2x32 SNC2";
    m.ncpus = 64;
    for (int c = 0; c < 64; c++) {
        int core = c % 32;
        m.core[c] = core;
        m.llc[c] = core / 16;
        m.cluster[c] = core;
        m.node[c] = core / 8;
        m.package[c] = core / 16;
    }
    check_levels(&m, "node:4 package:2", 4);
    /* ARM server (Kunpeng 920 layout), 1 socket, 2 nodes of 32 cores, no
     * SMT, clusters of 4 cores sharing an L2, one L3 per node */
    memset(&m, 0, sizeof m);
    m.name = "ARM 64 cores, 2 nodes, clusters of 4";
    m.ncpus = 64;
    for (int c = 0; c < 64; c++) {
        m.core[c] = c;
        m.llc[c] = c / 32;
        m.cluster[c] = c / 4;
        m.node[c] = c / 32;
        m.package[c] = 0;
    }
    check_levels(&m, "cluster:16 node:2", 2);
    /* a machine without levels beside its nodes: one level */
    memset(&m, 0, sizeof m);
    m.name = "2 CPUs, one node";
    m.ncpus = 2;
    for (int c = 0; c < 2; c++) {
        m.core[c] = c;
        m.llc[c] = 0;
        m.cluster[c] = c;
        m.node[c] = 0;
        m.package[c] = 0;
    }
    check_levels(&m, "node:1", 1);
}

/* ---- virtual hierarchies and bad specs --------------------------------------- */
static void test_virtual_levels(void)
{
    static nl_topology_t t;
    char err[512];
    CHECK(nl_topology_parse("virtual:2x2", &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.nlevels == 2 && t.node_level == 1 && t.nnodes == 2 && t.ndomains[0] == 4 &&
              !strcmp(t.level_name[0], "cache") && !strcmp(t.level_name[1], "node"),
          "virtual:2x2: %d levels, node level %d, %d nodes", t.nlevels, t.node_level, t.nnodes);
    CHECK(t.up[1][0] == 0 && t.up[1][1] == 0 && t.up[1][2] == 1 && t.up[1][3] == 1, "virtual:2x2 nesting");
    CHECK(nl_topology_parse("virtual:2x2x4", &t, err, sizeof err) == 0, "%s", err);
    CHECK(t.nlevels == 3 && t.nnodes == 4 && t.ndomains[0] == 16 && t.ndomains[2] == 2 &&
              !strcmp(t.level_name[2], "package") && t.up[2][15] == 1 && t.up[1][15] == 3,
          "virtual:2x2x4: %d levels, %d nodes", t.nlevels, t.nnodes);
    CHECK(nl_topology_parse("virtual:3", &t, err, sizeof err) == 0 && t.nlevels == 1 && t.nnodes == 3 &&
              !strcmp(t.level_name[0], "node"), "virtual:3 is one level of 3 nodes");
    const char *bad[] = { "virtual:2x0", "virtual:2x", "virtual:x2", "virtual:2x2x2x2x2", "virtual:65x2",
                          "virtual:1x2000", "virtual:2y2", "sysfs:", "sysfs:/nonexistent-dir" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = nl_topology_parse(bad[i], &t, err, sizeof err);
        CHECK(rc == EINVAL && strstr(err, bad[i]) && strstr(err, "valid forms"),
              "'%s' is refused with one sentence naming it and the valid forms: %s", bad[i], err);
    }
    /* the calling thread's domains, round-robin over the leaves */
    CHECK(nl_topology_set("virtual:2x2", err, sizeof err) == 0, "%s", err);
    int leaf = nl_current_domain(0), node = nl_current_domain(1);
    CHECK(leaf >= 0 && leaf < 4 && node == leaf / 2 && node == nl_current_node() && nl_current_domain(2) == -1,
          "thread domains: leaf %d node %d", leaf, node);
    nl_topology_set("auto", err, sizeof err);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "cpulist"))
        test_cpulist();
    if (all || !strcmp(what, "cluster"))
        test_cluster();
    if (all || !strcmp(what, "store"))
        test_store();
    if (all || !strcmp(what, "measured"))
        test_measured_spec();
    if (all || !strcmp(what, "measure"))
        test_measure();
    if (all || !strcmp(what, "levels"))
        test_levels();
    if (all || !strcmp(what, "virtual"))
        test_virtual_levels();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}

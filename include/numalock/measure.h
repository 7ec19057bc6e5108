/*
 * Topology found by measurement: core-to-core one-way latency for
 * every CPU pair (measured.c), CPUs clustered by latency (cluster.c), and the
 * stored measurement behind `--topology measured`.
 *
 * Public (the command uses public headers only): `numalock topo
 * --measure` and `--topology measured` are built on it, and a program can
 * measure and cluster its own CPU set the same way.
 */
#ifndef NL_TOPOLOGY_MEASURE_H
#define NL_TOPOLOGY_MEASURE_H

#include <stddef.h>
#include "topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A clustering is accepted only when the median latency between clusters is
 * at least this many times the median within clusters. */
#define NL_CLUSTER_MIN_CLARITY 1.5
/* The largest CPU set measured or clustered. */
#define NL_C2C_MAX_CPUS 512

/* ---- clustering (cluster.c): pure functions, no I/O --------------------- */
typedef struct nl_clusters {
    int n;             /* CPUs clustered */
    int k;             /* clusters: 1 when there is no clear structure */
    int label[NL_C2C_MAX_CPUS]; /* cluster of CPU index i, 0..k-1; cluster 0 holds index 0 */
    double clarity;    /* median between / median within of the chosen partition;
                        * for k == 1 the best rejected candidate's figure (0 if none) */
    double within_ns;  /* medians of the chosen (or best rejected) partition */
    double between_ns;
    int candidate_k;   /* cluster count of the best candidate (rejected when k == 1) */
    char why[160];     /* one sentence when k == 1: why there is no clear clustering */
} nl_clusters_t;

/* Cluster n CPUs by the symmetric latency matrix ns (n*n, row major, the
 * diagonal ignored; ns[i*n+j] and ns[j*n+i] are averaged). Average-linkage
 * agglomeration; of the partitions into 2..n/2 clusters of at least 2 CPUs,
 * the one with the largest clarity is kept if clarity >= min_clarity, else one
 * cluster. Deterministic (ties go to the lowest indices). 0, or EINVAL. */
NL_API int nl_cluster_latency(const double *ns, int n, double min_clarity, nl_clusters_t *out);

/* The `cpus:` spec of a clustering of the given CPU ids ("cpus:0-7/8-15"):
 * clusters in the order of their lowest CPU, compact ranges. Returns the
 * length it needed (as snprintf). */
NL_API size_t nl_cluster_spec(const nl_clusters_t *c, const int *cpus, char *buf, size_t len);

/* A second level beside a clustering, where the data shows one: the
 * clusters clustered on their median latencies to each other (a level
 * above), else every cluster of at least 4 CPUs clustered on its own
 * latencies, each splitting clearly (a level below). node[i] and leaf[i]:
 * the coarser and the finer domain of CPU index i (dense, in order of first
 * CPU). Returns the number of coarser domains, or 0 when there is no second
 * level. */
NL_API int nl_cluster_levels(const double *ns, int n, const nl_clusters_t *c, double min_clarity, int *node,
                             int *leaf);
/* The cpus: spec of two levels: nodes separated by '/', each node's finer
 * domains by '|' ("cpus:0-1|2-3/4-5|6-7"). */
NL_API size_t nl_cluster_spec_levels(const int *node, const int *leaf, int n, const int *cpus, char *buf,
                                     size_t len);

/* A compact CPU list ("0-3,8") of the CPU ids with mark[i] set, in order. */
NL_API size_t nl_cpulist_format(const int *cpus, const unsigned char *mark, int n, char *buf, size_t len);

/* ---- measurement (measured.c) -------------------------------------------- */
typedef struct nl_c2c_opts {
    const char *method;  /* "cas" (default) or "store" */
    int rounds;          /* rounds per pair, the best kept (default 5) */
    int trips;           /* round trips per round (default 1000) */
    double budget_s;     /* bound on the whole measurement (default 10 s) */
    const int *cpus;     /* CPUs to measure, NULL: the process's affinity set */
    int ncpus;
    /* called after each pair (done of total), from the calling thread */
    void (*progress)(void *arg, int done, int total, double elapsed_s);
    void *progress_arg;
} nl_c2c_opts_t;

typedef struct nl_c2c {
    int n;
    int cpus[NL_C2C_MAX_CPUS];
    double *ns;          /* n*n one-way latency in ns, diagonal 0 (malloc'd) */
    char method[8];
    int rounds;          /* rounds asked for per pair */
    int rounds_min;      /* fewest rounds a pair got (the time budget may cut rounds) */
    int trips;
    double seconds;      /* wall time of the measurement */
} nl_c2c_t;

/* Measure every pair of the CPU set. 0, or an errno with one sentence in err. */
NL_API int nl_c2c_measure(const nl_c2c_opts_t *o, nl_c2c_t *out, char *err, size_t errlen);
NL_API void nl_c2c_free(nl_c2c_t *m);

/* The CPUs this process may run on, increasing; returns the count (>= 1). */
NL_API int nl_affinity_cpus(int *cpus, int max);

/* ---- the stored measurement ---------------------------------------------- */
/* Path of the stored measurement: $NUMALOCK_TOPOLOGY_FILE, else
 * $XDG_CACHE_HOME/numalock/measured-topology, else ~/.cache/numalock/..., else
 * /tmp/numalock-measured-topology-UID. */
NL_API const char *nl_measured_path(char *buf, size_t len);
/* Write a measurement and its clustering (text; atomically replaced). 0 or errno. */
NL_API int nl_measured_store(const char *path, const nl_c2c_t *m, const nl_clusters_t *c, char *err, size_t errlen);
/* Read the stored spec if its CPU set equals cpus[0..n-1]: 0; ENOENT when
 * absent, ESTALE when measured on another CPU set, EINVAL when unreadable. */
NL_API int nl_measured_load(const char *path, const int *cpus, int n, char *spec, size_t speclen);
/* `--topology measured`: the stored spec for this CPU set, measuring (and
 * storing) first when there is none. Fills *out like nl_topology_parse with
 * spec "measured". 0 or errno with err set. */
NL_API int nl_topology_parse_measured(nl_topology_t *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif

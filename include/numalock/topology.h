/*
 * numalock topology: which NUMA node a thread runs on, and its place in the
 * machine's hierarchy of domains (cache domain, node, package).
 *
 * Specs:
 *   auto                     real nodes from /sys/devices/system/node (one node if absent),
 *                            with the levels sysfs shows around them: last-level-cache
 *                            domains and clusters, dies, packages (those that nest)
 *   sysfs:DIR                the same, read from a copy of a machine's /sys under DIR
 *                            (DIR/devices/system/...): what numalock would see there
 *   virtual:N                N virtual nodes (1..NL_MAX_NODES); threads are assigned
 *                            round-robin in the order they first ask for their node
 *   virtual:NxM              N virtual nodes of M cache domains each (more factors: more
 *                            levels, coarsest first: virtual:2x2x4 is 2 packages of 2 nodes
 *                            of 4 cache domains); threads go round-robin over the finest
 *   cpus:0-7,16-23/8-15,...  explicit CPU lists, one per node, separated by '/'
 *   measured                 the CPU clusters found by core-to-core latency (`numalock topo
 *                            --measure`; stored, measured again when the CPU set differs)
 * Chosen by nl_topology_set(), `--topology` on the command line, or NUMALOCK_TOPOLOGY.
 */
#ifndef NUMALOCK_TOPOLOGY_H
#define NUMALOCK_TOPOLOGY_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_MAX_NODES 64
#define NL_MAX_CPUS 4096
#define NL_MAX_LEVELS 4     /* levels of domains below the whole machine */
#define NL_MAX_LEAVES 1024  /* domains of the finest level */

enum { NL_TOPO_AUTO = 0, NL_TOPO_VIRTUAL = 1, NL_TOPO_CPUS = 2 };

typedef struct nl_topology {
    int kind;                       /* NL_TOPO_* */
    int nnodes;                     /* >= 1 */
    int ncpus;                      /* size of cpu_to_node */
    char spec[128];                 /* canonical spec */
    int16_t cpu_to_node[NL_MAX_CPUS]; /* -1 for CPUs that are absent */
    /* The hierarchy, finest level first; every domain lies inside one domain
     * of each coarser level. Without levels below or above the nodes it is
     * one level, the nodes (leaf d = node d). */
    int nlevels;                    /* 1..NL_MAX_LEVELS */
    int node_level;                 /* the level whose domains are the nodes */
    int ndomains[NL_MAX_LEVELS];
    char level_name[NL_MAX_LEVELS][12]; /* "cache", "cluster", "die", "node", "package", "group" */
    int16_t cpu_to_leaf[NL_MAX_CPUS];   /* domain of the finest level, -1 absent */
    int16_t up[NL_MAX_LEVELS][NL_MAX_LEAVES]; /* up[l][d]: the level-l domain of leaf d */
} nl_topology_t;

/* Parse a spec into *out. Returns 0, or EINVAL with one sentence in err that
 * names the bad value and the valid forms. */
NL_API int nl_topology_parse(const char *spec, nl_topology_t *out, char *err, size_t errlen);
/* Make spec the process-wide topology (threads re-read their node). */
NL_API int nl_topology_set(const char *spec, char *err, size_t errlen);
/* The process-wide topology (from NUMALOCK_TOPOLOGY on first use, else auto). */
NL_API const nl_topology_t *nl_topology_current(void);
/* Error from a bad NUMALOCK_TOPOLOGY (the library fell back to auto), or NULL. */
NL_API const char *nl_topology_env_error(void);
NL_API int nl_topology_nodes(void);
/* A CPU list of `len` bytes ("0-3,8,10-11": CPUs and ranges, comma-separated,
 * as in sysfs and in cpus: specs) into cpus[] in the order written. Returns
 * the count, or -1 on a syntax error, a CPU at or above NL_MAX_CPUS, a CPU
 * named twice, or more than max CPUs. */
NL_API int nl_cpulist_parse(const char *s, size_t len, int *cpus, int max);

/* Node of the calling thread: cached, refreshed every NL_NODE_REFRESH calls
 * (real topologies) -- cheap enough for lock slow paths. */
NL_API int nl_current_node(void);
/* Pin the calling thread's node (benchmarks with virtual topologies); -1 undoes. */
NL_API void nl_thread_set_node(int node);
/* Pin the calling thread's domain of the finest level (its node follows);
 * -1 undoes. */
NL_API void nl_thread_set_leaf(int leaf);
/* The calling thread's domain at `level` of the current topology (0: the
 * finest; nl_topology_current()->node_level: its node); -1 for a level the
 * topology does not have. */
NL_API int nl_current_domain(int level);

#ifdef __cplusplus
}
#endif
#endif

/*
 * numalock topology: which NUMA node a thread runs on.
 *
 * Specs:
 *   auto                     real nodes from /sys/devices/system/node (one node if absent)
 *   virtual:N                N virtual nodes (1..NL_MAX_NODES); threads are assigned
 *                            round-robin in the order they first ask for their node
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

enum { NL_TOPO_AUTO = 0, NL_TOPO_VIRTUAL = 1, NL_TOPO_CPUS = 2 };

typedef struct nl_topology {
    int kind;                       /* NL_TOPO_* */
    int nnodes;                     /* >= 1 */
    int ncpus;                      /* size of cpu_to_node */
    char spec[128];                 /* canonical spec */
    int16_t cpu_to_node[NL_MAX_CPUS]; /* -1 for CPUs that are absent */
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

#ifdef __cplusplus
}
#endif
#endif

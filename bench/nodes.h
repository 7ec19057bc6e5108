/* The machine's NUMA nodes as the benchmarks see them: how many there are,
 * and memory placed on one of them. bench/nodes.c reads sysfs and uses
 * libnuma where the build found it; the simulator (sim/bench_numa.c) answers
 * for its modelled machine. */
#ifndef NL_BENCH_NODES_H
#define NL_BENCH_NODES_H

#include <stddef.h>

/* nodes of the machine (sysfs), at least 1 */
int bench_real_nodes(void);
/* 1 if node n exists */
int bench_node_exists(int n);
/* 0 if memory can be placed on one of several nodes; else one sentence in err */
int bench_numa_usable(char *err, size_t len);
/* zeroed, page-aligned memory on node (-1: anywhere); *placed says whether
 * it was placed (free it with bench_free_on_node) */
void *bench_alloc_on_node(size_t bytes, int node, int *placed);
void bench_free_on_node(void *m, size_t bytes, int placed);
/* the node of the page at m, -1 if it cannot be told */
int bench_page_node(void *m);

#endif

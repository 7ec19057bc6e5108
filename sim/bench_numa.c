/* bench/nodes.h for the simulated machine: its sockets are the nodes, and
 * memory placed on one has its lines' home there (memory.c). */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "../bench/nodes.h"

int bench_real_nodes(void) { return sim_m.sockets; }
int bench_node_exists(int n) { return n >= 0 && n < sim_m.sockets; }

int bench_numa_usable(char *err, size_t len)
{
    (void)err;
    (void)len;
    return 0;
}

void *bench_alloc_on_node(size_t bytes, int node, int *placed)
{
    void *m = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    *placed = 0;
    if (!m)
        return NULL;
    memset(m, 0, bytes);
    if (node >= 0) {
        sim_mem_home(m, bytes, node);
        *placed = 1;
    }
    return m;
}

void bench_free_on_node(void *m, size_t bytes, int placed)
{
    (void)bytes;
    if (placed)
        sim_mem_unhome(m);
    free(m);
}

int bench_page_node(void *m) { return sim_mem_home_of(m); }

/* bench/nodes.h on Linux: sysfs, and libnuma where the build found it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "nodes.h"
#include "numalock/topology.h"
#ifdef NL_HAVE_LIBNUMA
#include <numa.h>
#endif

int bench_real_nodes(void)
{
    static nl_topology_t real;
    nl_topology_parse("auto", &real, NULL, 0);
    return real.nnodes > 0 ? real.nnodes : 1;
}

int bench_node_exists(int n)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/node/node%d", n);
    return access(path, F_OK) == 0 || (n == 0 && bench_real_nodes() == 1);
}

int bench_numa_usable(char *err, size_t len)
{
#ifdef NL_HAVE_LIBNUMA
    if (numa_available() < 0) {
        snprintf(err, len, "libnuma reports no NUMA support here");
        return -1;
    }
    return 0;
#else
    snprintf(err, len, "placing memory on one of %d nodes needs libnuma (install libnuma-dev and rebuild)",
             bench_real_nodes());
    return -1;
#endif
}

void *bench_alloc_on_node(size_t bytes, int node, int *placed)
{
    *placed = 0;
#ifdef NL_HAVE_LIBNUMA
    if (node >= 0 && bench_real_nodes() > 1) {
        void *m = numa_alloc_onnode(bytes, node);
        if (m) {
            *placed = 1;
            memset(m, 0, bytes); /* first touch: the pages land on the chosen node */
        }
        return m;
    }
#else
    (void)node;
#endif
    void *m = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (m)
        memset(m, 0, bytes);
    return m;
}

void bench_free_on_node(void *m, size_t bytes, int placed)
{
#ifdef NL_HAVE_LIBNUMA
    if (placed) {
        numa_free(m, bytes);
        return;
    }
#endif
    (void)bytes;
    (void)placed;
    free(m);
}

int bench_page_node(void *m)
{
#ifdef NL_HAVE_LIBNUMA
    if (numa_available() >= 0) {
        int status = -1;
        void *pages[1] = { m };
        if (numa_move_pages(0, 1, pages, NULL, &status, 0) == 0 && status >= 0)
            return status;
    }
#else
    (void)m;
#endif
    return bench_real_nodes() == 1 ? 0 : -1;
}

/*
 * The hierarchy of a topology (levels.c; not installed): the levels of
 * domains from sysfs, from a virtual spec's factors, or the nodes alone.
 */
#ifndef NL_TOPOLOGY_LEVELS_H
#define NL_TOPOLOGY_LEVELS_H

#include "numalock/topology.h"
#include "../core/self.h"

/* One level: the nodes (leaf d = node d). */
NL_HIDDEN void nl_levels_flat(nl_topology_t *t);
/* The levels that nest with t's nodes, read from the sysfs tree at `sys`
 * ("/sys", or a copy of one). */
NL_HIDDEN void nl_levels_sysfs(nl_topology_t *t, const char *sys);
/* Two levels: leaf d (CPU map already in t->cpu_to_leaf) inside node
 * leaf_node[d] (cpus: specs with cache domains, measured hierarchies). */
NL_HIDDEN void nl_levels_groups(nl_topology_t *t, const int16_t *leaf_node, int nleaves);
/* factor[0..nf) coarsest first (1 <= nf <= NL_MAX_LEVELS; the product at
 * most NL_MAX_LEAVES): the levels, nnodes; returns the number of leaves. */
NL_HIDDEN int nl_levels_virtual(nl_topology_t *t, const long *factor, int nf);

#endif

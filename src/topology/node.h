/*
 * The calling thread's node, cached in its record (not installed).
 * Layer: above src/core/self.h, below src/wait and the locks.
 */
#ifndef NL_TOPOLOGY_NODE_H
#define NL_TOPOLOGY_NODE_H

#include "../core/self.h"

/* Topology generation (bumped by nl_topology_set). */
NL_HIDDEN extern _Atomic uint32_t nl_topo_gen;

/* Node of the calling thread, using the thread record directly. */
NL_HIDDEN int nl_self_node_refresh(nl_self_t *s);
static inline int nl_self_node(nl_self_t *s)
{
    if (NL_LIKELY(s->refresh != 0 &&
                  s->topo_gen == atomic_load_explicit(&nl_topo_gen, memory_order_relaxed))) {
        s->refresh--;
        return s->node;
    }
    return nl_self_node_refresh(s);
}

/* Domain of the finest level of the calling thread (the topology's leaf). */
static inline int nl_self_leaf(nl_self_t *s)
{
    nl_self_node(s);
    return s->leaf;
}

#endif

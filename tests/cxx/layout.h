/*
 * The public structs' layout, item by item: compiled once as C (layout.c)
 * and once as C++ (test_cxx.cpp), which compares the two lists. ALIGNOF is
 * _Alignof in C and alignof in C++; the header's NL_ATOMIC(T) must give both
 * languages the same sizes, alignments and offsets.
 */
#include <stddef.h>
#include "numalock/numalock.h"
#include "numalock/spinlocks.h"
#include "numalock/cna.h"
#include "numalock/cst.h"
#include "numalock/lockref.h"
#include "numalock/topology.h"

#define NL_LAYOUT_TYPE(X, ALIGNOF, T) X(sizeof(T)) X(ALIGNOF(T))
#define NL_LAYOUT_ITEMS(X, ALIGNOF)                                                                       \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_attr_t) X(offsetof(nl_attr_t, local_passes))                            \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_lock_ops_t) X(offsetof(nl_lock_ops_t, init))                            \
    X(offsetof(nl_lock_ops_t, bytes_at_nodes))                                                            \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_stats_snapshot_t)                                                       \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_stats_t) X(offsetof(nl_stats_t, contended))                             \
    X(offsetof(nl_stats_t, read_acquisitions)) X(offsetof(nl_stats_t, last_thread))                      \
    X(offsetof(nl_stats_t, last_node))                                                                    \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_tas_t) NL_LAYOUT_TYPE(X, ALIGNOF, nl_ttas_t)                            \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_ticket_t) X(offsetof(nl_ticket_t, owner))                               \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_mcs_node_t) X(offsetof(nl_mcs_node_t, granted))                         \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_mcs_t) NL_LAYOUT_TYPE(X, ALIGNOF, nl_hbo_t)                             \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_qspinlock_t)                                                            \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_cna_node_t) X(offsetof(nl_cna_node_t, next))                            \
    X(offsetof(nl_cna_node_t, sec_tail)) X(offsetof(nl_cna_node_t, since))                                \
    X(offsetof(nl_cna_node_t, numa)) NL_LAYOUT_TYPE(X, ALIGNOF, nl_cna_t)                                 \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_cst_mutex_t) X(offsetof(nl_cst_mutex_t, snodes))                        \
    X(offsetof(nl_cst_mutex_t, present)) X(offsetof(nl_cst_mutex_t, local_passes))                       \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_cst_rwsem_t) X(offsetof(nl_cst_rwsem_t, writers))                       \
    X(offsetof(nl_cst_rwsem_t, reserved)) X(offsetof(nl_cst_rwsem_t, rhead))                              \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_lockref_t) NL_LAYOUT_TYPE(X, ALIGNOF, nl_lockref_stats_t)               \
    NL_LAYOUT_TYPE(X, ALIGNOF, nl_topology_t) X(offsetof(nl_topology_t, spec))                            \
    X(offsetof(nl_topology_t, cpu_to_node))

typedef struct nl_layout_item {
    const char *what;
    size_t value;
} nl_layout_item_t;

#ifdef __cplusplus
extern "C"
#else
extern
#endif
    const nl_layout_item_t nl_c_layout[];

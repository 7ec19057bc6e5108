/* The node table of the 4-byte queue locks (tail_nodes.h). */
#include <stdlib.h>
#include <string.h>
#include "tail_nodes.h"

_Atomic(nl_tail_block_t *) nl_tail_blocks[NL_MAX_THREADS];
_Atomic uint32_t nl_qs_max_nodes = NL_TAIL_NODES;

/* only the thread holding `slot` gets here: no race on the slot */
nl_tail_block_t *nl_tail_block_slow(int slot)
{
    nl_tail_block_t *b = nl_forever_alloc(sizeof *b); /* zeroed; a handler may be the first to queue */
    if (!b)
        return NULL;
    /* unrolled: a model checker that bounds every loop (verify/wmm, qspinlock
     * and shfl) then bounds the waits it checks, not this set-up */
#pragma GCC unroll 4
    for (uint32_t i = 0; i < NL_TAIL_NODES; i++)
        b->node[i].code = nl_tail_encode(slot, i);
    atomic_store_explicit(&nl_tail_blocks[slot], b, memory_order_release);
    return b;
}

/*
 * The one door from tests/ into the library's internals. A test that needs
 * more than the public headers includes this file; no test includes a src/
 * header or declares a hidden symbol of its own.
 *
 * Always available (no src/ include path needed): declarations checked
 * against the library at link time (the tests link numalock_static, where
 * hidden symbols resolve), and the qspinlock word layout, checked by
 * test_cna's word-level cases.
 * By section: a test that needs a src/ header defines the section's macro
 * (NL_TEST_WAIT, NL_SANL_BROKEN_DROP) and its target gets
 * ${CMAKE_SOURCE_DIR}/src as a PRIVATE include directory.
 *
 * When src/ gets a private header that declares one of the copies below
 * (say the qspinlock word layout), include it here and drop the copy.
 */
#ifndef NL_TEST_INTERNAL_H
#define NL_TEST_INTERNAL_H

#include <stdint.h>
#include "numalock/numalock.h"

/* Ops tables of the locks (one per src/locks file), registered or not: stress_cna
 * puts a lock through the harness before it enters src/registry.c. */
extern const nl_lock_ops_t nl_ops_cna, nl_ops_cna_opt, nl_ops_qspinlock, nl_ops_qspinlock_cna,
    nl_ops_c_bo_mcs, nl_ops_c_tkt_tkt, nl_ops_hmcs;

/* qspinlock (src/locks/qspinlock.c): queue nodes a thread may use at once;
 * 0 drives every contended acquisition through the spin-on-the-word
 * fallback. Hidden in the shared library. */
extern _Atomic uint32_t nl_qs_max_nodes;

/* The qspinlock word (src/locks/qspinlock.c, QS_*): the Linux layout of
 * include/numalock/cna.h plus numalock's no-steal bit. */
#define NL_TEST_QS_LOCKED 1u              /* value of the locked byte when held */
#define NL_TEST_QS_LOCKED_MASK 0xffu      /* the locked byte                    */
#define NL_TEST_QS_PENDING (1u << 8)      /* a waiter spins on the word         */
#define NL_TEST_QS_NOSTEAL (1u << 9)      /* the pending waiter's patience ran out */
/* tail: (thread slot + 1) in bits 18-31, the slot's node index in bits 16-17 */
#define NL_TEST_QS_TAIL(slot, idx) (((uint32_t)(slot) + 1u) << 18 | (uint32_t)(idx) << 16)

/* The waiting design (src/wait/wait.h), for tests/test_wait.c: the target
 * defines NL_TEST_WAIT and gets src/ as a PRIVATE include directory. */
#ifdef NL_TEST_WAIT
#include "wait/wait.h"
#include "wait/load.h"
#include "wait/knobs.h"
static inline uint64_t nl_test_self_parks(void) { return nl_self()->wc.parks; }
static inline uint64_t nl_test_self_gate_waits(void) { return nl_self()->wc.gate_parks; }
#endif

/* The futex calls and their paths (src/wait/futex.h, src/core/machine.h),
 * for tests/test_futex.c: the target defines NL_TEST_FUTEX and gets src/. */
#ifdef NL_TEST_FUTEX
#include "wait/futex.h"
#endif

/* SANL's implementation (src/locks/sanl_impl.h), for test_delegation_broken,
 * which compiles the algorithm into the test with a deliberate bug
 * (NL_SANL_BROKEN_DROP); that target gets src/ as a PRIVATE include directory. */
#ifdef NL_SANL_BROKEN_DROP
#include "locks/sanl_impl.h"
#endif

#endif

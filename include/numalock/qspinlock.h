/*
 * The qspinlock (include/numalock/cna.h includes this header): the Linux
 * 4-byte qspinlock layout (locked byte, pending bit, queue tail encoded
 * from a thread slot and a nesting index). It fits any 4-byte field;
 * all-zero is unlocked; the unlock is one store and may be done by any
 * thread. nl_qspin_* queue with MCS, nl_qspin_cna_* with CNA (whose
 * fairness rule is CNA's, numalock/cna.h: nl_cna_set_fairness). Do not mix
 * the two families on one lock.
 */
#ifndef NUMALOCK_QSPINLOCK_H
#define NUMALOCK_QSPINLOCK_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- qspinlock ----------------------------------------------------------- */
typedef struct { NL_ATOMIC(uint32_t) val; } nl_qspinlock_t;
#define NL_QSPINLOCK_INIT { 0 }

/* Inline fast paths (NL_INLINE): lock = one CAS of a zero word, unlock = one
 * store of zero into the locked byte, from any thread; the slow paths (val =
 * the word the CAS found) are in the library. */
NL_API void nl_qspin_lock_slow(nl_qspinlock_t *l, uint32_t val);
NL_API void nl_qspin_cna_lock_slow(nl_qspinlock_t *l, uint32_t val);
NL_INLINE void nl_qspin_lock(nl_qspinlock_t *l)
{
    uint32_t val = 0;
    if (__builtin_expect(NL_ATOMIC_CAS(&l->val, &val, 1u, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_qspin_lock_slow(l, val);
}
NL_INLINE void nl_qspin_cna_lock(nl_qspinlock_t *l)
{
    uint32_t val = 0;
    if (__builtin_expect(NL_ATOMIC_CAS(&l->val, &val, 1u, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_qspin_cna_lock_slow(l, val);
}
/* The unlock clears the locked byte with one byte store where the byte is
 * the word's first (little-endian); a build whose memory model has no
 * mixed-size accesses defines NL_QSPIN_BYTE_UNLOCK as 0 for the word-wide
 * form. */
#ifndef NL_QSPIN_BYTE_UNLOCK
#define NL_QSPIN_BYTE_UNLOCK (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
#endif
NL_INLINE void nl_qspin_unlock(nl_qspinlock_t *l)
{
#if NL_QSPIN_BYTE_UNLOCK
    /* one store into the locked byte (the other bytes move under CAS) */
    __atomic_store_n((unsigned char *)&l->val, (unsigned char)0, __ATOMIC_RELEASE);
#else
    NL_ATOMIC_FETCH_AND(&l->val, ~0xffu, __ATOMIC_RELEASE);
#endif
}
NL_INLINE void nl_qspin_cna_unlock(nl_qspinlock_t *l) { nl_qspin_unlock(l); }
NL_API int  nl_qspin_trylock(nl_qspinlock_t *l);     /* 0 or EBUSY */
NL_API int  nl_qspin_cna_trylock(nl_qspinlock_t *l); /* 0 or EBUSY */
/* true when the locked byte is set (a snapshot) */
NL_API bool nl_qspin_is_locked(const nl_qspinlock_t *l);

#ifdef __cplusplus
}
#endif
#endif

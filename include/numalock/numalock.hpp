/*
 * numalock for C++17.
 *
 *  - One type per lock of the explicit C API (spinlocks.h, cna.h, cst.h),
 *    each meeting Lockable (lock, try_lock, unlock), so that std::lock_guard,
 *    std::unique_lock, std::scoped_lock and std::lock work with it; the
 *    read-write lock also meets SharedLockable (lock_shared, try_lock_shared,
 *    unlock_shared) for std::shared_lock. Each holds the C lock itself (same
 *    size and alignment, native_handle() gives it), starts unlocked, and can
 *    be neither copied nor moved: waiters hold its address.
 *  - numalock::handle: the generic handle (nl_lock_create) of any registered
 *    algorithm, chosen by name at run time, destroyed with the object.
 *    An unknown name throws std::invalid_argument naming it and the valid
 *    names; other failures throw std::system_error with the errno value.
 *
 * unlock() belongs to the thread that locked, except for the locks that
 * `numalock list --json` marks any_thread_unlock. None is recursive.
 *
 *     numalock::mcs m;                      numalock::handle h("cna");
 *     { std::lock_guard<numalock::mcs> g(m); ... }
 *     { std::scoped_lock g(m, h); ... }
 */
#ifndef NUMALOCK_HPP
#define NUMALOCK_HPP

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

#include "numalock.h"
#include "spinlocks.h"
#include "cna.h"
#include "cst.h"

namespace numalock {

namespace detail {
/* A lock kept in place: T's all-zero value is unlocked. */
template <typename T, void (*Acquire)(T *), int (*Try)(T *), void (*Release)(T *)>
class in_place_lock {
public:
    using native_type = T;
    in_place_lock() noexcept : l_() {}
    in_place_lock(const in_place_lock &) = delete;
    in_place_lock &operator=(const in_place_lock &) = delete;

    void lock() noexcept { Acquire(&l_); }
    bool try_lock() noexcept { return Try(&l_) == 0; }
    void unlock() noexcept { Release(&l_); }
    T *native_handle() noexcept { return &l_; }

private:
    T l_;
};

[[noreturn]] inline void throw_errno(int err, const std::string &what)
{
    throw std::system_error(err, std::generic_category(), what);
}
} // namespace detail

using tas = detail::in_place_lock<nl_tas_t, nl_tas_acquire, nl_tas_try, nl_tas_release>;
using ttas = detail::in_place_lock<nl_ttas_t, nl_ttas_acquire, nl_ttas_try, nl_ttas_release>;
using ticket = detail::in_place_lock<nl_ticket_t, nl_ticket_acquire, nl_ticket_try, nl_ticket_release>;
using hbo = detail::in_place_lock<nl_hbo_t, nl_hbo_acquire, nl_hbo_try, nl_hbo_release>;
/* MCS and CNA in their node-free form (the queue node comes from the
 * calling thread's pool) */
using mcs = detail::in_place_lock<nl_mcs_t, nl_mcs_acquire, nl_mcs_try, nl_mcs_release>;
using cna = detail::in_place_lock<nl_cna_t, nl_cna_acquire, nl_cna_try, nl_cna_release>;
using cna_opt = detail::in_place_lock<nl_cna_t, nl_cna_acquire, nl_cna_try, nl_cna_opt_release>;
/* the 4-byte Linux-layout qspinlock, queueing with MCS or with CNA */
using qspinlock = detail::in_place_lock<nl_qspinlock_t, nl_qspin_lock, nl_qspin_trylock, nl_qspin_unlock>;
using qspinlock_cna =
    detail::in_place_lock<nl_qspinlock_t, nl_qspin_cna_lock, nl_qspin_cna_trylock, nl_qspin_cna_unlock>;

/* CST blocking mutex (cst.h); the destructor frees its per-node structures. */
class cst_mutex {
public:
    using native_type = nl_cst_mutex_t;
    explicit cst_mutex(const nl_attr_t *attr = nullptr) : m_()
    {
        if (int rc = nl_cst_mutex_init(&m_, attr))
            detail::throw_errno(rc, "numalock::cst_mutex");
    }
    ~cst_mutex() { nl_cst_mutex_destroy(&m_); }
    cst_mutex(const cst_mutex &) = delete;
    cst_mutex &operator=(const cst_mutex &) = delete;

    void lock() noexcept { nl_cst_mutex_lock(&m_); }
    bool try_lock() noexcept { return nl_cst_mutex_trylock(&m_) == 0; }
    void unlock() noexcept { nl_cst_mutex_unlock(&m_); }
    nl_cst_mutex_t *native_handle() noexcept { return &m_; }

private:
    nl_cst_mutex_t m_;
};

/* CST read-write semaphore (cst.h): lock = write side, lock_shared = read side. */
class cst_rwsem {
public:
    using native_type = nl_cst_rwsem_t;
    explicit cst_rwsem(const nl_attr_t *attr = nullptr) : s_()
    {
        if (int rc = nl_cst_rwsem_init(&s_, attr))
            detail::throw_errno(rc, "numalock::cst_rwsem");
    }
    ~cst_rwsem() { nl_cst_rwsem_destroy(&s_); }
    cst_rwsem(const cst_rwsem &) = delete;
    cst_rwsem &operator=(const cst_rwsem &) = delete;

    void lock() noexcept { nl_cst_rwsem_down_write(&s_); }
    bool try_lock() noexcept { return nl_cst_rwsem_down_write_trylock(&s_) == 0; }
    void unlock() noexcept { nl_cst_rwsem_up_write(&s_); }
    void lock_shared() noexcept { nl_cst_rwsem_down_read(&s_); }
    bool try_lock_shared() noexcept { return nl_cst_rwsem_down_read_trylock(&s_) == 0; }
    void unlock_shared() noexcept { nl_cst_rwsem_up_read(&s_); }
    nl_cst_rwsem_t *native_handle() noexcept { return &s_; }

private:
    nl_cst_rwsem_t s_;
};

/* The generic handle of a registered algorithm, by name (`numalock list`).
 * lock_shared and friends take the read side of read-write algorithms and
 * the lock itself otherwise. Movable; a moved-from handle may only be
 * destroyed or assigned to. */
class handle {
public:
    explicit handle(const std::string &algorithm, const nl_attr_t *attr = nullptr)
        : h_(nl_lock_create(algorithm.c_str(), attr))
    {
        if (h_)
            return;
        int err = errno;
        if (err == ENOENT) {
            char names[1024];
            throw std::invalid_argument("numalock: unknown lock '" + algorithm +
                                        "': valid locks are " + nl_lock_names(names, sizeof names));
        }
        detail::throw_errno(err, "numalock: cannot create lock '" + algorithm + "'");
    }
    ~handle()
    {
        if (h_)
            nl_lock_destroy(h_);
    }
    handle(handle &&o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    handle &operator=(handle &&o) noexcept
    {
        std::swap(h_, o.h_);
        return *this;
    }
    handle(const handle &) = delete;
    handle &operator=(const handle &) = delete;

    void lock() noexcept { nl_lock_acquire(h_); }
    bool try_lock() noexcept { return nl_lock_try(h_) == 0; }
    void unlock() noexcept { nl_lock_release(h_); }
    void lock_shared() noexcept { nl_lock_read_acquire(h_); }
    bool try_lock_shared() noexcept { return nl_lock_read_try(h_) == 0; }
    void unlock_shared() noexcept { nl_lock_read_release(h_); }
    /* fn(arg) with the lock held (run by a server for delegation locks) */
    void *execute(void *(*fn)(void *), void *arg) { return nl_lock_execute(h_, fn, arg); }

    const nl_lock_ops_t &ops() const noexcept { return *nl_lock_ops(h_); }
    const char *name() const noexcept { return ops().name; }
    size_t footprint() const noexcept { return nl_lock_footprint(h_); }
    /* throws std::system_error (EINVAL) when created without attr->stats */
    nl_stats_snapshot_t stats() const
    {
        nl_stats_snapshot_t s;
        if (int rc = nl_lock_stats(h_, &s))
            detail::throw_errno(rc, std::string("numalock: lock '") + name() + "' keeps no statistics");
        return s;
    }
    nl_lock_t *native_handle() noexcept { return h_; }

private:
    nl_lock_t *h_;
};

} // namespace numalock

/* Queue locks of one word (reciprocating.h, hemlock.h) and CLH (clh.h), in
 * their node-free forms: the wait element or queue node comes from the
 * calling thread (its pool, its element, its node cache). Any thread may
 * unlock a numalock::clh; the others belong to the thread that locked. */
#include "clh.h"
#include "hemlock.h"
#include "reciprocating.h"

namespace numalock {
using clh = detail::in_place_lock<nl_clh_t, nl_clh_acquire, nl_clh_try, nl_clh_release>;
using hemlock = detail::in_place_lock<nl_hemlock_t, nl_hemlock_acquire, nl_hemlock_try, nl_hemlock_release>;
using reciprocating = detail::in_place_lock<nl_recip_t, nl_recip_acquire, nl_recip_try, nl_recip_release>;
using reciprocating_numa =
    detail::in_place_lock<nl_recip_numa_t, nl_recip_numa_acquire, nl_recip_numa_try, nl_recip_numa_release>;
} // namespace numalock

#endif

/*
 * The C++ view of numalock (include/numalock/numalock.hpp), linked against
 * the library:
 *   layout    every public struct has the same size, alignment and field
 *             offsets in C++ as in C (layout.h, compiled by both)
 *   sizes     each C++ lock type is the C lock, of the size the registry
 *             reports (`numalock list`)
 *   lockable  each lock type with std::lock_guard, std::unique_lock
 *             (try_to_lock from another thread fails while held, defer_lock),
 *             std::scoped_lock over two locks taken in opposite orders, and a
 *             counter that THREADS threads increment under the lock
 *   shared    cst_rwsem and a read-write handle: readers share, a writer
 *             excludes them (std::shared_lock)
 *   handle    every registered algorithm by name through numalock::handle;
 *             an unknown name throws std::invalid_argument naming it, stats()
 *             without statistics throws std::system_error(EINVAL), moves
 *   broken    (not in all) a "lock" that excludes nothing: must fail
 * Usage: test_cxx [layout|sizes|lockable|shared|handle|all|broken]
 */
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "numalock/numalock.hpp"
#include "layout.h"

static int failures;
#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            failures++;                                                                    \
            std::fprintf(stderr, "test_cxx: FAIL %s:%d: ", __FILE__, __LINE__);            \
            std::fprintf(stderr, __VA_ARGS__);                                             \
            std::fputc('\n', stderr);                                                      \
        }                                                                                  \
    } while (0)

static const int THREADS = 4;
static const long ITERS = 4000;

/* ---- layout --------------------------------------------------------------- */
#define NL_LAYOUT_CXX(expr) {#expr, expr},
static const nl_layout_item_t cxx_layout[] = {NL_LAYOUT_ITEMS(NL_LAYOUT_CXX, alignof){nullptr, 0}};

static void test_layout()
{
    size_t i = 0;
    for (; cxx_layout[i].what && nl_c_layout[i].what; i++)
        CHECK(cxx_layout[i].value == nl_c_layout[i].value, "C++ %s = %zu, C %s = %zu", cxx_layout[i].what,
              cxx_layout[i].value, nl_c_layout[i].what, nl_c_layout[i].value);
    CHECK(!cxx_layout[i].what && !nl_c_layout[i].what, "the C and C++ layout lists differ in length");
    CHECK(i > 40, "only %zu layout items compared", i);
}

/* ---- sizes ---------------------------------------------------------------- */
template <typename L>
static void check_size(const char *name)
{
    const nl_lock_ops_t *ops = nl_lock_find(name);
    CHECK(ops, "lock '%s' is not registered", name);
    CHECK(sizeof(L) == sizeof(typename L::native_type), "%s: C++ type %zu bytes, C lock %zu", name, sizeof(L),
          sizeof(typename L::native_type));
    CHECK(alignof(L) == alignof(typename L::native_type), "%s: C++ alignment %zu, C %zu", name, alignof(L),
          alignof(typename L::native_type));
    if (ops)
        CHECK(sizeof(L) == ops->size, "%s: C++ type %zu bytes, registry %zu", name, sizeof(L), ops->size);
}

static void test_sizes()
{
    check_size<numalock::tas>("tas");
    check_size<numalock::ttas>("ttas");
    check_size<numalock::ticket>("ticket");
    check_size<numalock::hbo>("hbo");
    check_size<numalock::mcs>("mcs");
    check_size<numalock::cna>("cna");
    check_size<numalock::cna_opt>("cna-opt");
    check_size<numalock::qspinlock>("qspinlock");
    check_size<numalock::qspinlock_cna>("qspinlock-cna");
    check_size<numalock::cst_mutex>("cst-mutex");
    check_size<numalock::cst_rwsem>("cst-rwsem");
}

/* ---- lockable --------------------------------------------------------------- */
/* THREADS threads add ITERS each under the lock; `inside` catches two at once */
template <typename L>
static void counter(L &m, const char *name, long iters = ITERS)
{
    volatile long count = 0; /* volatile: a broken lock cannot hide behind registers */
    volatile int inside = 0;
    std::atomic<int> overlaps{0}, ready{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < THREADS; t++)
        ts.emplace_back([&] {
            ready++; /* all start together, so that they contend */
            while (ready.load() < THREADS)
                std::this_thread::yield();
            for (long i = 0; i < iters; i++) {
                std::lock_guard<L> g(m);
                if (inside)
                    overlaps++;
                inside = inside + 1;
                count = count + 1;
                if (i % 256 == 0) /* others run while it is held: they must wait */
                    std::this_thread::yield();
                inside = inside - 1;
            }
        });
    for (auto &t : ts)
        t.join();
    CHECK(count == THREADS * iters, "%s: counter %ld, expected %ld", name, (long)count, THREADS * iters);
    CHECK(overlaps == 0, "%s: %d times two threads were inside", name, overlaps.load());
}

/* two locks taken with std::scoped_lock in opposite orders (std::lock's
 * lock-then-try dance must neither deadlock nor let two threads in) */
template <typename L>
static void scoped_pair(L &a, L &b, const char *name)
{
    long count = 0;
    std::atomic<int> ready{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < THREADS; t++)
        ts.emplace_back([&, t] {
            ready++;
            while (ready.load() < THREADS)
                std::this_thread::yield();
            for (long i = 0; i < ITERS / 4; i++) {
                if (t & 1) {
                    std::scoped_lock g(a, b);
                    count++;
                } else {
                    std::scoped_lock g(b, a);
                    count++;
                }
            }
        });
    for (auto &t : ts)
        t.join();
    CHECK(count == THREADS * (ITERS / 4), "%s: scoped_lock pair counter %ld, expected %ld", name, count,
          THREADS * (ITERS / 4));
}

template <typename L>
static void lockable(L &m, L &other, const char *name)
{
    {
        std::unique_lock<L> u(m, std::try_to_lock);
        CHECK(u.owns_lock(), "%s: try_lock on a free lock failed", name);
        bool other_got = true;
        std::thread([&] {
            std::unique_lock<L> v(m, std::try_to_lock);
            other_got = v.owns_lock();
        }).join();
        CHECK(!other_got, "%s: another thread's try_lock succeeded while the lock was held", name);
    }
    {
        std::unique_lock<L> u(m, std::defer_lock);
        CHECK(!u.owns_lock(), "%s: defer_lock owns the lock", name);
        u.lock();
        CHECK(u.owns_lock(), "%s: unique_lock::lock did not take it", name);
    }
    bool free_again = false;
    std::thread([&] {
        free_again = m.try_lock();
        if (free_again)
            m.unlock();
    }).join();
    CHECK(free_again, "%s: the lock is not free after unique_lock released it", name);
    counter(m, name);
    scoped_pair(m, other, name);
}

template <typename L>
static void lockable_type(const char *name)
{
    L a, b;
    lockable(a, b, name);
}

static void test_lockable()
{
    lockable_type<numalock::tas>("tas");
    lockable_type<numalock::ttas>("ttas");
    lockable_type<numalock::ticket>("ticket");
    lockable_type<numalock::hbo>("hbo");
    lockable_type<numalock::mcs>("mcs");
    lockable_type<numalock::cna>("cna");
    lockable_type<numalock::cna_opt>("cna-opt");
    lockable_type<numalock::qspinlock>("qspinlock");
    lockable_type<numalock::qspinlock_cna>("qspinlock-cna");
    lockable_type<numalock::cst_mutex>("cst-mutex");
    lockable_type<numalock::cst_rwsem>("cst-rwsem");
    /* different types together */
    numalock::tas t;
    numalock::mcs m;
    numalock::handle h("ticket");
    {
        std::scoped_lock g(t, m, h);
        CHECK(!t.try_lock(), "scoped_lock(tas, mcs, handle) did not take the tas");
    }
    CHECK(t.try_lock(), "scoped_lock(tas, mcs, handle) left the tas held");
    t.unlock();
}

/* ---- shared ----------------------------------------------------------------- */
template <typename L>
static void shared(L &s, const char *name)
{
    std::shared_lock<L> r(s);
    bool reader_in = false, writer_in = true;
    std::thread([&] {
        reader_in = s.try_lock_shared();
        if (reader_in)
            s.unlock_shared();
        writer_in = s.try_lock();
        if (writer_in)
            s.unlock();
    }).join();
    CHECK(reader_in, "%s: a second reader could not join a reader", name);
    CHECK(!writer_in, "%s: a writer got in beside a reader", name);
    r.unlock();
    bool reader_after_writer = true;
    {
        std::lock_guard<L> w(s);
        std::thread([&] {
            reader_after_writer = s.try_lock_shared();
            if (reader_after_writer)
                s.unlock_shared();
        }).join();
    }
    CHECK(!reader_after_writer, "%s: a reader got in beside a writer", name);
}

static void test_shared()
{
    numalock::cst_rwsem s;
    shared(s, "cst-rwsem");
    numalock::handle h("cst-rwsem");
    shared(h, "handle cst-rwsem");
}

/* ---- handle ----------------------------------------------------------------- */
static void test_handle()
{
    size_t n = nl_lock_count();
    CHECK(n > 0, "no lock registered");
    for (size_t i = 0; i < n; i++) {
        const char *name = nl_lock_at(i)->name;
        numalock::handle h(name);
        CHECK(!std::strcmp(h.name(), name), "handle '%s' says it is '%s'", name, h.name());
        numalock::handle other(std::string{name});
        lockable(h, other, name);
    }

    bool thrown = false;
    try {
        numalock::handle h("no-such-lock");
    } catch (const std::invalid_argument &e) {
        thrown = true;
        CHECK(std::strstr(e.what(), "'no-such-lock'") && std::strstr(e.what(), "mcs"),
              "unknown-lock message names neither the name nor the valid ones: %s", e.what());
    }
    CHECK(thrown, "an unknown lock name threw no std::invalid_argument");

    numalock::handle plain("mcs");
    thrown = false;
    try {
        plain.stats();
    } catch (const std::system_error &e) {
        thrown = e.code() == std::errc::invalid_argument;
    }
    CHECK(thrown, "stats() of a lock without statistics threw no std::system_error(EINVAL)");

    nl_attr_t attr = {};
    attr.stats = true;
    numalock::handle counted("mcs", &attr);
    for (int i = 0; i < 10; i++)
        std::lock_guard<numalock::handle> g(counted);
    CHECK(counted.stats().acquisitions == 10, "stats counted %llu acquisitions, expected 10",
          (unsigned long long)counted.stats().acquisitions);

    numalock::handle moved(std::move(counted));
    CHECK(!std::strcmp(moved.name(), "mcs") && moved.stats().acquisitions == 10, "a moved handle lost its lock");
    numalock::handle assigned("tas");
    assigned = std::move(moved);
    CHECK(!std::strcmp(assigned.name(), "mcs"), "move assignment did not take the lock");
    {
        std::lock_guard<numalock::handle> g(assigned);
    }
}

/* ---- broken: a "lock" that excludes nothing must fail the checks above ----- */
struct no_lock {
    void lock() {}
    bool try_lock() { return true; }
    void unlock() {}
};

static void test_broken()
{
    no_lock a, b;
    lockable(a, b, "no-lock (must fail)");
    counter(a, "no-lock (must fail)", 200000);
}

int main(int argc, char **argv)
{
    std::string what = argc > 1 ? argv[1] : "all";
    bool all = what == "all", known = all;
    if (all || what == "layout")
        known = true, test_layout();
    if (all || what == "sizes")
        known = true, test_sizes();
    if (all || what == "lockable")
        known = true, test_lockable();
    if (all || what == "shared")
        known = true, test_shared();
    if (all || what == "handle")
        known = true, test_handle();
    if (what == "broken")
        known = true, test_broken();
    if (!known) {
        std::fprintf(stderr, "test_cxx: unknown test '%s': valid tests are layout, sizes, lockable, shared, handle, all, broken\n",
                     what.c_str());
        return 2;
    }
    if (failures)
        std::fprintf(stderr, "test_cxx: %d failure(s)\n", failures);
    else
        std::printf("test_cxx %s: ok\n", what.c_str());
    return failures ? 1 : 0;
}

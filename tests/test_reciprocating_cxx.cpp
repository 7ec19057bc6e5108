// The C++ types of the reciprocating locks, Hemlock and CLH
// (include/numalock/numalock.hpp): each holds its C lock (same size and
// alignment), starts unlocked, and works with the std lock helpers; threads
// count under each with std::lock_guard, and all four are taken at once
// with std::scoped_lock (std::lock's deadlock avoidance: try_lock and back
// off). Any thread may unlock a numalock::clh.
#include <cstdio>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>
#include "numalock/numalock.hpp"

static int failures;
#define CHECK(cond, what)                                                      \
    do {                                                                       \
        if (!(cond)) {                                                         \
            failures++;                                                        \
            std::fprintf(stderr, "test_reciprocating_cxx: FAIL %s\n", what);   \
        }                                                                      \
    } while (0)

template <typename L, typename C> static void same_layout(const char *name)
{
    CHECK(sizeof(L) == sizeof(C) && alignof(L) == alignof(C), name);
    CHECK(!std::is_copy_constructible<L>::value && !std::is_move_constructible<L>::value, name);
}

template <typename L> static void counts(const char *name)
{
    L lock;
    long count = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 20000; i++) {
                if (i % 16 == 0) {
                    std::unique_lock<L> g(lock, std::try_to_lock);
                    if (!g.owns_lock())
                        g.lock();
                    count++;
                    continue;
                }
                std::lock_guard<L> g(lock);
                count++;
            }
        });
    for (auto &t : ts)
        t.join();
    CHECK(count == 4 * 20000, name);
    CHECK(lock.try_lock(), name);
    lock.unlock();
}

int main()
{
    same_layout<numalock::clh, nl_clh_t>("clh layout");
    same_layout<numalock::hemlock, nl_hemlock_t>("hemlock layout");
    same_layout<numalock::reciprocating, nl_recip_t>("reciprocating layout");
    same_layout<numalock::reciprocating_numa, nl_recip_numa_t>("reciprocating_numa layout");
    counts<numalock::clh>("clh count");
    counts<numalock::hemlock>("hemlock count");
    counts<numalock::reciprocating>("reciprocating count");
    counts<numalock::reciprocating_numa>("reciprocating_numa count");

    numalock::clh a;
    numalock::hemlock b;
    numalock::reciprocating c;
    numalock::reciprocating_numa d;
    long both = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 5000; i++) {
                std::scoped_lock g(a, b, c, d);
                both++;
            }
        });
    for (auto &t : ts)
        t.join();
    CHECK(both == 3 * 5000, "scoped_lock of all four");

    a.lock();
    std::thread([&] { a.unlock(); }).join(); // any thread may unlock a clh
    CHECK(a.try_lock(), "clh unlocked by another thread");
    a.unlock();

    if (failures)
        return 1;
    std::printf("test_reciprocating_cxx: passed\n");
    return 0;
}

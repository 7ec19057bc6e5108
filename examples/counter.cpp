// numalock from C++17: a 4-byte qspinlock kept in place and a lock chosen by
// name at run time, with std::lock_guard and std::scoped_lock.
//   c++ -std=c++17 counter.cpp $(pkg-config --cflags --libs numalock) -pthread
//   ./counter_cxx [LOCK]    (LOCK: a name from `numalock list`; default cna)
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>
#include <numalock/numalock.hpp>

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "cna";
    try {
        numalock::qspinlock q;     // the C nl_qspinlock_t, 4 bytes, starts unlocked
        numalock::handle h(name);  // any registered algorithm; freed with h
        long a = 0, b = 0;
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; t++)
            threads.emplace_back([&] {
                for (int i = 0; i < 20000; i++) {
                    { std::lock_guard<numalock::qspinlock> g(q); a++; }
                    { std::scoped_lock g(h, q); b++; }
                }
            });
        for (auto &t : threads)
            t.join();
        std::printf("qspinlock: %ld, qspinlock + %s: %ld, of %d each\n", a, h.name(), b, 4 * 20000);
        return a == 4 * 20000 && b == 4 * 20000 ? 0 : 1;
    } catch (const std::exception &e) { // std::invalid_argument: unknown name
        std::fprintf(stderr, "counter_cxx: %s\n", e.what());
        return 2;
    }
}

// std::mutex, std::condition_variable with timed waits (pthread_cond_clockwait
// on steady_clock), std::timed_mutex::try_lock_for (pthread_mutex_clocklock),
// std::recursive_mutex and std::shared_mutex (pthread_rwlock). Prints totals.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

int main()
{
    std::mutex m;
    std::condition_variable cv;
    std::deque<long> q;
    bool done = false;
    const int producers = 3, consumers = 3, items = 20000;
    long sum = 0, timeouts_seen = 0;
    std::vector<std::thread> ts;
    for (int p = 0; p < producers; p++)
        ts.emplace_back([&, p] {
            for (long i = 0; i < items; i++) {
                std::unique_lock<std::mutex> l(m);
                cv.wait_for(l, 5ms, [&] { return q.size() < 16; });
                q.push_back(p * items + i);
                cv.notify_one();
            }
        });
    std::vector<std::thread> cs;
    for (int c = 0; c < consumers; c++)
        cs.emplace_back([&] {
            for (;;) {
                std::unique_lock<std::mutex> l(m);
                if (!cv.wait_for(l, 1ms, [&] { return !q.empty() || done; }))
                    timeouts_seen++;
                if (q.empty()) {
                    if (done)
                        return;
                    continue;
                }
                sum += q.front();
                q.pop_front();
                cv.notify_all();
            }
        });
    for (auto &t : ts)
        t.join();
    {
        std::lock_guard<std::mutex> l(m);
        done = true;
    }
    cv.notify_all();
    for (auto &t : cs)
        t.join();

    std::timed_mutex tm;
    std::recursive_mutex rm;
    std::shared_mutex sm;
    long tcount = 0, shared_reads = 0, shared_value = 0;
    std::vector<std::thread> ws;
    for (int w = 0; w < 4; w++)
        ws.emplace_back([&, w] {
            for (int i = 0; i < 5000; i++) {
                while (!tm.try_lock_for(200us)) {
                }
                tcount++;
                tm.unlock();
                std::lock_guard<std::recursive_mutex> a(rm);
                std::lock_guard<std::recursive_mutex> b(rm);
                if ((i + w) % 10 == 0) {
                    std::unique_lock<std::shared_mutex> x(sm);
                    shared_value++;
                } else {
                    std::shared_lock<std::shared_mutex> r(sm);
                    shared_reads += shared_value >= 0;
                }
            }
        });
    for (auto &t : ws)
        t.join();
    // a timed wait that must time out
    std::unique_lock<std::mutex> l(m);
    bool woke = cv.wait_for(l, 20ms, [] { return false; });
    std::printf("c++ queue sum %ld (expected %ld), timed_mutex %ld, shared writes %ld reads %ld, timeout %s\n", sum,
                (long)producers * items * (producers * items - 1) / 2, tcount, shared_value, shared_reads,
                woke ? "missed" : "ok");
    return sum == (long)producers * items * (producers * items - 1) / 2 && tcount == 20000 && !woke ? 0 : 1;
}

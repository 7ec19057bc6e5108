/* Unit tests of the waiting design (src/wait/wait.h): the early wake of a
 * parked waiter, the gate while overloaded, and statistics that count
 * contention without changing the acquisition path. No test asserts on time:
 * a broken wake-up hangs, and the watchdog (alarm) fails the test.
 *
 *   test_wait [nudge|gate|stats|all]        exit 0 = pass
 *   test_wait --broken-nudge                must fail: a nudge that turns the
 *                                           word back to WAITING without a
 *                                           futex wake leaves the waiter asleep
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define NL_TEST_WAIT
#include "nl_test_internal.h"
#include "numalock/spinlocks.h"

static int failures, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Pin the load the waiting design sees (no re-sampling). */
static void force_load(uint32_t runnable)
{
    atomic_store(&nl_load_next, UINT64_MAX);
    atomic_store(&nl_load_runnable, runnable);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: watchdog: a waiter never woke up\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(1);
}

/* ---- nudge: PARKED -> WAITING + wake; the waiter spins again ---------------- */
static _Atomic uint32_t word;
static _Atomic uint64_t waiter_parks;
static _Atomic uint32_t waiter_got;
static int broken_nudge;

static void *awaiter(void *p)
{
    (void)p;
    uint32_t v = nl_await32(&word);
    atomic_store(&waiter_parks, nl_test_self_parks());
    atomic_store(&waiter_got, v);
    return NULL;
}

static void wait_for_word(uint32_t want)
{
    while (atomic_load(&word) != want)
        sleep_ms(1);
}

static void test_nudge(void)
{
    char err[128];
    force_load(0); /* a CPU for everyone: adaptive waiters spin ~1 ms, then park */
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    atomic_store(&word, NL_GRANT_WAITING);
    pthread_t t;
    pthread_create(&t, NULL, awaiter, NULL);
    wait_for_word(NL_GRANT_PARKED);            /* it spun, then parked */
    if (broken_nudge) {                        /* the word changes, nobody wakes it */
        uint32_t expect = NL_GRANT_PARKED;
        atomic_compare_exchange_strong(&word, &expect, NL_GRANT_WAITING);
    } else {
        nl_nudge32(&word);
    }
    /* once awake it spins with WAITING in the word and parks again after its
     * budget: wait for that second park, so the grant below must wake it */
    wait_for_word(NL_GRANT_PARKED);
    nl_grant32(&word, 7);
    pthread_join(t, NULL);
    CHECK(atomic_load(&waiter_got) == 7, "grant value %u", atomic_load(&waiter_got));
    CHECK(atomic_load(&waiter_parks) == 2, "the waiter parked %llu times, 2 expected (park, nudge, park)",
          (unsigned long long)atomic_load(&waiter_parks));
}

/* ---- gate: overloaded -> an arriving thread waits passively, then gets in --- */
static nl_mcs_t mcs;
static _Atomic uint64_t gate_waits_seen;
static _Atomic int entered;

static void *gate_acquirer(void *p)
{
    (void)p;
    nl_mcs_acquire(&mcs);
    atomic_store(&gate_waits_seen, nl_test_self_gate_waits());
    atomic_store(&entered, 1);
    nl_mcs_release(&mcs);
    return NULL;
}

static void run_gate(const char *policy, uint32_t runnable, uint64_t *gate_waits)
{
    char err[128];
    CHECK(nl_wait_set_policy(policy, err, sizeof err) == 0, "%s: %s", policy, err);
    force_load(runnable);
    atomic_store(&entered, 0);
    nl_mcs_acquire(&mcs);
    void *mine = atomic_load(&mcs.tail);
    pthread_t t;
    pthread_create(&t, NULL, gate_acquirer, NULL);
    /* wait until it has queued behind us: it has passed the gate by then */
    while (atomic_load(&mcs.tail) == mine)
        sleep_ms(1);
    CHECK(!atomic_load(&entered), "%s: got in while the lock was held", policy);
    nl_mcs_release(&mcs);
    pthread_join(t, NULL);
    CHECK(atomic_load(&entered), "%s: never got in", policy);
    *gate_waits = atomic_load(&gate_waits_seen);
}

static void test_gate(void)
{
    uint64_t w;
    run_gate("adaptive", 1000, &w); /* overloaded */
    CHECK(w >= 1, "overloaded: no passive wait at the gate (%llu)", (unsigned long long)w);
    run_gate("adaptive", 0, &w);    /* a CPU for everyone */
    CHECK(w == 0, "not overloaded: %llu gate waits", (unsigned long long)w);
    run_gate("spin", 1000, &w);     /* only the adaptive policy restricts */
    CHECK(w == 0, "spin policy: %llu gate waits", (unsigned long long)w);
}

/* ---- stats: contention counted from the slow path, no trylock first -------- */
/* mcs behind an ops table that counts the calls of its try_acquire */
static _Atomic int try_calls;
static const nl_lock_ops_t *mcs_ops;
static void counting_acquire(void *l) { mcs_ops->acquire(l); }
static int counting_try(void *l) { atomic_fetch_add(&try_calls, 1); return mcs_ops->try_acquire(l); }
static void counting_release(void *l) { mcs_ops->release(l); }

static nl_lock_t *slock;
static void *stats_acquirer(void *p)
{
    (void)p;
    nl_lock_acquire(slock);
    nl_lock_release(slock);
    return NULL;
}

static void test_stats(void)
{
    char err[128];
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive");
    force_load(0);
    /* the handle with statistics acquires exactly as without: no trylock */
    mcs_ops = nl_lock_find("mcs");
    nl_lock_ops_t counting = *mcs_ops;
    counting.name = "counting-mcs";
    counting.acquire = counting_acquire;
    counting.try_acquire = counting_try;
    counting.release = counting_release;
    nl_attr_t attr = { .stats = true };
    nl_lock_t *c = nl_lock_create_ops(&counting, &attr);
    CHECK(c != NULL, "create counting-mcs");
    for (int i = 0; c && i < 100; i++) {
        nl_lock_acquire(c);
        nl_lock_release(c);
    }
    CHECK(atomic_load(&try_calls) == 0, "acquire with statistics called try_acquire %d times",
          atomic_load(&try_calls));
    nl_lock_destroy(c);

    /* contended = the lock's slow path ran: never when alone; seen when a
     * second thread arrives while the lock is held (within 50 rounds) */
    const char *names[] = { "mcs", "cna", "qspinlock-cna", "cst-mutex", "ticket", "tas", "ttas", "hbo" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        slock = nl_lock_create(names[i], &attr);
        CHECK(slock != NULL, "create %s", names[i]);
        if (!slock)
            continue;
        nl_lock_acquire(slock);
        nl_lock_release(slock);
        nl_stats_snapshot_t s;
        nl_lock_stats(slock, &s);
        CHECK(s.acquisitions == 1 && s.contended == 0, "%s alone: %llu acquisitions, %llu contended",
              names[i], (unsigned long long)s.acquisitions, (unsigned long long)s.contended);
        int rounds = 0;
        for (; rounds < 50 && s.contended == 0; rounds++) {
            nl_lock_acquire(slock);
            pthread_t t;
            pthread_create(&t, NULL, stats_acquirer, NULL);
            sleep_ms(5); /* the other thread probably finds the lock held */
            nl_lock_release(slock);
            pthread_join(t, NULL);
            nl_lock_stats(slock, &s);
        }
        CHECK(s.contended >= 1 && s.contended <= (uint64_t)rounds,
              "%s: %llu contended in %d two-thread rounds", names[i], (unsigned long long)s.contended, rounds);
        CHECK(s.acquisitions == 1 + 2 * (uint64_t)rounds, "%s: %llu acquisitions", names[i],
              (unsigned long long)s.acquisitions);
        nl_lock_destroy(slock);
    }
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    signal(SIGALRM, on_alarm);
    alarm(60);
    if (!strcmp(what, "--broken-nudge")) {
        broken_nudge = 1;
        alarm(10);
        test_nudge();
    } else {
        bool all = !strcmp(what, "all");
        if (all || !strcmp(what, "nudge"))
            test_nudge();
        if (all || !strcmp(what, "gate"))
            test_gate();
        if (all || !strcmp(what, "stats"))
            test_stats();
    }
    printf("test_wait %s: %d checks, %d failures\n", what, checks, failures);
    return failures ? 1 : 0;
}

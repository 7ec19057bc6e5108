/*
 * The soak (make soak MINUTES=N [SEED=S] [ROUND=R]): one process runs rounds
 * of a few seconds until the time is up, each a random mix drawn from the
 * seed and the round's number (ROUND=R: round R's mix, again and again):
 *   a registered lock, 1 to 16 threads (with spinning waiters at most the
 *   CPUs), a topology (auto, virtual:2,
 *   virtual:4, virtual:2x2, virtual:2x2x2), a waiting policy (adaptive,
 *   spin, yield, park, park:0:0, park:200:2);
 *   threads that take the round's lock (try now and then, read or execute
 *   where the lock can) and nest two more of its kind in order;
 *   maybe signals (SIGUSR1 at 1 to 10 kHz; the handler nests 1 to 12 locks
 *   of the kind), cancellation (a thread cancelled at a cancellation point
 *   inside its critical section, whose cleanup handler leaves and releases;
 *   a new thread takes its place), fork (a thread forks; the child runs 2
 *   threads on a new lock of the kind and reports its count by its status).
 * Every lock guards its data (owner, counter); a watchdog fails the run after
 * 60 s without progress; the resident set at the end must be within 10 % of
 * the one after the first minute. Each round prints one line; the seed is
 * printed first; a failure (the watchdog's too) names the seed, the round
 * and its mix. A replay repeats the mix, not the interleaving.
 */
#include <signal.h>
#include <sys/wait.h>
#include "robust.h"

enum { MAX_T = 16, NEST = 2, HDEPTH = 12 };

static const char *topologies[] = { "auto", "virtual:2", "virtual:4", "virtual:2x2", "virtual:2x2x2" };
static const char *policies[] = { "adaptive", "spin", "yield", "park", "park:0:0", "park:200:2" };

typedef struct {
    const nl_lock_ops_t *ops;
    int threads, topo, policy, signals, cancel, fork_child, depth;
    double rate, seconds;
} round_t;

static round_t R;
static uint64_t seed;
static long round_no;
static nl_lock_t *L, *N[NEST], *H[HDEPTH];
static rb_guard_t gL, gN[NEST], gH[HDEPTH];
static _Atomic long tallyL, tallyN[NEST], tallyH[HDEPTH];
static _Atomic int stop;
static _Atomic long handled, cancelled, forked;
static pthread_t th[MAX_T];
static _Atomic int alive[MAX_T];

static void describe(char *buf, size_t len)
{
    char sig[64] = "no";
    if (R.signals)
        snprintf(sig, sizeof sig, "%.0fHz/depth%d", R.rate, R.depth);
    snprintf(buf, len, "lock=%s threads=%d topology=%s policy=%s signals=%s cancel=%d fork=%d seconds=%.1f",
             R.ops->name, R.threads, topologies[R.topo], policies[R.policy], sig, R.cancel, R.fork_child,
             R.seconds);
}

static void soak_fail(const char *what)
{
    char d[512];
    describe(d, sizeof d);
    rb_fail(1, "seed %llu round %ld (%s): %s; replay the round: make soak SEED=%llu ROUND=%ld",
            (unsigned long long)seed, round_no, d, what, (unsigned long long)seed, round_no);
}

/* ---- the critical sections --------------------------------------------------- */
static void take(nl_lock_t *l, rb_guard_t *g, int me)
{
    nl_lock_acquire(l);
    rb_enter(g, me, "soak");
}
static void give(nl_lock_t *l, rb_guard_t *g, int me, _Atomic long *tally)
{
    rb_leave(g, me, "soak");
    nl_lock_release(l);
    atomic_fetch_add_explicit(tally, 1, memory_order_relaxed);
}

static __thread int me;
static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    int d = 1 + (int)(atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed) % (unsigned)R.depth);
    for (int k = 0; k < d; k++)
        take(H[k], &gH[k], me);
    for (int k = d; k-- > 0;)
        give(H[k], &gH[k], me, &tallyH[k]);
    errno = saved;
}

static void *exec_section(void *p)
{
    rb_enter(&gL, (int)(intptr_t)p, "soak execute");
    rb_leave(&gL, (int)(intptr_t)p, "soak execute");
    return p;
}

static void cleanup_release(void *p)
{
    give(L, &gL, (int)(intptr_t)p, &tallyL); /* cancelled inside: leave and release */
}

static void one_op(uint64_t *rng)
{
    uint64_t r = rb_rand(rng) % 64;
    if ((R.ops->props & NL_PROP_DELEGATE) && r < 16) {
        if (nl_lock_execute(L, exec_section, (void *)(intptr_t)me) != (void *)(intptr_t)me)
            soak_fail("execute returned another call's result");
        atomic_fetch_add_explicit(&tallyL, 1, memory_order_relaxed);
    } else if ((R.ops->props & NL_PROP_RW) && r < 24) {
        nl_lock_read_acquire(L);
        if (gL.owner)
            soak_fail("a reader entered while a writer was inside");
        nl_lock_read_release(L);
    } else if (r < 28) {
        for (int k = 0; k < NEST; k++)
            take(N[k], &gN[k], me);
        for (int k = NEST; k-- > 0;)
            give(N[k], &gN[k], me, &tallyN[k]);
    } else {
        if (r > 56 || nl_lock_try(L) != 0)
            nl_lock_acquire(L);
        rb_enter(&gL, me, "soak");
        if (R.cancel && r == 63) { /* a cancellation point inside the critical section */
            pthread_cleanup_push(cleanup_release, (void *)(intptr_t)me);
            pthread_testcancel();
            pthread_cleanup_pop(0);
        }
        give(L, &gL, me, &tallyL);
    }
    atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
}

/* ---- fork: the child runs 2 threads on a new lock of the kind ------------------ */
static nl_lock_t *CL;
static rb_guard_t gC;
static void *child_worker(void *p)
{
    int who = (int)(intptr_t)p;
    for (int i = 0; i < 2000; i++) {
        nl_lock_acquire(CL);
        rb_enter(&gC, who, "soak fork child");
        rb_leave(&gC, who, "soak fork child");
        nl_lock_release(CL);
    }
    return NULL;
}

static void fork_once(void)
{
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(30); /* a child that hangs dies, and the parent says so */
        gC.count = 0;
        gC.owner = 0;
        if (!(CL = nl_lock_create_ops(R.ops, NULL)))
            _exit(2);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&t[i], NULL, child_worker, (void *)(intptr_t)(200 + i)))
                _exit(3);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        _exit(gC.count == 4000 ? 0 : 1);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        soak_fail("fork or waitpid failed");
    if (!WIFEXITED(st) || WEXITSTATUS(st))
        soak_fail(WIFSIGNALED(st) ? "the forked child died by a signal (30 s alarm: it hung)"
                                  : "the forked child's count was wrong (or it could not make its lock)");
    atomic_fetch_add(&forked, 1);
    pthread_setcancelstate(cs, NULL);
}

/* ---- a worker ---------------------------------------------------------------------- */
static void *worker(void *p)
{
    int idx = (int)(intptr_t)p;
    me = idx + 1;
    /* first every lock once, its signals still blocked: a thread's record,
     * cst's snode for its node and a delegation slot are malloc'ed then */
    take(L, &gL, me);
    give(L, &gL, me, &tallyL);
    for (int k = 0; k < NEST; k++) {
        take(N[k], &gN[k], me);
        give(N[k], &gN[k], me, &tallyN[k]);
    }
    for (int k = 0; k < R.depth; k++) {
        take(H[k], &gH[k], me);
        give(H[k], &gH[k], me, &tallyH[k]);
    }
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL);
    uint64_t rng = (seed ^ 0x9E3779B97F4A7C15ull * (uint64_t)(idx + 1) ^ (uint64_t)round_no << 20) | 1;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        one_op(&rng);
        if (R.fork_child && idx == 0 && rb_rand(&rng) % 4096 == 0 && atomic_load(&forked) < round_no + 1) {
            pthread_sigmask(SIG_BLOCK, &s, NULL);
            fork_once();
            pthread_sigmask(SIG_UNBLOCK, &s, NULL);
        }
    }
    return NULL;
}

static void start_worker(int i)
{
    if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
        soak_fail("cannot create a thread");
    atomic_store(&alive[i], 1);
}

/* ---- a round ------------------------------------------------------------------------ */
static void draw(uint64_t *rng)
{
    size_t n = nl_lock_count();
    R.ops = nl_lock_at(rb_rand(rng) % n);
    R.threads = 1 + (int)(rb_rand(rng) % MAX_T);
    R.topo = (int)(rb_rand(rng) % (sizeof topologies / sizeof *topologies));
    R.policy = (int)(rb_rand(rng) % (sizeof policies / sizeof *policies));
    /* waiters that never leave the CPU, more of them than CPUs, at a FIFO
     * lock: each hand-over waits for the next holder's time slice (c-tkt-n
     * ran 200 operations a second with 12 threads on 2 CPUs, and a round
     * that cancels a thread waits for it): what the spin policy is not for */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!strcmp(policies[R.policy], "spin") && cpus > 0 && R.threads > cpus)
        R.threads = (int)cpus;
    R.signals = rb_rand(rng) % 3 == 0;
    R.rate = 1000 + (double)(rb_rand(rng) % 9001);
    R.depth = 1 + (int)(rb_rand(rng) % HDEPTH);
    R.cancel = rb_rand(rng) % 3 == 0;
    R.fork_child = rb_rand(rng) % 4 == 0;
    R.seconds = 1 + (double)(rb_rand(rng) % 40) / 10;
}

static void make_locks(void)
{
    nl_attr_t a = { .stats = true };
    nl_lock_t **all[] = { &L, &N[0], &N[1] };
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (!(*all[i] = nl_lock_create_ops(R.ops, i ? NULL : &a)))
            soak_fail("cannot create a lock");
    for (int k = 0; k < HDEPTH; k++)
        if (!(H[k] = nl_lock_create_ops(R.ops, NULL)))
            soak_fail("cannot create a lock");
    memset(&gL, 0, sizeof gL);
    memset(gN, 0, sizeof gN);
    memset(gH, 0, sizeof gH);
    atomic_store(&tallyL, 0);
    for (int k = 0; k < NEST; k++)
        atomic_store(&tallyN[k], 0);
    for (int k = 0; k < HDEPTH; k++)
        atomic_store(&tallyH[k], 0);
}

static void check_and_free(void)
{
    if (gL.count != atomic_load(&tallyL))
        soak_fail("the lock's counter is off (lost updates)");
    for (int k = 0; k < NEST; k++)
        if (gN[k].count != atomic_load(&tallyN[k]))
            soak_fail("a nested lock's counter is off (lost updates)");
    for (int k = 0; k < HDEPTH; k++)
        if (gH[k].count != atomic_load(&tallyH[k]))
            soak_fail("a handler lock's counter is off (lost updates)");
    nl_lock_destroy(L);
    for (int k = 0; k < NEST; k++)
        nl_lock_destroy(N[k]);
    for (int k = 0; k < HDEPTH; k++)
        nl_lock_destroy(H[k]);
}

/* the main thread during a round: signals and cancellations until its end */
static void drive(uint64_t *rng)
{
    uint64_t start = rb_now_ns(), end = start + (uint64_t)(R.seconds * 1e9), sent = 0, next_cancel = start;
    for (uint64_t now = start; now < end; now = rb_now_ns()) {
        for (uint64_t due = (uint64_t)((double)(now - start) * R.rate / 1e9); R.signals && sent < due; sent++)
            pthread_kill(th[rb_rand(rng) % (uint64_t)R.threads], SIGUSR1);
        if (R.cancel && now >= next_cancel) {
            int i = (int)(rb_rand(rng) % (uint64_t)R.threads);
            pthread_cancel(th[i]);
            void *r;
            pthread_join(th[i], &r);
            if (r == PTHREAD_CANCELED)
                atomic_fetch_add(&cancelled, 1);
            start_worker(i);
            next_cancel = now + 20000000 + rb_rand(rng) % 80000000;
        }
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

/* what the watchdog names when it fires: the seed, the round and its mix */
static char watching[640];

static void run_round(uint64_t *rng)
{
    draw(rng);
    char d[512];
    describe(d, sizeof d);
    snprintf(watching, sizeof watching, "soak: seed %llu round %ld (%s); replay the round: make soak SEED=%llu ROUND=%ld",
             (unsigned long long)seed, round_no, d, (unsigned long long)seed, round_no);
    rb_set_topology(topologies[R.topo]);
    rb_set_policy(policies[R.policy]);
    make_locks();
    atomic_store(&stop, 0);
    for (int i = 0; i < R.threads; i++)
        start_worker(i); /* SIGUSR1 blocked: the workers unblock it when warm */
    drive(rng);
    atomic_store(&stop, 1);
    for (int i = 0; i < R.threads; i++)
        pthread_join(th[i], NULL);
    check_and_free();
}

static long rss_kib(void)
{
    long pages = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
    double minutes = 1;
    long only = -1; /* --round N: that round's mix again and again */
    rb_prog = "soak";
    seed = (uint64_t)rb_now_ns() ^ (uint64_t)getpid() << 32;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--minutes")) minutes = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--round")) only = atol(argv[i + 1]);
        else rb_fail(2, "unknown option '%s': valid options are --minutes M, --seed S, --round N", argv[i]);
    }
    if (argc % 2 == 0 || !(minutes > 0))
        rb_fail(2, "--minutes must be above 0 (got %s)", argc > 2 ? argv[2] : "nothing");
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("soak: seed %llu, %.1f minutes (replay: make soak MINUTES=%g SEED=%llu)\n", (unsigned long long)seed,
           minutes, minutes, (unsigned long long)seed);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    rb_watchdog_start(60, watching);
    uint64_t t0 = rb_now_ns(), end = t0 + (uint64_t)(minutes * 60e9);
    long rss_first = 0, rounds = 0;
    for (long r = 0; rb_now_ns() < end; r++, rounds++) {
        /* each round's draws from the seed and its number alone (the
         * signals and cancellations of earlier rounds drew as timing had
         * it), so that a round can be replayed by itself */
        round_no = only >= 0 ? only : r;
        uint64_t rng = (seed ^ 0xD1B54A32D192ED03ull * (uint64_t)(round_no + 1)) | 1;
        run_round(&rng);
        char d[512];
        describe(d, sizeof d);
        long rss = rss_kib();
        double at = (double)(rb_now_ns() - t0) / 1e9;
        if (!rss_first && at >= 60)
            rss_first = rss;
        printf("soak: round %ld at %.0f s: %s: ok (L %ld, handled %ld, cancelled %ld, forked %ld, rss %ld KiB)\n",
               round_no, at, d, gL.count, atomic_load(&handled), atomic_load(&cancelled), atomic_load(&forked), rss);
    }
    long rss_end = rss_kib();
    printf("soak: %ld rounds, rss after the first minute %ld KiB, at the end %ld KiB\n", rounds, rss_first,
           rss_end);
    if (rss_first && rss_end > rss_first + rss_first / 10)
        rb_fail(1, "seed %llu: the resident set grew from %ld KiB after the first minute to %ld KiB (over 10 %%)",
                (unsigned long long)seed, rss_first, rss_end);
    printf("soak: PASS seed %llu\n", (unsigned long long)seed);
    return 0;
}

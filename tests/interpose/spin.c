/*
 * POSIX spin locks as programs use them, with and without the preload
 * library (the output must be the same):
 *   spin THREADS ITERS
 * THREADS threads each take a pthread_spinlock_t ITERS times (lock, or
 * trylock in a loop every 4th time) and increment a plain counter inside,
 * checking that nobody else is inside; then: trylock on a held lock is EBUSY,
 * a stray unlock of a free lock returns 0 and the lock keeps working, destroy
 * returns 0, and a process-shared spin lock in shared memory excludes across
 * fork. Prints the counts; exits 1 at the first violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAIL(...) do { fprintf(stderr, "spin: " __VA_ARGS__); fprintf(stderr, "\n"); exit(1); } while (0)

static pthread_spinlock_t sl;
static volatile long counter;
static atomic_int inside;
static long iters;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        if (i % 4 == 3) {
            int rc;
            while ((rc = pthread_spin_trylock(&sl)) == EBUSY)
                ;
            if (rc)
                FAIL("trylock returned %d", rc);
        } else if (pthread_spin_lock(&sl)) {
            FAIL("lock failed");
        }
        if (atomic_fetch_add(&inside, 1) != 0)
            FAIL("two threads inside the spin lock");
        long v = counter;
        counter = v + 1;
        atomic_fetch_sub(&inside, 1);
        if (pthread_spin_unlock(&sl))
            FAIL("unlock failed");
    }
    return NULL;
}

static void *try_other(void *l) { return (void *)(long)pthread_spin_trylock(l); }

struct shared { pthread_spinlock_t l; volatile long n; };
static void *shared_worker(void *p)
{
    struct shared *sh = p;
    for (int i = 0; i < 20000; i++) {
        pthread_spin_lock(&sh->l);
        long v = sh->n;
        sh->n = v + 1;
        pthread_spin_unlock(&sh->l);
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "spin: still running after 100 s (a spin lock is broken)\n";
    if (write(2, msg, sizeof msg - 1) < 0) {}
    _exit(1);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 4;
    iters = argc > 2 ? atol(argv[2]) : 10000;
    if (threads < 1 || threads > 256 || iters < 1)
        FAIL("usage: spin THREADS(1..256) ITERS");
    signal(SIGALRM, on_alarm);
    alarm(100);
    if (pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE))
        FAIL("init");
    pthread_t t[256];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, NULL))
            FAIL("pthread_create");
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    if (counter != threads * iters)
        FAIL("counter %ld, expected %ld", counter, threads * iters);
    printf("spin: %d threads x %ld: counter %ld\n", threads, iters, counter);

    /* trylock on a held lock, from another thread */
    pthread_t o;
    void *r;
    pthread_spin_lock(&sl);
    pthread_create(&o, NULL, try_other, (void *)&sl);
    pthread_join(o, &r);
    if ((long)r != EBUSY)
        FAIL("trylock of a held spin lock returned %ld, expected EBUSY", (long)r);
    pthread_spin_unlock(&sl);
    /* stray unlocks of a free lock: 0, and the lock still works */
    for (int k = 0; k < 3; k++)
        if (pthread_spin_unlock(&sl))
            FAIL("stray unlock returned non-zero");
    if (pthread_spin_trylock(&sl))
        FAIL("trylock after stray unlocks failed");
    pthread_create(&o, NULL, try_other, (void *)&sl);
    pthread_join(o, &r);
    if ((long)r != EBUSY)
        FAIL("lock broken by stray unlocks: trylock of a held lock returned %ld", (long)r);
    pthread_spin_unlock(&sl);
    if (pthread_spin_destroy(&sl))
        FAIL("destroy returned non-zero");
    printf("spin: trylock busy, stray unlock harmless, destroy 0\n");

    /* process-shared: parent and child, two threads each, count under one
     * spin lock in shared memory (more than two contenders: a queue lock's
     * waiters would queue, with nodes the other process cannot see) */
    struct shared *sh =
        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        FAIL("mmap");
    if (pthread_spin_init(&sh->l, PTHREAD_PROCESS_SHARED))
        FAIL("init shared");
    sh->n = 0;
    pid_t pid = fork();
    pthread_t w[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&w[i], NULL, shared_worker, sh);
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    if (pid == 0)
        _exit(0);
    int st;
    waitpid(pid, &st, 0);
    if (sh->n != 80000)
        FAIL("process-shared counter %ld, expected 80000", sh->n);
    pthread_spin_destroy(&sh->l);
    printf("spin: process-shared counter %ld\n", sh->n);
    return 0;
}

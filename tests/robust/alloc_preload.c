/*
 * Allocation failure under the preload library (failalloc.c replaces malloc
 * for the whole process, the preload library's calls included): 4 threads
 * whose every allocation fails from their start use a mutex, a condition
 * variable (timed waits, signals), an rwlock and a spin lock, counters
 * checked. Run in a child; the parent prints the outcome:
 *   outcome=works, or outcome=stops (LINE) when the child ended with
 *   abort() after exactly one line "numalock preload: no memory for ..." or
 *   "numalock: no memory for ..." on stderr. Anything else fails.
 * glibc's pthread functions cannot fail for want of memory, so a lock that
 * lives out of the object (NUMALOCK_PRELOAD_EXTERNAL=1, NUMALOCK_RWLOCK)
 * stops; the in-place locks work on.
 */
#include <signal.h>
#include <sys/wait.h>
#include "failalloc.h"
#include "robust.h"

enum { T = 4, OPS = 4000 };
static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t sp;
static rb_guard_t gm, gw, gs;

static void *worker(void *p)
{
    int me = (int)(intptr_t)p;
    rb_nomem = 1;
    for (int i = 0; i < OPS; i++) {
        pthread_mutex_lock(&mx);
        rb_enter(&gm, me, "mutex");
        rb_leave(&gm, me, "mutex");
        if (i % 500 == 0) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_nsec += 1000000;
            if (t.tv_nsec >= 1000000000) {
                t.tv_sec++;
                t.tv_nsec -= 1000000000;
            }
            pthread_cond_timedwait(&cv, &mx, &t);
        }
        pthread_mutex_unlock(&mx);
        if (i % 100 == 0)
            pthread_cond_signal(&cv);
        if (i % 4 == 0) {
            pthread_rwlock_rdlock(&rw);
            if (gw.owner)
                rb_fail(1, "a reader entered while a writer was inside");
            pthread_rwlock_unlock(&rw);
        } else if (i % 4 == 1) {
            pthread_rwlock_wrlock(&rw);
            rb_enter(&gw, me, "rwlock");
            rb_leave(&gw, me, "rwlock");
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_spin_lock(&sp);
            rb_enter(&gs, me, "spin lock");
            rb_leave(&gs, me, "spin lock");
            pthread_spin_unlock(&sp);
        }
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    rb_nomem = 0;
    return NULL;
}

static int child(void)
{
    rb_watchdog_start(20, "preload without memory");
    pthread_spin_init(&sp, PTHREAD_PROCESS_PRIVATE);
    pthread_t th[T];
    for (int t = 0; t < T; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)))
            rb_fail(1, "cannot create thread %d", t);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    long rws = 0, spins = 0;
    for (int i = 0; i < OPS; i++)
        i % 4 == 1 ? rws++ : i % 4 >= 2 ? spins++ : 0;
    if (gm.count != (long)T * OPS || gw.count != T * rws || gs.count != T * spins)
        rb_fail(1, "lost updates: mutex %ld of %ld, rwlock %ld of %ld, spin %ld of %ld", gm.count, (long)T * OPS,
                gw.count, T * rws, gs.count, T * spins);
    return 0;
}

int main(void)
{
    rb_prog = "nl_robust_alloc_preload";
    int fd[2];
    if (pipe(fd))
        rb_fail(1, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        _exit(child());
    }
    close(fd[1]);
    char err[2048];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof err - 1 && (r = read(fd[0], err + n, sizeof err - 1 - n)) > 0)
        n += (size_t)r;
    err[n] = 0;
    int st;
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && !n) {
        printf("%s: PASS outcome=works\n", rb_prog);
        return 0;
    }
    char *line = strstr(err, "no memory for ");
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && line && strchr(err, '\n') == strrchr(err, '\n') &&
        (!strncmp(err, "numalock preload: ", 18) || !strncmp(err, "numalock: ", 10))) {
        *strchr(err, '\n') = 0;
        printf("%s: PASS outcome=stops (%s)\n", rb_prog, err);
        return 0;
    }
    rb_fail(1, "status %d%s: %s", WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
            WIFSIGNALED(st) ? " (a signal)" : "", n ? err : "(nothing on stderr)");
}

/*
 * Waiters behind a long-held mutex: the main thread holds a mutex for
 * HOLD_MS while WAITERS threads wait for it; prints the CPU time the process
 * used (a lock whose waiters park uses almost none). Not a test: a measure.
 *   longhold [WAITERS [HOLD_MS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *waiter(void *arg)
{
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    return arg;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 8;
    long ms = argc > 2 ? atol(argv[2]) : 1000;
    pthread_t t[256];
    if (n < 1 || n > 256)
        return 2;
    pthread_mutex_lock(&m);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, waiter, NULL);
    struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&d, NULL);
    pthread_mutex_unlock(&m);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("longhold: %d waiters, held %ld ms, cpu %.3f s (user %.3f, sys %.3f)\n", n, ms,
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
           ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
    return 0;
}

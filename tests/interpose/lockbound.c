/*
 * A lock-bound program: THREADS threads each do ITERS critical sections on
 * one pthread mutex (a few shared cache lines updated inside, a little local
 * work outside). Prints the totals; `time` it with and without the preload
 * library. Usage: lockbound [THREADS [ITERS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static struct { long v[32]; } shared; /* 4 cache lines */
static long iters;

static void *worker(void *arg)
{
    unsigned x = (unsigned)(long)arg * 2654435761u + 1;
    long local = 0;
    for (long i = 0; i < iters; i++) {
        pthread_mutex_lock(&m);
        for (int k = 0; k < 32; k += 8)
            shared.v[k]++;
        pthread_mutex_unlock(&m);
        for (int k = 0; k < 20; k++) { /* non-critical work */
            x = x * 1103515245u + 12345u;
            local += x >> 16;
        }
    }
    return (void *)local;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 2;
    iters = argc > 2 ? atol(argv[2]) : 2000000;
    pthread_t t[256];
    if (threads < 1 || threads > 256)
        return 2;
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("lockbound: %d threads x %ld = %ld critical sections, counter %ld\n", threads, iters,
           threads * iters, shared.v[0]);
    return shared.v[0] == threads * iters ? 0 : 1;
}

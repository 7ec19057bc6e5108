/* numalock from C: four threads add to a counter under a lock chosen by name.
 *   cc counter.c $(pkg-config --cflags --libs numalock) -pthread -o counter
 *   ./counter [LOCK]        (LOCK: a name from `numalock list`; default mcs) */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <numalock/numalock.h>

enum { THREADS = 4, ITERS = 20000 };
static nl_lock_t *lock;
static long counter;

static void *work(void *arg)
{
    for (int i = 0; i < ITERS; i++) {
        nl_lock_acquire(lock);
        counter++;
        nl_lock_release(lock);
    }
    return arg;
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "mcs";
    char names[1024];
    if (!(lock = nl_lock_create(name, NULL))) { /* ENOENT: no such lock */
        fprintf(stderr, "counter: cannot create lock '%s': %s (locks: %s)\n", name,
                errno == ENOENT ? "unknown name" : strerror(errno), nl_lock_names(names, sizeof names));
        return 2;
    }
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    nl_lock_destroy(lock);
    printf("%s: %ld of %d\n", name, counter, THREADS * ITERS);
    return counter == THREADS * ITERS ? 0 : 1;
}

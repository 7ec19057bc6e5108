/*
 * A mutex used as a baton: one thread locks it, another unlocks it (glibc
 * allows this for normal mutexes and programs rely on it). PAIRS pairs of
 * threads pass ROUNDS items each; prints the sum of the items.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>

#define PAIRS 3
#define ROUNDS 20000

struct pair {
    pthread_mutex_t empty;   /* held while the slot is full; unlocked by the consumer */
    atomic_long slot;        /* 0: empty */
    long sum;
} pairs[PAIRS];

static void *producer(void *arg)
{
    struct pair *p = arg;
    for (long i = 1; i <= ROUNDS; i++) {
        pthread_mutex_lock(&p->empty);    /* wait until the consumer emptied the slot */
        atomic_store(&p->slot, i);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    struct pair *p = arg;
    for (long i = 1; i <= ROUNDS; i++) {
        long v;
        while (!(v = atomic_load(&p->slot)))
            sched_yield();
        atomic_store(&p->slot, 0);
        p->sum += v;
        pthread_mutex_unlock(&p->empty); /* unlocks the producer's lock */
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        pthread_mutex_init(&pairs[i].empty, NULL);
        pthread_create(&t[2 * i], NULL, producer, &pairs[i]);
        pthread_create(&t[2 * i + 1], NULL, consumer, &pairs[i]);
    }
    long total = 0;
    for (int i = 0; i < PAIRS; i++) {
        pthread_join(t[2 * i], NULL);
        pthread_join(t[2 * i + 1], NULL);
        total += pairs[i].sum;
    }
    printf("cross-thread unlock: %d pairs x %d items, sum %ld\n", PAIRS, ROUNDS, total);
    return 0;
}

/* Does the store buffer keep a test-and-set lock with its releaser? Two
 * threads take a word with exchange (waiters pause and retry), touch four
 * shared lines, release with a store, and go round after a few
 * instructions; with argument 1 a fence after the release drains the store
 * buffer, so the releaser waits for its line before it goes on (as the
 * simulator's "a store waits for its line" does). Prints operations per
 * second and hand-overs (a different thread than the last holder) per
 * operation, for half a second.
 *   cc -O2 -pthread lab/scripts/store-buffer-handover.c -o /tmp/sbh && /tmp/sbh 0 && /tmp/sbh 1
 * (x86-64: _mm_pause) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <immintrin.h>
#include <time.h>
static _Alignas(64) atomic_int word;
static _Alignas(64) volatile long data[4 * 8];
static _Alignas(64) int last_owner = -1;
static long handovers, ops_total;
static atomic_int stop;
static int fence;
static void *run(void *arg) {
    int me = (int)(long)arg; long n = 0, h = 0; unsigned r = me * 7919 + 1;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        while (atomic_exchange_explicit(&word, 1, memory_order_acquire)) _mm_pause();
        if (last_owner != me) { h++; last_owner = me; }
        for (int i = 0; i < 4; i++) data[i * 8] += r;
        atomic_store_explicit(&word, 0, memory_order_release);
        if (fence) atomic_thread_fence(memory_order_seq_cst);
        r = r * 1103515245u + 12345u; /* outside work: a few instructions */
        n++;
    }
    __atomic_add_fetch(&handovers, h, __ATOMIC_RELAXED);
    __atomic_add_fetch(&ops_total, n, __ATOMIC_RELAXED);
    return 0;
}
int main(int argc, char **argv) {
    fence = argc > 1 && atoi(argv[1]);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], 0, run, (void *)i);
    struct timespec ts = {0, 500000000}; nanosleep(&ts, 0);
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) pthread_join(t[i], 0);
    printf("fence=%d ops=%.2fM/s handovers/op=%.3f\n", fence, ops_total / 0.5 / 1e6, (double)handovers / ops_total);
}

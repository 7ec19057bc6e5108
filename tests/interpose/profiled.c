/*
 * A program for the lock profile's tests (profile_test.sh), built with -g: its
 * mutexes are first locked in functions with names of their own, so the
 * profile can be checked for those names, the source file and the lines.
 *
 * THREADS threads start together; each first locks COLD mutexes of its own
 * at once (profiled_setup: many objects first seen at the same moment, from
 * every thread, each walking its stack when stacks are on), then all share
 * one mutex (profiled_contend, called from profiled_worker) and hold it
 * across a short sleep, so that the others find it taken. Prints the
 * counters; exit 0 when they are right.
 *
 * With "register-frames", the program's unwind tables are first registered
 * with libgcc's unwinder, as JIT compilers register theirs: from then on
 * every stack walk takes libgcc's own mutex (a pthread mutex, so the
 * preload's), and the profile's walks must neither recurse nor deadlock.
 * Usage: profiled [THREADS [ITERS [register-frames]]]   (ITERS 0: only the cold mutexes)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_THREADS 64
#define COLD 32

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cold[MAX_THREADS][COLD];
static long cold_count[MAX_THREADS];
static long counter, iters;
static pthread_barrier_t start;

/* extern, not static, and neither inlined nor cloned: the symbol table keeps
 * these exact names */
__attribute__((noinline, noclone)) void profiled_setup(long id)
{
    for (int j = 0; j < COLD; j++) {
        pthread_mutex_lock(&cold[id][j]); /* profiled: cold lock */
        cold_count[id]++;
        pthread_mutex_unlock(&cold[id][j]);
    }
}

__attribute__((noinline, noclone)) void profiled_contend(long n)
{
    const struct timespec pause = { 0, 20000 };
    for (long i = 0; i < n; i++) {
        pthread_mutex_lock(&hot); /* profiled: hot lock */
        counter++;
        nanosleep(&pause, NULL); /* held while asleep: the other threads find it taken */
        pthread_mutex_unlock(&hot);
    }
}

__attribute__((noinline, noclone)) void profiled_worker(long id)
{
    profiled_setup(id);
    profiled_contend(iters);
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame stays on the stack */
}

/* libgcc's registration call (unwind-dw2-fde.h); `object` is its private
 * bookkeeping, larger here than it needs */
extern void __register_frame_info(const void *eh_frame, void *object);
static void *frame_object[16];
static const void *main_eh_frame;

static int find_eh_frame(struct dl_phdr_info *info, size_t size, void *arg)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type != PT_GNU_EH_FRAME)
            continue;
        /* .eh_frame_hdr: version, the pointer's encoding, ..., then the
         * pointer to .eh_frame, PC-relative and 4 bytes (0x1b) as ld writes it */
        const unsigned char *hdr = (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        int32_t off;
        memcpy(&off, hdr + 4, sizeof off);
        if (hdr[0] == 1 && hdr[1] == 0x1b)
            main_eh_frame = hdr + 4 + off;
    }
    return 1; /* the first module is the program */
}

static void *thread_main(void *arg)
{
    pthread_barrier_wait(&start);
    profiled_worker((long)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    iters = argc > 2 ? atol(argv[2]) : 200;
    if (threads < 2 || threads > MAX_THREADS || iters < 0)
        return 2;
    if (argc > 3 && !strcmp(argv[3], "register-frames")) {
        dl_iterate_phdr(find_eh_frame, NULL);
        if (!main_eh_frame) {
            fprintf(stderr, "profiled: no .eh_frame_hdr of the expected form\n");
            return 2;
        }
        __register_frame_info(main_eh_frame, frame_object);
    }
    for (int i = 0; i < threads; i++)
        for (int j = 0; j < COLD; j++)
            pthread_mutex_init(&cold[i][j], NULL);
    pthread_t t[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (long i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, thread_main, (void *)i))
            return 3;
    long cold_total = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        cold_total += cold_count[i];
    }
    printf("profiled: %d threads, hot %ld, cold %ld\n", threads, counter, cold_total);
    return counter == threads * iters && cold_total == (long)threads * COLD ? 0 : 1;
}

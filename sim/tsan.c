/* The compiler's thread-sanitizer calls (GCC and Clang, -fsanitize=thread
 * with --param tsan-instrument-func-entry-exit=0), defined by the simulator
 * instead of the sanitizer's runtime, as the Linux kernel's KCSAN defines
 * its own: every load and store of the instrumented code is announced here
 * before it happens, and every atomic operation is performed here. Each is
 * charged by the coherence model (memory.c), which may run other fibers
 * first; the operation itself then takes effect. */
#include <stdint.h>
#include "sim.h"

void __tsan_init(void) {}
void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}

#define PLAIN(n)                                                                               \
    void __tsan_read##n(void *a) { sim_access(a, n, SIM_LOAD); }                               \
    void __tsan_write##n(void *a) { sim_access(a, n, SIM_STORE); }                             \
    void __tsan_unaligned_read##n(void *a) { sim_access(a, n, SIM_LOAD); }                     \
    void __tsan_unaligned_write##n(void *a) { sim_access(a, n, SIM_STORE); }                   \
    void __tsan_volatile_read##n(void *a) { sim_access(a, n, SIM_LOAD); }                      \
    void __tsan_volatile_write##n(void *a) { sim_access(a, n, SIM_STORE); }
PLAIN(1)
PLAIN(2)
PLAIN(4)
PLAIN(8)
PLAIN(16)

void __tsan_read_range(void *a, unsigned long n) { sim_access(a, n, SIM_LOAD); }
void __tsan_write_range(void *a, unsigned long n) { sim_access(a, n, SIM_STORE); }

/* the order argument is not needed: one fiber runs at a time, in the order
 * of virtual time, so every atomic is sequentially consistent here */
#define ATOMICS(n, T)                                                                                         \
    T __tsan_atomic##n##_load(const volatile T *a, int mo)                                                    \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_LOAD);                                                                       \
        return __atomic_load_n(a, __ATOMIC_RELAXED);                                                          \
    }                                                                                                         \
    void __tsan_atomic##n##_store(volatile T *a, T v, int mo)                                                 \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_STORE);                                                                      \
        __atomic_store_n(a, v, __ATOMIC_RELAXED);                                                             \
    }                                                                                                         \
    T __tsan_atomic##n##_exchange(volatile T *a, T v, int mo)                                                 \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_exchange_n(a, v, __ATOMIC_RELAXED);                                                   \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_add(volatile T *a, T v, int mo)                                                \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);                                                    \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_sub(volatile T *a, T v, int mo)                                                \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED);                                                    \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_and(volatile T *a, T v, int mo)                                                \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_and(a, v, __ATOMIC_RELAXED);                                                    \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_or(volatile T *a, T v, int mo)                                                 \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_or(a, v, __ATOMIC_RELAXED);                                                     \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_xor(volatile T *a, T v, int mo)                                                \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED);                                                    \
    }                                                                                                         \
    T __tsan_atomic##n##_fetch_nand(volatile T *a, T v, int mo)                                               \
    {                                                                                                         \
        (void)mo;                                                                                             \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_fetch_nand(a, v, __ATOMIC_RELAXED);                                                   \
    }                                                                                                         \
    int __tsan_atomic##n##_compare_exchange_strong(volatile T *a, T *c, T v, int mo, int fmo)                 \
    {                                                                                                         \
        (void)mo, (void)fmo;                                                                                  \
        sim_access(a, n / 8, SIM_RMW);                                                                        \
        return __atomic_compare_exchange_n(a, c, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);                   \
    }                                                                                                         \
    int __tsan_atomic##n##_compare_exchange_weak(volatile T *a, T *c, T v, int mo, int fmo)                   \
    {                                                                                                         \
        return __tsan_atomic##n##_compare_exchange_strong(a, c, v, mo, fmo);                                  \
    }                                                                                                         \
    T __tsan_atomic##n##_compare_exchange_val(volatile T *a, T c, T v, int mo, int fmo)                       \
    {                                                                                                         \
        __tsan_atomic##n##_compare_exchange_strong(a, &c, v, mo, fmo);                                        \
        return c;                                                                                             \
    }
ATOMICS(8, uint8_t)
ATOMICS(16, uint16_t)
ATOMICS(32, uint32_t)
ATOMICS(64, uint64_t)

void __tsan_atomic_thread_fence(int mo)
{
    (void)mo;
    if (!sim_cur)
        return;
    sim_advance(sim_m.c_atomic); /* a full fence drains the store buffer: about a locked instruction */
}
void __tsan_atomic_signal_fence(int mo) { (void)mo; }

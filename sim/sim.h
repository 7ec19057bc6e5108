/*
 * The simulator's runtime (docs/SIMULATION.md): the library's own lock code
 * and the benchmark workloads, compiled with the compiler's thread-sanitizer
 * instrumentation, run as fibers on a modelled multi-socket machine in
 * virtual time. Every memory access and atomic operation of that code comes
 * here (tsan.c), is charged by the cache-coherence model (memory.c) and
 * advances the fiber's clock; the fiber with the earliest clock runs
 * (sched.c). The library's machine seam (src/core/machine.h, NL_SIM) and the
 * few libc calls of the workloads (threads, sleeping) are the simulator's
 * (seam.c). Machines are described in sim/machines.txt (machine.c).
 *
 * Time is kept in picoseconds. Everything runs on one OS thread, so the
 * runtime's state is plain global data; the runtime itself is not
 * instrumented.
 */
#ifndef NL_SIM_H
#define NL_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_CPUS 512
#define SIM_MAX_SOCKETS 16
#define SIM_MAX_FIBERS 1024
#define SIM_WORDS (SIM_MAX_CPUS / 64)

typedef uint64_t sim_time_t; /* picoseconds */
#define SIM_NS(x) ((sim_time_t)((x) * 1000.0 + 0.5))

/* ---- the machine (machine.c) ------------------------------------------------ */
typedef struct sim_costs {
    double hit, llc, c2c_domain, c2c_socket, remote1, remote2;
    double mem_local, mem_remote1, mem_remote2;
    double atomic_cycles, pause_cycles;
    double futex_wait, futex_wake, wakeup, yield;
} sim_costs_t;

typedef struct sim_machine {
    char name[64];
    char description[256];
    int sockets, cores_per_socket, threads_per_core, domains_per_socket;
    double ghz;
    int pairs;                    /* links = pairs: 2-socket blades behind node controllers */
    sim_costs_t ns;               /* in ns (cycles converted) */
    char source[32][320];         /* "key: comment" of each parameter, for --machines */
    int nsource;
    /* derived */
    int ncpus, ncores;
    int cpu_core[SIM_MAX_CPUS], cpu_socket[SIM_MAX_CPUS], cpu_domain[SIM_MAX_CPUS];
    sim_time_t c_hit, c_llc, c_c2c_domain, c_c2c_socket, c_remote[3], c_mem[3];
    sim_time_t c_atomic, c_pause, c_futex_wait, c_futex_wake, c_wakeup, c_yield, c_clock;
} sim_machine_t;

extern sim_machine_t sim_m;

/* Reads machine `name` from the file; 0, or -1 with one sentence in err. */
int sim_machine_load(const char *file, const char *name, char *err, size_t len);
/* Writes the names of the file's machines, "a, b, c", into buf. */
int sim_machine_names(const char *file, char *buf, size_t len);
/* Prints every machine of the file with its parameters and sources. */
int sim_machine_list(const char *file);
/* The machine `local` (local.c): this host, measured once and kept in a
 * machines file whose path goes into file_out; 0, or -1 with err set. */
int sim_machine_local(char *file_out, size_t len, char *err, size_t errlen);
/* Socket hops between two sockets: 0, 1 or 2. */
int sim_hops(int s1, int s2);
/* The library's topology for the machine: "cpus:A/B|C/..." into buf. */
void sim_topology_spec(char *buf, size_t len);
/* The CPU order of a placement, "spread" (Linux's balancer on an idle
 * machine: sockets in turn, then cache domains, cores before their second
 * hardware threads) or "fill" (one socket's cores, then the next socket's;
 * second hardware threads last); 0 or -1 if unknown. */
int sim_placement(const char *name, int *order);

/* ---- fibers and the scheduler (fiber.c, sched.c) ---------------------------- */
enum { SIM_READY, SIM_RUNNING, SIM_BLOCKED, SIM_DONE };

typedef struct sim_fiber {
    int id;
    int state;
    int cpu;                    /* hardware thread it runs on; -1: none (the main fiber) */
    sim_time_t clock;           /* its virtual time */
    uint64_t heap_gen;          /* stale heap entries carry an older one */
    int timed_out;              /* the last block ended by its timeout */
    void *sp;                   /* saved stack pointer */
    void *stack;
    size_t stack_size;
    void *tls;                  /* its copy of the program's TLS block */
    void *(*fn)(void *);
    void *arg, *ret;
    int joiner;                 /* fiber waiting in join, -1 */
    bool detached;
    /* the futex it sleeps on */
    void *futex;
    int futex_next;
    /* spinning: lines read since its last pause, their versions; wrote since */
    int nreads;
    uint64_t read_line[8];
    uint32_t read_ver[8];
    bool wrote;
    int watching;               /* lines it sleeps on (watch list in memory.c) */
    sim_time_t spin_quantum;    /* a watched sleep's timeout */
    sim_time_t last_pause;      /* clock at its last pause */
    /* per-fiber counters */
    uint64_t accesses, misses, llc_misses;
} sim_fiber_t;

extern sim_fiber_t *sim_cur;              /* the running fiber */
extern sim_fiber_t *sim_fibers[SIM_MAX_FIBERS];
extern int sim_nfibers;
extern uint64_t sim_switches;

void sim_fiber_init(void);                /* the main fiber is the calling thread */
sim_fiber_t *sim_fiber_create(void *(*fn)(void *), void *arg, int cpu);
void sim_fiber_switch(sim_fiber_t *from, sim_fiber_t *to);
void sim_fiber_free(sim_fiber_t *f);

void sim_sched_init(uint64_t seed);
/* After an event that advanced the running fiber's clock: let an earlier
 * fiber run first. */
void sim_advance(sim_time_t cost);
static inline void sim_charge(sim_time_t cost) { sim_cur->clock += cost; }
void sim_yield_point(void);
/* Block the running fiber (state BLOCKED set by the caller's bookkeeping)
 * until sim_wake or its deadline (0: none); returns 1 if the deadline ended it. */
int sim_block(sim_time_t deadline);
/* Make a blocked fiber ready at time t (no earlier than its own clock). */
void sim_wake(sim_fiber_t *f, sim_time_t t);
/* The fiber ends (never returns). */
void sim_exit_fiber(void *ret) __attribute__((noreturn));
sim_time_t sim_now(void);
void sim_move_cpu(sim_fiber_t *f, int cpu);   /* the running fiber changes CPU */
uint64_t sim_random(void);                 /* the scheduler's seeded generator */
int sim_runnable(void);                    /* fibers ready or running */

/* ---- memory (memory.c) -------------------------------------------------------- */
enum { SIM_LOAD, SIM_STORE, SIM_RMW };
void sim_mem_init(void);
/* One access of `size` bytes at addr by the running fiber: charged and
 * scheduled (the caller then performs it). */
void sim_access(const volatile void *addr, size_t size, int kind);
/* A pause of a polling loop: charged; a fiber whose loop only re-reads
 * lines nobody wrote sleeps until one of them is written (or a while). */
void sim_pause(void);
/* Lines of [addr, addr+len) have their memory on socket `node`. */
void sim_mem_home(const void *addr, size_t len, int node);
void sim_mem_unhome(const void *addr);          /* the range starting at addr is freed */
int sim_mem_home_of(const void *addr);          /* its socket, -1 if not placed or touched yet */
void sim_mem_stats(uint64_t *accesses, uint64_t *misses, uint64_t *llc_misses, uint64_t *lines);
void sim_unwatch(sim_fiber_t *f);

/* ---- futex (sched.c) ------------------------------------------------------------ */
int sim_futex_wait(void *word, uint32_t val, uint64_t timeout_ns);
int sim_futex_wake(void *word, int n);

#endif

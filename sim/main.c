/* numalock-sim: a benchmark workload of `numalock bench` on a modelled machine
 * (docs/SIMULATION.md). `numalock sim` runs this program.
 *
 *   numalock-sim --machines [--machines-file FILE]
 *   numalock-sim WORKLOAD --machine NAME [--virtual-ms MS] [--seed N]
 *                [--placement spread|fill] [--machines-file FILE]
 *                [--lock A,B] [--threads 1,2,...] [the workload's options] [--json FILE]
 *
 * The workload runs as in `numalock bench`, on the machine's topology
 * (its sockets as nodes, its cache domains as a level below), for MS
 * milliseconds of virtual time per measurement; its JSON records are
 * bench's, with the machine, the simulated cache misses per operation and
 * the host seconds each record took. Same seed, same output. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include "sim.h"
#include "../bench/bench.h"

int bench_main(int argc, char **argv, const char *command_line);
extern int sim_place_order[SIM_MAX_CPUS];
extern int sim_place_n;

static const char *const sim_workloads[] = { "kvmap", "contention", "rwhash", NULL };

static double host_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- figures of a record's measured interval ---------------------------------- */
static uint64_t w_acc, w_miss, w_llc;
static double w_host, last_end;
static int quiet;

static void window(int begin, bench_record_t *r)
{
    uint64_t acc, miss, llc, n;
    sim_mem_stats(&acc, &miss, &llc, &n);
    if (begin) {
        w_acc = acc, w_miss = miss, w_llc = llc;
        return;
    }
    double host = host_now(), ops = r->ops ? (double)r->ops : 1;
    snprintf(r->more, sizeof r->more,
             "\"machine\": \"%s\", \"sim_accesses_per_op\": %.2f, \"sim_misses_per_op\": %.3f, "
             "\"sim_llc_misses_per_op\": %.3f, \"sim_host_s\": %.2f",
             sim_m.name, (double)(acc - w_acc) / ops, (double)(miss - w_miss) / ops, (double)(llc - w_llc) / ops,
             host - last_end);
    if (!quiet)
        fprintf(stderr, "numalock sim: %s, %s, %d threads: %.3g ops/s (%.2f s of host time)\n", sim_m.name, r->lock,
                r->threads, r->throughput, host - last_end);
    last_end = host;
    (void)w_host;
}

static int usage(void)
{
    fprintf(stderr, "usage: numalock sim WORKLOAD --machine NAME [--virtual-ms MS] [--seed N] "
                    "[--placement spread|fill] [--machines-file FILE] [--lock A,B] [--threads 1,2,...] "
                    "[workload options] [--json FILE]\n"
                    "       numalock sim --machines [--machines-file FILE]\n");
    return 2;
}

/* the machines file: --machines-file, else $NUMALOCK_SIM_MACHINES, else beside
 * this program (../share/numalock/machines.txt installed, the source tree's
 * sim/machines.txt built) */
static const char *machines_file(const char *given)
{
    static char path[4096];
    if (given)
        return given;
    const char *env = getenv("NUMALOCK_SIM_MACHINES");
    if (env && *env)
        return env;
    char exe[4000];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(path, sizeof path, "%s/../share/numalock/machines.txt", exe);
        if (access(path, R_OK) == 0)
            return path;
    }
#ifdef NL_SIM_SOURCE_MACHINES
    /* a fixed size: the checkout's path does not move the program's data */
    static const char source_machines[4096] = NL_SIM_SOURCE_MACHINES;
    return source_machines;
#else
    return "sim/machines.txt";
#endif
}

/* a run that cannot have the addresses of every other run says so (its
 * figures are one sample of another layout) */
static void not_fixed(const char *what)
{
    fprintf(stderr, "numalock sim: %s (%s): this run's addresses, and so its figures, may differ from another run's\n",
            what, strerror(errno));
}

/* a run is deterministic only with the same addresses every time (the
 * library hashes lock addresses): without address randomisation */
static void same_addresses(char **argv)
{
    int p = personality(0xffffffff);
    if (p == -1) {
        not_fixed("cannot read the process's personality");
        return;
    }
    if ((p & ADDR_NO_RANDOMIZE) || getenv("NUMALOCK_SIM_ASLR"))
        return;
    if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1) {
        not_fixed("cannot turn off address randomisation");
        return;
    }
    execv("/proc/self/exe", argv);
    not_fixed("cannot run itself again without address randomisation");
}

/* ... and at addresses that do not depend on the environment: the initial
 * stack, with the argument strings on it, sits below the environment's
 * strings, so a variable more or less moved the workload's stack objects
 * and the lines its option strings take, and changed the figures. The
 * workload runs on a stack of its own (mmap's place is fixed without
 * randomisation) with its arguments copied to a block of the program's. */
static struct {
    int argc, rc;
    char **argv;
    const char *cmd;
    ucontext_t caller, bench;
} run;

static void run_bench(void) { run.rc = bench_main(run.argc, run.argv, run.cmd); }

static int bench_main_fixed_stack(int argc, char **argv, const char *cmd)
{
    const size_t size = 64u << 20; /* reserved, touched as used */
    void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED || getcontext(&run.bench)) {
        not_fixed("cannot set up the workload's own stack");
        return bench_main(argc, argv, cmd);
    }
    /* one block, each string on lines of its own: the heap after it and
     * the lines each string takes do not depend on the others' lengths */
    static char args[1 << 16] __attribute__((aligned(64)));
    size_t off = 0;
    for (int i = 0; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1;
        if (off + n > sizeof args) {
            errno = E2BIG;
            not_fixed("cannot copy the arguments to their fixed place");
            return bench_main(argc, argv, cmd);
        }
        argv[i] = memcpy(args + off, argv[i], n);
        off += (n + 63) & ~(size_t)63;
    }
    run.argc = argc, run.argv = argv, run.cmd = cmd;
    run.bench.uc_stack.ss_sp = stack;
    run.bench.uc_stack.ss_size = size;
    run.bench.uc_link = &run.caller;
    makecontext(&run.bench, run_bench, 0);
    if (swapcontext(&run.caller, &run.bench)) {
        not_fixed("cannot switch to the workload's own stack");
        return bench_main(argc, argv, cmd);
    }
    return run.rc;
}

int main(int argc, char **argv)
{
    char err[512];
    const char *machine = NULL, *file = NULL, *placement = "spread";
    double virtual_ms = 10;
    unsigned long long seed = 1;
    int list = 0;
    char **rest = calloc((size_t)argc + 8, sizeof *rest);
    int nrest = 0;
    if (!rest)
        return 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--machines")) {
            list = 1;
        } else if (!strcmp(a, "--machine") || !strcmp(a, "--machines-file") || !strcmp(a, "--virtual-ms") ||
                   !strcmp(a, "--seed") || !strcmp(a, "--placement")) {
            if (!v) {
                fprintf(stderr, "numalock sim: option '%s' needs a value\n", a);
                return 2;
            }
            i++;
            char *end;
            if (!strcmp(a, "--machine"))
                machine = v;
            else if (!strcmp(a, "--machines-file"))
                file = v;
            else if (!strcmp(a, "--placement"))
                placement = v;
            else if (!strcmp(a, "--seed")) {
                errno = 0;
                seed = strtoull(v, &end, 10);
                if (end == v || *end || errno) {
                    fprintf(stderr, "numalock sim: bad value '%s' for --seed: expected a whole number\n", v);
                    return 2;
                }
            } else {
                virtual_ms = strtod(v, &end);
                if (end == v || *end || !(virtual_ms > 0) || virtual_ms > 100000) {
                    fprintf(stderr, "numalock sim: bad value '%s' for --virtual-ms: expected milliseconds, "
                                    "above 0 and at most 100000\n", v);
                    return 2;
                }
            }
        } else if (!strcmp(a, "--duration") || !strcmp(a, "--topology")) {
            fprintf(stderr, "numalock sim: %s is not an option of the simulator: the time is --virtual-ms and "
                            "the topology is the machine's\n", a);
            return 2;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage();
            return 0;
        } else {
            if (!strcmp(a, "--quiet"))
                quiet = 1;
            rest[nrest++] = argv[i];
        }
    }
    file = machines_file(file);
    if (list) {
        int rc = sim_machine_list(file);
        char lf[4096];
        if (!rc && !sim_machine_local(lf, sizeof lf, err, sizeof err))
            rc = sim_machine_list(lf);
        return rc;
    }
    if (!nrest || rest[0][0] == '-')
        return usage();
    int known = 0;
    for (int k = 0; sim_workloads[k]; k++)
        known |= !strcmp(rest[0], sim_workloads[k]);
    if (!known) {
        fprintf(stderr, "numalock sim: workload '%s' is not simulated: valid choices are kvmap, contention, rwhash\n",
                rest[0]);
        return 2;
    }
    if (!machine) {
        char names[1024];
        sim_machine_names(file, names, sizeof names);
        fprintf(stderr, "numalock sim: --machine is needed: valid choices are %s, local\n", names);
        return 2;
    }
    static char local_file[4096];
    if (!strcmp(machine, "local")) {
        if (sim_machine_local(local_file, sizeof local_file, err, sizeof err)) {
            fprintf(stderr, "numalock sim: %s\n", err);
            return 1;
        }
        file = local_file;
    }
    if (sim_machine_load(file, machine, err, sizeof err)) {
        fprintf(stderr, "numalock sim: %s\n", err);
        return 2;
    }
    if (sim_placement(placement, sim_place_order)) {
        fprintf(stderr, "numalock sim: unknown placement '%s': valid choices are spread and fill\n", placement);
        return 2;
    }
    sim_place_n = sim_m.ncpus;
    same_addresses(argv);

    sim_fiber_init();
    sim_sched_init(seed);
    sim_mem_init();
    static char topo[4096], dur[64], meta[512], cmd[4096];
    sim_topology_spec(topo, sizeof topo);
    snprintf(dur, sizeof dur, "%.9g", virtual_ms / 1000.0);
    rest[nrest++] = "--duration";
    rest[nrest++] = dur;
    rest[nrest++] = "--topology";
    rest[nrest++] = topo;
    snprintf(meta, sizeof meta, "\"simulated_machine\": \"%s\", \"sim_seed\": %llu, \"sim_placement\": \"%s\", "
             "\"sim_virtual_ms\": %g", sim_m.name, seed, placement, virtual_ms);
    bench_meta = meta;
    bench_window = window;
    size_t off = (size_t)snprintf(cmd, sizeof cmd, "numalock sim");
    for (int i = 1; i < argc && off < sizeof cmd; i++)
        off += (size_t)snprintf(cmd + off, sizeof cmd - off, " %s", argv[i]);
    last_end = host_now();
    int rc = bench_main_fixed_stack(nrest, rest, cmd);
    fflush(stdout);
    if (getenv("NUMALOCK_SIM_DEBUG")) {
        uint64_t acc, miss, llc, n;
        sim_mem_stats(&acc, &miss, &llc, &n);
        extern uint64_t sim_pause_stats[4];
        fprintf(stderr, "numalock sim: pauses: %llu quiet, %llu after writes, %llu without reads, %llu changed\n",
                (unsigned long long)sim_pause_stats[0], (unsigned long long)sim_pause_stats[1],
                (unsigned long long)sim_pause_stats[2], (unsigned long long)sim_pause_stats[3]);
        void sim_mem_report(FILE *, int);
        sim_mem_report(stderr, 8);
        fprintf(stderr, "numalock sim: %llu switches, %llu accesses, %llu misses, %llu lines, clock %.3f ms\n",
                (unsigned long long)sim_switches, (unsigned long long)acc, (unsigned long long)miss,
                (unsigned long long)n, (double)sim_cur->clock / 1e9);
    }
    return rc;
}

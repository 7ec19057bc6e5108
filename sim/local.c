/* The machine `local`: this host, measured (sim.h). Its shape comes from
 * sysfs (sockets, cores, hardware threads, last-level cache domains); its
 * costs from short measurements here: pointer chases for a hit, the
 * last-level cache and memory; a compare-and-swap ping-pong between two
 * cores for a transfer (or the matrix of `numalock topo --measure --json
 * FILE`, given with NUMALOCK_SIM_TOPO_MEASURE=FILE); a locked add against a
 * store; a pause loop; the futex and sched_yield. The result is kept in
 * ~/.cache/numalock/sim-local.txt (machines.txt's form) and read from there
 * while the host's CPUs are the same, so that runs repeat. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "sim.h"

int __real_pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int __real_pthread_join(pthread_t, void **);
int __real_sched_yield(void); /* the runtime's own calls are redirected too (--wrap) */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int read_int(const char *path)
{
    FILE *f = fopen(path, "r");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* CPUs in a sysfs CPU list file */
static int list_count(const char *path)
{
    FILE *f = fopen(path, "r");
    int n = 0, a, b;
    char sep;
    if (!f)
        return 0;
    while (fscanf(f, "%d", &a) == 1) {
        b = a;
        if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
            if (fscanf(f, "%d", &b) != 1)
                break;
            if (fscanf(f, "%c", &sep) != 1)
                sep = 0;
        }
        n += b - a + 1;
        if (sep != ',')
            break;
    }
    fclose(f);
    return n;
}

/* ---- measurements -------------------------------------------------------------- */
static double chase(size_t bytes)
{
    size_t n = bytes / sizeof(void *);
    void **a = malloc(n * sizeof *a);
    size_t *perm = malloc(n * sizeof *perm);
    if (!a || !perm)
        return 0;
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t x = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) { /* one cycle through a random order, a line apart at least */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t j = x % i, t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        a[perm[i]] = &a[perm[(i + 1) % n]];
    void **p = &a[perm[0]];
    size_t steps = n * 4 > 20000000 ? 20000000 : n * 4;
    for (size_t i = 0; i < n; i++) /* warm */
        p = (void **)*p;
    double t0 = now_ns();
    for (size_t i = 0; i < steps; i++)
        p = (void **)*p;
    double t = (now_ns() - t0) / (double)steps;
    if (!p)
        t = 0;
    free(a);
    free(perm);
    return t;
}

static _Atomic uint64_t ball;
static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof s, &s);
}
static int other_cpu = 1;
#define TRIPS 2000
static void *bouncer(void *arg)
{
    (void)arg;
    pin(other_cpu);
    for (uint64_t i = 1; i < 2 * TRIPS; i += 2) {
        uint64_t e = i;
        while (!atomic_compare_exchange_weak(&ball, &e, i + 1))
            e = i;
    }
    return NULL;
}

/* one way of a CAS ping-pong between CPU 0 and `cpu` */
static double c2c(int cpu)
{
    pthread_t t;
    other_cpu = cpu;
    atomic_store(&ball, 0);
    pin(0);
    if (__real_pthread_create(&t, NULL, bouncer, NULL))
        return 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < 2 * TRIPS; i += 2) {
        uint64_t e = i;
        while (!atomic_compare_exchange_weak(&ball, &e, i + 1))
            e = i;
    }
    double ns = (now_ns() - t0) / (2.0 * TRIPS);
    __real_pthread_join(t, NULL);
    return ns;
}

static _Atomic uint32_t fword;
static void *futex_partner(void *arg)
{
    (void)arg;
    pin(other_cpu);
    for (uint32_t i = 1; i < 2 * 2000; i += 2) {
        while (atomic_load(&fword) != i)
            syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, i - 1, NULL, NULL, 0);
        atomic_store(&fword, i + 1);
        syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    return NULL;
}

/* a futex ping-pong: one round trip is two wakes and two wake-ups */
static double futex_round_trip(int cpu)
{
    pthread_t t;
    other_cpu = cpu;
    atomic_store(&fword, 0);
    if (__real_pthread_create(&t, NULL, futex_partner, NULL))
        return 0;
    double t0 = now_ns();
    for (uint32_t i = 0; i < 2 * 2000; i += 2) {
        atomic_store(&fword, i + 1);
        syscall(SYS_futex, &fword, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        while (atomic_load(&fword) != i + 2)
            syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, i + 1, NULL, NULL, 0);
    }
    double ns = (now_ns() - t0) / 2000;
    __real_pthread_join(t, NULL);
    return ns;
}

static double per_call(int what)
{
    const int n = 200000;
    _Atomic uint64_t v = 0;
    volatile uint64_t plain = 0;
    uint32_t word = 1;
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        switch (what) {
        case 0: atomic_fetch_add(&v, 1); break;
        case 1: plain = plain + 1; break;
        case 2: __builtin_ia32_pause(); break;
        case 3: syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); break; /* EAGAIN */
        case 4: syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); break;
        default: __real_sched_yield();
        }
    }
    return (now_ns() - t0) / n;
}

static double ghz(void)
{
    double t0 = now_ns();
    uint64_t c0 = __builtin_ia32_rdtsc();
    while (now_ns() - t0 < 20e6)
        ;
    return (double)(__builtin_ia32_rdtsc() - c0) / (now_ns() - t0);
}

/* ---- the machine ------------------------------------------------------------------ */
static void cache_path(char *buf, size_t len)
{
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    if (x && *x)
        snprintf(buf, len, "%s/numalock/sim-local.txt", x);
    else
        snprintf(buf, len, "%s/.cache/numalock/sim-local.txt", h && *h ? h : "/tmp");
}

/* the measured c2c of a `numalock topo --measure --json` file: the mean of
 * its matrix's entries (0 if unreadable) */
static double c2c_from_file(const char *file)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *m = strstr(buf, "\"matrix_ns\"");
    double sum = 0;
    int k = 0, depth = 0;
    for (char *p = m ? strchr(m, '[') : NULL; p && *p; p++) {
        depth += *p == '[' ? 1 : *p == ']' ? -1 : 0;
        if (!depth)
            break;
        if (*p >= '0' && *p <= '9') {
            char *e;
            sum += strtod(p, &e);
            k++;
            p = e - 1;
        }
    }
    return k ? sum / k : 0;
}

int sim_machine_local(char *file_out, size_t len, char *err, size_t errlen)
{
    char path[4096];
    cache_path(path, sizeof path);
    snprintf(file_out, len, "%s", path);
    int online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    /* kept while it describes the same CPUs */
    FILE *f = fopen(path, "r");
    if (f) {
        char line[512];
        int cpus = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "# online_cpus %d", &cpus) == 1)
                break;
        fclose(f);
        if (cpus == online && !getenv("NUMALOCK_SIM_REMEASURE"))
            return 0;
    }
    int tpc = list_count("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list");
    int sockets = 0, seen[SIM_MAX_SOCKETS] = { 0 };
    for (int c = 0; c < online && c < SIM_MAX_CPUS; c++) {
        char p[128];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        int s = read_int(p);
        if (s >= 0 && s < SIM_MAX_SOCKETS && !seen[s]++)
            sockets++;
    }
    sockets = sockets ? sockets : 1;
    tpc = tpc > 0 ? tpc : 1;
    int l3 = list_count("/sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list");
    int per_socket = online / sockets;
    int domains = l3 > 0 && per_socket % l3 == 0 ? per_socket / l3 : 1;
    fprintf(stderr, "numalock sim: measuring this machine for `local` (once; kept in %s)\n", path);
    double g = ghz(), hit = 0, llc = 0, mem = 0;
    for (int r = 0; r < 3; r++) { /* the least of 3: a neighbour's burst only slows one down */
        double a = chase(16 << 10), b = chase(4 << 20), c = chase(256u << 20);
        hit = !r || a < hit ? a : hit;
        llc = !r || b < llc ? b : llc;
        mem = !r || c < mem ? c : mem;
    }
    const char *tm = getenv("NUMALOCK_SIM_TOPO_MEASURE");
    double x = 0;
    char measured[4200] = "";
    if (online > 1 && !tm) { /* the command's own measurement, `numalock topo --measure` */
        char exe[4000];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(measured, sizeof measured, "%s.topo.json", path);
        char cmd[12000];
        snprintf(cmd, sizeof cmd, "'%s/numalock' topo --measure --json '%s' >/dev/null 2>&1", exe, measured);
        if (system(cmd) == 0)
            tm = measured;
    }
    if (tm)
        x = c2c_from_file(tm);
    for (int r = 0; r < 7 && online > 1 && !(x > 0); r++) { /* no command beside: a ping-pong of our own */
        double v = c2c(tpc > 1 && online > tpc ? tpc : 1);
        x = r == 0 || (v > 0 && v < x) ? v : x;
    }
    if (!(x > 0))
        x = llc;
    double atomic = per_call(0) - per_call(1), pause = per_call(2);
    double fwait = per_call(3), fwake = per_call(4), yield = per_call(5);
    double rt = 4 * fwake;
    for (int r = 0; r < 3 && online > 1; r++) {
        double v = futex_round_trip(1);
        rt = r == 0 || (v > 0 && v < rt) ? v : rt;
    }
    double wakeup = rt / 2 - fwake - fwait > 0 ? rt / 2 - fwake - fwait : fwake;
    char dir[4096]; /* the folders above the file */
    snprintf(dir, sizeof dir, "%s", path);
    for (char *s = dir + 1; (s = strchr(s, '/')); s++) {
        *s = 0;
        mkdir(dir, 0755);
        *s = '/';
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
        return -1;
    }
    time_t t = time(NULL);
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    fprintf(f, "# this machine, measured by numalock sim on %s\n# online_cpus %d\n[local]\n", when, online);
    fprintf(f, "description = this machine (%d CPUs), measured %s\n", online, when);
    fprintf(f, "sockets = %d   # sysfs physical_package_id\ncores_per_socket = %d   # sysfs\n", sockets,
            online / sockets / tpc);
    fprintf(f, "threads_per_core = %d   # sysfs thread_siblings_list\n", tpc);
    fprintf(f, "domains_per_socket = %d   # sysfs: CPUs sharing the L3\n", domains);
    fprintf(f, "ghz = %.3f   # measured: the time-stamp counter against CLOCK_MONOTONIC\nlinks = full\n", g);
    fprintf(f, "hit_ns = %.2f   # measured: pointer chase in 16 KiB\n", hit);
    fprintf(f, "llc_ns = %.2f   # measured: pointer chase in 4 MiB\n", llc);
    fprintf(f, "c2c_domain_ns = %.2f   # measured: %s\n", x,
            tm ? "the mean of the matrix of `numalock topo --measure` (CAS, one way)"
               : "CAS ping-pong between two cores, one way");
    fprintf(f, "c2c_socket_ns = %.2f   # = c2c_domain_ns\n", x);
    fprintf(f, "remote1_ns = %.2f   # one socket here: = c2c_domain_ns\nremote2_ns = %.2f\n", x, x);
    fprintf(f, "mem_local_ns = %.2f   # measured: pointer chase in 256 MiB\n", mem);
    fprintf(f, "mem_remote1_ns = %.2f\nmem_remote2_ns = %.2f\n", mem, mem);
    fprintf(f, "atomic_cycles = %.1f   # measured: locked add minus store\n", atomic > 0 ? atomic * g : 0);
    fprintf(f, "pause_cycles = %.1f   # measured: pause loop\n", pause * g);
    fprintf(f, "futex_wait_ns = %.0f   # measured: FUTEX_WAIT that finds the word changed\n", fwait);
    fprintf(f, "futex_wake_ns = %.0f   # measured: FUTEX_WAKE with nobody waiting\n", fwake);
    fprintf(f, "wakeup_ns = %.0f   # measured: half a futex ping-pong, less the calls\n", wakeup);
    fprintf(f, "yield_ns = %.0f   # measured: sched_yield\n", yield);
    if (measured[0])
        unlink(measured);
    if (fclose(f) || rename(tmp, path)) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

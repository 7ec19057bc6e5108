/* The Linux machine (machine.h): the calls that are not inline there: the
 * futex, the CPU count, and the evidence the load sampler reads (src/wait/
 * load.c): the machine's runnable tasks, the affinity mask, the cgroup's
 * CPU limits. Not part of the simulator's build (sim/ implements the same). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "machine.h"
#include "self.h"

int nl_machine_cpus_online(void)
{
    long v = sysconf(_SC_NPROCESSORS_ONLN);
    return v > 0 ? (int)v : 1;
}

/* ---- futexes ------------------------------------------------------------------
 * Two calls: the classic futex(2), and futex_wait/futex_wake (Linux 6.7),
 * which take FUTEX2_NUMA (Linux 6.16) for a two-word futex: its node half
 * picks the node whose hash table holds the futex. A word's waiters and
 * wakers must agree on the call only for two-word futexes (a plain futex has
 * the same key under both calls). The kernel headers of an older system lack
 * the numbers and flags: they are the kernel's ABI, given here. */
#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#endif
#ifndef SYS_futex_wait
#define SYS_futex_wait 455
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_NUMA
#define FUTEX2_NUMA 0x04
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif
#define FUTEX2_MATCH_ANY 0xffffffffu

static _Atomic int futex_kernel = -1; /* what the kernel offers, probed once */
static _Atomic int futex_path;        /* the path in use; 0: not decided yet */

/* A wait whose value differs returns EAGAIN where the call exists (ENOSYS
 * where it does not; EINVAL where the kernel refuses FUTEX2_NUMA). */
static int futex_probe(void)
{
    _Alignas(8) uint32_t w[2] = { 0, 0 }; /* value 0, node 0 */
    if (syscall(SYS_futex_wait, w, 1ul, FUTEX2_MATCH_ANY, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, NULL, CLOCK_MONOTONIC) == 0 ||
        errno != EAGAIN)
        return NL_FUTEX_CLASSIC;
    if (syscall(SYS_futex_wait, w, 1ul, FUTEX2_MATCH_ANY, FUTEX2_SIZE_U32 | FUTEX2_PRIVATE | FUTEX2_NUMA, NULL,
                CLOCK_MONOTONIC) == 0 ||
        errno != EAGAIN)
        return NL_FUTEX_FUTEX2;
    return NL_FUTEX_FUTEX2 | NL_FUTEX_NUMA_ON;
}

int nl_machine_futex_kernel(void)
{
    int k = atomic_load_explicit(&futex_kernel, memory_order_relaxed);
    if (k < 0) {
        int e = errno;
        k = futex_probe();
        errno = e;
        atomic_store_explicit(&futex_kernel, k, memory_order_relaxed);
    }
    return k;
}

int nl_machine_futex_path(void)
{
    int p = atomic_load_explicit(&futex_path, memory_order_relaxed);
    if (NL_LIKELY(p))
        return p;
    p = nl_machine_futex_kernel();
    int none = 0; /* a path forced meanwhile stays */
    atomic_compare_exchange_strong_explicit(&futex_path, &none, p, memory_order_relaxed, memory_order_relaxed);
    return atomic_load_explicit(&futex_path, memory_order_relaxed);
}

int nl_machine_futex_use(int mode)
{
    int k = nl_machine_futex_kernel();
    if (mode == NL_FUTEX_FUTEX2 && !(k & NL_FUTEX_FUTEX2))
        return ENOSYS;
    atomic_store_explicit(&futex_path, mode == NL_FUTEX_CLASSIC ? NL_FUTEX_CLASSIC : k, memory_order_relaxed);
    return 0;
}

static unsigned futex2_flags(unsigned flags, int path)
{
    return FUTEX2_SIZE_U32 | (flags & NL_FUTEX_SHARED ? 0 : FUTEX2_PRIVATE) |
           ((flags & NL_FUTEX_NODE) && (path & NL_FUTEX_NUMA_ON) ? FUTEX2_NUMA : 0);
}

int nl_machine_futex_wait_abs(void *word, uint32_t val, const struct timespec *abs, int clk, unsigned flags)
{
    int path = nl_machine_futex_path();
    long r;
    if (path & NL_FUTEX_FUTEX2) {
        r = syscall(SYS_futex_wait, word, (unsigned long)val, FUTEX2_MATCH_ANY, futex2_flags(flags, path), abs,
                    clk == CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC);
    } else {
        int op = FUTEX_WAIT_BITSET | (flags & NL_FUTEX_SHARED ? 0 : FUTEX_PRIVATE_FLAG) |
                 (abs && clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
        r = syscall(SYS_futex, word, op, val, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    }
    return r == 0 ? 0 : errno;
}

int nl_machine_futex_wait(void *word, uint32_t val, uint64_t ns, unsigned flags)
{
    int path = nl_machine_futex_path();
    long r;
    if (path & NL_FUTEX_FUTEX2) { /* futex_wait takes an absolute time only */
        struct timespec abs;
        if (ns) {
            uint64_t t = nl_machine_ns() + ns;
            abs = (struct timespec){ (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
        }
        return nl_machine_futex_wait_abs(word, val, ns ? &abs : NULL, CLOCK_MONOTONIC, flags);
    }
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    r = syscall(SYS_futex, word, flags & NL_FUTEX_SHARED ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, val, ns ? &ts : NULL,
                NULL, 0);
    return r == 0 ? 0 : errno;
}

int nl_machine_futex_wake(void *word, int n, unsigned flags)
{
    int path = nl_machine_futex_path();
    long r;
    if (path & NL_FUTEX_FUTEX2)
        r = syscall(SYS_futex_wake, word, (unsigned long)FUTEX2_MATCH_ANY, n, futex2_flags(flags, path));
    else
        r = syscall(SYS_futex, word, flags & NL_FUTEX_SHARED ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
    return r > 0 ? (int)r : 0;
}

uint32_t nl_machine_futex_node(void)
{
    unsigned cpu, node;
    return getcpu(&cpu, &node) == 0 ? node : 0;
}

/* ---- files ------------------------------------------------------------------
 * A lock's waiter may take the load sample on whatever stack its thread has
 * (glibc allows 16 KiB), so nothing here keeps a path or a file's contents
 * on the stack: paths are built in one workspace, files are read through a
 * small window (docs/ARCHITECTURE.md "Stack"). */

/* Files are opened, read and closed by system call, not through glibc's
 * wrappers: those are cancellation points, and a thread cancelled while it
 * waits for a lock (the load sample runs in a waiter's steps) must not
 * unwind from inside the lock's code, with a ticket taken or a node queued
 * (a program's cleanup handler would then run without the mutex). */
static int nc_open(const char *path) { return (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC); }
static ssize_t nc_read(int fd, void *buf, size_t len) { return (ssize_t)syscall(SYS_read, fd, buf, len); }
static void nc_close(int fd) { syscall(SYS_close, fd); }

/* The first line of a file, without its newline; -1 if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
    int fd = nc_open(path);
    if (fd < 0)
        return -1;
    ssize_t n = nc_read(fd, buf, len - 1);
    nc_close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* runnable tasks now (the "R/T" 4th field of /proc/loadavg), -1 if unknown */
int nl_machine_runnable_tasks(void)
{
    char buf[128];
    if (read_line("/proc/loadavg", buf, sizeof buf))
        return -1;
    char *p = buf;
    for (int field = 0; field < 3; field++) { /* skip the three averages */
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    if (*p < '0' || *p > '9')
        return -1;
    return (int)strtol(p, NULL, 10);
}

/* ---- cgroups ------------------------------------------------------------------
 * The CPUs a cgroup lets the process use: the quota (cgroup v2 cpu.max
 * "QUOTA PERIOD" or "max PERIOD"; v1 cpu.cfs_quota_us / cpu.cfs_period_us,
 * -1 for none) rounded up to whole CPUs, and the cpuset (v2
 * cpuset.cpus.effective; v1 cpuset.effective_cpus or cpuset.cpus). A quota
 * anywhere up the hierarchy limits the process, so each level is read up to
 * the root; a container that sees only its own cgroup reads it at the
 * mount point. */

/* Where the paths are built, one reader at a time (cg_take). */
typedef struct cg_ws {
    char rel[PATH_MAX];   /* the process's cgroup, from /proc/self/cgroup */
    char mount[PATH_MAX]; /* the hierarchy's mount */
    char dir[PATH_MAX];   /* the level being read */
    char path[PATH_MAX];  /* a file of it; also a line of /proc/self/cgroup */
    char window[256];     /* a piece of the file being read */
} cg_ws_t;
static cg_ws_t cg_ws;
static _Atomic int cg_busy;

/* CPUs of a quota: ceil(quota / period), 0 for no quota or a bad value */
static uint32_t quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long n = (quota + period - 1) / period;
    return n > INT_MAX ? 0 : (uint32_t)n;
}

static uint32_t min_nonzero(uint32_t a, uint32_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* dst = a b c (printf's frames are larger than this file's); -1 if it
 * does not fit in len bytes */
static int cg_cat(char *dst, size_t len, const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc >= len)
        return -1;
    memmove(dst, a, la);
    memmove(dst + la, b, lb);
    memmove(dst + la + lb, c, lc + 1);
    return 0;
}

/* ws->path = a "/" b; -1 if it does not fit */
static int cg_join(cg_ws_t *ws, const char *a, const char *b) { return cg_cat(ws->path, sizeof ws->path, a, "/", b); }

static bool cg_exists(cg_ws_t *ws, const char *a, const char *b)
{
    return cg_join(ws, a, b) == 0 && access(ws->path, F_OK) == 0;
}

/* A number from the start of s ("max" and junk: -1) */
static long long leading_number(const char *s, const char **end)
{
    while (*s == ' ')
        s++;
    if (*s == '-' && s[1] >= '0' && s[1] <= '9') {
        long long v = leading_number(s + 1, end);
        return v < 0 ? -1 : -v;
    }
    if (*s < '0' || *s > '9')
        return -1;
    long long v = 0;
    for (; *s >= '0' && *s <= '9' && v < (1ll << 60); s++)
        v = v * 10 + (*s - '0');
    if (end)
        *end = s;
    return v;
}

/* v2: dir/cpu.max, "QUOTA PERIOD" or "max PERIOD" */
static uint32_t parse_cpu_max(cg_ws_t *ws, const char *dir)
{
    char buf[64];
    const char *end = NULL;
    if (cg_join(ws, dir, "cpu.max") || read_line(ws->path, buf, sizeof buf) || !strncmp(buf, "max", 3))
        return 0;
    long long quota = leading_number(buf, &end);
    if (quota < 0 || !end)
        return 0;
    return quota_cpus(quota, leading_number(end, NULL));
}

/* v1: dir/cpu.cfs_quota_us and dir/cpu.cfs_period_us (-1: no quota) */
static uint32_t parse_cfs(cg_ws_t *ws, const char *dir)
{
    char buf[64];
    if (cg_join(ws, dir, "cpu.cfs_quota_us") || read_line(ws->path, buf, sizeof buf))
        return 0;
    long long quota = leading_number(buf, NULL);
    if (quota <= 0 || cg_join(ws, dir, "cpu.cfs_period_us") || read_line(ws->path, buf, sizeof buf))
        return 0;
    return quota_cpus(quota, leading_number(buf, NULL));
}

/* CPUs in a CPU-list file ("0-3,8\n"), read a window at a time; 0 if it is
 * malformed, empty or unreadable */
typedef struct cpulist_state {
    uint32_t n;
    long a, b;   /* the range being read: a, or a-b */
    int in_b;    /* after the '-' */
    int digits;  /* digits of the current number */
    unsigned char *mark; /* if not NULL: mark[cpu] = 1 for each CPU below NL_MAX_CPUS */
} cpulist_state_t;

/* one character of the list; -1 if malformed */
static int cpulist_char(cpulist_state_t *st, char c)
{
    if (c >= '0' && c <= '9') {
        long *v = st->in_b ? &st->b : &st->a;
        if (*v > 1000000)
            return -1;
        *v = *v * 10 + (c - '0');
        st->digits++;
        return 0;
    }
    if (c == '-' && !st->in_b && st->digits) {
        st->in_b = 1;
        st->digits = 0;
        return 0;
    }
    if ((c == ',' || c == '\n' || c == 0) && st->digits) {
        long hi = st->in_b ? st->b : st->a;
        if (hi < st->a)
            return -1;
        st->n += (uint32_t)(hi - st->a + 1);
        for (long c = st->a; st->mark && c <= hi && c < NL_MAX_CPUS; c++)
            st->mark[c] = 1;
        st->a = st->b = 0;
        st->in_b = st->digits = 0;
        return 0;
    }
    return (c == '\n' || c == 0) && !st->in_b ? 0 : -1;
}

/* the CPUs of a CPU-list file, read through `window`; 0 if malformed */
static uint32_t cpulist_file(const char *path, char *window, size_t len, unsigned char *mark)
{
    int fd = nc_open(path);
    if (fd < 0)
        return 0;
    cpulist_state_t st = { .mark = mark };
    ssize_t got;
    int bad = 0, ended = 0;
    while (!bad && !ended && (got = nc_read(fd, window, len)) > 0)
        for (ssize_t i = 0; i < got && !bad && !ended; i++) {
            bad = cpulist_char(&st, window[i]) != 0;
            ended = window[i] == '\n';
        }
    nc_close(fd);
    if (!bad && !ended)
        bad = cpulist_char(&st, 0) != 0;
    return bad ? 0 : st.n;
}

static uint32_t parse_cpuset(cg_ws_t *ws, const char *dir, const char *file)
{
    if (cg_join(ws, dir, file))
        return 0;
    return cpulist_file(ws->path, ws->window, sizeof ws->window, NULL);
}

int nl_machine_cpus_present(unsigned char *set)
{
    char window[64];
    memset(set, 0, NL_MAX_CPUS);
    if (cpulist_file("/sys/devices/system/cpu/present", window, sizeof window, set))
        return 0;
    memset(set, 0, NL_MAX_CPUS); /* no such file: the configured CPUs */
    long n = sysconf(_SC_NPROCESSORS_CONF);
    for (long c = 0; c < (n < 1 ? 1 : n) && c < NL_MAX_CPUS; c++)
        set[c] = 1;
    return 0;
}

enum { CG_CPU_MAX, CG_CFS, CG_CPUSET_V2, CG_CPUSET_V1 };

/* One level's limit of a kind */
static uint32_t cg_limit(cg_ws_t *ws, const char *dir, int kind)
{
    switch (kind) {
    case CG_CPU_MAX:
        return parse_cpu_max(ws, dir);
    case CG_CFS:
        return parse_cfs(ws, dir);
    case CG_CPUSET_V2:
        return parse_cpuset(ws, dir, "cpuset.cpus.effective");
    default: {
        uint32_t c = parse_cpuset(ws, dir, "cpuset.effective_cpus");
        return c ? c : parse_cpuset(ws, dir, "cpuset.cpus");
    }
    }
}

/* The smallest limit among mount+rel and its parents up to (and including)
 * the mount; only the process's own level for a cpuset (whose effective
 * list already holds its ancestors'). A container that does not see its
 * cgroup's path under the mount reads the mount itself. */
static uint32_t cg_walk(cg_ws_t *ws, int kind, bool up)
{
    if (cg_cat(ws->dir, sizeof ws->dir, ws->mount, ws->rel, ""))
        return 0;
    if (access(ws->dir, F_OK) != 0)
        return cg_limit(ws, ws->mount, kind);
    uint32_t best = 0;
    size_t rootlen = strlen(ws->mount);
    for (;;) {
        size_t len = strlen(ws->dir);
        while (len > rootlen && ws->dir[len - 1] == '/')
            ws->dir[--len] = 0;
        best = min_nonzero(best, cg_limit(ws, ws->dir, kind));
        char *slash = strrchr(ws->dir, '/');
        if (!up || len <= rootlen || !slash || (size_t)(slash - ws->dir) < rootlen)
            break;
        *slash = 0;
    }
    return best;
}

/* Does the line "ID:CONTROLLERS:PATH" in ws->path name `controller` (v2: "")?
 * Then ws->rel = PATH. */
static bool cg_line_matches(cg_ws_t *ws, const char *controller)
{
    char *line = ws->path;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
        return false;
    bool match = false;
    size_t cl = strlen(controller);
    if (!cl) {
        match = c2 == c1 + 1 && !strncmp(line, "0:", 2);
    } else { /* a comma-separated list such as "cpu,cpuacct" */
        for (const char *p = c1 + 1; p < c2 && !match;) {
            size_t l = strcspn(p, ",:");
            match = l == cl && !strncmp(p, controller, cl);
            p += l + (p[l] == ',');
        }
    }
    return match && cg_cat(ws->rel, sizeof ws->rel, c2 + 1, "", "") == 0;
}

/* The path of this process's cgroup for a v1 controller (or v2 when
 * controller is "") into ws->rel, from a /proc/self/cgroup file; 0 when
 * found. Lines are gathered in ws->path a window at a time. */
static int cgroup_path(cg_ws_t *ws, const char *proc_cgroup, const char *controller)
{
    int fd = nc_open(proc_cgroup);
    if (fd < 0)
        return -1;
    size_t len = 0;
    int found = -1;
    ssize_t got;
    while (found && (got = nc_read(fd, ws->window, sizeof ws->window)) > 0) {
        for (ssize_t i = 0; i < got && found; i++) {
            char c = ws->window[i];
            if (c != '\n') {
                if (len + 1 < sizeof ws->path)
                    ws->path[len++] = c;
                continue;
            }
            ws->path[len] = 0;
            len = 0;
            if (cg_line_matches(ws, controller))
                found = 0;
        }
    }
    if (found && len) { /* a last line without its newline */
        ws->path[len] = 0;
        found = cg_line_matches(ws, controller) ? 0 : -1;
    }
    nc_close(fd);
    return found;
}

/* The mount point of a v1 controller under sysfs_root into ws->mount ("cpu"
 * may be mounted as cpu, cpu,cpuacct or cpuacct,cpu). */
static int v1_dir(cg_ws_t *ws, const char *sysfs_root, const char *controller)
{
    static const char *const cpu_names[] = { "cpu", "cpu,cpuacct", "cpuacct,cpu" };
    static const char *const cpuset_names[] = { "cpuset" };
    bool cpu = !strcmp(controller, "cpu");
    const char *const *names = cpu ? cpu_names : cpuset_names;
    size_t n = cpu ? 3 : 1;
    for (size_t i = 0; i < n; i++) {
        if (cg_cat(ws->mount, sizeof ws->mount, sysfs_root, "/", names[i]))
            return -1;
        if (access(ws->mount, F_OK) == 0)
            return 0;
    }
    return -1;
}

static uint32_t cgroup_cpus_in(cg_ws_t *ws, const char *proc_cgroup, const char *sysfs_root)
{
    uint32_t best = 0;
    /* v2: one hierarchy; cpuset.cpus.effective already holds the ancestors' limits */
    if (!cgroup_path(ws, proc_cgroup, "") &&
        !cg_cat(ws->mount, sizeof ws->mount, sysfs_root, "", "") &&
        cg_exists(ws, ws->mount, "cgroup.controllers")) {
        best = min_nonzero(best, cg_walk(ws, CG_CPU_MAX, true));
        best = min_nonzero(best, cg_walk(ws, CG_CPUSET_V2, false));
    }
    /* v1: a hierarchy per controller */
    if (!cgroup_path(ws, proc_cgroup, "cpu") && !v1_dir(ws, sysfs_root, "cpu"))
        best = min_nonzero(best, cg_walk(ws, CG_CFS, true));
    if (!cgroup_path(ws, proc_cgroup, "cpuset") && !v1_dir(ws, sysfs_root, "cpuset"))
        best = min_nonzero(best, cg_walk(ws, CG_CPUSET_V1, false));
    return best;
}

/* The workspace for one reader: the sampler skips a refresh when another
 * reader has it (try), a direct call waits for it. */
static bool cg_take(bool wait)
{
    while (atomic_exchange_explicit(&cg_busy, 1, memory_order_acquire)) {
        if (!wait)
            return false;
        nl_machine_yield();
    }
    return true;
}

static void cg_give(void) { atomic_store_explicit(&cg_busy, 0, memory_order_release); }

uint32_t nl_cgroup_cpus(const char *proc_cgroup, const char *sysfs_root)
{
    cg_take(true);
    uint32_t n = cgroup_cpus_in(&cg_ws, proc_cgroup, sysfs_root);
    cg_give();
    return n;
}

uint32_t nl_machine_cgroup_cpus(void)
{
    if (!cg_take(false))
        return UINT32_MAX; /* another thread reads them now: keep the last answer */
    uint32_t n = cgroup_cpus_in(&cg_ws, "/proc/self/cgroup", "/sys/fs/cgroup");
    cg_give();
    return n;
}

/* CPUs in the calling thread's affinity mask, 0 if unknown */
uint32_t nl_machine_affinity_cpus(void)
{
    /* up to 1024 CPUs without malloc (a waiter may sample in a signal
     * handler that interrupted malloc): 128 bytes on the stack */
    cpu_set_t small;
    CPU_ZERO(&small);
    if (sched_getaffinity(0, sizeof small, &small) == 0) {
        int n = CPU_COUNT(&small);
        return n > 0 ? (uint32_t)n : 0;
    }
    if (errno != EINVAL)
        return 0;
    int online = nl_machine_cpus_online();
    for (int ncpu = online > 2048 ? online : 2048; ncpu <= (1 << 20); ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC((size_t)ncpu);
        if (!set)
            return 0;
        size_t sz = CPU_ALLOC_SIZE((size_t)ncpu);
        CPU_ZERO_S(sz, set);
        if (sched_getaffinity(0, sz, set) == 0) {
            int n = CPU_COUNT_S(sz, set);
            CPU_FREE(set);
            return n > 0 ? (uint32_t)n : 0;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            return 0;
    }
    return 0;
}

/* A thread's CPU-time clock (pthread_getcpuclockid; Linux encodes the thread
 * in the id, and its low bits are never all ones, so -1 says "none"): read
 * from any thread of the process; a thread that has exited reads 0. */
int nl_machine_thread_clock(void)
{
    clockid_t c;
    return pthread_getcpuclockid(pthread_self(), &c) ? -1 : (int)c;
}

uint64_t nl_machine_thread_cpu_ns(int clk)
{
    struct timespec ts;
    if (clk == -1 || clock_gettime((clockid_t)clk, &ts))
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

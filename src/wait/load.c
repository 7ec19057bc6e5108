/* The evidence behind nl_overloaded (wait.h): the CPUs this process may use,
 * the machine's runnable tasks, the tick rate, and preemption seen by
 * waiters. One waiter refreshes the samples when they are stale; every other
 * thread reads the last answer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wait.h"

/* Samples: the machine's runnable count every NL_LOAD_PERIOD_NS; the
 * affinity mask every NL_AFFINITY_PERIOD samples (one system call); the
 * cgroup files every NL_CGROUP_PERIOD samples (a few file reads). */
#define NL_LOAD_PERIOD_NS 2000000ull /* 2 ms */
#define NL_AFFINITY_PERIOD 32u       /* ~64 ms */
#define NL_CGROUP_PERIOD 512u        /* ~1 s   */
/* How long one preemption seen by a waiter keeps the process overloaded. */
#define NL_EVIDENCE_NS 50000000ull   /* 50 ms */

_Atomic uint64_t nl_load_next;
_Atomic uint32_t nl_load_runnable = UINT32_MAX / 2; /* until sampled: overloaded */
_Atomic uint32_t nl_gate_waiters;
_Atomic uint32_t nl_spinning;
_Atomic uint32_t nl_parked;
_Atomic uint32_t nl_budget_cpus = 1;
_Atomic uint32_t nl_count_spinners = 1;
_Atomic uint32_t nl_preempted;
static _Atomic uint64_t preempted_until;   /* ticks */
static _Atomic int online_cpus;
static _Atomic uint32_t samples;
static _Atomic uint32_t cgroup_cpus;        /* 0: no limit found */
static _Atomic uint64_t calib_ticks, calib_ns; /* the first sample's clocks */

int nl_cpus_online(void)
{
    int n = atomic_load_explicit(&online_cpus, memory_order_relaxed);
    if (NL_UNLIKELY(n <= 0)) {
        long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v > 0 ? (int)v : 1;
        atomic_store_explicit(&online_cpus, n, memory_order_relaxed);
    }
    return n;
}

uint32_t nl_cpu_budget(void)
{
    if (NL_UNLIKELY(!atomic_load_explicit(&samples, memory_order_relaxed)))
        nl_load_sample();
    return atomic_load_explicit(&nl_budget_cpus, memory_order_relaxed);
}

/* ---- files ------------------------------------------------------------------ */
/* The first line of a file, without its newline; -1 if unreadable. */
static int read_line(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* runnable tasks now (the "R/T" 4th field of /proc/loadavg), -1 if unknown */
static int runnable_tasks(void)
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

/* CPUs of a quota: ceil(quota / period), 0 for no quota or a bad value */
static uint32_t quota_cpus(long long quota, long long period)
{
    if (quota <= 0 || period <= 0)
        return 0;
    long long n = (quota + period - 1) / period;
    return n > INT_MAX ? 0 : (uint32_t)n;
}

static uint32_t min_nonzero(uint32_t a, uint32_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* The smallest limit among dir and its parents up to (and including) root:
 * `file` read by `parse` at each level. */
static uint32_t walk_up(const char *root, const char *rel, const char *file,
                        uint32_t (*parse)(const char *dir, const char *file))
{
    char dir[PATH_MAX];
    uint32_t best = 0;
    if (snprintf(dir, sizeof dir, "%s%s", root, rel) >= (int)sizeof dir)
        return 0;
    size_t rootlen = strlen(root);
    for (;;) {
        size_t len = strlen(dir);
        while (len > rootlen && dir[len - 1] == '/')
            dir[--len] = 0;
        best = min_nonzero(best, parse(dir, file));
        char *slash = strrchr(dir, '/');
        if (len <= rootlen || !slash || (size_t)(slash - dir) < rootlen)
            break;
        *slash = 0;
    }
    return best;
}

static uint32_t parse_cpu_max(const char *dir, const char *file)
{
    char path[PATH_MAX], buf[64];
    long long quota, period;
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path || read_line(path, buf, sizeof buf))
        return 0;
    if (!strncmp(buf, "max", 3))
        return 0;
    if (sscanf(buf, "%lld %lld", &quota, &period) != 2)
        return 0;
    return quota_cpus(quota, period);
}

static uint32_t parse_cfs(const char *dir, const char *file)
{
    (void)file;
    char path[PATH_MAX], buf[64];
    long long quota, period;
    if (snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir) >= (int)sizeof path || read_line(path, buf, sizeof buf) ||
        sscanf(buf, "%lld", &quota) != 1)
        return 0;
    if (snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir) >= (int)sizeof path || read_line(path, buf, sizeof buf) ||
        sscanf(buf, "%lld", &period) != 1)
        return 0;
    return quota_cpus(quota, period);
}

/* CPUs in a CPU list ("0-3,8"), 0 if it is malformed or empty */
static uint32_t cpulist_count(const char *s)
{
    uint32_t n = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s || a < 0)
            return 0;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            if (end == s + 1 || b < a)
                return 0;
            s = end;
        }
        n += (uint32_t)(b - a + 1);
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return n;
}

static uint32_t parse_cpuset(const char *dir, const char *file)
{
    char path[PATH_MAX], buf[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path || read_line(path, buf, sizeof buf))
        return 0;
    return cpulist_count(buf);
}

/* The path of this process's cgroup for a v1 controller (or v2 when
 * controller is ""), from a /proc/self/cgroup file; 0 when found. */
static int cgroup_path(const char *proc_cgroup, const char *controller, char *out, size_t len)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = 0;
        const char *ctrls = c1 + 1;
        bool match;
        if (!*controller) {
            match = !*ctrls && !strncmp(line, "0:", 2);
        } else { /* a comma-separated list such as "cpu,cpuacct" */
            match = false;
            size_t cl = strlen(controller);
            for (const char *p = ctrls; *p;) {
                size_t l = strcspn(p, ",");
                if (l == cl && !strncmp(p, controller, cl))
                    match = true;
                p += l + (p[l] == ',');
            }
        }
        if (match && snprintf(out, len, "%s", c2 + 1) < (int)len)
            found = 0;
    }
    fclose(f);
    return found;
}

/* The mount point of a v1 controller under sysfs_root ("cpu" may be mounted
 * as cpu, cpu,cpuacct or cpuacct,cpu). */
static int v1_dir(const char *sysfs_root, const char *controller, char *out, size_t len)
{
    static const char *const cpu_names[] = { "cpu", "cpu,cpuacct", "cpuacct,cpu" };
    static const char *const cpuset_names[] = { "cpuset" };
    const char *const *names = strcmp(controller, "cpu") ? cpuset_names : cpu_names;
    size_t n = strcmp(controller, "cpu") ? 1 : 3;
    for (size_t i = 0; i < n; i++) {
        if (snprintf(out, len, "%s/%s", sysfs_root, names[i]) >= (int)len)
            return -1;
        if (access(out, F_OK) == 0)
            return 0;
    }
    return -1;
}

/* The limit of one controller: at the process's own cgroup path under
 * `mount` (walking up), or, when that path does not exist there (a
 * container sees its cgroup as the mount's root), at the mount itself. */
static uint32_t controller_limit(const char *mount, const char *rel, const char *file,
                                 uint32_t (*parse)(const char *, const char *))
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s%s", mount, rel) < (int)sizeof probe && access(probe, F_OK) == 0)
        return walk_up(mount, rel, file, parse);
    return parse(mount, file);
}

uint32_t nl_cgroup_cpus(const char *proc_cgroup, const char *sysfs_root)
{
    char rel[PATH_MAX], mount[PATH_MAX];
    uint32_t best = 0;
    /* v2: one hierarchy; cpuset.cpus.effective already holds the ancestors' limits */
    if (!cgroup_path(proc_cgroup, "", rel, sizeof rel) &&
        snprintf(mount, sizeof mount, "%s", sysfs_root) < (int)sizeof mount) {
        char probe[PATH_MAX];
        if (snprintf(probe, sizeof probe, "%s/cgroup.controllers", mount) < (int)sizeof probe &&
            access(probe, F_OK) == 0) {
            best = min_nonzero(best, controller_limit(mount, rel, "cpu.max", parse_cpu_max));
            char dir[PATH_MAX];
            if (snprintf(dir, sizeof dir, "%s%s", mount, rel) < (int)sizeof dir &&
                access(dir, F_OK) == 0)
                best = min_nonzero(best, parse_cpuset(dir, "cpuset.cpus.effective"));
            else
                best = min_nonzero(best, parse_cpuset(mount, "cpuset.cpus.effective"));
        }
    }
    /* v1: a hierarchy per controller */
    if (!cgroup_path(proc_cgroup, "cpu", rel, sizeof rel) && !v1_dir(sysfs_root, "cpu", mount, sizeof mount))
        best = min_nonzero(best, controller_limit(mount, rel, "cpu.cfs_quota_us", parse_cfs));
    if (!cgroup_path(proc_cgroup, "cpuset", rel, sizeof rel) && !v1_dir(sysfs_root, "cpuset", mount, sizeof mount)) {
        char dir[PATH_MAX];
        bool own = snprintf(dir, sizeof dir, "%s%s", mount, rel) < (int)sizeof dir && access(dir, F_OK) == 0;
        uint32_t c = parse_cpuset(own ? dir : mount, "cpuset.effective_cpus");
        if (!c)
            c = parse_cpuset(own ? dir : mount, "cpuset.cpus");
        best = min_nonzero(best, c);
    }
    return best;
}

/* CPUs in the calling thread's affinity mask, 0 if unknown */
static uint32_t affinity_cpus(void)
{
    int online = nl_cpus_online();
    for (int ncpu = online > 1024 ? online : 1024; ncpu <= (1 << 20); ncpu *= 2) {
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

/* ---- the sampler ------------------------------------------------------------ */
void nl_load_sample(void)
{
    uint64_t now = nl_clock_ticks();
    uint64_t next = atomic_load_explicit(&nl_load_next, memory_order_relaxed);
    if (now < next)
        return;
    /* one thread samples; the others keep the previous answer */
    if (!atomic_compare_exchange_strong_explicit(&nl_load_next, &next,
                                                 now + nl_ns_to_ticks(NL_LOAD_PERIOD_NS),
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    uint32_t k = atomic_fetch_add_explicit(&samples, 1, memory_order_relaxed);

    /* the tick rate, against the monotonic clock, over the sampler's life */
    uint64_t ns = nl_clock_ns();
    uint64_t c_ns = atomic_load_explicit(&calib_ns, memory_order_acquire);
    if (!c_ns) {
        atomic_store_explicit(&calib_ticks, now, memory_order_relaxed);
        atomic_store_explicit(&calib_ns, ns, memory_order_release);
    } else {
        uint64_t c_ticks = atomic_load_explicit(&calib_ticks, memory_order_relaxed);
        if (ns - c_ns > 1000000ull && now > c_ticks) {
            uint64_t r = (now - c_ticks) * 1000000ull / (ns - c_ns); /* ticks per ms */
            if (r)
                atomic_store_explicit(&nl_ticks_per_ms, r, memory_order_relaxed);
        }
    }

    int r = runnable_tasks();
    /* unknown: say overloaded (parking is the safe answer) */
    atomic_store_explicit(&nl_load_runnable, r < 0 ? (uint32_t)nl_cpus_online() * 2 + 2 : (uint32_t)r,
                          memory_order_relaxed);

    if (k % NL_CGROUP_PERIOD == 0)
        atomic_store_explicit(&cgroup_cpus, nl_cgroup_cpus("/proc/self/cgroup", "/sys/fs/cgroup"),
                              memory_order_relaxed);
    if (k % NL_AFFINITY_PERIOD == 0) {
        uint32_t b = affinity_cpus();
        if (!b)
            b = (uint32_t)nl_cpus_online();
        b = min_nonzero(b, atomic_load_explicit(&cgroup_cpus, memory_order_relaxed));
        atomic_store_explicit(&nl_budget_cpus, b ? b : 1, memory_order_relaxed);
    }
    /* the spinners are worth counting only when the threads that use the
     * library outnumber the CPUs: otherwise every one of them has a CPU */
    atomic_store_explicit(&nl_count_spinners,
                          nl_threads_live() > atomic_load_explicit(&nl_budget_cpus, memory_order_relaxed),
                          memory_order_relaxed);
    if (atomic_load_explicit(&nl_preempted, memory_order_relaxed) &&
        now > atomic_load_explicit(&preempted_until, memory_order_relaxed))
        atomic_store_explicit(&nl_preempted, 0, memory_order_relaxed);
}

void nl_note_preempted(void)
{
    nl_self()->wc.preempted++;
    /* evidence pinned (nl_load_next at its maximum: tests that fix what the
     * policy sees): no sample would ever clear the flag, so it is not set */
    if (atomic_load_explicit(&nl_load_next, memory_order_relaxed) == UINT64_MAX)
        return;
    atomic_store_explicit(&preempted_until, nl_clock_ticks() + nl_ns_to_ticks(NL_EVIDENCE_NS),
                          memory_order_relaxed);
    if (!atomic_load_explicit(&nl_preempted, memory_order_relaxed))
        atomic_store_explicit(&nl_preempted, 1, memory_order_relaxed);
}


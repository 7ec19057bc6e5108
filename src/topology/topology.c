/* Topology: real nodes (sysfs), virtual nodes, explicit CPU lists; the
 * calling thread's node, cached and refreshed periodically (CNA paper, sec. 6). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "node.h"
#include "levels.h"
#include "cpulist.h"
#include "measured.h"
#include "../core/roomy.h"
#include "numalock/measure.h"

#define NL_NODE_REFRESH 1024u /* node lookups served from cache between refreshes */

_Atomic uint32_t nl_topo_gen = 1;
static _Atomic(nl_topology_t *) current_topo;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;
static char env_error[256];
static _Atomic uint32_t virtual_next; /* round-robin assignment counter */

static void set_err(char *err, size_t len, const char *fmt, const char *a)
{
    if (err && len)
        snprintf(err, len, fmt, a);
}

#define VALID_FORMS                                                                              \
    "valid forms are auto, sysfs:DIR, virtual:N (N from 1 to 64), virtual:NxM... (nodes of M cache " \
    "domains; up to 4 factors, at most 64 nodes and 1024 cache domains), cpus:LIST/LIST/... (e.g. "   \
    "cpus:0-3/4-7; a node's cache domains split by '|': cpus:0-1|2-3/4-5|6-7), measured"

/* A CPU list into a bitmap over [0, NL_MAX_CPUS), zeroed by the caller; -1 on a bad list. */
static int parse_cpulist(const char *s, const char *end, unsigned char *set)
{
    return nl_cpulist_scan(s, end, set, NULL, 0) < 0 ? -1 : 0;
}

static int read_file_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)len, f)) {
        fclose(f);
        buf[0] = 0;
        return 0;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* CPUs present on the machine whose sysfs is at `sys`. */
static int present_cpus_at(const char *sys, unsigned char *set)
{
    char buf[4096], path[512];
    memset(set, 0, NL_MAX_CPUS);
    snprintf(path, sizeof path, "%s/devices/system/cpu/present", sys);
    if (read_file_line(path, buf, sizeof buf) == 0 && buf[0] &&
        parse_cpulist(buf, buf + strlen(buf), set) == 0)
        return 0;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    if (n < 1)
        n = 1;
    for (long c = 0; c < n && c < NL_MAX_CPUS; c++)
        set[c] = 1;
    return 0;
}

static int present_cpus(unsigned char *set) { return nl_machine_cpus_present(set); }

static void finish_cpu_map(nl_topology_t *t)
{
    int max = -1;
    for (int c = 0; c < NL_MAX_CPUS; c++)
        if (t->cpu_to_node[c] >= 0)
            max = c;
    t->ncpus = max + 1;
}

static int parse_auto_at(nl_topology_t *t, const char *sys)
{
    for (int c = 0; c < NL_MAX_CPUS; c++)
        t->cpu_to_node[c] = -1;
    t->kind = NL_TOPO_AUTO;
    t->nnodes = 0;
    /* sysfs node ids may be sparse: collect and sort them, then number densely */
    int ids[NL_MAX_NODES], n = 0;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/devices/system/node", sys);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) && n < NL_MAX_NODES) {
            if (strncmp(de->d_name, "node", 4) || !isdigit((unsigned char)de->d_name[4]))
                continue;
            ids[n++] = atoi(de->d_name + 4);
        }
        closedir(d);
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            int x = ids[j]; ids[j] = ids[j - 1]; ids[j - 1] = x;
        }
    unsigned char set[NL_MAX_CPUS];
    for (int i = 0; i < n; i++) {
        char path[128], buf[4096];
        snprintf(path, sizeof path, "%s/devices/system/node/node%d/cpulist", sys, ids[i]);
        if (read_file_line(path, buf, sizeof buf))
            continue;
        memset(set, 0, sizeof set);
        if (buf[0] && parse_cpulist(buf, buf + strlen(buf), set))
            continue;
        for (int c = 0; c < NL_MAX_CPUS; c++)
            if (set[c])
                t->cpu_to_node[c] = (int16_t)t->nnodes;
        t->nnodes++;
    }
    if (t->nnodes == 0) { /* no sysfs node information: one node */
        present_cpus_at(sys, set);
        for (int c = 0; c < NL_MAX_CPUS; c++)
            if (set[c])
                t->cpu_to_node[c] = 0;
        t->nnodes = 1;
    }
    finish_cpu_map(t);
    nl_levels_sysfs(t, sys);
    snprintf(t->spec, sizeof t->spec, "auto");
    return 0;
}

static int parse_auto(nl_topology_t *t) { return parse_auto_at(t, "/sys"); }

/* virtual:N or virtual:AxBx... (coarsest first) */
static int parse_virtual(const char *spec, nl_topology_t *out, char *err, size_t errlen)
{
    long f[NL_MAX_LEVELS];
    int nf = 0;
    long leaves = 1;
    const char *p = spec + 8;
    for (;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (!isdigit((unsigned char)*p) || errno || v < 1 || nf == NL_MAX_LEVELS || (*end && *end != 'x') ||
            (leaves *= v) > NL_MAX_LEAVES) {
            set_err(err, errlen, "bad topology '%s': " VALID_FORMS, spec);
            return EINVAL;
        }
        f[nf++] = v;
        if (!*end)
            break;
        p = end + 1;
    }
    parse_auto(out); /* keep the real CPU map for reference */
    out->kind = NL_TOPO_VIRTUAL;
    nl_levels_virtual(out, f, nf);
    if (out->nnodes > NL_MAX_NODES) {
        set_err(err, errlen, "bad topology '%s': more than 64 nodes; " VALID_FORMS, spec);
        return EINVAL;
    }
    snprintf(out->spec, sizeof out->spec, "%.120s", spec);
    return 0;
}

static int parse_spec(const char *spec, nl_topology_t *out, char *err, size_t errlen);

int nl_topology_parse(const char *spec, nl_topology_t *out, char *err, size_t errlen)
{
    int rc = parse_spec(spec, out, err, errlen);
    if (rc == 0 && out->nlevels == 0)
        nl_levels_flat(out);
    return rc;
}

/* `--topology measured`: the clustering of the stored measurement (measured.c
 * measures first when there is none for the CPUs this process may use) */
int nl_topology_parse_measured(nl_topology_t *out, char *err, size_t errlen)
{
    char spec[NL_MEASURED_SPEC_MAX];
    int rc = nl_measured_spec(spec, sizeof spec, err, errlen);
    if (!rc)
        rc = nl_topology_parse(spec, out, err, errlen);
    if (rc)
        return rc;
    snprintf(out->spec, sizeof out->spec, "measured");
    return 0;
}

static int parse_spec(const char *spec, nl_topology_t *out, char *err, size_t errlen)
{
    if (!spec || !*spec) {
        set_err(err, errlen, "empty topology spec: " VALID_FORMS "%s", "");
        return EINVAL;
    }
    memset(out, 0, sizeof *out);
    if (!strcmp(spec, "auto"))
        return parse_auto(out);
    if (!strcmp(spec, "measured")) /* the stored latency clustering (above) */
        return nl_topology_parse_measured(out, err, errlen);
    if (!strncmp(spec, "virtual:", 8))
        return parse_virtual(spec, out, err, errlen);
    if (!strncmp(spec, "sysfs:", 6)) {
        const char *dir = spec + 6;
        char path[512];
        snprintf(path, sizeof path, "%s/devices/system/cpu", dir);
        DIR *d = *dir ? opendir(path) : NULL;
        if (!d) {
            set_err(err, errlen, "bad topology '%s': no sysfs tree there (DIR/devices/system/cpu is missing); "
                    VALID_FORMS, spec);
            return EINVAL;
        }
        closedir(d);
        parse_auto_at(out, dir);
        snprintf(out->spec, sizeof out->spec, "%.120s", spec);
        return 0;
    }
    if (!strncmp(spec, "cpus:", 5)) {
        unsigned char present[NL_MAX_CPUS], seen[NL_MAX_CPUS], set[NL_MAX_CPUS];
        present_cpus(present);
        memset(seen, 0, sizeof seen);
        for (int c = 0; c < NL_MAX_CPUS; c++)
            out->cpu_to_node[c] = -1;
        const char *s = spec + 5;
        int node = 0, nleaves = 0;
        int16_t leaf_node[NL_MAX_LEAVES];
        for (int c = 0; c < NL_MAX_CPUS; c++)
            out->cpu_to_leaf[c] = -1;
        for (;;) {
            const char *slash = strchr(s, '/');
            const char *end = slash ? slash : s + strlen(s);
            /* a node's CPUs, its domains separated by '|' */
            for (const char *g = s;;) {
                const char *bar = memchr(g, '|', (size_t)(end - g));
                const char *gend = bar ? bar : end;
                memset(set, 0, sizeof set);
                if (node >= NL_MAX_NODES || nleaves >= NL_MAX_LEAVES || parse_cpulist(g, gend, set)) {
                    set_err(err, errlen, "bad topology '%s': " VALID_FORMS, spec);
                    return EINVAL;
                }
                for (int c = 0; c < NL_MAX_CPUS; c++) {
                    if (!set[c])
                        continue;
                    if (!present[c]) {
                        char msg[64];
                        snprintf(msg, sizeof msg, "%d", c);
                        if (err && errlen)
                            snprintf(err, errlen,
                                     "bad topology '%s': CPU %s is not present on this machine "
                                     "(see `numalock topo` for the CPUs there are)", spec, msg);
                        return EINVAL;
                    }
                    if (seen[c]) {
                        if (err && errlen)
                            snprintf(err, errlen, "bad topology '%s': CPU %d is listed twice", spec, c);
                        return EINVAL;
                    }
                    seen[c] = 1;
                    out->cpu_to_node[c] = (int16_t)node;
                    out->cpu_to_leaf[c] = (int16_t)nleaves;
                }
                leaf_node[nleaves++] = (int16_t)node;
                if (!bar)
                    break;
                g = bar + 1;
            }
            node++;
            if (!slash)
                break;
            s = slash + 1;
        }
        /* CPUs present but not listed belong to node 0 (its first domain) */
        for (int c = 0; c < NL_MAX_CPUS; c++)
            if (present[c] && out->cpu_to_node[c] < 0) {
                out->cpu_to_node[c] = 0;
                out->cpu_to_leaf[c] = 0;
            }
        out->nnodes = node;
        if (nleaves > node)
            nl_levels_groups(out, leaf_node, nleaves);
        out->kind = NL_TOPO_CPUS;
        out->nnodes = node;
        finish_cpu_map(out);
        snprintf(out->spec, sizeof out->spec, "%.120s", spec);
        return 0;
    }
    set_err(err, errlen, "unknown topology '%s': " VALID_FORMS, spec);
    return EINVAL;
}

static void install(nl_topology_t *t)
{
    atomic_store_explicit(&current_topo, t, memory_order_release);
    atomic_store_explicit(&virtual_next, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&nl_topo_gen, 1, memory_order_release);
}

/* The first topology lives in the library's data (no allocation that could
 * fail); the ones nl_topology_set installs after it are kept for good
 * (threads may still read them), and one equal to a kept one is that one
 * again, so a program that moves between a few topologies does not grow. */
static nl_topology_t topo_first;
#define NL_TOPO_KEPT 32
static nl_topology_t *topo_kept[NL_TOPO_KEPT];
static atomic_flag topo_kept_busy = ATOMIC_FLAG_INIT; /* (not a pthread mutex: the preload library replaces those) */

static nl_topology_t *topo_keep(nl_topology_t *t)
{
    while (atomic_flag_test_and_set_explicit(&topo_kept_busy, memory_order_acquire))
        sched_yield();
    int i = 0;
    for (; i < NL_TOPO_KEPT && topo_kept[i]; i++)
        if (!memcmp(topo_kept[i], t, sizeof *t)) {
            free(t);
            t = topo_kept[i];
            break;
        }
    if (i < NL_TOPO_KEPT && !topo_kept[i])
        topo_kept[i] = t;
    atomic_flag_clear_explicit(&topo_kept_busy, memory_order_release);
    return t;
}

static void topo_init(void)
{
    nl_topology_t *t = &topo_first;
    const char *env = getenv("NUMALOCK_TOPOLOGY");
    if (env && *env) {
        if (nl_topology_parse(env, t, env_error, sizeof env_error) == 0) {
            install(t);
            return;
        }
    }
    parse_auto(t);
    install(t);
}

/* topo_init reads sysfs with large buffers: on a roomy stack (a lock
 * operation may be the first to ask, on a thread with a small one) */
static void topo_init_roomy(void) { nl_on_roomy_stack(topo_init); }

const nl_topology_t *nl_topology_current(void)
{
    pthread_once(&topo_once, topo_init_roomy);
    return atomic_load_explicit(&current_topo, memory_order_acquire);
}

const char *nl_topology_env_error(void)
{
    nl_topology_current();
    return env_error[0] ? env_error : NULL;
}

int nl_topology_nodes(void) { return nl_topology_current()->nnodes; }

int nl_topology_set(const char *spec, char *err, size_t errlen)
{
    pthread_once(&topo_once, topo_init_roomy);
    nl_topology_t *t = calloc(1, sizeof *t); /* zeroed: compared whole with the kept ones */
    if (!t) {
        set_err(err, errlen, "no memory for topology '%s'", spec);
        return ENOMEM;
    }
    int rc = nl_topology_parse(spec, t, err, errlen);
    if (rc) {
        free(t);
        return rc;
    }
    /* the previous topology is kept: threads may still be reading it */
    install(topo_keep(t));
    return 0;
}

int nl_self_node_refresh(nl_self_t *s)
{
    const nl_topology_t *t = nl_topology_current();
    uint32_t gen = atomic_load_explicit(&nl_topo_gen, memory_order_acquire);
    int leaves = t->ndomains[0], leaf;
    if (s->pinned_leaf >= 0) {
        leaf = s->pinned_leaf % leaves;
        s->refresh = UINT32_MAX;
    } else if (s->pinned_node >= 0) {
        /* a pinned node: its first leaf */
        int node = s->pinned_node % t->nnodes;
        leaf = 0;
        while (leaf + 1 < leaves && t->up[t->node_level][leaf] != node)
            leaf++;
        s->refresh = UINT32_MAX;
    } else if (t->kind == NL_TOPO_VIRTUAL) {
        if (s->topo_gen != gen)
            s->leaf = (int)(atomic_fetch_add_explicit(&virtual_next, 1, memory_order_relaxed) % (uint32_t)leaves);
        leaf = s->leaf;
        s->refresh = UINT32_MAX;
    } else {
        int cpu = nl_machine_cpu();
        leaf = (cpu >= 0 && cpu < t->ncpus && t->cpu_to_leaf[cpu] >= 0) ? t->cpu_to_leaf[cpu] : 0;
        s->refresh = NL_NODE_REFRESH;
    }
    s->leaf = leaf;
    s->node = t->up[t->node_level][leaf];
    s->topo = t;
    s->topo_gen = gen;
    return s->node;
}

int nl_current_node(void) { return nl_self_node(nl_self()); }

int nl_current_domain(int level)
{
    nl_self_t *s = nl_self();
    nl_self_node(s);
    const nl_topology_t *t = nl_topology_current();
    return level >= 0 && level < t->nlevels ? t->up[level][s->leaf] : -1;
}

void nl_thread_set_leaf(int leaf)
{
    nl_self_t *s = nl_self();
    s->pinned_leaf = leaf < 0 ? -1 : leaf;
    s->refresh = 0; /* recompute on next lookup */
    s->topo_gen = UINT32_MAX;
}

void nl_thread_set_node(int node)
{
    nl_self_t *s = nl_self();
    s->pinned_leaf = -1;
    s->pinned_node = node < 0 ? -1 : node;
    s->refresh = 0; /* recompute on next lookup */
    s->topo_gen = UINT32_MAX;
}

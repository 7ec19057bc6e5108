/*
 * The hierarchy of a topology: the levels of domains around the NUMA nodes
 * (last-level-cache domains and clusters below them, dies and packages
 * above), from sysfs or from a virtual spec's factors.
 *
 * A level is a partition of the CPUs into domains. The levels kept form a
 * chain: each is strictly finer than the next and every one of its domains
 * lies inside one domain of the next. The nodes are always one level; a
 * candidate is kept when it nests with the nodes and the levels already
 * kept; one equal to another (an LLC per package, a package per node) is
 * kept once, under the name of the higher priority (node, package, cache,
 * die, cluster); a candidate of one domain is the machine and not a level.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "node.h"
#include "levels.h"

typedef struct part {
    char name[12];
    int prio;                   /* higher: kept when equal to another */
    int n;                      /* domains */
    int16_t of[NL_MAX_CPUS];    /* CPU -> domain, -1 absent */
} part_t;

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)len, f))
        buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

/* The smallest CPU of a CPU list, or -1. */
static int first_cpu(const char *list)
{
    int cpus[NL_MAX_CPUS];
    int n = nl_cpulist_parse(list, strlen(list), cpus, NL_MAX_CPUS);
    int m = -1;
    for (int i = 0; i < n; i++)
        if (m < 0 || cpus[i] < m)
            m = cpus[i];
    return m;
}

/* Number the groups (keyed by their first CPU) densely in CPU order. */
static void densify(part_t *p, const int16_t *node_of)
{
    int16_t id_of_key[NL_MAX_CPUS];
    for (int c = 0; c < NL_MAX_CPUS; c++)
        id_of_key[c] = -1;
    p->n = 0;
    for (int c = 0; c < NL_MAX_CPUS; c++) {
        if (node_of[c] < 0 || p->of[c] < 0)
            continue;
        int key = p->of[c];
        if (id_of_key[key] < 0)
            id_of_key[key] = (int16_t)p->n++;
        p->of[c] = id_of_key[key];
    }
}

/* The unified cache of the highest level a CPU has (its last-level cache):
 * its shared_cpu_list, or "" when sysfs says nothing. */
static void llc_list(const char *sys, int cpu, char *out, size_t len)
{
    int best = -1;
    out[0] = 0;
    for (int i = 0; i < 10; i++) {
        char path[512], lvl[32], type[32], list[4096];
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/level", sys, cpu, i);
        if (read_line(path, lvl, sizeof lvl))
            continue;
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/type", sys, cpu, i);
        if (read_line(path, type, sizeof type) || (strcmp(type, "Unified") && strcmp(type, "Data")))
            continue;
        snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", sys, cpu, i);
        if (read_line(path, list, sizeof list) || !list[0])
            continue;
        int l = atoi(lvl);
        if (l > best || (l == best && !strcmp(type, "Unified"))) {
            best = l;
            snprintf(out, len, "%s", list);
        }
    }
}

/* A candidate level read per CPU (`file` under topology/, or the LLC when
 * file is NULL); false when some present CPU does not say. */
static bool read_part(part_t *p, const char *sys, const char *file, const int16_t *node_of)
{
    for (int c = 0; c < NL_MAX_CPUS; c++) {
        p->of[c] = -1;
        if (node_of[c] < 0)
            continue;
        char list[4096];
        if (file) {
            char path[512];
            snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%d/topology/%s", sys, c, file);
            if (read_line(path, list, sizeof list))
                return false;
        } else {
            llc_list(sys, c, list, sizeof list);
        }
        int k = list[0] ? first_cpu(list) : -1;
        if (k < 0 || k >= NL_MAX_CPUS)
            return false;
        p->of[c] = (int16_t)k;
    }
    densify(p, node_of);
    return true;
}

/* Every domain of `fine` lies inside one domain of `coarse`. */
static bool nests(const part_t *fine, const part_t *coarse, const int16_t *node_of)
{
    int16_t parent[NL_MAX_CPUS];
    for (int d = 0; d < fine->n; d++)
        parent[d] = -1;
    for (int c = 0; c < NL_MAX_CPUS; c++) {
        if (node_of[c] < 0)
            continue;
        int d = fine->of[c];
        if (parent[d] < 0)
            parent[d] = coarse->of[c];
        else if (parent[d] != coarse->of[c])
            return false;
    }
    return true;
}

static bool same(const part_t *a, const part_t *b, const int16_t *node_of)
{
    return a->n == b->n && nests(a, b, node_of);
}

/* Fill t's hierarchy from the chain of levels lv[0..n) (finest first). */
static void fill(nl_topology_t *t, part_t **lv, int n, int node_level)
{
    t->nlevels = n;
    t->node_level = node_level;
    for (int l = 0; l < n; l++) {
        t->ndomains[l] = lv[l]->n;
        snprintf(t->level_name[l], sizeof t->level_name[l], "%s", lv[l]->name);
    }
    for (int c = 0; c < NL_MAX_CPUS; c++)
        t->cpu_to_leaf[c] = t->cpu_to_node[c] < 0 ? -1 : lv[0]->of[c];
    for (int c = 0; c < NL_MAX_CPUS; c++) {
        int d = t->cpu_to_leaf[c];
        if (d < 0)
            continue;
        for (int l = 0; l < n; l++)
            t->up[l][d] = lv[l]->of[c];
    }
}

void nl_levels_flat(nl_topology_t *t)
{
    t->nlevels = 1;
    t->node_level = 0;
    t->ndomains[0] = t->nnodes;
    snprintf(t->level_name[0], sizeof t->level_name[0], "node");
    for (int c = 0; c < NL_MAX_CPUS; c++)
        t->cpu_to_leaf[c] = t->cpu_to_node[c];
    for (int d = 0; d < t->nnodes && d < NL_MAX_LEAVES; d++)
        t->up[0][d] = (int16_t)d;
}

void nl_levels_sysfs(nl_topology_t *t, const char *sys)
{
    static const struct { const char *name, *file; int prio; } cands[] = {
        { "cluster", "cluster_cpus_list", 1 },
        { "cache", NULL, 3 },
        { "die", "die_cpus_list", 2 },
        { "package", "package_cpus_list", 4 },
    };
    enum { NC = sizeof cands / sizeof cands[0] };
    part_t *p = calloc(NC + 2, sizeof *p);
    if (!p) {
        nl_levels_flat(t);
        return;
    }
    part_t *node = &p[NC], *core = &p[NC + 1];
    /* the cores (SMT siblings): a level no coarser than them is no level of
     * domains (x86 reports a cluster per core) */
    bool cores = read_part(core, sys, "thread_siblings_list", t->cpu_to_node);
    snprintf(node->name, sizeof node->name, "node");
    node->prio = 5;
    for (int c = 0; c < NL_MAX_CPUS; c++)
        node->of[c] = t->cpu_to_node[c];
    node->n = t->nnodes;

    part_t *lv[NC + 1];
    int n = 0;
    lv[n++] = node;
    for (int i = 0; i < NC; i++) {
        part_t *q = &p[i];
        snprintf(q->name, sizeof q->name, "%s", cands[i].name);
        q->prio = cands[i].prio;
        if (!read_part(q, sys, cands[i].file, t->cpu_to_node) && cands[i].file) {
            /* older kernels: package_cpus_list was core_siblings_list */
            if (strcmp(cands[i].name, "package") || !read_part(q, sys, "core_siblings_list", t->cpu_to_node))
                continue;
        }
        if (q->n <= 1 || (cores && nests(core, q, t->cpu_to_node) && q->n >= core->n))
            continue;
        /* equal to a kept level: keep the higher priority's name */
        int eq = -1;
        for (int j = 0; j < n; j++)
            if (same(q, lv[j], t->cpu_to_node))
                eq = j;
        if (eq >= 0) {
            if (q->prio > lv[eq]->prio) {
                snprintf(lv[eq]->name, sizeof lv[eq]->name, "%s", q->name);
                lv[eq]->prio = q->prio;
            }
            continue;
        }
        /* it must nest with every kept level, one way or the other */
        bool ok = true;
        for (int j = 0; j < n && ok; j++)
            ok = q->n > lv[j]->n ? nests(q, lv[j], t->cpu_to_node) : nests(lv[j], q, t->cpu_to_node);
        if (ok)
            lv[n++] = q;
    }
    /* finest first */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && lv[j - 1]->n < lv[j]->n; j--) {
            part_t *x = lv[j];
            lv[j] = lv[j - 1];
            lv[j - 1] = x;
        }
    /* at most NL_MAX_LEAVES leaves (drop finer levels) and NL_MAX_LEVELS
     * levels (drop the lowest priorities; never the nodes) */
    while (lv[0] != node && lv[0]->n > NL_MAX_LEAVES) {
        memmove(&lv[0], &lv[1], (size_t)(n - 1) * sizeof lv[0]);
        n--;
    }
    while (n > NL_MAX_LEVELS) {
        int drop = -1;
        for (int i = 0; i < n; i++)
            if (lv[i] != node && (drop < 0 || lv[i]->prio < lv[drop]->prio))
                drop = i;
        memmove(&lv[drop], &lv[drop + 1], (size_t)(n - drop - 1) * sizeof lv[0]);
        n--;
    }
    int node_level = 0;
    for (int i = 0; i < n; i++)
        if (lv[i] == node)
            node_level = i;
    fill(t, lv, n, node_level);
    free(p);
}

void nl_levels_groups(nl_topology_t *t, const int16_t *leaf_node, int nleaves)
{
    t->nlevels = 2;
    t->node_level = 1;
    t->ndomains[0] = nleaves;
    t->ndomains[1] = t->nnodes;
    snprintf(t->level_name[0], sizeof t->level_name[0], "cache");
    snprintf(t->level_name[1], sizeof t->level_name[1], "node");
    for (int d = 0; d < nleaves; d++) {
        t->up[0][d] = (int16_t)d;
        t->up[1][d] = leaf_node[d];
    }
}

int nl_levels_virtual(nl_topology_t *t, const long *factor, int nf)
{
    /* factors coarsest first; the finest is the cache domain when there
     * are two or more, the one above it the node, then package, group */
    static const char *names[] = { "cache", "node", "package", "group" };
    int leaves = 1;
    for (int i = 0; i < nf; i++)
        leaves *= (int)factor[i];
    t->nlevels = nf;
    t->node_level = nf >= 2 ? 1 : 0;
    for (int l = 0; l < nf; l++) {
        int per = 1; /* leaves per domain of level l */
        for (int i = nf - l; i < nf; i++)
            per *= (int)factor[i];
        t->ndomains[l] = leaves / per;
        snprintf(t->level_name[l], sizeof t->level_name[l], "%s", names[nf >= 2 ? l : 1 + l]);
        for (int d = 0; d < leaves; d++)
            t->up[l][d] = (int16_t)(d / per);
    }
    t->nnodes = t->ndomains[t->node_level];
    for (int c = 0; c < NL_MAX_CPUS; c++)
        t->cpu_to_leaf[c] = -1; /* threads, not CPUs, are assigned (round-robin) */
    return leaves;
}

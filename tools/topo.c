/* `numalock topo`: the topology in use (its nodes, levels and CPUs, the real
 * nodes' distances), as text or JSON; `topo --measure` is topo_measure.c. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "bench.h"
#include "cli.h"

/* the level-`level` domain of CPU c, or -1 */
static int cpu_domain(const nl_topology_t *t, int c, int level)
{
    if (level < 0)
        return t->cpu_to_node[c];
    int leaf = t->cpu_to_leaf[c];
    return leaf < 0 ? -1 : t->up[level][leaf];
}

/* Print the CPUs of domain n of `level` (-1: node n) as a compact list "0-3,8". */
static void print_cpus_at(const nl_topology_t *t, int level, int n, int json)
{
    int first = 1;
    for (int c = 0; c < t->ncpus; c++) {
        if (cpu_domain(t, c, level) != n)
            continue;
        if (json) {
            printf("%s%d", first ? "" : ", ", c);
            first = 0;
            continue;
        }
        int e = c;
        while (e + 1 < t->ncpus && cpu_domain(t, e + 1, level) == n)
            e++;
        printf("%s%d", first ? "" : ",", c);
        if (e > c)
            printf("-%d", e);
        first = 0;
        c = e;
    }
    if (first && !json)
        printf("(none)");
}

static void print_cpus(const nl_topology_t *t, int n, int json) { print_cpus_at(t, -1, n, json); }

/* The domain of level l + 1 that domain d of level l lies in (through any
 * leaf of d). */
static int parent_of(const nl_topology_t *t, int l, int d)
{
    int leaf = 0;
    while (leaf + 1 < t->ndomains[0] && t->up[l][leaf] != d)
        leaf++;
    return t->up[l + 1][leaf];
}

/* The hierarchy: its levels in JSON, or as an indented tree (coarsest first). */
static void print_levels_json(const nl_topology_t *t, int virt)
{
    printf(", \"node_level\": %d, \"levels\": [", t->node_level);
    for (int l = 0; l < t->nlevels; l++) {
        printf("%s{\"name\": \"%s\", \"domains\": %d", l ? ", " : "", t->level_name[l], t->ndomains[l]);
        if (l + 1 < t->nlevels) { /* each domain's parent at the next level */
            printf(", \"parent\": [");
            for (int d = 0; d < t->ndomains[l]; d++)
                printf("%s%d", d ? ", " : "", parent_of(t, l, d));
            printf("]");
        }
        if (!virt) {
            printf(", \"cpus\": [");
            for (int d = 0; d < t->ndomains[l]; d++) {
                printf("%s[", d ? ", " : "");
                print_cpus_at(t, l, d, 1);
                printf("]");
            }
            printf("]");
        }
        printf("}");
    }
    printf("]");
}

static void print_tree(const nl_topology_t *t, int l, int parent, int depth, int virt)
{
    for (int d = 0; d < t->ndomains[l]; d++) {
        if (l + 1 < t->nlevels && parent_of(t, l, d) != parent)
            continue;
        printf("%*s%s %d", 2 * depth, "", t->level_name[l], d);
        if (!virt) {
            printf(": cpus ");
            print_cpus_at(t, l, d, 0);
        }
        printf("\n");
        if (l > 0)
            print_tree(t, l - 1, d, depth + 1, virt);
    }
}

static void topo_json(const nl_topology_t *t, const char *kind)
{
    int virt = t->kind == NL_TOPO_VIRTUAL;
    printf("{\"spec\": ");
    json_str(stdout, t->spec);
    printf(", \"kind\": \"%s\", \"node_count\": %d, \"online_cpus\": %ld, \"nodes\": [", kind, t->nnodes,
           sysconf(_SC_NPROCESSORS_ONLN));
    for (int n = 0; n < t->nnodes; n++) {
        printf("%s{\"id\": %d, \"cpus\": [", n ? ", " : "", n);
        if (!virt)
            print_cpus(t, n, 1);
        printf("]}");
    }
    printf("]");
    print_levels_json(t, virt);
    nl_cli_topo_distances(1);
    printf(", \"assignment\": \"%s\"}\n",
           virt ? "round-robin by thread registration order" : "by the CPU a thread runs on");
}

static void topo_text(const nl_topology_t *t, const char *kind)
{
    int virt = t->kind == NL_TOPO_VIRTUAL;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    printf("topology: %s (%s), %d node%s, %ld online CPU%s\n", t->spec, kind, t->nnodes, t->nnodes == 1 ? "" : "s",
           online, online == 1 ? "" : "s");
    if (t->nlevels > 1) {
        printf("levels, finest first:");
        for (int l = 0; l < t->nlevels; l++)
            printf(" %s (%d)", t->level_name[l], t->ndomains[l]);
        printf("\n");
    }
    if (virt) {
        if (t->nlevels > 1)
            print_tree(t, t->nlevels - 1, -1, 0, 1);
        printf("threads are assigned to virtual %s 0..%d round-robin in the order they first take a lock\n",
               t->nlevels > 1 ? "leaf domains" : "nodes", t->ndomains[0] - 1);
        return;
    }
    if (t->nlevels > 1) {
        print_tree(t, t->nlevels - 1, -1, 0, 0);
    } else {
        for (int n = 0; n < t->nnodes; n++) {
            printf("node %d: cpus ", n);
            print_cpus(t, n, 0);
            printf("\n");
        }
    }
    nl_cli_topo_distances(0);
}

int nl_cli_topo(int argc, char **argv, const nl_cli_command_t *self)
{
    int json = 0, measure = 0; /* --measure runs nl_cli_topo_measure (topo_measure.c) */
    const char *spec = NULL;
    const nl_opt_t opts[] = {
        { "--topology", "SPEC", NL_CLI_TOPOLOGY_FORMS, &spec, NULL },
        { "--json", NULL, "print JSON", NULL, &json },
        { "--measure", NULL, "measure core-to-core latency (its options below)", NULL, &measure },
        { 0 },
    };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            nl_cli_help(self, opts, "options of --measure:\n");
            nl_cli_topo_measure_help();
            return 0;
        }
    }
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--measure"))
            return nl_cli_topo_measure(argc, argv);
    int rc = nl_cli_opts(self, opts, argc, argv, 1, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    rc = nl_cli_apply_topology(spec, "numalock topo");
    if (rc)
        return rc;
    const nl_topology_t *t = nl_topology_current();
    const char *kind = t->kind == NL_TOPO_VIRTUAL ? "virtual" : t->kind == NL_TOPO_CPUS ? "cpus" : "auto";
    if (json)
        topo_json(t, kind);
    else
        topo_text(t, kind);
    return 0;
}

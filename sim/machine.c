/* The modelled machines (sim.h): read from sim/machines.txt, one section a
 * machine, "key = value  # source" a line. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

sim_machine_t sim_m;

typedef struct {
    const char *key;
    int kind;       /* 0 int, 1 double ns, 2 double cycles, 3 text, 4 links, 5 double */
    size_t off;
    int required;
} param_t;

#define M(f) offsetof(sim_machine_t, f)
#define C(f) (offsetof(sim_machine_t, ns) + offsetof(sim_costs_t, f))
static const param_t params[] = {
    { "description", 3, M(description), 1 },
    { "sockets", 0, M(sockets), 1 },
    { "cores_per_socket", 0, M(cores_per_socket), 1 },
    { "threads_per_core", 0, M(threads_per_core), 1 },
    { "domains_per_socket", 0, M(domains_per_socket), 1 },
    { "ghz", 5, M(ghz), 1 },
    { "links", 4, M(pairs), 1 },
    { "hit_ns", 1, C(hit), 1 },
    { "llc_ns", 1, C(llc), 1 },
    { "c2c_domain_ns", 1, C(c2c_domain), 1 },
    { "c2c_socket_ns", 1, C(c2c_socket), 1 },
    { "remote1_ns", 1, C(remote1), 1 },
    { "remote2_ns", 1, C(remote2), 1 },
    { "mem_local_ns", 1, C(mem_local), 1 },
    { "mem_remote1_ns", 1, C(mem_remote1), 1 },
    { "mem_remote2_ns", 1, C(mem_remote2), 1 },
    { "atomic_cycles", 2, C(atomic_cycles), 1 },
    { "pause_cycles", 2, C(pause_cycles), 1 },
    { "futex_wait_ns", 1, C(futex_wait), 1 },
    { "futex_wake_ns", 1, C(futex_wake), 1 },
    { "wakeup_ns", 1, C(wakeup), 1 },
    { "yield_ns", 1, C(yield), 1 },
};
#define NPARAMS (sizeof params / sizeof params[0])

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

/* the section name of a "[name]" line, or NULL */
static char *section(char *line)
{
    char *s = trim(line);
    if (*s != '[')
        return NULL;
    char *e = strchr(s, ']');
    if (!e)
        return NULL;
    *e = 0;
    return trim(s + 1);
}

static int set_param(sim_machine_t *m, const param_t *p, const char *v, const char *comment, char *err, size_t len)
{
    char *end;
    void *at = (char *)m + p->off;
    errno = 0;
    switch (p->kind) {
    case 0: {
        long x = strtol(v, &end, 10);
        if (end == v || *end || x < 1 || x > SIM_MAX_CPUS)
            goto bad;
        *(int *)at = (int)x;
        break;
    }
    case 3:
        snprintf((char *)at, sizeof m->description, "%s", v);
        break;
    case 4:
        if (strcmp(v, "full") && strcmp(v, "pairs"))
            goto bad;
        *(int *)at = !strcmp(v, "pairs");
        break;
    default: {
        double x = strtod(v, &end);
        if (end == v || *end || !(x >= 0) || x > 1e9)
            goto bad;
        *(double *)at = x;
    }
    }
    if (comment && m->nsource < 32)
        snprintf(m->source[m->nsource++], sizeof m->source[0], "%s = %s  # %s", p->key, v, comment);
    return 0;
bad:
    snprintf(err, len, "machine '%s': bad value '%s' for %s", m->name, v, p->key);
    return -1;
}

static sim_time_t ps(double ns) { return SIM_NS(ns); }

/* the CPU numbering of Linux on such machines: first the first hardware
 * thread of every core, socket by socket, then the second ones */
static int derive(sim_machine_t *m, char *err, size_t len)
{
    m->ncores = m->sockets * m->cores_per_socket;
    m->ncpus = m->ncores * m->threads_per_core;
    if (m->sockets > SIM_MAX_SOCKETS || m->ncpus > SIM_MAX_CPUS || m->domains_per_socket > m->cores_per_socket ||
        m->cores_per_socket % m->domains_per_socket) {
        snprintf(err, len, "machine '%s': %d sockets of %d cores x %d threads in %d cache domains is not "
                 "supported (at most %d sockets, %d CPUs, domains dividing the cores)", m->name, m->sockets,
                 m->cores_per_socket, m->threads_per_core, m->domains_per_socket, SIM_MAX_SOCKETS, SIM_MAX_CPUS);
        return -1;
    }
    int per_domain = m->cores_per_socket / m->domains_per_socket;
    for (int cpu = 0; cpu < m->ncpus; cpu++) {
        int core = cpu % m->ncores;
        m->cpu_core[cpu] = core;
        m->cpu_socket[cpu] = core / m->cores_per_socket;
        m->cpu_domain[cpu] = m->cpu_socket[cpu] * m->domains_per_socket + core % m->cores_per_socket / per_domain;
    }
    const sim_costs_t *c = &m->ns;
    m->c_hit = ps(c->hit);
    m->c_llc = ps(c->llc);
    m->c_c2c_domain = ps(c->c2c_domain);
    m->c_c2c_socket = ps(c->c2c_socket);
    m->c_remote[0] = m->c_c2c_socket;
    m->c_remote[1] = ps(c->remote1);
    m->c_remote[2] = ps(c->remote2);
    m->c_mem[0] = ps(c->mem_local);
    m->c_mem[1] = ps(c->mem_remote1);
    m->c_mem[2] = ps(c->mem_remote2);
    m->c_atomic = ps(c->atomic_cycles / m->ghz);
    m->c_pause = ps(c->pause_cycles / m->ghz);
    m->c_futex_wait = ps(c->futex_wait);
    m->c_futex_wake = ps(c->futex_wake);
    m->c_wakeup = ps(c->wakeup);
    m->c_yield = ps(c->yield);
    m->c_clock = ps(25.0 / m->ghz); /* rdtsc: about 25 cycles */
    return 0;
}

static FILE *open_file(const char *file, char *err, size_t len)
{
    FILE *f = fopen(file, "r");
    if (!f)
        snprintf(err, len, "cannot read the machines file '%s': %s", file, strerror(errno));
    return f;
}

int sim_machine_load(const char *file, const char *name, char *err, size_t len)
{
    FILE *f = open_file(file, err, len);
    if (!f)
        return -1;
    sim_machine_t m = { 0 };
    snprintf(m.name, sizeof m.name, "%s", name);
    char line[1024];
    int in = 0, found = 0, seen[NPARAMS] = { 0 }, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#'), *comment = NULL;
        if (hash) {
            *hash = 0;
            comment = trim(hash + 1);
        }
        char *sec = section(line);
        if (sec) {
            in = !strcmp(sec, name);
            found |= in;
            continue;
        }
        char *eq = strchr(line, '=');
        if (!in || !eq)
            continue;
        *eq = 0;
        char *key = trim(line), *val = trim(eq + 1);
        size_t i = 0;
        while (i < NPARAMS && strcmp(params[i].key, key))
            i++;
        if (i == NPARAMS) {
            snprintf(err, len, "machine '%s': unknown parameter '%s'", name, key);
            rc = -1;
        } else {
            seen[i] = 1;
            rc = set_param(&m, &params[i], val, comment, err, len);
        }
    }
    fclose(f);
    if (rc)
        return -1;
    if (!found) {
        char names[1024];
        sim_machine_names(file, names, sizeof names);
        snprintf(err, len, "unknown machine '%s': valid choices are %s, local", name, names);
        return -1;
    }
    for (size_t i = 0; i < NPARAMS; i++)
        if (params[i].required && !seen[i]) {
            snprintf(err, len, "machine '%s' lacks the parameter %s", name, params[i].key);
            return -1;
        }
    if (derive(&m, err, len))
        return -1;
    sim_m = m;
    return 0;
}

int sim_machine_names(const char *file, char *buf, size_t len)
{
    char err[256], line[1024];
    FILE *f = open_file(file, err, sizeof err);
    size_t off = 0;
    buf[0] = 0;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *sec = section(line);
        if (sec && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", sec);
    }
    fclose(f);
    return 0;
}

int sim_machine_list(const char *file)
{
    char names[2048], err[512];
    if (sim_machine_names(file, names, sizeof names)) {
        fprintf(stderr, "numalock sim: cannot read the machines file '%s'\n", file);
        return 1;
    }
    printf("machines (%s):\n", file);
    for (char *save = NULL, *n = strtok_r(names, ", ", &save); n; n = strtok_r(NULL, ", ", &save)) {
        if (sim_machine_load(file, n, err, sizeof err)) {
            printf("\n%s: %s\n", n, err);
            continue;
        }
        printf("\n[%s] %s\n  %d sockets x %d cores x %d threads (%d CPUs), %d cache domains per socket, %.2f GHz, "
               "links %s\n", sim_m.name, sim_m.description, sim_m.sockets, sim_m.cores_per_socket,
               sim_m.threads_per_core, sim_m.ncpus, sim_m.domains_per_socket, sim_m.ghz,
               sim_m.pairs ? "pairs" : "full");
        for (int i = 0; i < sim_m.nsource; i++)
            printf("  %s\n", sim_m.source[i]);
    }
    return 0;
}

int sim_hops(int s1, int s2)
{
    if (s1 == s2)
        return 0;
    if (!sim_m.pairs)
        return 1;
    return s1 / 2 == s2 / 2 ? 1 : 2;
}

/* "a-b" ranges of a sorted CPU set into buf */
static size_t cpulist(char *buf, size_t len, const int *cpus, int n)
{
    size_t off = 0;
    for (int i = 0; i < n && off < len;) {
        int j = i;
        while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
            j++;
        off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", cpus[i]);
        if (j > i && off < len)
            off += (size_t)snprintf(buf + off, len - off, "-%d", cpus[j]);
        i = j + 1;
    }
    return off;
}

void sim_topology_spec(char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "cpus:");
    int cpus[SIM_MAX_CPUS];
    for (int s = 0; s < sim_m.sockets && off < len; s++) {
        for (int d = 0; d < sim_m.domains_per_socket && off < len; d++) {
            int n = 0, dom = s * sim_m.domains_per_socket + d;
            for (int cpu = 0; cpu < sim_m.ncpus; cpu++)
                if (sim_m.cpu_domain[cpu] == dom)
                    cpus[n++] = cpu;
            if (off < len && (s || d))
                off += (size_t)snprintf(buf + off, len - off, "%s", d ? "|" : "/");
            off += cpulist(buf + off, len - off, cpus, n);
        }
    }
}

int sim_placement(const char *name, int *order)
{
    int n = 0, per_domain = sim_m.cores_per_socket / sim_m.domains_per_socket;
    if (!strcmp(name, "fill")) {
        for (int t = 0; t < sim_m.threads_per_core; t++)
            for (int core = 0; core < sim_m.ncores; core++)
                order[n++] = t * sim_m.ncores + core;
        return 0;
    }
    if (strcmp(name, "spread"))
        return -1;
    /* sockets in turn; within a socket, its cache domains in turn */
    for (int t = 0; t < sim_m.threads_per_core; t++)
        for (int k = 0; k < per_domain; k++)
            for (int d = 0; d < sim_m.domains_per_socket; d++)
                for (int s = 0; s < sim_m.sockets; s++)
                    order[n++] = t * sim_m.ncores + s * sim_m.cores_per_socket + d * per_domain + k;
    return 0;
}

/* The numalock command: list, topo, bench, report, compare (and run, see run.c). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "policy.h"
#include "../bench/bench.h"
#include "numalock_cli.h"
#include "../bench/opts.h"

static int nl_cli_opts(const nl_opt_t *opts, int argc, char **argv, const char *prog);
#include "paths.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: numalock COMMAND [OPTIONS]\n"
            "commands:\n"
            "  list [--json]                          the lock algorithms and their properties\n"
            "  topo [--topology SPEC] [--json]        the NUMA topology in use\n"
            "  topo --measure [--method cas|store] [--budget S] [--json FILE]\n"
            "                                         core-to-core latency, the clusters it implies\n"
            "  bench WORKLOAD [--lock A,B|all] [--threads 1,2,4] [--duration S]\n"
            "        [--topology SPEC] [--json FILE] [workload options]\n"
            "  report [--out DIR] [--suite FILE|NAME] [--no-render]\n"
            "                                         the benchmark suite: JSON, PNG plots, report.md\n"
            "                                         (--suite apps: real programs, through compare)\n"
            "  run --lock NAME [--topology SPEC] [--stats] -- PROGRAM ARGS...\n"
            "                                         run a program with its pthread locks replaced\n"
            "  compare --lock glibc,hbo,... [--runs N] [--metric REGEX] [--threads-env VAR=1,2,4]\n"
            "          [--json FILE] [--plot FILE.png] ... -- PROGRAM ARGS...\n"
            "                                         a program under glibc and each lock: which helps\n"
            "                                         (numalock compare --help: every option)\n"
            "  calibrate sanl [--threads N] [--duration S] [--out FILE] [--dry-run]\n"
            "                                         measure SANL's thresholds on this machine\n"
            "  sim WORKLOAD --machine NAME [--virtual-ms MS] [--seed N] [--placement spread|fill]\n"
            "      [--lock A,B] [--threads 1,2] [workload options] [--json FILE]\n"
            "                                         the workload on a simulated machine (sim --machines)\n"
            "topology SPEC: auto | sysfs:DIR | virtual:N | virtual:NxM... | cpus:LIST/LIST/... | measured   (also NUMALOCK_TOPOLOGY)\n"
            "workloads:\n");
    bench_list_workloads(f);
}

static void yesno_json(const char *k, int v, int last)
{
    printf("\"%s\": %s%s", k, v ? "true" : "false", last ? "" : ", ");
}

static int cmd_list(int argc, char **argv)
{
    int json = 0;
    const nl_opt_t opts[] = { { "--json", NULL, "print JSON", NULL, &json }, { 0 } };
    if (nl_cli_opts(opts, argc, argv, "numalock list"))
        return 2;
    static const unsigned at[] = { 2, 4, 8 };
    if (json) {
        printf("[\n");
        for (size_t i = 0; i < nl_lock_count(); i++) {
            const nl_lock_ops_t *o = nl_lock_at(i);
            printf("  {\"name\": ");
            json_str(stdout, o->name);
            printf(", \"description\": ");
            json_str(stdout, o->description);
            printf(", \"paper\": ");
            json_str(stdout, o->paper);
            printf(", \"bytes\": %zu, \"bytes_at_nodes\": {", o->size);
            for (int k = 0; k < 3; k++)
                printf("%s\"%u\": %zu", k ? ", " : "", at[k], nl_lock_bytes_at_nodes(o, at[k]));
            printf("}, ");
            yesno_json("fair", o->props & NL_PROP_FAIR, 0);
            yesno_json("blocking", o->props & NL_PROP_BLOCKING, 0);
            yesno_json("numa_aware", o->props & NL_PROP_NUMA_AWARE, 0);
            yesno_json("zero_init", o->props & NL_PROP_ZERO_INIT, 0);
            yesno_json("any_thread_unlock", o->props & NL_PROP_ANY_UNLOCK, 0);
            yesno_json("rw", o->props & NL_PROP_RW, 0);
            nl_cli_list_lock_json(o);
            printf("\"api\": \"%s\"}%s\n",
                   o->props & NL_PROP_DELEGATE ? "delegate" : o->props & NL_PROP_RW ? "rwlock" : "lock",
                   i + 1 < nl_lock_count() ? "," : "");
        }
        printf("]\n");
        return 0;
    }
    printf("%-15s %6s %6s %6s %6s %-5s %-8s %-10s %-8s %s\n", "name", "bytes", "@2n", "@4n", "@8n",
           "fair", "blocking", "numa-aware", "api", "description");
    for (size_t i = 0; i < nl_lock_count(); i++) {
        const nl_lock_ops_t *o = nl_lock_at(i);
        printf("%-15s %6zu %6zu %6zu %6zu %-5s %-8s %-10s %-8s %s\n", o->name, o->size,
               nl_lock_bytes_at_nodes(o, 2), nl_lock_bytes_at_nodes(o, 4), nl_lock_bytes_at_nodes(o, 8),
               o->props & NL_PROP_FAIR ? "yes" : "no", o->props & NL_PROP_BLOCKING ? "yes" : "no",
               o->props & NL_PROP_NUMA_AWARE ? "yes" : "no",
               o->props & NL_PROP_DELEGATE ? "delegate" : o->props & NL_PROP_RW ? "rwlock" : "lock",
               o->description);
    }
    return 0;
}

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

/* Parses a subcommand's options (argv[0] is the subcommand; no operands);
 * prints one sentence and returns -1 on error. */
static int nl_cli_opts(const nl_opt_t *opts, int argc, char **argv, const char *prog)
{
    char err[1536];
    if (nl_opts_parse(opts, argc, argv, 1, 0, NULL, err, sizeof err) >= 0)
        return 0;
    fprintf(stderr, "%s: %s\n", prog, err);
    return -1;
}

int nl_cli_apply_topology(const char *spec, const char *prog)
{
    char err[512];
    if (spec) {
        if (nl_topology_set(spec, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return 2;
        }
    } else if (nl_topology_env_error()) {
        fprintf(stderr, "%s: NUMALOCK_TOPOLOGY: %s\n", prog, nl_topology_env_error());
        return 2;
    }
    return 0;
}

static int cmd_topo(int argc, char **argv)
{
    int json = 0;
    const char *spec = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--measure"))
            return nl_cli_topo_measure(argc, argv);
    int measure = 0; /* --measure runs nl_cli_topo_measure (above) */
    const nl_opt_t opts[] = {
        { "--topology", "SPEC", NL_CLI_TOPOLOGY_FORMS, &spec, NULL },
        { "--json", NULL, "print JSON", NULL, &json },
        { "--measure", NULL, "measure core-to-core latency", NULL, &measure },
        { 0 },
    };
    if (nl_cli_opts(opts, argc, argv, "numalock topo"))
        return 2;
    int rc = nl_cli_apply_topology(spec, "numalock topo");
    if (rc)
        return rc;
    const nl_topology_t *t = nl_topology_current();
    int virt = t->kind == NL_TOPO_VIRTUAL;
    const char *kind = virt ? "virtual" : t->kind == NL_TOPO_CPUS ? "cpus" : "auto";
    if (json) {
        printf("{\"spec\": ");
        json_str(stdout, t->spec);
        printf(", \"kind\": \"%s\", \"node_count\": %d, \"online_cpus\": %ld, \"nodes\": [", kind,
               t->nnodes, sysconf(_SC_NPROCESSORS_ONLN));
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
        return 0;
    }
    printf("topology: %s (%s), %d node%s, %ld online CPU%s\n", t->spec, kind, t->nnodes,
           t->nnodes == 1 ? "" : "s", sysconf(_SC_NPROCESSORS_ONLN),
           sysconf(_SC_NPROCESSORS_ONLN) == 1 ? "" : "s");
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
        return 0;
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
    return 0;
}

static void join_args(char *buf, size_t len, int argc, char **argv)
{
    size_t off = (size_t)snprintf(buf, len, "numalock");
    for (int i = 0; i < argc && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, " %s", argv[i]);
}

static int cmd_bench(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: numalock bench WORKLOAD [--lock A,B|all] [--threads 1,2,4] [--duration S]\n"
                   "       [--topology SPEC] [--json FILE] [--quiet] [workload options]\nworkloads:\n");
        bench_list_workloads(f);
        return argc < 2 ? 2 : 0;
    }
    char line[2048];
    join_args(line, sizeof line, argc, argv);
    return bench_main(argc - 1, argv + 1, line);
}

/* ---- compare ------------------------------------------------------------ */
/* Appends ARG to f as one shell word (quoted when it needs to be), so that a
 * recorded command line can be pasted back into a shell. */
static void shell_word(FILE *f, const char *arg)
{
    if (*arg && strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+@%-") ==
                    strlen(arg)) {
        fputs(arg, f);
        return;
    }
    fputc('\'', f);
    for (const char *c = arg; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", f); /* close the quote, an escaped quote, reopen */
        else
            fputc(*c, f);
    }
    fputc('\'', f);
}

static const char *python_path(void);

/* `numalock compare` is scripts/compare.py (installed beside report.py). Its
 * first argument is a JSON object with what only this command knows: the
 * preload library (null when missing, with the place looked), every
 * registered lock with the reason it cannot replace a pthread mutex (null
 * when it can: nlp_interposable, the rule `numalock run` applies), the
 * command's own path (programs installed beside it are found there), its
 * version and command line. The script replaces this process, so a signal
 * sent to the command reaches the script, which kills the running program. */
static int cmd_compare(int argc, char **argv)
{
    char script[PATH_MAX], lib[PATH_MAX], exe[PATH_MAX], why[512];
    if (nl_cli_data_file("compare.py", script, sizeof script)) {
        fprintf(stderr, "numalock compare: cannot find the comparison script '%s': build or install it with the "
                        "command\n", script);
        return 2;
    }
    int have_lib = nl_cli_lib_file("libnumalock-preload.so", lib, sizeof lib) == 0;
    char *real = have_lib ? realpath(lib, NULL) : NULL;
    if (real) {
        snprintf(lib, sizeof lib, "%s", real);
        free(real);
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;

    char *ctx = NULL;
    size_t ctxlen = 0;
    FILE *f = open_memstream(&ctx, &ctxlen);
    if (!f)
        return 1;
    fprintf(f, "{\"numalock\": ");
    json_str(f, exe);
    fprintf(f, ", \"version\": ");
    json_str(f, NL_VERSION);
    fprintf(f, ", \"preload\": ");
    if (have_lib)
        json_str(f, lib);
    else
        fprintf(f, "null");
    fprintf(f, ", \"preload_looked\": ");
    json_str(f, lib);
    fprintf(f, ", \"locks\": {");
    for (size_t i = 0; i < nl_lock_count(); i++) {
        const nl_lock_ops_t *o = nl_lock_at(i);
        fprintf(f, "%s", i ? ", " : "");
        json_str(f, o->name);
        fprintf(f, ": ");
        if (nlp_interposable(o, why, sizeof why))
            json_str(f, why);
        else
            fprintf(f, "null");
    }
    char *line = NULL;
    size_t linelen = 0;
    FILE *l = open_memstream(&line, &linelen);
    if (!l) {
        fclose(f);
        free(ctx);
        return 1;
    }
    fprintf(l, "numalock");
    for (int i = 0; i < argc; i++) {
        fputc(' ', l);
        shell_word(l, argv[i]);
    }
    fclose(l);
    fprintf(f, "}, \"command\": ");
    json_str(f, line);
    fprintf(f, "}");
    fclose(f);
    free(line);

    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return 1;
    args[0] = (char *)python_path();
    args[1] = script;
    args[2] = ctx;
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    fflush(NULL);
    execvp(args[0], args);
    fprintf(stderr, "numalock compare: cannot run '%s': %s (set NUMALOCK_PYTHON to a python3)\n", args[0],
            strerror(errno));
    return 2;
}

/* ---- report ------------------------------------------------------------- */
static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0777) && errno != EEXIST)
                return -1;
            *p = '/';
        }
    }
    return mkdir(buf, 0777) && errno != EEXIST ? -1 : 0;
}

static const char *python_path(void)
{
    static char buf[PATH_MAX];
    const char *env = getenv("NUMALOCK_PYTHON");
    if (env && *env)
        return env;
    /* the build tree's share/numalock/python3 links to the checkout's
     * .venv/bin/python3. Python finds its venv (pyvenv.cfg) beside the path
     * it is started by, or else beside the fully resolved interpreter, so it
     * is started by the link's target: the link itself would give the base
     * interpreter without the venv's packages (matplotlib). */
    if (nl_cli_data_file("python3", buf, sizeof buf) == 0 && access(buf, X_OK) == 0) {
        char target[PATH_MAX];
        ssize_t n = readlink(buf, target, sizeof target - 1);
        if (n > 0 && target[0] == '/') {
            target[n] = 0;
            snprintf(buf, sizeof buf, "%s", target);
        }
        return buf;
    }
    return "python3";
}

/* "default, quick": the NAME-suite.txt files in the data folder */
static const char *suite_names(char *buf, size_t len)
{
    size_t off = 0;
    struct dirent **e = NULL;
    int n = scandir(nl_cli_data_dir(), &e, NULL, alphasort);
    buf[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(e[i]->d_name);
        if (l > 10 && !strcmp(e[i]->d_name + l - 10, "-suite.txt") && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%.*s", off ? ", " : "", (int)(l - 10), e[i]->d_name);
        free(e[i]);
    }
    free(e);
    if (!buf[0])
        snprintf(buf, len, "(none: the folder is missing or empty)");
    return buf;
}

/* `numalock report`: the suite line running now, and the first request to
 * stop. A request is passed on to the line's child (a compare line's script
 * kills its program and writes nothing), and the suite stops after it. */
static volatile pid_t report_child;
static volatile sig_atomic_t report_stop;

static void report_signal(int sig)
{
    if (!report_stop)
        report_stop = sig;
    if (report_child > 0)
        kill(report_child, sig);
}

/* Splits a suite line into words at blanks; '...' quotes a word with blanks
 * (nothing is special inside, as in sh). Returns the count, or -1 for an
 * unclosed quote or more than max words. */
static int split_words(char *s, char **words, int max)
{
    int n = 0;
    while (*s) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        if (n == max)
            return -1;
        char *out = s;
        words[n++] = out;
        while (*s && *s != ' ' && *s != '\t') {
            if (*s == '\'') {
                char *end = strchr(s + 1, '\'');
                if (!end)
                    return -1;
                memmove(out, s + 1, (size_t)(end - s - 1));
                out += end - s - 1;
                s = end + 1;
            } else {
                *out++ = *s++;
            }
        }
        if (*s)
            s++;
        *out = 0;
    }
    return n;
}

static int cmd_report(int argc, char **argv)
{
    const char *out = NULL, *suite = NULL;
    int render = 1;
    char def_out[PATH_MAX], def_suite[PATH_MAX];
    int no_render = 0;
    const nl_opt_t opts[] = {
        { "--out", "DIR", "the folder for the results", &out, NULL },
        { "--suite", "FILE|NAME", "a suite file, or the name of an installed suite", &suite, NULL },
        { "--no-render", NULL, "write the JSON only", NULL, &no_render },
        { 0 },
    };
    if (nl_cli_opts(opts, argc, argv, "numalock report"))
        return 2;
    render = !no_render;
    if (!suite)
        suite = "default";
    /* a NAME (no '/', not a file here) is an installed suite: NAME-suite.txt */
    if (!strchr(suite, '/') && access(suite, F_OK) != 0) {
        char file[NAME_MAX + 1];
        snprintf(file, sizeof file, "%s-suite.txt", suite);
        if (nl_cli_data_file(file, def_suite, sizeof def_suite)) {
            char names[256];
            fprintf(stderr, "numalock report: unknown suite '%s': no such file, and the suites in %s are %s\n",
                    suite, nl_cli_data_dir(), suite_names(names, sizeof names));
            return 2;
        }
        suite = def_suite;
    }
    if (!out) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char ts[32];
        strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(def_out, sizeof def_out, "results/%s", ts);
        out = def_out;
    }
    FILE *f = fopen(suite, "r");
    if (!f) {
        fprintf(stderr, "numalock report: cannot read suite file '%s': %s\n", suite, strerror(errno));
        return 2;
    }
    if (mkdir_p(out)) {
        fprintf(stderr, "numalock report: cannot create output folder '%s': %s\n", out, strerror(errno));
        fclose(f);
        return 2;
    }
    char line[2048];
    int lineno = 0, failed = 0;
    struct sigaction sa = { .sa_handler = report_signal };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    while (!report_stop && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        /* A line is a `numalock bench` command without its first two words,
         * or a `numalock compare` or `numalock sim` command ("compare ...",
         * "sim ..."). Its --json and
         * --plot files (before a compare line's "--") go to the output folder. */
        char *words[64];
        int n = split_words(s, words, 63);
        if (n < 0) {
            fprintf(stderr, "numalock report: suite line %d has an unclosed quote or more than 63 words\n", lineno);
            failed = 1;
            continue;
        }
        int compare = !strcmp(words[0], "compare"), sim = !strcmp(words[0], "sim");
        char outpaths[2][PATH_MAX + 256];
        int nout = 0;
        for (int k = 0; k + 1 < n && strcmp(words[k], "--"); k++)
            if ((!strcmp(words[k], "--json") || !strcmp(words[k], "--plot")) && nout < 2) {
                snprintf(outpaths[nout], sizeof outpaths[nout], "%s/%s", out, words[k + 1]);
                words[k + 1] = outpaths[nout++];
            }
        words[n] = NULL;
        char cmd[4096];
        FILE *cf = fmemopen(cmd, sizeof cmd, "w");
        if (!cf) {
            fclose(f);
            return 1;
        }
        fputs(compare || sim ? "numalock" : "numalock bench", cf);
        for (int k = 0; k < n; k++) {
            fputc(' ', cf);
            shell_word(cf, words[k]);
        }
        fclose(cf);
        cmd[sizeof cmd - 1] = 0;
        fprintf(stderr, "[report] %s\n", cmd);
        fflush(stdout);
        /* each suite line runs in a child so one topology setting cannot leak into the next */
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGINT, SIG_DFL);
            signal(SIGTERM, SIG_DFL);
            signal(SIGHUP, SIG_DFL);
            int rc = compare ? cmd_compare(n, words) : sim ? nl_cli_sim(n, words) : bench_main(n, words, cmd);
            fflush(NULL);
            _exit(rc);
        }
        report_child = pid;
        int st = 0, w;
        while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;
        report_child = 0;
        if (report_stop)
            break;
        if (pid < 0 || w < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "numalock report: suite line %d failed: %s\n", lineno, cmd);
            failed = 1;
        }
    }
    fclose(f);
    if (report_stop) {
        fprintf(stderr, "numalock report: stopped by signal %d; the results so far are in %s\n", (int)report_stop,
                out);
        return 128 + report_stop;
    }
    /* the lines that failed are named above; the report is still made from
     * the JSON the others wrote (a compare line whose program failed under
     * one lock writes its JSON too, naming the failure), and the status says
     * that something failed */
    if (!render) {
        printf("results (JSON) in %s%s\n", out, failed ? " (some suite lines failed)" : "");
        return failed;
    }
    char script[PATH_MAX];
    if (nl_cli_data_file("report.py", script, sizeof script)) {
        fprintf(stderr, "numalock report: cannot find the report script '%s'; the JSON results are in %s\n", script,
                out);
        return 1;
    }
    pid_t pid = fork();
    if (pid == 0) {
        execlp(python_path(), python_path(), script, out, (char *)NULL);
        fprintf(stderr, "numalock report: cannot run '%s': %s (set NUMALOCK_PYTHON to a python3 with matplotlib)\n",
                python_path(), strerror(errno));
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
        fprintf(stderr, "numalock report: rendering the report failed; the JSON results are in %s\n", out);
        return 1;
    }
    printf("report: %s/report.md%s\n", out, failed ? " (some suite lines failed: see above)" : "");
    return failed;
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("numalock %s\n", NL_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "topo"))
        return cmd_topo(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cmd_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return nl_cli_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return nl_cli_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "sim"))
        return nl_cli_sim(argc - 1, argv + 1);
    fprintf(stderr,
            "numalock: unknown command '%s': valid commands are list, topo, bench, report, run, compare, calibrate, "
            "sim\n",
            cmd);
    return 2;
}

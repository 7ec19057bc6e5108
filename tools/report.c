/* `numalock report [--out DIR] [--suite FILE|NAME] [--no-render]`: the
 * benchmark suite, one line at a time, each in a child; then the report
 * (tools/report.py: JSON to PNG plots and report.md). */
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
#include "bench.h"
#include "cli.h"
#include "paths.h"
#include "words.h"

/* The suite line running now, and the first request to stop. A request is
 * passed on to the line's child (a compare line's script kills its program
 * and writes nothing), and the suite stops after it. */
static volatile pid_t report_child;
static volatile sig_atomic_t report_stop;

static void report_signal(int sig)
{
    if (!report_stop)
        report_stop = sig;
    if (report_child > 0)
        kill(report_child, sig);
}

/* The commands a suite line may be besides a bench line (called in the
 * line's child, as `numalock compare ...` and `numalock sim ...` are). */
static const nl_cli_command_t line_compare = { "compare", nl_cli_compare, "compare ...", "a suite line" };
static const nl_cli_command_t line_sim = { "sim", nl_cli_sim, "sim ...", "a suite line" };

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

/* --suite: a file, or a NAME (no '/', not a file here) of an installed
 * suite, NAME-suite.txt; its path in buf. 0, or 2 with one sentence. */
static int find_suite(const char *suite, char *buf, size_t len)
{
    snprintf(buf, len, "%s", suite);
    if (strchr(suite, '/') || access(suite, F_OK) == 0)
        return 0;
    char file[NAME_MAX + 1], names[256];
    snprintf(file, sizeof file, "%s-suite.txt", suite);
    if (nl_cli_data_file(file, buf, len) == 0)
        return 0;
    fprintf(stderr, "numalock report: unknown suite '%s': no such file, and the suites in %s are %s\n", suite,
            nl_cli_data_dir(), suite_names(names, sizeof names));
    return 2;
}

/* The line's --json and --plot files (before a compare line's "--") go to
 * the output folder: their words point into outpaths. */
static void into_folder(char **words, int n, const char *out, char outpaths[2][PATH_MAX + 256])
{
    int nout = 0;
    for (int k = 0; k + 1 < n && strcmp(words[k], "--"); k++)
        if ((!strcmp(words[k], "--json") || !strcmp(words[k], "--plot")) && nout < 2) {
            snprintf(outpaths[nout], sizeof outpaths[nout], "%s/%s", out, words[k + 1]);
            words[k + 1] = outpaths[nout++];
        }
}

/* Runs words[0..n) in a child (so one topology setting cannot leak into
 * the next line): a compare or sim line as that command, any other as a
 * bench line. 0, or 1 when it failed. */
static int run_words(char **words, int n, const char *cmd)
{
    int compare = !strcmp(words[0], "compare"), sim = !strcmp(words[0], "sim");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        int rc = compare ? nl_cli_compare(n, words, &line_compare)
               : sim     ? nl_cli_sim(n, words, &line_sim)
                         : bench_main(n, words, cmd);
        fflush(NULL);
        _exit(rc);
    }
    report_child = pid;
    int st = 0, w;
    while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    report_child = 0;
    return pid < 0 || w < 0 || !WIFEXITED(st) || WEXITSTATUS(st) ? 1 : 0;
}

/* "numalock [bench] WORD..." as shell words into cmd */
static int command_of(char **words, int n, char *cmd, size_t len)
{
    FILE *cf = fmemopen(cmd, len, "w");
    if (!cf)
        return -1;
    fputs(!strcmp(words[0], "compare") || !strcmp(words[0], "sim") ? "numalock" : "numalock bench", cf);
    for (int k = 0; k < n; k++) {
        fputc(' ', cf);
        nl_cli_shell_word(cf, words[k]);
    }
    fclose(cf);
    cmd[len - 1] = 0;
    return 0;
}

/* One line of the suite: a `numalock bench` command without its first two
 * words, or a `numalock compare` or `numalock sim` command ("compare ...",
 * "sim ..."). Blank lines and # comments are skipped. The line is said as
 * the suite has it (its files relative to the output folder, which a caller
 * such as `make run` may rename at the end); it runs with its files in the
 * folder. 0, or 1 when it failed (named on stderr). */
static int run_line(char *s, int lineno, const char *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s || *s == '#')
        return 0;
    char *words[64], outpaths[2][PATH_MAX + 256], cmd[4096], shown[4096];
    int n = nl_cli_split_words(s, words, 63);
    if (n < 0) {
        fprintf(stderr, "numalock report: suite line %d has an unclosed quote or more than 63 words\n", lineno);
        return 1;
    }
    if (command_of(words, n, shown, sizeof shown))
        return 1;
    into_folder(words, n, out, outpaths);
    words[n] = NULL;
    if (command_of(words, n, cmd, sizeof cmd))
        return 1;
    fprintf(stderr, "[report] %s\n", shown);
    int failed = run_words(words, n, cmd);
    if (failed && !report_stop)
        fprintf(stderr, "numalock report: suite line %d failed: %s\n", lineno, shown);
    return failed;
}

/* Every line of the suite file, until a signal asks to stop; 1 when some
 * line failed. */
static int run_suite(FILE *f, const char *out)
{
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
        failed |= run_line(line, lineno, out);
    }
    return failed;
}

/* report.py over the JSON in `out`. The lines that failed are named
 * already; the report is still made from the JSON the others wrote (a
 * compare line whose program failed under one lock writes its JSON too,
 * naming the failure), and the status says that something failed. */
static int render(const char *out, int failed)
{
    char script[PATH_MAX];
    if (nl_cli_data_file("report.py", script, sizeof script)) {
        fprintf(stderr, "numalock report: cannot find the report script '%s'; the JSON results are in %s\n", script,
                out);
        return 1;
    }
    const char *python = nl_cli_python();
    pid_t pid = fork();
    if (pid == 0) {
        execlp(python, python, script, out, (char *)NULL);
        fprintf(stderr, "numalock report: cannot run '%s': %s (set NUMALOCK_PYTHON to a python3 with matplotlib)\n",
                python, strerror(errno));
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

/* the table of the locks (numalock list --markdown) beside the results:
 * report.py puts it into report.md */
static void write_locks_table(const char *out)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/locks.md", out);
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    nl_cli_list_markdown(f);
    fclose(f);
}

int nl_cli_report(int argc, char **argv, const nl_cli_command_t *self)
{
    const char *out = NULL, *suite = "default";
    char def_out[PATH_MAX], path[PATH_MAX];
    int no_render = 0;
    const nl_opt_t opts[] = {
        { "--out", "DIR", "the folder for the results (default: results/UTC-TIME)", &out, NULL },
        { "--suite", "FILE|NAME", "a suite file, or the name of an installed suite (default: default)", &suite,
          NULL },
        { "--no-render", NULL, "write the JSON only", NULL, &no_render },
        { 0 },
    };
    int rc = nl_cli_opts(self, opts, argc, argv, 1, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (find_suite(suite, path, sizeof path))
        return 2;
    if (!out) {
        time_t now = time(NULL);
        struct tm tm;
        char ts[32];
        gmtime_r(&now, &tm);
        strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(def_out, sizeof def_out, "results/%s", ts);
        out = def_out;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "numalock report: cannot read suite file '%s': %s\n", path, strerror(errno));
        return 2;
    }
    if (mkdir_p(out)) {
        fprintf(stderr, "numalock report: cannot create output folder '%s': %s\n", out, strerror(errno));
        fclose(f);
        return 2;
    }
    int failed = run_suite(f, out);
    fclose(f);
    write_locks_table(out);
    if (report_stop) {
        fprintf(stderr, "numalock report: stopped by signal %d; the results so far are in %s\n", (int)report_stop,
                out);
        return 128 + report_stop;
    }
    if (no_render) { /* the folder is said when this command chose it */
        if (out == def_out)
            printf("results (JSON) in %s%s\n", out, failed ? " (some suite lines failed)" : "");
        else if (failed)
            printf("some suite lines failed (above); the others' JSON is written\n");
        return failed;
    }
    return render(out, failed);
}

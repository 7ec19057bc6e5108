/* `numalock compare`: a program under glibc and under each lock, which
 * helps. The comparison is tools/compare.py (installed beside report.py);
 * this command gives it what only the command knows and replaces itself
 * with it, so a signal sent to the command reaches the script, which kills
 * the running program. The script has the usage (numalock compare --help). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "bench.h"
#include "policy.h"
#include "cli.h"
#include "paths.h"
#include "words.h"

/* "numalock ARG ..." as shell words, in a malloc'ed string (NULL: no memory) */
static char *command_line(int argc, char **argv)
{
    char *line = NULL;
    size_t len = 0;
    FILE *l = open_memstream(&line, &len);
    if (!l)
        return NULL;
    fprintf(l, "numalock");
    for (int i = 0; i < argc; i++) {
        fputc(' ', l);
        nl_cli_shell_word(l, argv[i]);
    }
    fclose(l);
    return line;
}

/* The script's first argument, a JSON object (malloc'ed; NULL: no memory):
 * the preload library (null when missing, with the place looked), every
 * registered lock with the reason it cannot replace a pthread mutex (null
 * when it can: nlp_interposable, the rule `numalock run` applies), the
 * command's own path (programs installed beside it are found there), its
 * version and command line. */
static char *context_json(int argc, char **argv)
{
    char lib[PATH_MAX], exe[PATH_MAX], why[512];
    int have_lib = nl_cli_lib_file("libnumalock-preload.so", lib, sizeof lib) == 0;
    char *real = have_lib ? realpath(lib, NULL) : NULL;
    if (real) {
        snprintf(lib, sizeof lib, "%s", real);
        free(real);
    }
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    char *ctx = NULL, *line = command_line(argc, argv);
    size_t ctxlen = 0;
    FILE *f = line ? open_memstream(&ctx, &ctxlen) : NULL;
    if (!f) {
        free(line);
        return NULL;
    }
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
    fprintf(f, "}, \"command\": ");
    json_str(f, line);
    fprintf(f, "}");
    fclose(f);
    free(line);
    return ctx;
}

int nl_cli_compare(int argc, char **argv, const nl_cli_command_t *self)
{
    char script[PATH_MAX];
    if (nl_cli_data_file("compare.py", script, sizeof script)) {
        fprintf(stderr, "numalock %s: cannot find the comparison script '%s': build or install it with the "
                        "command\n", self->name, script);
        return 2;
    }
    char *ctx = context_json(argc, argv);
    char **args = ctx ? calloc((size_t)argc + 3, sizeof *args) : NULL;
    if (!args) {
        free(ctx);
        return 1;
    }
    args[0] = (char *)nl_cli_python();
    args[1] = script;
    args[2] = ctx;
    for (int i = 1; i < argc; i++)
        args[i + 2] = argv[i];
    fflush(NULL);
    execvp(args[0], args);
    fprintf(stderr, "numalock %s: cannot run '%s': %s (set NUMALOCK_PYTHON to a python3)\n", self->name, args[0],
            strerror(errno));
    return 2;
}

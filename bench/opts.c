/* The numalock command's option parser (see opts.h). */
#include <stdio.h>
#include <string.h>
#include "opts.h"

const char *nl_opts_list(const nl_opt_t *opts, char *buf, size_t len)
{
    size_t off = 0;
    if (!len)
        return buf;
    buf[0] = 0;
    for (const nl_opt_t *o = opts; o->name && off < len; o++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s%s%s", off ? ", " : "", o->name, o->arg ? " " : "",
                                o->arg ? o->arg : "");
    return buf;
}

const char *nl_opt_missing_value(const nl_opt_t *opt, char *buf, size_t len)
{
    snprintf(buf, len, "option '%s' needs a value: %s%s%s", opt->name, opt->arg ? opt->arg : "VALUE",
             opt->help ? ", " : "", opt->help ? opt->help : "");
    return buf;
}

void nl_opts_help(FILE *f, const nl_opt_t *opts)
{
    int width = 0;
    for (const nl_opt_t *o = opts; o->name; o++) {
        int w = (int)(strlen(o->name) + (o->arg ? 1 + strlen(o->arg) : 0));
        if (w > width && w <= 24)
            width = w;
    }
    for (const nl_opt_t *o = opts; o->name; o++) {
        char left[128];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        if ((int)strlen(left) > width)
            fprintf(f, "  %s\n  %*s  %s\n", left, width, "", o->help ? o->help : "");
        else
            fprintf(f, "  %-*s  %s\n", width, left, o->help ? o->help : "");
    }
}

static const nl_opt_t *find(const nl_opt_t *opts, const char *name, size_t n)
{
    for (const nl_opt_t *o = opts; o->name; o++)
        if (strlen(o->name) == n && !strncmp(o->name, name, n))
            return o;
    return NULL;
}

int nl_opts_parse(const nl_opt_t *opts, int argc, char **argv, int start, unsigned flags, const char *context,
                  char *err, size_t errlen)
{
    char list[1024];
    for (int i = start; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            return (flags & NL_OPTS_OPERANDS) ? i + 1 : (snprintf(err, errlen, "unexpected argument '--'"), -1);
        if ((flags & NL_OPTS_HELP) && (!strcmp(a, "--help") || !strcmp(a, "-h")))
            return NL_OPTS_HELP_ASKED;
        if (strncmp(a, "--", 2) || !a[2]) {
            if (flags & NL_OPTS_OPERANDS)
                return i;
            snprintf(err, errlen, "unexpected argument '%s': options start with --, valid options are %s", a,
                     nl_opts_list(opts, list, sizeof list));
            return -1;
        }
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        const nl_opt_t *o = find(opts, a, n);
        if (!o) {
            snprintf(err, errlen, "unknown option '%.*s'%s%s: valid options are %s", (int)n, a, context ? " " : "",
                     context ? context : "", nl_opts_list(opts, list, sizeof list));
            return -1;
        }
        if (!o->arg) {
            if (eq) {
                snprintf(err, errlen, "option '%s' takes no value (got '%s')", o->name, eq + 1);
                return -1;
            }
            if (o->flag)
                *o->flag = 1;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        if (!v || !*v || !strncmp(v, "--", 2)) {
            nl_opt_missing_value(o, err, errlen);
            return -1;
        }
        if (!eq)
            i++;
        if (o->value)
            *o->value = v;
    }
    return argc;
}

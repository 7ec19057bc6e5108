/* `numalock list [--json|--markdown]`: the registered lock algorithms and
 * their properties. The Markdown table is the docs' table of the locks
 * (every report.md has it): it comes from the registry, so a new lock is in
 * it with no edit. */
#include <stdio.h>
#include "numalock/numalock.h"
#include "bench.h"
#include "cli.h"

static void yesno_json(const char *k, int v, int last)
{
    printf("\"%s\": %s%s", k, v ? "true" : "false", last ? "" : ", ");
}

static const char *api_of(const nl_lock_ops_t *o)
{
    return o->props & NL_PROP_DELEGATE ? "delegate" : o->props & NL_PROP_RW ? "rwlock" : "lock";
}

static void list_json(void)
{
    static const unsigned at[] = { 2, 4, 8 };
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
        printf("\"api\": \"%s\"}%s\n", api_of(o), i + 1 < nl_lock_count() ? "," : "");
    }
    printf("]\n");
}

static void list_table(void)
{
    printf("%-15s %6s %6s %6s %6s %-5s %-8s %-10s %-8s %s\n", "name", "bytes", "@2n", "@4n", "@8n", "fair",
           "blocking", "numa-aware", "api", "description");
    for (size_t i = 0; i < nl_lock_count(); i++) {
        const nl_lock_ops_t *o = nl_lock_at(i);
        printf("%-15s %6zu %6zu %6zu %6zu %-5s %-8s %-10s %-8s %s\n", o->name, o->size,
               nl_lock_bytes_at_nodes(o, 2), nl_lock_bytes_at_nodes(o, 4), nl_lock_bytes_at_nodes(o, 8),
               o->props & NL_PROP_FAIR ? "yes" : "no", o->props & NL_PROP_BLOCKING ? "yes" : "no",
               o->props & NL_PROP_NUMA_AWARE ? "yes" : "no", api_of(o), o->description);
    }
}

/* a cell: '|' would end it */
static void md_cell(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

void nl_cli_list_markdown(FILE *f)
{
    fprintf(f, "| name | what | bytes (at 1, 2, 4, 8 nodes) | fair | blocking | NUMA-aware | api | paper |\n"
               "|---|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < nl_lock_count(); i++) {
        const nl_lock_ops_t *o = nl_lock_at(i);
        size_t b[3] = { nl_lock_bytes_at_nodes(o, 2), nl_lock_bytes_at_nodes(o, 4), nl_lock_bytes_at_nodes(o, 8) };
        fprintf(f, "| `%s` | ", o->name);
        md_cell(f, o->description);
        if (b[0] == o->size && b[2] == o->size)
            fprintf(f, " | %zu | ", o->size);
        else
            fprintf(f, " | %zu, %zu, %zu, %zu | ", o->size, b[0], b[1], b[2]);
        fprintf(f, "%s | %s | %s | %s | ", o->props & NL_PROP_FAIR ? "yes" : "no",
                o->props & NL_PROP_BLOCKING ? "yes" : "no", o->props & NL_PROP_NUMA_AWARE ? "yes" : "no", api_of(o));
        md_cell(f, o->paper);
        fprintf(f, " |\n");
    }
}

int nl_cli_list(int argc, char **argv, const nl_cli_command_t *self)
{
    int json = 0, markdown = 0;
    const nl_opt_t opts[] = { { "--json", NULL, "print JSON", NULL, &json },
                              { "--markdown", NULL, "print the docs' table (Markdown)", NULL, &markdown }, { 0 } };
    int rc = nl_cli_opts(self, opts, argc, argv, 1, 0, NULL);
    if (rc)
        return rc > 0 ? 0 : 2;
    if (json)
        list_json();
    else if (markdown)
        nl_cli_list_markdown(stdout);
    else
        list_table();
    return 0;
}

/* The table `numalock bench` prints: one row per record, a labelled column
 * per figure, the columns that are "-" in every row left out. A workload's
 * extra fields become columns of their own when they differ between rows;
 * those equal in every row are said once, above the table. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define TB_COLS 32
#define TB_CELL 48
#define TB_KEYS 16

typedef struct {
    char head[TB_CELL];
    int left;                     /* left-aligned (names), else right */
} tb_col_t;

typedef struct {
    size_t rows;
    int ncols;
    tb_col_t col[TB_COLS];
    char *cells;                  /* rows x TB_COLS x TB_CELL */
} tb_t;

static char *cell(tb_t *t, size_t row, int col)
{
    return t->cells + (row * TB_COLS + (size_t)col) * TB_CELL;
}

static int add_col(tb_t *t, const char *head, int left)
{
    if (t->ncols == TB_COLS)
        return -1;
    snprintf(t->col[t->ncols].head, TB_CELL, "%s", head);
    t->col[t->ncols].left = left;
    for (size_t r = 0; r < t->rows; r++)
        snprintf(cell(t, r, t->ncols), TB_CELL, "-");
    return t->ncols++;
}

/* The scalar members of a record's extra JSON ("\"k\": v, ..."): keys and
 * values as written (strings unquoted, null as "-"); lists and objects are
 * left out (the JSON has them). Returns the count. */
static int parse_extra(const char *s, char keys[][TB_CELL], char vals[][TB_CELL], int max)
{
    int n = 0;
    while (*s && n < max) {
        const char *k = strchr(s, '"');
        if (!k)
            break;
        const char *ke = strchr(k + 1, '"');
        const char *v = ke ? strchr(ke, ':') : NULL;
        if (!v)
            break;
        for (v++; *v == ' '; v++)
            ;
        const char *e = v;
        int depth = 0, quoted = 0;
        for (; *e && (depth || quoted || *e != ','); e++) {
            if (*e == '"' && (e == v || e[-1] != '\\'))
                quoted = !quoted;
            else if (!quoted && (*e == '[' || *e == '{'))
                depth++;
            else if (!quoted && (*e == ']' || *e == '}'))
                depth--;
        }
        if (*v != '[' && *v != '{') {
            int vl = (int)(e - v);
            if (*v == '"' && vl >= 2)
                v++, vl -= 2;
            snprintf(keys[n], TB_CELL, "%.*s", (int)(ke - k - 1), k + 1);
            snprintf(vals[n], TB_CELL, "%.*s", vl, v);
            if (!strcmp(vals[n], "null"))
                snprintf(vals[n], TB_CELL, "-");
            n++;
        }
        s = *e ? e + 1 : e;
    }
    return n;
}

/* the lock the ratios are against: the first record's that has one */
static const char *baseline_of(const bench_ctx_t *c)
{
    for (size_t i = 0; i < c->nrecords; i++)
        if (!isnan(c->records[i].ratio) && c->records[i].baseline[0])
            return c->records[i].baseline;
    return NULL;
}

/* the fixed columns: lock, threads, topology, ops/s, ratio, remote share,
 * fairness, the share of hand-overs that crossed each other level */
static void fixed_cols(tb_t *t, const bench_ctx_t *c)
{
    const nl_topology_t *topo = nl_topology_current();
    char head[TB_CELL];
    const char *base = baseline_of(c);
    snprintf(head, sizeof head, "x %s", base ? base : "baseline");
    const char *heads[] = { "lock", "threads", "topology", "ops/s", head, "remote", "fairness" };
    for (int i = 0; i < 7; i++)
        add_col(t, heads[i], i == 0 || i == 2);
    for (size_t i = 0; i < t->rows; i++) {
        const bench_record_t *r = &c->records[i];
        snprintf(cell(t, i, 0), TB_CELL, "%s", r->lock);
        snprintf(cell(t, i, 1), TB_CELL, "%d", r->threads);
        snprintf(cell(t, i, 2), TB_CELL, "%s", r->topology);
        if (!isnan(r->throughput) && r->throughput > 0) /* footprint and instructions measure no rate */
            snprintf(cell(t, i, 3), TB_CELL, "%.0f", r->throughput);
        if (!isnan(r->ratio))
            snprintf(cell(t, i, 4), TB_CELL, "%.2fx", r->ratio);
        if (r->has_stats && r->stats.handovers)
            snprintf(cell(t, i, 5), TB_CELL, "%.1f%%",
                     100.0 * (double)r->stats.remote_handovers / (double)r->stats.handovers);
        if (!isnan(r->fairness))
            snprintf(cell(t, i, 6), TB_CELL, "%.3f", r->fairness);
    }
    for (int l = 0; topo->nlevels > 1 && l < topo->nlevels; l++) {
        if (l == topo->node_level)
            continue;
        snprintf(head, sizeof head, "crossed %s", topo->level_name[l]);
        int col = add_col(t, head, 0);
        for (size_t i = 0; col >= 0 && i < t->rows; i++) {
            const bench_record_t *r = &c->records[i];
            if (r->has_stats && r->stats.handovers)
                snprintf(cell(t, i, col), TB_CELL, "%.1f%%",
                         100.0 * (double)r->stats.crossings[l] / (double)r->stats.handovers);
        }
    }
}

/* the extra fields: a column for each that differs between rows (or is
 * missing in some), the others into `same` ("k v, k2 v2") */
static void extra_cols(tb_t *t, const bench_ctx_t *c, char *same, size_t samelen)
{
    char keys[TB_KEYS][TB_CELL], vals[TB_KEYS][TB_CELL], k2[TB_KEYS][TB_CELL], v2[TB_KEYS][TB_CELL];
    char seen[TB_COLS][TB_CELL];
    int nseen = 0;
    size_t off = 0;
    same[0] = 0;
    for (size_t i = 0; i < t->rows; i++) {
        int n = parse_extra(c->records[i].extra, keys, vals, TB_KEYS);
        for (int k = 0; k < n && nseen < TB_COLS; k++) {
            int done = 0;
            for (int s = 0; s < nseen && !done; s++)
                done = !strcmp(seen[s], keys[k]);
            if (done)
                continue;
            snprintf(seen[nseen++], TB_CELL, "%s", keys[k]);
            int varies = 0; /* in another row: missing or another value */
            for (size_t j = 0; j < t->rows && !varies; j++) {
                int m = parse_extra(c->records[j].extra, k2, v2, TB_KEYS), found = 0;
                for (int q = 0; q < m && !found; q++)
                    if (!strcmp(k2[q], keys[k]))
                        found = 1 + !strcmp(v2[q], vals[k]);
                varies = found != 2;
            }
            if (!varies) {
                if (off < samelen)
                    off += (size_t)snprintf(same + off, samelen - off, "%s%s %s", off ? ", " : "", keys[k], vals[k]);
                continue;
            }
            int col = add_col(t, keys[k], 0);
            for (size_t j = 0; col >= 0 && j < t->rows; j++) {
                int m = parse_extra(c->records[j].extra, k2, v2, TB_KEYS);
                for (int q = 0; q < m; q++)
                    if (!strcmp(k2[q], keys[k]))
                        snprintf(cell(t, j, col), TB_CELL, "%s", v2[q]);
            }
        }
    }
}

static void print_rows(tb_t *t)
{
    int width[TB_COLS], shown[TB_COLS];
    for (int k = 0; k < t->ncols; k++) {
        width[k] = (int)strlen(t->col[k].head);
        shown[k] = 0;
        for (size_t r = 0; r < t->rows; r++) {
            int w = (int)strlen(cell(t, r, k));
            width[k] = w > width[k] ? w : width[k];
            shown[k] |= strcmp(cell(t, r, k), "-") != 0;
        }
    }
    for (size_t r = 0; r <= t->rows; r++) {
        int first = 1;
        for (int k = 0; k < t->ncols; k++) {
            if (!shown[k])
                continue;
            const char *s = r ? cell(t, r - 1, k) : t->col[k].head;
            int last = k == t->ncols - 1;
            printf(first ? "%*s" : "  %*s", t->col[k].left && last ? 0 : t->col[k].left ? -width[k] : width[k], s);
            first = 0;
        }
        printf("\n");
    }
}

void bench_print_table(const bench_ctx_t *c)
{
    tb_t t = { .rows = c->nrecords };
    t.cells = calloc(t.rows ? t.rows : 1, (size_t)TB_COLS * TB_CELL);
    if (!t.cells)
        return;
    char same[512];
    fixed_cols(&t, c);
    extra_cols(&t, c, same, sizeof same);
    if (same[0])
        printf("every row: %s\n", same);
    print_rows(&t);
    const char *base = baseline_of(c);
    if (base)
        printf("x %s: the lock against %s in the same run, above 1 is better%s\n", base, base,
               !strcmp(c->workload, "instructions") ? " (fewer instructions)" : " (more ops/s)");
    free(t.cells);
}

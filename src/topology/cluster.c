/* CPUs clustered by core-to-core latency: average-linkage
 * agglomeration, the partition kept only when the median latency between
 * clusters is clearly above the median within them. Pure functions. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "numalock/measure.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* mean of the middle 80 % (sorts v): steadier than the mean, and unlike the
 * median it sees the share of near pairs among the between pairs */
static double trimmed_mean(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t cut = n / 10;
    double sum = 0;
    for (size_t i = cut; i < n - cut; i++)
        sum += v[i];
    return sum / (double)(n - 2 * cut);
}

/* how well a labelling separates: trimmed mean between / trimmed mean within */
static double partition_score(const double *d, int n, const int *label, double *sw, double *sb)
{
    size_t nw = 0, nb = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (label[i] == label[j])
                sw[nw++] = d[i * n + j];
            else
                sb[nb++] = d[i * n + j];
        }
    if (!nw || !nb)
        return NAN;
    double w = trimmed_mean(sw, nw);
    return trimmed_mean(sb, nb) / (w > 1e-9 ? w : 1e-9);
}

/* clarity of a labelling: median between / median within; NAN when either set is empty */
static double partition_clarity(const double *d, int n, const int *label, double *scratch_w,
                                double *scratch_b, double *within, double *between)
{
    size_t nw = 0, nb = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            if (label[i] == label[j])
                scratch_w[nw++] = d[i * n + j];
            else
                scratch_b[nb++] = d[i * n + j];
        }
    *within = median(scratch_w, nw);
    *between = median(scratch_b, nb);
    if (!nw || !nb)
        return NAN;
    double w = *within > 1e-9 ? *within : 1e-9;
    return *between / w;
}

/* number the clusters by their lowest member: cluster 0 holds index 0 */
static void canonical_labels(int *label, int n)
{
    int map[NL_C2C_MAX_CPUS];
    for (int i = 0; i < n; i++)
        map[i] = -1;
    int next = 0;
    for (int i = 0; i < n; i++) {
        if (map[label[i]] < 0)
            map[label[i]] = next++;
        label[i] = map[label[i]];
    }
}

int nl_cluster_latency(const double *ns, int n, double min_clarity, nl_clusters_t *out)
{
    if (!ns || !out || n < 1 || n > NL_C2C_MAX_CPUS || !(min_clarity > 0))
        return EINVAL;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->k = 1;
    out->candidate_k = 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && !(ns[i * n + j] >= 0) )
                return EINVAL; /* negative or NaN */
    if (n < 4) {
        snprintf(out->why, sizeof out->why,
                 "%d CPU%s: too few for two clusters of at least 2 CPUs", n, n == 1 ? "" : "s");
        return 0;
    }
    size_t nn = (size_t)n * (size_t)n;
    double *d = malloc(nn * sizeof *d);          /* symmetric CPU-to-CPU latency */
    double *cd = malloc(nn * sizeof *cd);        /* cluster-to-cluster average latency */
    double *sw = malloc(nn * sizeof *sw), *sb = malloc(nn * sizeof *sb);
    int *label = malloc((size_t)n * sizeof *label), *size = malloc((size_t)n * sizeof *size);
    int *best = malloc((size_t)n * sizeof *best);
    double *kclar = malloc((size_t)(n + 1) * sizeof *kclar);
    int *klabels = malloc(nn * sizeof *klabels); /* labelling at each k */
    if (!d || !cd || !sw || !sb || !label || !size || !best || !kclar || !klabels) {
        free(d); free(cd); free(sw); free(sb); free(label); free(size); free(best); free(kclar);
        free(klabels);
        return ENOMEM;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            d[i * n + j] = i == j ? 0 : (ns[i * n + j] + ns[j * n + i]) / 2;
    memcpy(cd, d, nn * sizeof *d);
    for (int i = 0; i < n; i++) {
        label[i] = i; /* cluster id = its representative index, alive while size > 0 */
        size[i] = 1;
    }
    for (int k = 0; k <= n; k++)
        kclar[k] = NAN;
    double wbest = NAN, bbest = NAN;
    for (int k = n; k > 1; k--) {
        /* merge the two clusters with the smallest average latency */
        int a = -1, b = -1;
        double m = INFINITY;
        for (int i = 0; i < n; i++) {
            if (!size[i])
                continue;
            for (int j = i + 1; j < n; j++)
                if (size[j] && cd[i * n + j] < m) {
                    m = cd[i * n + j];
                    a = i;
                    b = j;
                }
        }
        for (int x = 0; x < n; x++) {
            if (!size[x] || x == a || x == b)
                continue;
            double v = (size[a] * cd[a * n + x] + size[b] * cd[b * n + x]) / (size[a] + size[b]);
            cd[a * n + x] = cd[x * n + a] = v;
        }
        size[a] += size[b];
        size[b] = 0;
        for (int i = 0; i < n; i++)
            if (label[i] == b)
                label[i] = a;
        int kk = k - 1; /* clusters now */
        if (kk < 2 || kk > n / 2)
            continue;
        int small = 0;
        for (int i = 0; i < n; i++)
            if (size[i] == 1)
                small = 1;
        if (small)
            continue;
        kclar[kk] = partition_score(d, n, label, sw, sb);
        memcpy(klabels + (size_t)kk * (size_t)n, label, (size_t)n * sizeof *label);
    }
    /* the partition that separates best (trimmed means: the medians cannot
     * tell a real cluster from its halves); more clusters must beat fewer by 5 % */
    int chosen = 0;
    for (int k = 2; k <= n / 2; k++)
        if (!isnan(kclar[k]) && (!chosen || kclar[k] > 1.05 * kclar[chosen]))
            chosen = k;
    if (chosen) {
        memcpy(best, klabels + (size_t)chosen * (size_t)n, (size_t)n * sizeof *best);
        out->clarity = partition_clarity(d, n, best, sw, sb, &wbest, &bbest);
        out->within_ns = wbest;
        out->between_ns = bbest;
        out->candidate_k = chosen;
        canonical_labels(best, n);
        if (out->clarity >= min_clarity) {
            out->k = chosen;
            memcpy(out->label, best, (size_t)n * sizeof *best);
        } else {
            snprintf(out->why, sizeof out->why,
                     "the best split, %d clusters, is only %.2fx apart (at least %.2fx needed)",
                     chosen, out->clarity, min_clarity);
        }
    } else {
        snprintf(out->why, sizeof out->why,
                 "no split into clusters of at least 2 CPUs (a lone CPU far from all others "
                 "is noise, not a node)");
    }
    free(d); free(cd); free(sw); free(sb); free(label); free(size); free(best); free(kclar);
    free(klabels);
    return 0;
}

size_t nl_cpulist_format(const int *cpus, const unsigned char *mark, int n, char *buf, size_t len)
{
    size_t off = 0;
    int first = 1;
    if (len)
        buf[0] = 0;
    for (int i = 0; i < n; i++) {
        if (!mark[i])
            continue;
        int e = i;
        while (e + 1 < n && mark[e + 1] && cpus[e + 1] == cpus[e] + 1)
            e++;
        char item[32];
        if (e > i)
            snprintf(item, sizeof item, "%s%d-%d", first ? "" : ",", cpus[i], cpus[e]);
        else
            snprintf(item, sizeof item, "%s%d", first ? "" : ",", cpus[i]);
        size_t l = strlen(item);
        if (off + l < len)
            memcpy(buf + off, item, l + 1);
        off += l;
        first = 0;
        i = e;
    }
    return off;
}

size_t nl_cluster_spec(const nl_clusters_t *c, const int *cpus, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "cpus:");
    unsigned char mark[NL_C2C_MAX_CPUS];
    for (int k = 0; k < c->k; k++) {
        for (int i = 0; i < c->n; i++)
            mark[i] = c->label[i] == k;
        if (k) {
            if (off + 1 < len)
                buf[off] = '/', buf[off + 1] = 0;
            off++;
        }
        off += nl_cpulist_format(cpus, mark, c->n, off < len ? buf + off : NULL, off < len ? len - off : 0);
    }
    return off;
}

/* Relabel labels[0..n) densely in order of first appearance. */
static int dense(int *labels, int n)
{
    int map[NL_C2C_MAX_CPUS], k = 0;
    for (int i = 0; i < NL_C2C_MAX_CPUS; i++)
        map[i] = -1;
    for (int i = 0; i < n; i++) {
        if (map[labels[i]] < 0)
            map[labels[i]] = k++;
        labels[i] = map[labels[i]];
    }
    return k;
}

int nl_cluster_levels(const double *ns, int n, const nl_clusters_t *c, double min_clarity, int *node, int *leaf)
{
    int k = c->k, ok = 0;
    double *m = malloc((size_t)n * (size_t)n * sizeof *m);
    double *v = malloc((size_t)n * (size_t)n * sizeof *v);
    nl_clusters_t *sc = malloc(sizeof *sc);
    if (!m || !v || !sc)
        goto out;
    /* above: the clusters clustered on their median latencies to each other */
    if (k >= 4) {
        for (int a = 0; a < k; a++)
            for (int b = 0; b < k; b++) {
                int nv = 0;
                for (int i = 0; i < n; i++)
                    for (int j = 0; j < n; j++)
                        if (i != j && c->label[i] == a && c->label[j] == b)
                            v[nv++] = (ns[i * n + j] + ns[j * n + i]) / 2;
                qsort(v, (size_t)nv, sizeof *v, cmp_double);
                m[a * k + b] = a == b ? 0 : nv ? v[nv / 2] : 0;
            }
        if (nl_cluster_latency(m, k, min_clarity, sc) == 0 && sc->k >= 2) {
            for (int i = 0; i < n; i++) {
                node[i] = sc->label[c->label[i]];
                leaf[i] = c->label[i];
            }
            ok = 1;
        }
    }
    /* below: each cluster of at least 4 CPUs clustered on its own latencies;
     * the level must show in every one of them */
    if (!ok) {
        int idx[NL_C2C_MAX_CPUS], total = 0, big = 0, split = 1;
        for (int a = 0; a < k && split; a++) {
            int cn = 0;
            for (int i = 0; i < n; i++)
                if (c->label[i] == a)
                    idx[cn++] = i;
            int parts = 1;
            if (cn >= 4) {
                big++;
                for (int x = 0; x < cn; x++)
                    for (int y = 0; y < cn; y++)
                        m[x * cn + y] = ns[idx[x] * n + idx[y]];
                if (nl_cluster_latency(m, cn, min_clarity, sc) == 0 && sc->k >= 2)
                    parts = sc->k;
                else
                    split = 0;
            }
            for (int x = 0; x < cn; x++) {
                node[idx[x]] = a;
                leaf[idx[x]] = total + (parts > 1 ? sc->label[x] : 0);
            }
            total += parts;
        }
        ok = big && split;
    }
out:
    free(m);
    free(v);
    free(sc);
    if (!ok)
        return 0;
    dense(leaf, n);
    return dense(node, n);
}

size_t nl_cluster_spec_levels(const int *node, const int *leaf, int n, const int *cpus, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "cpus:");
    unsigned char mark[NL_C2C_MAX_CPUS], done[NL_C2C_MAX_CPUS];
    memset(done, 0, sizeof done);
    int nodes = 0;
    for (int i = 0; i < n; i++)
        if (node[i] + 1 > nodes)
            nodes = node[i] + 1;
    for (int k = 0; k < nodes; k++) {
        int first = 1;
        for (int i = 0; i < n; i++) {
            if (node[i] != k || done[i])
                continue;
            for (int j = 0; j < n; j++) { /* leaf[i]'s CPUs */
                mark[j] = node[j] == k && leaf[j] == leaf[i];
                done[j] |= mark[j];
            }
            const char *sep = first ? (k ? "/" : "") : "|";
            if (*sep) {
                if (off + 1 < len)
                    buf[off] = *sep, buf[off + 1] = 0;
                off++;
            }
            off += nl_cpulist_format(cpus, mark, n, off < len ? buf + off : NULL, off < len ? len - off : 0);
            first = 0;
        }
    }
    return off;
}

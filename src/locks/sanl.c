/*
 * SANL in the library: the request-slot id manager, the thresholds (built-in
 * or calibrated by `numalock calibrate sanl`), the explicit API nl_sanl_* and
 * the registry entry "sanl". The algorithm itself is in sanl_impl.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include "sanl_impl.h"
#include "../core/roomy.h"

/* ---- id manager (paper sec. 3.2) ------------------------------------------ */
#define SLOT_WORDS (NL_DELEG_MAX_SLOTS / 64)
static uint64_t slot_bits[SLOT_WORDS];
static int slots_used;
static atomic_flag slot_guard = ATOMIC_FLAG_INIT;
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
NL_TLS int nl_deleg_slot_tls;

static void slot_lock(void)
{
    nl_waiter_t w;
    nl_waiter_init(&w);
    while (atomic_flag_test_and_set_explicit(&slot_guard, memory_order_acquire))
        nl_wait_step(&w);
}
static void slot_unlock(void) { atomic_flag_clear_explicit(&slot_guard, memory_order_release); }

static void slot_release(void *p)
{
    int id = (int)(intptr_t)p - 1;
    if (id < 0)
        return;
    slot_lock();
    slot_bits[id / 64] &= ~(1ull << (id % 64));
    slots_used--;
    slot_unlock();
}

static void slot_key_init(void) { pthread_key_create(&slot_key, slot_release); }

int nl_deleg_slot_slow(void)
{
    pthread_once(&slot_once, slot_key_init);
    int id = -1;
    slot_lock();
    for (int w = 0; w < SLOT_WORDS && id < 0; w++)
        if (~slot_bits[w]) {
            int b = __builtin_ctzll(~slot_bits[w]);
            slot_bits[w] |= 1ull << b;
            id = w * 64 + b;
            slots_used++;
        }
    slot_unlock();
    if (id < 0)
        return -1; /* every slot taken: try again next time */
    nl_deleg_slot_tls = id + 1;
    pthread_setspecific(slot_key, (void *)(intptr_t)(id + 1));
    return id;
}

int nl_deleg_slots_in_use(void)
{
    slot_lock();
    int n = slots_used;
    slot_unlock();
    return n;
}

/* ---- thresholds ------------------------------------------------------------ */
/* Built-in defaults: theta_l, theta_f from the paper's Intel machine (17 %,
 * 56 %, table 5); T_s = 100 walks and T_w = 10,000 cycles (sec. 4.1), here 4 us (10,000
 * cycles at 2.5 GHz); L_s =
 * 16 / C_l (16 walks at full contention); boundary 4. */
static const nl_sanl_config_t builtin = {
    .policy = NL_SANL_SERVING_FIRST, .mode = NL_SANL_ADAPTIVE,
    .theta_l = 174, .theta_f = 573, .ls_k = 16, .t_s = 100, .t_w_ns = 4000, .boundary = 4,
};
static nl_sanl_config_t params;
static char params_source[512] = "built-in defaults";
static pthread_once_t params_once = PTHREAD_ONCE_INIT;

int nl_sanl_params_path(char *buf, size_t len)
{
    const char *p = getenv("NUMALOCK_SANL_PARAMS");
    if (p && *p) {
        snprintf(buf, len, "%s", p);
        return 0;
    }
    const char *x = getenv("XDG_CONFIG_HOME");
    if (x && *x) {
        snprintf(buf, len, "%s/numalock/sanl.conf", x);
        return 0;
    }
    const char *h = getenv("HOME");
    if (h && *h) {
        snprintf(buf, len, "%s/.config/numalock/sanl.conf", h);
        return 0;
    }
    return ENOENT;
}

/* "key = value" lines; theta_l, theta_f as fractions, ls_k, t_s, t_w_ns
 * as numbers; '#' starts a comment. A file with a bad line is ignored whole. */
static void params_load(void)
{
    params = builtin;
    char path[512];
    if (nl_sanl_params_path(path, sizeof path))
        return;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    nl_sanl_config_t p = builtin;
    char line[256];
    int ok = 1, any = 0;
    while (ok && fgets(line, sizeof line, f)) {
        char key[32];
        double v;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        if (sscanf(line, " %31[a-z_] = %lf", key, &v) != 2) {
            for (char *c = line; *c; c++)
                if (*c != ' ' && *c != '\t' && *c != '\n' && *c != '\r')
                    ok = 0;
            continue;
        }
        any = 1;
        if (!strcmp(key, "theta_l") && v >= 0 && v <= 1)
            p.theta_l = (uint32_t)(v * SANL_ONE + 0.5);
        else if (!strcmp(key, "theta_f") && v >= 0 && v <= 1)
            p.theta_f = (uint32_t)(v * SANL_ONE + 0.5);
        else if (!strcmp(key, "ls_k") && v >= 1 && v <= 100000)
            p.ls_k = (uint32_t)v;
        else if (!strcmp(key, "t_s") && v >= 1 && v <= 1000000)
            p.t_s = (uint32_t)v;
        else if (!strcmp(key, "t_w_ns") && v >= 1 && v <= 1e9)
            p.t_w_ns = (uint32_t)v;
        else
            ok = 0;
    }
    fclose(f);
    if (ok && any) {
        params = p;
        snprintf(params_source, sizeof params_source, "%s", path);
    }
}

/* the file is read with stdio: on a roomy stack (roomy.h) */
static void params_load_roomy(void) { nl_on_roomy_stack(params_load); }

void nl_sanl_params(nl_sanl_config_t *out, const char **source)
{
    pthread_once(&params_once, params_load_roomy);
    if (out)
        *out = params;
    if (source)
        *source = params_source;
}

/* ---- explicit API ------------------------------------------------------------ */
int nl_sanl_init(nl_sanl_t *l, const nl_sanl_config_t *cfg)
{
    nl_sanl_config_t p;
    nl_sanl_params(&p, NULL);
    if (cfg) {
        if (cfg->policy < 0 || cfg->policy > NL_SANL_NO_NUMA || cfg->mode < 0 || cfg->mode > NL_SANL_DELEGATE ||
            cfg->theta_l > SANL_ONE || cfg->theta_f > SANL_ONE)
            return EINVAL;
        p.policy = cfg->policy;
        p.mode = cfg->mode;
        if (cfg->theta_l) p.theta_l = cfg->theta_l;
        if (cfg->theta_f) p.theta_f = cfg->theta_f;
        if (cfg->ls_k) p.ls_k = cfg->ls_k;
        if (cfg->t_s) p.t_s = cfg->t_s;
        if (cfg->t_w_ns) p.t_w_ns = cfg->t_w_ns;
        if (cfg->boundary) p.boundary = cfg->boundary;
    }
    sanl_init_impl(l);
    l->cfg = p;
    return 0;
}

void nl_sanl_destroy(nl_sanl_t *l)
{
    for (size_t c = 0; c < NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK; c++) {
        free(atomic_load_explicit(&l->chunks[c], memory_order_relaxed));
        atomic_store_explicit(&l->chunks[c], NULL, memory_order_relaxed);
    }
}

void *nl_sanl_execute(nl_sanl_t *l, nl_deleg_fn fn, void *arg) { return sanl_execute_impl(l, fn, arg); }
void nl_sanl_acquire(nl_sanl_t *l) { sanl_ll_acquire(l); }
int nl_sanl_try(nl_sanl_t *l) { return sanl_ll_try(l); }
void nl_sanl_release(nl_sanl_t *l) { sanl_ll_release(l); }
void nl_sanl_cond_wait(nl_sanl_t *l, nl_sanl_cond_t *c) { sanl_cond_wait_impl(l, c); }

void nl_sanl_cond_signal(nl_sanl_cond_t *c)
{
    atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
    nl_wait_cond_wake(&c->seq, 1);
}

void nl_sanl_cond_broadcast(nl_sanl_cond_t *c)
{
    atomic_fetch_add_explicit(&c->seq, 1, memory_order_release);
    nl_wait_cond_wake(&c->seq, INT_MAX);
}

void nl_sanl_stats(const nl_sanl_t *l, nl_sanl_stats_t *out)
{
    out->served = atomic_load_explicit(&l->served, memory_order_relaxed);
    out->own = atomic_load_explicit(&l->own, memory_order_relaxed);
    out->inplace = atomic_load_explicit(&l->inplace, memory_order_relaxed);
    int32_t hwm = atomic_load_explicit(&l->hwm, memory_order_acquire);
    for (int32_t c = 0; c * NL_DELEG_CHUNK < hwm; c++) {
        const nl_sanl_slot_t *chunk = atomic_load_explicit(&l->chunks[c], memory_order_acquire);
        for (int32_t i = 0; chunk && i < NL_DELEG_CHUNK && c * NL_DELEG_CHUNK + i < hwm; i++)
            out->inplace += atomic_load_explicit(&chunk[i].inplace, memory_order_relaxed);
    }
    out->terms = atomic_load_explicit(&l->terms, memory_order_relaxed);
    out->switches = atomic_load_explicit(&l->switches, memory_order_relaxed);
    out->takeovers = atomic_load_explicit(&l->takeovers, memory_order_relaxed);
    out->handbacks = atomic_load_explicit(&l->handbacks, memory_order_relaxed);
    out->timeouts = atomic_load_explicit(&l->timeouts, memory_order_relaxed);
}

size_t nl_sanl_footprint(const nl_sanl_t *l)
{
    size_t n = sizeof *l;
    for (size_t c = 0; c < NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK; c++)
        if (atomic_load_explicit(&l->chunks[c], memory_order_relaxed))
            n += NL_DELEG_CHUNK * sizeof(nl_sanl_slot_t);
    return n;
}

_Static_assert(offsetof(nl_sanl_t, server_up) == NL_CACHELINE, "ll alone on the lock's first cache line");

/* ---- registry entry ---------------------------------------------------------- */
static int op_init(void *l, const nl_attr_t *attr) { (void)attr; return nl_sanl_init(l, NULL); }
static void op_destroy(void *l) { nl_sanl_destroy(l); }
static void op_acquire(void *l) { nl_sanl_acquire(l); }
static int op_try(void *l) { return nl_sanl_try(l); }
static void op_release(void *l) { nl_sanl_release(l); }
static void *op_execute(void *l, void *(*fn)(void *), void *arg) { return sanl_execute_impl(l, fn, arg); }
static size_t op_footprint(const void *l) { return nl_sanl_footprint(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_sanl = {
    .name = "sanl",
    .description = "SANL: qspinlock-cna in place or a dynamic server over a request array, by vote; "
                   "serving-first NUMA policy (execute; not interposable)",
    .paper = "Zhang et al., TPDS 2017, sec. 3.1-3.4",
    .size = sizeof(nl_sanl_t), .align = NL_CACHELINE,
    .props = NL_PROP_DELEGATE | NL_PROP_NUMA_AWARE | NL_PROP_BLOCKING | NL_PROP_NEEDS_DESTROY,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .execute = op_execute, .footprint = op_footprint,
};

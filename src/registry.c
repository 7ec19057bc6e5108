/* Registry: algorithm name -> operations table and properties. The list is
 * src/locks/registry.def (the build reads it too; a test checks that each
 * line's name is its table's). */
#include <stdio.h>
#include <string.h>
#include "internal.h"

#define NL_LOCK(sym, name) extern const nl_lock_ops_t nl_ops_##sym;
#include "locks/registry.def"
#undef NL_LOCK

static const nl_lock_ops_t *const registry[] = {
#define NL_LOCK(sym, name) &nl_ops_##sym,
#include "locks/registry.def"
#undef NL_LOCK
};

#define N_LOCKS (sizeof registry / sizeof registry[0])

size_t nl_lock_count(void) { return N_LOCKS; }

const nl_lock_ops_t *nl_lock_at(size_t i) { return i < N_LOCKS ? registry[i] : NULL; }

const nl_lock_ops_t *nl_lock_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N_LOCKS; i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}

const char *nl_lock_names(char *buf, size_t len)
{
    size_t off = 0;
    if (!len)
        return buf;
    buf[0] = 0;
    for (size_t i = 0; i < N_LOCKS && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", registry[i]->name);
    return buf;
}

size_t nl_lock_bytes_at_nodes(const nl_lock_ops_t *ops, unsigned nodes)
{
    return ops->bytes_at_nodes ? ops->bytes_at_nodes(nodes) : ops->size;
}

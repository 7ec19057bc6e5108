/* The delegation locks' request slots (src/locks/deleg_ids.h) in the
 * verification build: the thread's slot is its thread record's index (the
 * library's id manager, in sanl.c, takes a free bit of a bitmap under a spin
 * lock and gives it back at thread exit through a pthread key; it is not part
 * of a lock's protocol). The queue-node stack's slow paths are never taken
 * (one lock held at a time). */
NL_TLS int nl_deleg_slot_tls;
int nl_deleg_slot_slow(void)
{
    int id = nl_self()->id;
    nl_deleg_slot_tls = id + 1;
    return id;
}
void *nl_qnode_get_slow(nl_self_t *s, const void *lock) { (void)s, (void)lock; assert(0); return NULL; }
void *nl_qnode_find_slow(nl_self_t *s, const void *lock) { (void)s, (void)lock; assert(0); return NULL; }
void nl_qnode_put_slow(nl_self_t *s, void *node) { (void)s, (void)node; assert(0); }

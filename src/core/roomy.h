/*
 * Work that needs a roomy stack, reached from a lock operation (not
 * installed). Layer: src/core, below everything that reads files.
 *
 * A lock operation runs on the caller's stack, which may be as small as
 * PTHREAD_STACK_MIN (16 KiB). Its own paths stay within a small budget of
 * frames (tests/stack_usage.py checks it); the few things done once per
 * process that parse files (the topology from sysfs, the preload's
 * configuration, SANL's parameters) run through nl_on_roomy_stack, usually
 * from a constructor on the main thread.
 */
#ifndef NL_ROOMY_H
#define NL_ROOMY_H

#include "self.h"

/* Bytes of stack that count as roomy. */
#define NL_ROOMY_BYTES (256u * 1024)

/* Runs fn() to completion: on the calling thread when at least
 * NL_ROOMY_BYTES of its stack are left, otherwise on a thread of its own
 * with a stack of that size (the caller waits for it). fn must not depend
 * on which thread runs it. */
NL_HIDDEN void nl_on_roomy_stack(void (*fn)(void));

#endif

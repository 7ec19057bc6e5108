/*
 * What the locks, the generic handle and the preload include (not
 * installed): the thread record (src/core/self.h), the thread's node
 * (src/topology/node.h) and the waiting design (src/wait/wait.h). The layers,
 * bottom up: self <- topology (node.h) <- wait <- locks <- the generic handle
 * (src/lock.c) and the registry.
 */
#ifndef NL_INTERNAL_H
#define NL_INTERNAL_H

#include "core/self.h"
#include "topology/node.h"
#include "wait/wait.h"

#endif

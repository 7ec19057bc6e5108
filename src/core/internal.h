/*
 * What the lock implementations include (not installed): the thread record
 * (src/core/self.h) and the waiting design (src/wait/wait.h). The layers,
 * bottom up: self <- topology (node.h) <- wait <- locks <- the generic handle
 * (src/lock.c) and the registry.
 */
#ifndef NL_INTERNAL_H
#define NL_INTERNAL_H

#include "self.h"
#include "../topology/node.h"
#include "../wait/wait.h"

#endif

/*
 * CPU lists ("0-3,8,10-11", the form of sysfs and of cpus: specs) (not
 * installed). Layer: the bottom of src/topology, below topology.c, levels.c
 * and measured.c, which all read such lists; it depends on nothing of them.
 */
#ifndef NL_TOPOLOGY_CPULIST_H
#define NL_TOPOLOGY_CPULIST_H

#include "numalock/topology.h"
#include "../core/self.h"

/* The CPU-list parser over [s, end): marks each CPU in set[] (NL_MAX_CPUS
 * entries, zeroed by the caller; a CPU already marked is an error) and,
 * when cpus is not NULL, appends it there (at most max). The count, or -1.
 * (nl_cpulist_parse, include/numalock/topology.h, is this over a fresh set.) */
NL_HIDDEN int nl_cpulist_scan(const char *s, const char *end, unsigned char *set, int *cpus, int max);

#endif

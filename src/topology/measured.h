/*
 * The stored measurement behind `--topology measured` (measured.c; not
 * installed). Layer: below topology.c, which parses the spec it gives
 * (nl_topology_parse_measured); it calls nothing of topology.c.
 */
#ifndef NL_TOPOLOGY_MEASURED_H
#define NL_TOPOLOGY_MEASURED_H

#include <stddef.h>
#include "numalock/measure.h"
#include "../core/self.h"

/* Room for a measured topology's cpus: spec. */
#define NL_MEASURED_SPEC_MAX (NL_C2C_MAX_CPUS * 6 + 64)

/* The cpus: spec of the latency clustering stored for the CPUs this process
 * may use (nl_measured_path); without one, measured now (up to 10 s) and
 * stored. 0, or an errno value with one sentence in err. */
NL_HIDDEN int nl_measured_spec(char *spec, size_t speclen, char *err, size_t errlen);

#endif

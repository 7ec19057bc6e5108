/*
 * Where the numalock command finds its files: relative to its own
 * executable (/proc/self/exe), never through a path compiled in from the
 * source or build tree, so an installed command works from any directory
 * and a build tree works wherever it is.
 *
 *   installed:  PREFIX/bin/numalock  PREFIX/share/numalock/  PREFIX/lib/
 *   build tree: BUILD/bin/numalock   BUILD/share/numalock/   BUILD/lib/
 *
 * The build tree's share/numalock holds links to bench/, tools/ and scripts/ files
 * (cmake/install.cmake makes them), so both layouts look alike.
 */
#ifndef NL_CLI_PATHS_H
#define NL_CLI_PATHS_H

#include <stddef.h>

/* The data file NAME (default-suite.txt, report.py, ...): its path in out and
 * 0 when it is readable, else -1 with out naming the first place looked. */
int nl_cli_data_file(const char *name, char *out, size_t len);
/* The library file NAME (libnumalock-preload.so): as nl_cli_data_file. */
int nl_cli_lib_file(const char *name, char *out, size_t len);
/* The data folder (the first candidate when none exists), for messages. */
const char *nl_cli_data_dir(void);
/* The python3 for the command's scripts (report.py, compare.py):
 * $NUMALOCK_PYTHON, else the data folder's python3 link (the build tree's
 * .venv), else python3 from PATH. */
const char *nl_cli_python(void);

#endif

/* Files of the numalock command, found beside its executable (paths.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "paths.h"

/* bindir -> datadir and bindir -> libdir of the install, relative (CMake
 * computes them from GNUInstallDirs); "../share/numalock" and "../lib" are
 * the build tree's layout and the usual install. */
#ifndef NL_REL_DATADIR
#define NL_REL_DATADIR "../share/numalock"
#endif
#ifndef NL_REL_LIBDIR
#define NL_REL_LIBDIR "../lib"
#endif

static int exe_dir(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(out, len, "%s", exe);
    return 0;
}

/* first of dir/rel/name over the candidate rels that is readable */
static int find_beside(const char *const rels[], size_t nrels, const char *name, char *out, size_t len)
{
    char dir[PATH_MAX];
    if (exe_dir(dir, sizeof dir)) {
        snprintf(out, len, "%s", name);
        return -1;
    }
    for (size_t i = 0; i < nrels; i++) {
        snprintf(out, len, "%s/%s%s%s", dir, rels[i], *name ? "/" : "", name);
        if (access(out, R_OK) == 0)
            return 0;
    }
    snprintf(out, len, "%s/%s%s%s", dir, rels[0], *name ? "/" : "", name);
    return -1;
}

static const char *const data_rels[] = { NL_REL_DATADIR, "../share/numalock" };
static const char *const lib_rels[] = { NL_REL_LIBDIR, "../lib" };

int nl_cli_data_file(const char *name, char *out, size_t len)
{
    return find_beside(data_rels, sizeof data_rels / sizeof data_rels[0], name, out, len);
}

int nl_cli_lib_file(const char *name, char *out, size_t len)
{
    return find_beside(lib_rels, sizeof lib_rels / sizeof lib_rels[0], name, out, len);
}

const char *nl_cli_data_dir(void)
{
    static char buf[PATH_MAX];
    nl_cli_data_file("", buf, sizeof buf);
    return buf;
}

const char *nl_cli_python(void)
{
    static char buf[PATH_MAX];
    const char *env = getenv("NUMALOCK_PYTHON");
    if (env && *env)
        return env;
    /* the build tree's share/numalock/python3 links to the checkout's
     * .venv/bin/python3. Python finds its venv (pyvenv.cfg) beside the path
     * it is started by, or else beside the fully resolved interpreter, so it
     * is started by the link's target: the link itself would give the base
     * interpreter without the venv's packages (matplotlib). */
    if (nl_cli_data_file("python3", buf, sizeof buf) == 0 && access(buf, X_OK) == 0) {
        char target[PATH_MAX];
        ssize_t n = readlink(buf, target, sizeof target - 1);
        if (n > 0 && target[0] == '/') {
            target[n] = 0;
            snprintf(buf, sizeof buf, "%s", target);
        }
        return buf;
    }
    return "python3";
}

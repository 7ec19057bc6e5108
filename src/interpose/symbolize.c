/*
 * Code addresses to names for the lock profile. Runs only when the report is
 * written (the process is exiting), never on a lock path.
 *
 * With elfutils' libdw (built with its headers, NL_HAVE_LIBDW, and loaded
 * with dlopen only here): the process's modules as /proc/self/maps lists
 * them, each module's symbol table and DWARF read the first time an address
 * falls in it. dlopen, not a link: a preload library must load into every
 * program, also where libdw1 is not installed, and would otherwise make each
 * program load libdw and its four compression libraries at start-up (about
 * 0.4 ms measured), with or without a profile. A module with debug information (its
 * own, or a separate file under /usr/lib/debug/.build-id) gives
 * "function (file.c:LINE)"; one with a symbol table only gives "function".
 * Where libdw is absent or cannot place an address, dladdr names the dynamic
 * symbols; the last resort is "object(+0xOFFSET)".
 *
 * Separate debug files are looked up by build id on the local disk only:
 * libdw's standard lookup asks a debuginfod server when DEBUGINFOD_URLS is
 * set (Debian sets it for login shells), and an exiting process must not wait
 * on the network.
 *
 * Every address the profile keeps is a return address, so the call itself is
 * looked up at pc - 1 (the return address may already be the next line, or
 * the next function after a call that does not return).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "preload.h"

#ifdef NL_HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#endif

#ifdef NL_HAVE_LIBDW
#define LIBDW_SONAME "libdw.so.1"
/* the libdw functions used, found with dlsym */
#define LIBDW_FUNCTIONS(X)                                                                                   \
    X(dwfl_begin) X(dwfl_end) X(dwfl_report_begin) X(dwfl_report_end) X(dwfl_linux_proc_report)              \
    X(dwfl_linux_proc_find_elf) X(dwfl_addrmodule) X(dwfl_module_info) X(dwfl_module_addrname)               \
    X(dwfl_module_getsrc) X(dwfl_lineinfo) X(dwfl_module_addrdie) X(dwfl_module_build_id) X(dwarf_getscopes) \
    X(dwarf_getscopes_die)                                                                                   \
    X(dwarf_tag) X(dwarf_attr) X(dwarf_attr_integrate) X(dwarf_formstring) X(dwarf_formudata) X(dwarf_diename)  \
    X(dwarf_getsrcfiles) X(dwarf_filesrc)
typedef struct {
#define X(f) __typeof__(f) *f;
    LIBDW_FUNCTIONS(X)
#undef X
} libdw_t;
#endif

struct nlp_symbolizer {
    char *(*demangle)(const char *name, char *buf, size_t *len, int *status); /* libstdc++'s, when loaded */
#ifdef NL_HAVE_LIBDW
    libdw_t dw;
    Dwfl_Callbacks callbacks;
    Dwfl *dwfl;
#endif
};

static void copy(char *dst, size_t len, const char *src) { snprintf(dst, len, "%s", src ? src : ""); }

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* A C++ name demangled when the program has libstdc++ loaded; a symbol
 * version ("name@@GLIBC_2.34", as a symbol table may spell it) dropped. */
static void set_function(nlp_symbolizer_t *s, char *dst, size_t len, const char *name)
{
    char bare[512];
    const char *at = name ? strchr(name, '@') : NULL;
    if (at && at != name && (size_t)(at - name) < sizeof bare) {
        memcpy(bare, name, (size_t)(at - name));
        bare[at - name] = 0;
        name = bare;
    }
    if (s && s->demangle && name && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = s->demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            copy(dst, len, d);
            free(d);
            return;
        }
        free(d);
    }
    copy(dst, len, name);
}

#ifdef NL_HAVE_LIBDW
/* One symbolizer at a time (the report's), so the debug-file callback, which
 * gets no pointer of ours, finds the libdw functions here. */
static const libdw_t *dw_now;

static int find_debuginfo_local(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                                const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                                char **debuginfo_file_name)
{
    const unsigned char *id;
    GElf_Addr vaddr;
    int n = dw_now->dwfl_module_build_id(mod, &id, &vaddr);
    if (n < 2 || n > 64)
        return -1;
    char path[64 + 2 * 64 + 8];
    int off = snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%02x/", id[0]);
    for (int i = 1; i < n; i++)
        off += snprintf(path + off, sizeof path - (size_t)off, "%02x", id[i]);
    snprintf(path + off, sizeof path - (size_t)off, ".debug");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0)
        *debuginfo_file_name = strdup(path);
    return fd;
}

static int system_header(const char *file)
{
    return !strncmp(file, "/usr/include/", 13) || !strncmp(file, "/usr/lib/gcc/", 13) ||
           !strncmp(file, "/usr/local/include/", 19);
}

/* The name of an inlined subroutine (the mangled linkage name if it has one). */
static const char *die_name(const libdw_t *dw, Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n = dw->dwarf_formstring(dw->dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!n)
        n = dw->dwarf_formstring(dw->dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    return n ? n : dw->dwarf_diename(die);
}

static int dw_lookup(nlp_symbolizer_t *s, uintptr_t pc, nlp_site_t *o, uintptr_t *base)
{
    const libdw_t *dw = &s->dw;
    Dwarf_Addr a = pc - 1;
    Dwfl_Module *mod = dw->dwfl_addrmodule(s->dwfl, a);
    if (!mod)
        return -1;
    Dwarf_Addr start = 0;
    const char *mainfile = NULL;
    const char *name = dw->dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
    copy(o->object, sizeof o->object, mainfile ? mainfile : name);
    *base = (uintptr_t)start;
    set_function(s, o->function, sizeof o->function, dw->dwfl_module_addrname(mod, a));
    Dwfl_Line *ln = dw->dwfl_module_getsrc(mod, a);
    int line = 0;
    const char *file = ln ? dw->dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
    if (line <= 0)
        file = NULL;
    if (file) {
        copy(o->file, sizeof o->file, file);
        o->line = line;
    }
    /* Code inlined into the symbol's function: the line found is the
     * innermost inlined function's. Named is the innermost level whose line
     * is not in a system header (a C++ lock call is std::mutex::lock and
     * __gthread_mutex_lock inlined into the program's function, and the
     * program's line is the one wanted); each level out, the line is where
     * the level below was called (DW_AT_call_file, DW_AT_call_line). */
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = dw->dwfl_module_addrdie(mod, a, &bias);
    Dwarf_Die *scopes = NULL, *chain = NULL;
    int n = cu && o->function[0] && file ? dw->dwarf_getscopes(cu, a - bias, &scopes) : 0;
    /* the scopes around the pc name the innermost inlined level only; the
     * levels it sits in are the scopes around its DIE */
    int k = 0;
    while (k < n && dw->dwarf_tag(&scopes[k]) == DW_TAG_lexical_block)
        k++;
    n = k < n && dw->dwarf_tag(&scopes[k]) == DW_TAG_inlined_subroutine ? dw->dwarf_getscopes_die(&scopes[k], &chain)
                                                                         : 0;
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    for (int i = 0; i < n; i++) {
        int tag = dw->dwarf_tag(&chain[i]);
        if (tag == DW_TAG_subprogram)
            break; /* the symbol's own function */
        if (tag != DW_TAG_inlined_subroutine)
            continue; /* a lexical block */
        const char *inl = die_name(dw, &chain[i]);
        if (!inl)
            break;
        if (!system_header(file)) {
            copy(o->inlined_in, sizeof o->inlined_in, o->function);
            set_function(s, o->function, sizeof o->function, inl);
            copy(o->file, sizeof o->file, file);
            o->line = line;
            break;
        }
        Dwarf_Attribute at;
        Dwarf_Word fi = 0, li = 0;
        if (dw->dwarf_formudata(dw->dwarf_attr(&chain[i], DW_AT_call_file, &at), &fi) ||
            dw->dwarf_formudata(dw->dwarf_attr(&chain[i], DW_AT_call_line, &at), &li) || !li ||
            (!files && dw->dwarf_getsrcfiles(cu, &files, &nfiles)) || fi >= nfiles ||
            !(file = dw->dwarf_filesrc(files, fi, NULL, NULL)))
            break;
        line = (int)li;
        /* where the symbol's own function called the outermost inlined level */
        copy(o->file, sizeof o->file, file);
        o->line = line;
    }
    free(chain);
    free(scopes);
    return 0;
}

/* libdw's functions, or -1 where it is not installed (the profile then uses
 * dladdr). The library stays loaded: the process is exiting. */
static int dw_load(libdw_t *dw)
{
    void *h = dlopen(LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
#define X(f)                                     \
    if (!(*(void **)&dw->f = dlsym(h, #f)))     \
        return -1;
    LIBDW_FUNCTIONS(X)
#undef X
    return 0;
}

static void dw_open(nlp_symbolizer_t *s)
{
    libdw_t *dw = &s->dw;
    if (dw_load(dw))
        return;
    dw_now = dw;
    s->callbacks.find_elf = dw->dwfl_linux_proc_find_elf;
    s->callbacks.find_debuginfo = find_debuginfo_local;
    s->dwfl = dw->dwfl_begin(&s->callbacks);
    if (!s->dwfl)
        return;
    dw->dwfl_report_begin(s->dwfl);
    int rc = dw->dwfl_linux_proc_report(s->dwfl, getpid());
    dw->dwfl_report_end(s->dwfl, NULL, NULL);
    if (rc != 0) {
        dw->dwfl_end(s->dwfl);
        s->dwfl = NULL;
    }
}
#endif

nlp_symbolizer_t *nlp_sym_open(void)
{
    nlp_symbolizer_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    *(void **)&s->demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
#ifdef NL_HAVE_LIBDW
    dw_open(s);
#endif
    return s;
}

void nlp_sym_close(nlp_symbolizer_t *s)
{
    if (!s)
        return;
#ifdef NL_HAVE_LIBDW
    if (s->dwfl)
        s->dw.dwfl_end(s->dwfl);
#endif
    free(s);
}

void nlp_sym_lookup(nlp_symbolizer_t *s, uintptr_t pc, nlp_site_t *o)
{
    memset(o, 0, sizeof *o);
    o->pc = pc;
    if (!pc) {
        copy(o->text, sizeof o->text, "(unknown)");
        return;
    }
    uintptr_t base = 0;
    int found = -1;
#ifdef NL_HAVE_LIBDW
    if (s && s->dwfl)
        found = dw_lookup(s, pc, o, &base);
#endif
    Dl_info info;
    if (found != 0 && dladdr((void *)(pc - 1), &info) && info.dli_fname) {
        copy(o->object, sizeof o->object, *info.dli_fname ? info.dli_fname : program_invocation_name);
        if (info.dli_sname && info.dli_saddr)
            set_function(s, o->function, sizeof o->function, info.dli_sname);
        base = (uintptr_t)info.dli_fbase;
        found = 0;
    }
    if (o->function[0] && o->file[0])
        snprintf(o->text, sizeof o->text, "%s (%s:%d%s%s)", o->function, base_name(o->file), o->line,
                 o->inlined_in[0] ? ", inlined in " : "", o->inlined_in);
    else if (o->function[0])
        snprintf(o->text, sizeof o->text, "%s", o->function);
    else if (found == 0 && o->object[0])
        snprintf(o->text, sizeof o->text, "%s(+%#lx)", base_name(o->object), (unsigned long)(pc - base));
    else
        snprintf(o->text, sizeof o->text, "%#lx", (unsigned long)pc);
}

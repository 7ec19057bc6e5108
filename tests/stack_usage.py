#!/usr/bin/env python3
"""The stack a lock operation may use, from the compiler's own report.

A lock operation runs on the caller's thread, whatever its stack: glibc lets
a program give a thread 16 KiB (PTHREAD_STACK_MIN), and the preload library
runs inside such programs. Every path a lock operation can take (acquire,
release, waiting, parking, the load sample, the gate, statistics, the
preload's wrappers) must fit a small budget of frames.

The library and the preload are compiled with -fcallgraph-info=su (GCC): each
object gets a .ci file beside it with the functions it defines, their frame
sizes and the calls they make. This script joins them into the call graph of
one linked library and walks it from its roots, its exported functions
(less those in NOT_LOCK_PATHS: set-up and reports that run where the program
chose, never inside a lock operation).

Indirect calls are resolved from the source line of each call site:
- `x->member(...)` or `x.member(...)`: every function stored in a member of
  that name (`.member = f` in an initialiser, `x->member = f`, or copied from
  another member: `g.acquire = ops->acquire`);
- `name(...)` with a function pointer: every function whose address the
  code takes (callbacks), less those handed to the system for later
  (atexit, pthread_create, pthread_key_create, pthread_atfork, signals);
  a callback handed to a function that calls it at once (pthread_once,
  qsort) is charged to the caller of that function.
A call into another library (libc) costs nothing here: the stack of those is
checked by running every lock on PTHREAD_STACK_MIN stacks
(tests/test_small_stack.c).

Fails, naming the root and its deepest path, when a root needs more than
the budget, or when a function on a lock path has a dynamic frame (alloca,
variable-length array). Prints the largest frame and the deepest path.

usage: stack_usage.py --budget BYTES [--skip-source FILE]... LIB=DIR[:DIR...]...
"""
import argparse
import os
import re
import subprocess
import sys

# Exported functions that never run inside a lock operation (regular
# expressions over the whole name), with the reason.
NOT_LOCK_PATHS = [
    r"nl_topology_.*", r"nl_cpulist_.*",    # a topology is chosen and parsed before locks use it
    r"nl_c2c_.*", r"nl_measured_.*", r"nl_cluster_.*",  # `numalock topo --measure`
    r"nl_levels_.*",                        # builds a topology's levels (with the topology)
    r"nl_sanl_params.*",                    # SANL's parameters: read once, at start
    r"nl_wait_set_policy", r"nl_cna_set_fairness",  # settings, parsed where the program sets them
    r"nl_lock_names", r"nl_lock_find", r"nl_lock_at", r"nl_lock_count",  # the registry's listing
    r"nl_shfl_test_.*",                     # a test hook
]

# Functions of libc that keep a callback for later instead of calling it.
DEFERRED = {"atexit", "on_exit", "__cxa_atexit", "pthread_create", "pthread_key_create", "pthread_atfork",
            "signal", "sigaction"}
# Our functions that run their callback on a roomy stack (src/core/roomy.h):
# the callback's frames are not the caller's.
ROOMY = {"nl_on_roomy_stack"}

NODE_RE = re.compile(r'^node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE_RE = re.compile(r'^edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)" label: "([^"]+):(\d+):\d+"')
SIZE_RE = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")
INDIRECT = "__indirect_call"


def bare(title):
    """The symbol's name: a local function's title is 'file:name'."""
    return title.rsplit(":", 1)[-1]


def plain(name):
    """A function's name without GCC's clone suffixes (.constprop.0, .isra.0, .part.0)."""
    return name.split(".", 1)[0]


class Source:
    """Source lines, read once."""

    def __init__(self):
        self.files = {}

    def line(self, path, n):
        if path not in self.files:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    self.files[path] = f.read().split("\n")
            except OSError:
                self.files[path] = []
        lines = self.files[path]
        return lines[n - 1] if 0 < n <= len(lines) else ""

    def text(self, path):
        self.line(path, 1)
        return "\n".join(self.files[path])


class Graph:
    def __init__(self, skip_sources):
        self.frame = {}       # title -> bytes of its own frame
        self.dynamic = {}     # title -> "dynamic" kind when not static
        self.where = {}       # title -> "file:line:col"
        self.calls = {}       # title -> {callee title: set of (file, line) call sites}
        self.by_name = {}     # plain name -> titles
        self.tu_of = {}       # title -> the source file of its translation unit
        self.skip = skip_sources
        self.code_taken = set()  # titles whose address is taken (named where not called)
        self.src = Source()

    def read_ci(self, path):
        tu = None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if tu is None:
                    m = re.match(r'graph: \{ title: "([^"]+)"', line)
                    tu = m.group(1) if m else ""
                    if any(tu.endswith(s) for s in self.skip):
                        return
                    continue
                m = NODE_RE.match(line)
                if m:
                    self.add_node(m.group(1), m.group(2), tu)
                    continue
                m = EDGE_RE.match(line)
                if m:
                    sites = self.calls.setdefault(m.group(1), {}).setdefault(m.group(2), set())
                    sites.add((m.group(3), int(m.group(4))))

    def add_node(self, title, label, tu):
        m = SIZE_RE.search(label)
        if not m:
            return  # declared here, defined elsewhere (or in another library)
        size, kind = int(m.group(1)), m.group(2)
        self.frame[title] = max(size, self.frame.get(title, 0))
        if kind != "static":
            self.dynamic[title] = kind
        self.where[title] = label.split("\\n")[1] if "\\n" in label else "?"
        self.by_name.setdefault(plain(bare(title)), set()).add(title)
        self.tu_of[title] = tu

    def functions_named(self, name, tu=None):
        """Titles of our functions called `name` (those of `tu` first, for statics)."""
        titles = self.by_name.get(name, set())
        local = {t for t in titles if self.tu_of.get(t) == tu and ":" in t}
        return local or {t for t in titles if ":" not in t} or titles


def strip_comments(text):
    """C source without its comments and string literals (lines kept)."""
    def blank(m):
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"', blank, text, flags=re.S)


STORAGE = re.compile(r"\b(static|inline|extern|const|volatile|NL_HIDDEN|NL_API|EXPORT|__inline__|_Noreturn)\b|"
                     r"__attribute__\s*\(\(.*?\)\)")


def norm_type(t):
    """'static inline const void *' -> 'void*'"""
    t = STORAGE.sub(" ", t)
    return re.sub(r"\s*\*\s*", "*", " ".join(t.split())).strip()


TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "bool", "_Bool",
              "struct", "union", "enum", "_Atomic", "const", "volatile", "restrict", "__restrict"}


def param_types(params):
    """'const void *l, int n' -> ('void*', 'int'): the types without names."""
    params = " ".join(params.split())
    if not params or params == "void":
        return ()
    parts, depth, cur = [], 0, ""
    for ch in params:
        depth += ch == "(" and 1 or ch == ")" and -1 or 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = re.sub(r"\[[^\]]*\]", "*", p)  # an array parameter is a pointer
        if "(" in p:  # a function pointer parameter: its shape only
            out.append("fn")
            continue
        words = re.findall(r"\w+|\*|\.\.\.", p)
        if len(words) > 1 and re.fullmatch(r"\w+", words[-1]) and words[-1] not in TYPE_WORDS and \
                (words[-2] == "*" or re.fullmatch(r"\w+", words[-2])):
            words = words[:-1]  # the parameter's name
        out.append(norm_type(" ".join(words)))
    return tuple(out)


def balanced(text, start):
    """The text inside the parentheses that open at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        depth += text[i] == "(" and 1 or text[i] == ")" and -1 or 0
        if depth == 0:
            return text[start + 1:i]
    return text[start + 1:]


MEMBER_INIT = re.compile(r"(?:^|[\s,{(])\.(\w+)\s*=\s*&?\s*(\w+)\s*[,}\n]")
MEMBER_SET = re.compile(r"(?:\.|->)(\w+)\s*=\s*([^;]+);")
MEMBER_CALL = re.compile(r"(?:\.|->)\s*(\w+)\s*\(")
NAME_CALL = re.compile(r"(?<![\w.>])(\w+)\s*\(")


class Resolver:
    """Targets of indirect calls, from the sources of the graph's functions."""

    def __init__(self, g, src_dirs):
        self.g = g
        self.members = {}   # member name -> titles stored in it
        self.aliases = {}   # member name -> member names copied into it
        tus = {tu for tu in g.tu_of.values() if tu}
        files = set(tus)
        for title, where in g.where.items():
            files.add(where.rsplit(":", 2)[0])
        for d in src_dirs:  # the headers too: typedefs and members declared there
            for root, _, names in os.walk(d):
                files |= {os.path.join(root, n) for n in names if n.endswith((".c", ".h"))}
        for path in sorted(files):
            self.scan(path, strip_comments(g.src.text(path)))
        self.texts = {path: strip_comments(g.src.text(path)) for path in sorted(files)}
        # a function named where it is not called: its address is taken
        for text in self.texts.values():
            for name in set(re.findall(r"\b(\w+)\b(?!\s*\()", text)) & set(g.by_name):
                g.code_taken |= g.by_name[name]
        self.deferred = self.find_deferred()
        self.typedefs = {}   # typedef name -> signature
        for text in self.texts.values():
            for m in re.finditer(r"typedef\s+([^;()]*?)\(\s*\*\s*(\w+)\s*\)\s*\(", text):
                self.typedefs[m.group(2)] = (norm_type(m.group(1)), param_types(balanced(text, m.end() - 1)))
        self.passed = set()  # members whose value the code passes as an argument
        for text in self.texts.values():
            self.passed |= set(re.findall(r"[(,]\s*[\w\[\]]+(?:(?:\.|->)\w+)*(?:\.|->)(\w+)\s*(?=[,)])", text))
        self.sig_memo = {}
        self.index_pointers()
        self.unresolved = set()  # call sites charged every callback

    def sig_of(self, title):
        """{(return type, parameters)} of one of our functions, from its
        definition (or from the members it is stored in); empty if unknown."""
        if title in self.sig_memo:
            return self.sig_memo[title]
        sig = None
        where = self.g.where.get(title, "")
        m = re.match(r"(.*):(\d+):(\d+)$", where)
        if m:
            path, n, col = m.group(1), int(m.group(2)), int(m.group(3))
            text = self.g.src.text(path)
            lines = text.split("\n")
            off = sum(len(l) + 1 for l in lines[:n - 1]) + col - 1
            name = plain(bare(title))
            if text.startswith(name, off):
                paren = text.find("(", off + len(name))
                line_start = text.rfind("\n", 0, off) + 1
                ret = text[line_start:off]
                if not ret.strip():  # the type on the line before (GNU style)
                    prev = text.rfind("\n", 0, line_start - 1) + 1
                    ret = text[prev:line_start]
                sig = (norm_type(ret), param_types(balanced(text, paren)))
        sigs = {sig} if sig else set()
        if not sigs:  # defined by a macro: the signatures of the members it is stored in
            for member, titles in self.members.items():
                if title in titles:
                    sigs |= self.pointer_sigs(member, self.g.tu_of.get(title, ""), everywhere=True)
        self.sig_memo[title] = sigs
        return sigs

    def index_pointers(self):
        """name -> {file: signatures} of every function pointer declared (a
        parameter, a variable, a member, or one of a typedef's type)."""
        self.pointers = {}
        for p, text in self.texts.items():
            for m in re.finditer(r"\(\s*\*\s*(\w+)\s*\)\s*\(", text):
                lead = text[max(0, m.start() - 200):m.start()]
                ret = re.split(r"[;{}(,]", lead)[-1]
                sig = (norm_type(ret), param_types(balanced(text, m.end() - 1)))
                self.pointers.setdefault(m.group(1), {}).setdefault(p, set()).add(sig)
            for m in re.finditer(r"\b(\w+)\s+\*?\s*(\w+)\s*(?=[;,)=])", text):
                if m.group(1) in self.typedefs:
                    self.pointers.setdefault(m.group(2), {}).setdefault(p, set()).add(self.typedefs[m.group(1)])

    def pointer_sigs(self, name, path, everywhere=False):
        """Signatures declared for a function pointer called `name` (a
        parameter, a variable or a member): those of the call's file, else
        of the first file that declares it (or of every file)."""
        where = self.pointers.get(name, {})
        if everywhere:
            return set().union(*where.values()) if where else set()
        if path in where:
            return where[path]
        for p in sorted(where):
            return where[p]
        return set()

    def matching(self, titles, sigs):
        if not sigs:
            return set(titles)
        return {t for t in titles if not self.sig_of(t) or self.sig_of(t) & sigs}

    def scan(self, path, text):
        tu = path
        for m in MEMBER_INIT.finditer(text):
            self.add_member(m.group(1), m.group(2), tu)
        for m in MEMBER_SET.finditer(text):
            member, rhs = m.group(1), m.group(2)
            for part in re.split(r"[?:]", rhs):  # a ? f : g
                part = part.strip().lstrip("(&").rstrip(")").strip()
                copy = re.fullmatch(r"[\w.\->()\[\]]*(?:\.|->)(\w+)", part)
                if copy:
                    self.aliases.setdefault(member, set()).add(copy.group(1))
                elif re.fullmatch(r"\w+", part):
                    self.add_member(member, part, tu)

    def add_member(self, member, name, tu):
        titles = self.g.functions_named(name, tu)
        if titles:
            self.members.setdefault(member, set()).update(titles)

    def member_targets(self, member, seen=None):
        seen = seen or set()
        if member in seen:
            return set()
        seen.add(member)
        out = set(self.members.get(member, ()))
        for other in self.aliases.get(member, ()):
            out |= self.member_targets(other, seen)
        return out

    def find_deferred(self):
        """Callbacks handed to libc to be called later, or run on a roomy
        stack: not charged to the code that hands them over."""
        out = set()
        for caller, callees in self.g.calls.items():
            for callee, sites in callees.items():
                if callee in DEFERRED or plain(bare(callee)) in ROOMY:
                    for f, n in sites:
                        for word in re.findall(r"\w+", self.g.src.line(f, n)):
                            out |= {t for t in self.g.code_taken if plain(bare(t)) == word}
        return out

    def indirect(self, caller):
        """The functions an indirect call of `caller` may reach."""
        out = set()
        for f, n in self.g.calls[caller][INDIRECT]:
            line = self.g.src.line(f, n)
            members = MEMBER_CALL.findall(line)
            names = [x for x in NAME_CALL.findall(line) if x not in self.g.by_name]
            for m in members:  # members of one name in several structures: all of them
                out |= self.member_targets(m)
            pointers = {n: self.pointer_sigs(n, f) for n in names}
            pointers = {n: sig for n, sig in pointers.items() if sig}
            if members or pointers:
                for sig in pointers.values():  # a pointer held in a variable or a parameter
                    out |= self.matching(self.callbacks(), sig)
            else:  # nothing on the line tells: anything the code may call through a pointer
                self.unresolved.add("%s:%d" % (f, n))
                out |= self.callbacks()
                for m in self.members:
                    out |= self.member_targets(m)
        return out

    def callbacks(self):
        """Functions a pointer variable or parameter may hold: those whose
        address the code takes, and those of members passed as arguments."""
        cands = self.g.code_taken - self.deferred
        for m in self.passed:
            cands |= self.member_targets(m)
        return cands

    def handed(self, caller, callee):
        """Our functions that `callee` (libc) calls back at once from `caller`'s call."""
        if callee in DEFERRED or plain(bare(callee)) in ROOMY:
            return set()
        out = set()
        for f, n in self.g.calls[caller][callee]:
            for word in re.findall(r"(\w+)\s*[,)]", self.g.src.line(f, n)):
                out |= {t for t in self.g.code_taken if plain(bare(t)) == word}
        return out


def load(dirs, skip_sources, src_dirs=()):
    g = Graph(skip_sources)
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith(".ci") and os.path.exists(os.path.join(root, name[:-3] + ".o")):
                    g.read_ci(os.path.join(root, name))
    return g, Resolver(g, src_dirs) if g.frame else None


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    return {f[2].split("@")[0] for f in (l.split() for l in out.splitlines()) if len(f) == 3 and f[1] in "TWi"}


class Walk:
    """Deepest sum of frames from a function. A cycle (through indirect
    calls) counts each function once a path."""

    def __init__(self, g, r):
        self.g, self.r = g, r
        self.memo, self.active, self.edges = {}, set(), {}

    def callees(self, f):
        if f not in self.edges:
            out = set()
            for c in self.g.calls.get(f, {}):
                if c == INDIRECT:
                    if plain(bare(f)) not in ROOMY:
                        out |= self.r.indirect(f)
                elif c in self.g.frame:
                    out.add(c)
                else:
                    out |= self.r.handed(f, c)
            self.edges[f] = out
        return self.edges[f]

    def deepest(self, f):
        if f in self.memo:
            return self.memo[f]
        if f in self.active:
            return 0, []
        self.active.add(f)
        best, path = 0, []
        for c in sorted(self.callees(f)):
            d, p = self.deepest(c)
            if d > best:
                best, path = d, p
        self.active.discard(f)
        self.memo[f] = (self.g.frame.get(f, 0) + best, [f] + path)
        return self.memo[f]


def describe(g, path):
    return " -> ".join("%s %d" % (bare(p), g.frame.get(p, 0)) for p in path)


def check_unit(lib, dirs, budget, skip, skip_sources, src_dirs):
    g, r = load(dirs, skip_sources, src_dirs)
    unit = os.path.basename(lib)
    if not g.frame:
        print("%s: no .ci files with their objects under %s (built with -fcallgraph-info=su?)" %
              (unit, ", ".join(dirs)))
        return 1
    roots = {n for n in exported(lib) if n in g.frame and not skip.fullmatch(n)}
    w = Walk(g, r)
    depth = {root: w.deepest(root) for root in sorted(roots)}
    reach, todo = set(), list(roots)
    while todo:
        f = todo.pop()
        if f not in reach:
            reach.add(f)
            todo.extend(w.callees(f))
    bad = 0
    for root, (d, path) in sorted(depth.items(), key=lambda kv: (-kv[1][0], kv[0])):
        if d > budget:
            bad += 1
            print("%s: over budget: %s needs %d bytes of frames (budget %d): %s" %
                  (unit, root, d, budget, describe(g, path)))
    for f in sorted(f for f in reach if g.dynamic.get(f) == "dynamic"):  # unbounded (alloca, VLA)
        bad += 1
        print("%s: dynamic frame on a lock path: %s (%s, %d bytes, %s)" %
              (unit, bare(f), g.where[f], g.frame[f], g.dynamic[f]))
    big = max(reach, key=lambda f: (g.frame.get(f, 0), f))
    top = max(depth.values())
    print("%s: %d lock entry points, %d functions on lock paths; largest frame: %s (%s) %d bytes; "
          "deepest path: %d bytes: %s" % (unit, len(roots), len(reach), bare(big), g.where[big],
                                          g.frame[big], top[0], describe(g, top[1])))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, required=True, help="bytes of frames a lock operation may use")
    ap.add_argument("--skip-source", action="append", default=[],
                    help="a source file (path suffix) whose functions the library never calls in this unit")
    ap.add_argument("--src", action="append", default=[],
                    help="a folder of the sources and headers (typedefs and members are read there)")
    ap.add_argument("units", nargs="+", metavar="LIB=DIR[:DIR...]",
                    help="a shared library and the folders of the objects it is linked from")
    a = ap.parse_args()
    skip = re.compile("|".join("(?:%s)" % x for x in NOT_LOCK_PATHS))
    bad = 0
    for u in a.units:
        lib, _, dirs = u.partition("=")
        if not dirs or not os.path.exists(lib):
            print("stack_usage: '%s' is not LIB=DIR[:DIR...] with an existing library" % u)
            return 2
        bad += check_unit(lib, dirs.split(":"), a.budget, skip, a.skip_source, a.src)
    print("stack_usage: %s (budget %d bytes of frames on every lock path)" % ("FAIL" if bad else "ok", a.budget))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

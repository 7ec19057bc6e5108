#!/usr/bin/env python3
"""No circle of calls or includes between the files of src/ and tools/.

    tools/check_circles.py [--root DIR] [DIR...]      (default DIRs: src tools)

A file that calls into another is not called back by it, directly or
through others. The script reads the C files under each DIR (and, for
definitions only, include/ and bench/), builds a graph of units and fails
naming every circle with the symbols that make its edges. Python 3, no
modules beyond the standard library; a rough reader of C, not a compiler:
comments and literals are dropped, preprocessor conditions are not
evaluated (both sides of an #if count), and a local name that equals a
global one of another file counts as a use of it.

The rules:
  units     a header and the .c file of the same name in the same folder
            (wait.h and wait.c) are one unit, the header being that file's
            interface; every other file is a unit of its own (a header with
            no .c of its name, a .c file with no header of its name).
  edges     unit A -> unit B when a file of A
              - includes a file of B ("..." includes, looked up beside the
                file, then under each DIR and under include/ and bench/, then
                by a file name found once in the tree), or
              - uses a function or a global variable that a .c file of B
                defines (not static), or a function, inline function or
                macro that a header of B defines.
            A header's inline functions and macros are read where they are
            used: a file that calls an inline function of a header uses the
            header and whatever the function uses, in turn (what the
            compiler inlines is a call from the calling file); the header
            itself is charged only with what its declarations use. A
            declaration names no use of the declared name; a member name
            (x.name, p->name) and a tag (struct name) are no use of a
            global.
  circles   the strongly connected components of more than one unit. For
            each: a path round it, then every edge inside it with the
            symbols behind it ("f via g": f is used through the inline
            function or macro g).
Exit status: 0 without circles, 1 with (each named on stdout), 2 on bad use.
"""
import os
import re
import sys

KEYWORDS = {
    'if', 'else', 'while', 'for', 'do', 'switch', 'case', 'default', 'return', 'break', 'continue', 'goto',
    'sizeof', 'typedef', 'struct', 'union', 'enum', 'static', 'extern', 'inline', '__inline', '__inline__',
    'const', 'volatile', 'restrict', '__restrict', 'register', 'auto', 'signed', 'unsigned', 'void', 'char',
    'short', 'int', 'long', 'float', 'double', '_Bool', 'bool', '_Atomic', '_Alignas', '_Alignof', '__alignof__',
    '_Static_assert', 'static_assert', '_Noreturn', '_Thread_local', '__thread', '_Generic', '__attribute__',
    '__attribute', '__typeof__', '__typeof', 'typeof', '__asm__', '__asm', 'asm', '__extension__',
    '__builtin_offsetof', '__builtin_expect', '__volatile__',
}
# a keyword followed by a parenthesised group that is no declarator
GROUP_WORDS = {'__attribute__', '__attribute', '_Alignas', '__typeof__', '__typeof', 'typeof', '_Atomic',
               '__asm__', '__asm', 'asm', '_Static_assert', 'static_assert', '__declspec'}

TOKEN = re.compile(r'[A-Za-z_]\w*|\d[\w.]*|->|\+\+|--|<<=|>>=|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^!]=|##|\S')
IDENT = re.compile(r'[A-Za-z_]\w*$')


def strip_comments_and_literals(text, literals=True):
    """Comments become a space, string and character literals an empty
    literal (kept with literals=False); line breaks are kept (so that
    preprocessor lines stay lines)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '/' and i + 1 < n and text[i + 1] == '*':
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(' ' + '\n' * text.count('\n', i, j))
            i = j
        elif c == '/' and i + 1 < n and text[i + 1] == '/':
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == '\\':
                    j += 1
                elif text[j] == '\n':
                    break
                j += 1
            out.append(c + c if literals else text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


class Definition:
    def __init__(self, name, path, kind, body=None):
        self.name, self.path, self.kind = name, path, kind  # kind: func, var, inline, macro
        self.body = body or []                               # inline and macro: the names they use


class Source:
    """One file: its includes, its definitions, the names it uses."""

    def __init__(self, path, text):
        self.path = path
        self.header = path.endswith('.h')
        self.includes = []   # the quoted names
        self.defs = {}       # name -> Definition (static ones too)
        self.static = set()  # names defined static (a .c file's own)
        self.uses = []       # identifiers used by the file itself
        code_lines = []
        for line in strip_comments_and_literals(text, literals=False).split('\n'):
            m = re.match(r'\s*#\s*include\s*"([^"]*)"', line)
            if m:
                self.includes.append(m.group(1))
        text = strip_comments_and_literals(text).replace('\\\n', ' ')
        for line in text.split('\n'):
            s = line.strip()
            if not s.startswith('#'):
                code_lines.append(line)
                continue
            m = re.match(r'#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?(.*)', s)
            if m:
                params = set(p.strip() for p in (m.group(3) or '').split(','))
                body = [t for t in TOKEN.findall(m.group(4)) if IDENT.match(t) and t not in params]
                if self.header:
                    self.defs[m.group(1)] = Definition(m.group(1), path, 'macro', body)
                else:
                    self.defs[m.group(1)] = Definition(m.group(1), path, 'macro')
                    self.static.add(m.group(1))
                    self.uses += body
            # other directives (#if, #ifdef, #undef, ...) are not read
        self.parse(TOKEN.findall('\n'.join(code_lines)))

    @staticmethod
    def idents(tokens):
        """The identifiers of a token list that may name a global: not after
        '.' or '->' (members) or struct, union, enum (tags), not keywords."""
        out = []
        for k, t in enumerate(tokens):
            if IDENT.match(t) and t not in KEYWORDS and (k == 0 or tokens[k - 1] not in ('.', '->', 'struct',
                                                                                         'union', 'enum')):
                out.append(t)
        return out

    @staticmethod
    def skip_group(tokens, i, open_, close):
        depth = 0
        while i < len(tokens):
            if tokens[i] == open_:
                depth += 1
            elif tokens[i] == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return i

    def parse(self, tokens):
        """Top-level statements: definitions of functions and variables,
        declarations, type definitions."""
        i, n = 0, len(tokens)
        stmt = []
        while i < n:
            t = tokens[i]
            if t == ';':
                self.statement(stmt, None)
                stmt = []
                i += 1
            elif t == '{':
                j = self.skip_group(tokens, i, '{', '}')
                body = tokens[i + 1:j - 1]
                if self.is_function(stmt):
                    self.statement(stmt, body)
                    stmt = []
                else:  # an initializer or a type's members: part of the statement
                    stmt += ['{'] + body + ['}']
                i = j
            elif t == '(':
                j = self.skip_group(tokens, i, '(', ')')
                stmt += tokens[i:j]
                i = j
            else:
                stmt.append(t)
                i += 1
        if stmt:
            self.statement(stmt, None)

    @staticmethod
    def flat(stmt):
        """The statement's tokens at depth 0, a group as one '()', '[]' or
        '{}' token; attribute-like groups dropped."""
        out, i = [], 0
        while i < len(stmt):
            t = stmt[i]
            if t in GROUP_WORDS and i + 1 < len(stmt) and stmt[i + 1] == '(':
                i = Source.skip_group(stmt, i + 1, '(', ')')
                if t == '_Atomic':
                    out.append('_Atomic')
                continue
            if t in ('(', '[', '{'):
                close = {'(': ')', '[': ']', '{': '}'}[t]
                j = Source.skip_group(stmt, i, t, close)
                out.append(t + close)
                out.append(stmt[i:j])  # the group's tokens, after its marker
                i = j
                continue
            out.append(t)
            i += 1
        return out

    @staticmethod
    def function_name(stmt):
        """The name of a function declared or defined by the statement, or
        None: the first identifier before a parameter list at depth 0
        (not a function pointer, `(*name)(...)`)."""
        f = Source.flat(stmt)
        for k in range(len(f) - 1):
            if isinstance(f[k], str) and f[k] == '()' and k > 0:
                prev = f[k - 1]
                if isinstance(prev, str) and IDENT.match(prev) and prev not in KEYWORDS:
                    return prev
                return None
        return None

    def is_function(self, stmt):
        if '=' in [t for t in self.flat(stmt) if isinstance(t, str)]:
            return False
        if stmt and stmt[0] in ('typedef', 'struct', 'union', 'enum') and '(' not in stmt:
            return False
        return self.function_name(stmt) is not None

    @staticmethod
    def declarators(stmt):
        """The names a variable declaration declares."""
        f = Source.flat(stmt)
        names, cur = [], []
        parts = []
        for x in f:
            if x == ',':
                parts.append(cur)
                cur = []
            else:
                cur.append(x)
        parts.append(cur)
        for p in parts:
            strs = []
            k = 0
            while k < len(p):
                x = p[k]
                if isinstance(x, list):
                    k += 1
                    continue
                if x == '=':
                    break
                if x == '()' and k + 1 < len(p) and isinstance(p[k + 1], list):
                    inner = [t for t in p[k + 1] if IDENT.match(t) and t not in KEYWORDS]
                    if '*' in p[k + 1] and inner:  # (*name)(...)
                        strs.append(inner[-1])
                    k += 2
                    continue
                if x in ('[]',):
                    break
                strs.append(x)
                k += 1
            ids = [x for x in strs if IDENT.match(x) and x not in KEYWORDS]
            if ids:
                names.append(ids[-1])
        return names

    def statement(self, stmt, body):
        if not stmt:
            return
        words = [t for t in stmt if IDENT.match(t)]
        static = 'static' in words[:4]
        if body is not None:  # a function definition
            name = self.function_name(stmt)
            inner = self.idents(stmt + body)
            if self.header:
                self.defs[name] = Definition(name, self.path, 'inline', [x for x in inner if x != name])
            else:
                self.defs[name] = Definition(name, self.path, 'func')
                if static:
                    self.static.add(name)
                self.uses += [x for x in inner if x != name]
            return
        if stmt[0] in ('typedef', '_Static_assert', 'static_assert', '__asm__', 'asm'):
            self.uses += self.idents(stmt)
            return
        f = [x for x in self.flat(stmt) if isinstance(x, str)]
        fname = self.function_name(stmt)
        if 'extern' in words or (fname and '=' not in f):
            # a declaration: its other names are uses (types, macros)
            declared = {fname} if fname else set(self.declarators(stmt))
            self.uses += [x for x in self.idents(stmt) if x not in declared]
            return
        if stmt[0] in ('struct', 'union', 'enum') and f[-1] == '{}':
            self.uses += self.idents(stmt)  # a type's definition
            return
        names = self.declarators(stmt)
        for name in names:
            if self.header:
                # a variable defined in a header (rare): each includer's own
                self.defs[name] = Definition(name, self.path, 'inline', [])
            else:
                self.defs[name] = Definition(name, self.path, 'var')
                if static:
                    self.static.add(name)
        self.uses += [x for x in self.idents(stmt) if x not in names]


def collect(root, dirs):
    files = []
    for d in dirs:
        top = os.path.join(root, d)
        for base, subdirs, names in os.walk(top):
            subdirs.sort()
            for name in sorted(names):
                if name.endswith(('.c', '.h')):
                    files.append(os.path.relpath(os.path.join(base, name), root))
    return files


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = argv[1:]
    if args[:1] == ['--root']:
        if len(args) < 2:
            print('usage: check_circles.py [--root DIR] [DIR...]', file=sys.stderr)
            return 2
        root, args = args[1], args[2:]
    if any(a.startswith('-') for a in args):
        print('usage: check_circles.py [--root DIR] [DIR...]', file=sys.stderr)
        return 2
    dirs = args or ['src', 'tools']
    context = [d for d in ('include', 'bench') if d not in dirs and os.path.isdir(os.path.join(root, d))]
    checked = collect(root, dirs)
    if not checked:
        print(f'check_circles: no C files under {", ".join(dirs)} in {root}', file=sys.stderr)
        return 2
    sources = {}
    for path in checked + collect(root, context):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            sources[path] = Source(path, f.read())
    checked_set = set(checked)
    by_name = {}
    for path in sources:
        by_name.setdefault(os.path.basename(path), []).append(path)

    def resolve(path, inc):
        for base in [os.path.dirname(path)] + dirs + context:
            cand = os.path.normpath(os.path.join(base, inc))
            if cand in sources:
                return cand
        found = by_name.get(os.path.basename(inc), [])
        return found[0] if len(found) == 1 else None

    # units: foo.h and foo.c of one folder together
    def unit(path):
        stem, ext = os.path.splitext(path)
        other = stem + ('.c' if ext == '.h' else '.h')
        return stem if other in sources else path

    # the global definitions: a .c file's non-static ones, every header's
    table = {}
    for path, s in sources.items():
        for name, d in s.defs.items():
            if not s.header and name in s.static:
                continue
            table.setdefault(name, []).append(d)

    edges = {}  # (unit, unit) -> set of reasons

    def edge(src, dst, why):
        if dst not in checked_set:
            return
        a, b = unit(src), unit(dst)
        if a != b:
            edges.setdefault((a, b), set()).add(why)

    for path in checked:
        s = sources[path]
        for inc in s.includes:
            target = resolve(path, inc)
            if target:
                edge(path, target, f'#include "{inc}"')
        seen = set()
        todo = [(name, None) for name in s.uses]
        while todo:
            name, via = todo.pop()
            if (name, via) in seen or (name in s.defs and via is None):
                continue
            seen.add((name, via))
            for d in table.get(name, []):
                if d.path == path:
                    continue
                edge(path, d.path, name if via is None else f'{name} via {via}')
                if d.kind in ('inline', 'macro'):
                    for used in d.body:
                        if used != name and (used, name) not in seen:
                            todo.append((used, name))

    # strongly connected components (Tarjan, iterative)
    graph = {}
    for (a, b) in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    sccs.append(sorted(comp))

    def label(u):
        return u if u.endswith(('.c', '.h')) else u + '.{h,c}'

    def cycle(comp):
        """A path from the component's first unit round to it again."""
        members = set(comp)
        start = comp[0]
        prev = {start: None}
        queue = [start]
        while queue:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w in members and w not in prev:
                    prev[w] = v
                    queue.append(w)
        # the member with an edge back to start that is nearest to it
        best = None
        for v in prev:
            if start in graph[v]:
                depth, x = 0, v
                while x is not None:
                    depth, x = depth + 1, prev[x]
                if best is None or depth < best[0]:
                    best = (depth, v)
        path, x = [], best[1]
        while x is not None:
            path.append(x)
            x = prev[x]
        return list(reversed(path)) + [start]

    units = {unit(p) for p in checked}
    where = ', '.join(dirs)
    if not sccs:
        print(f'check_circles: no circle among the {len(units)} units ({len(checked)} files) of {where}')
        return 0
    print(f'check_circles: {len(sccs)} circle{"s" if len(sccs) > 1 else ""} among the {len(units)} units '
          f'({len(checked)} files) of {where}')
    for k, comp in enumerate(sorted(sccs), 1):
        print(f'circle {k}: {" -> ".join(label(u) for u in cycle(comp))}')
        for a in comp:
            for b in sorted(graph[a]):
                if b in comp:
                    why = sorted(edges[(a, b)], key=lambda w: (not w.startswith('#'), w))
                    shown = ', '.join(why[:8]) + (f', ... ({len(why)} in all)' if len(why) > 8 else '')
                    print(f'  {label(a)} -> {label(b)}: {shown}')
    return 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))

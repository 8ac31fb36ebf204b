#!/usr/bin/env python3
"""Structure checks for the workspace crates (CI runs this from `make lint`).

Two rules from the style guide, checked on every crate's `src/**/*.rs`:

1. No import cycles between the modules (files) of one crate. A module depends on the
   module file a path resolves to: `use crate::a::B`, `crate::a::f()` in code,
   `super::x`, `self::x` and paths through a child module all count; `crate::a::B`
   resolves to the deepest module file that exists, and through re-exports
   (`pub use b::B` in `a`) to the file that defines `B`. A parent's `mod child;`
   declaration is not an edge, and test code (`#[cfg(test)]` items, `mod tests`, files
   under a `tests/` directory) is left out. Every strongly connected component of
   more than one module is a cycle.
2. No function longer than MAX_FN_LINES lines outside test code, counted from the
   `fn` line to its closing brace. Only `src/` is read, so tests/, benches/ and
   examples/ are out too.

It does not type-check or expand macros: method calls (`x.f()`) and macro bodies are
not paths, so it finds what a reader of the `use` lines would find. Known violations
are listed in ALLOWED_* below, each with the issue that removes it.

Python 3.11 standard library only. Exit status: 0 clean, 1 violations, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

MAX_FN_LINES = 120

# Functions allowed to exceed MAX_FN_LINES: (crate directory, file under the crate,
# qualified name as printed in the report). Each entry names the issue that removes it.
ALLOWED_LONG_FNS: set[tuple[str, str, str]] = set()

# Module cycles allowed: (crate directory, files under the crate). A cycle is allowed
# if its files are a subset of an entry. Each entry names the issue that removes it.
ALLOWED_CYCLES: list[tuple[str, frozenset[str]]] = []

KEYWORDS_NOT_TYPES = {"dyn", "mut", "const", "unsafe", "impl", "where", "for"}
ITEM_KEYWORDS = {"fn", "struct", "enum", "trait", "type", "const", "static", "union"}


# ---------------------------------------------------------------------------------
# Lexing: just enough of Rust to skip comments, strings and character literals.


@dataclass
class Tok:
    """One token: kind is "ident", "punct", "lit" or "lifetime"."""

    kind: str
    text: str
    line: int


PUNCT2 = {"::", "->", "=>", "==", "!=", "<=", ">=", "&&", "||", "..", "+=", "-="}


def _skip_string(src: str, i: int, line: int) -> tuple[int, int]:
    """Skips a "..." literal whose opening quote is at i; returns (next index, line)."""
    i += 1
    while i < len(src):
        c = src[i]
        if c == "\\":
            if i + 1 < len(src) and src[i + 1] == "\n":
                line += 1
            i += 2
            continue
        if c == "\n":
            line += 1
        elif c == '"':
            return i + 1, line
        i += 1
    return i, line


def _skip_raw_string(src: str, i: int, line: int) -> tuple[int, int] | None:
    """Skips r"..."/r#"..."# starting at the r; None if this is not a raw string."""
    j = i + 1
    hashes = 0
    while j < len(src) and src[j] == "#":
        hashes += 1
        j += 1
    if j >= len(src) or src[j] != '"':
        return None
    end = '"' + "#" * hashes
    k = src.find(end, j + 1)
    if k < 0:
        k = len(src)
    line += src.count("\n", j, k)
    return k + len(end), line


def lex(src: str) -> list[Tok]:
    """Splits Rust source into tokens, dropping comments, whitespace and literals' text."""
    toks: list[Tok] = []
    i, line, n = 0, 1, len(src)
    while i < n:
        c = src[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif src.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif src.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    line += src[i] == "\n"
                    i += 1
        elif c == '"':
            start = line
            i, line = _skip_string(src, i, line)
            toks.append(Tok("lit", '""', start))
        elif c in "rb" and (
            (c == "r" and i + 1 < n and src[i + 1] in '#"')
            or (c == "b" and src.startswith("br", i) and i + 2 < n and src[i + 2] in '#"')
        ):
            start = line
            skipped = _skip_raw_string(src, i + (1 if c == "b" else 0), line)
            if skipped is None:  # r#ident, a raw identifier
                j = i + 2
                while j < n and (src[j].isalnum() or src[j] == "_"):
                    j += 1
                toks.append(Tok("ident", src[i + 2 : j], line))
                i = j
            else:
                i, line = skipped
                toks.append(Tok("lit", '""', start))
        elif c == "b" and i + 1 < n and src[i + 1] in "\"'":
            if src[i + 1] == '"':
                start = line
                i, line = _skip_string(src, i + 1, line)
                toks.append(Tok("lit", '""', start))
            else:
                i = _skip_char(src, i + 1)
                toks.append(Tok("lit", "''", line))
        elif c == "'":
            # A character literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if i + 1 < n and src[i + 1] == "\\" or i + 2 < n and src[i + 2] == "'":
                i = _skip_char(src, i)
                toks.append(Tok("lit", "''", line))
            else:
                j = i + 1
                while j < n and (src[j].isalnum() or src[j] == "_"):
                    j += 1
                toks.append(Tok("lifetime", src[i:j], line))
                i = j
        elif c.isalpha() or c == "_":
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            toks.append(Tok("ident", src[i:j], line))
            i = j
        elif c.isdigit():
            j = i + 1
            while j < n and (src[j].isalnum() or src[j] == "_"):
                j += 1
            toks.append(Tok("lit", src[i:j], line))
            i = j
        elif src[i : i + 2] in PUNCT2:
            toks.append(Tok("punct", src[i : i + 2], line))
            i += 2
        else:
            toks.append(Tok("punct", c, line))
            i += 1
    return toks


def _skip_char(src: str, i: int) -> int:
    """Skips a character literal whose opening quote is at i."""
    j = i + 1
    if j < len(src) and src[j] == "\\":
        j += 2
    else:
        j += 1
    while j < len(src) and src[j] != "'" and src[j] != "\n":
        j += 1
    return j + 1


# ---------------------------------------------------------------------------------
# Per-file scan: modules, `use` trees, paths in code, function spans.


@dataclass
class RawPath:
    """A path as written, before it is resolved: segments after the first."""

    anchor: str  # "crate", "super" (count in supers), "self" or "rel"
    supers: int
    segs: list[str]
    ctx: tuple[str, ...]  # module path where it was written
    line: int
    is_use: bool
    is_pub: bool = False


@dataclass
class Module:
    """A module of the crate: a file, or an inline `mod x { }` inside one."""

    file: str
    test: bool = False
    defs: set[str] = field(default_factory=set)
    bindings: dict[str, RawPath] = field(default_factory=dict)
    globs: list[RawPath] = field(default_factory=list)


@dataclass
class LongFn:
    """A function longer than the limit."""

    crate: str
    file: str
    name: str
    line: int
    lines: int


@dataclass
class FileScan:
    """What one file declares and refers to."""

    paths: list[RawPath] = field(default_factory=list)
    modules: dict[tuple[str, ...], Module] = field(default_factory=dict)
    mod_decls: list[tuple[tuple[str, ...], str, bool]] = field(default_factory=list)
    fns: list[tuple[str, int, int]] = field(default_factory=list)  # name, line, lines


def attr_is_test(toks: list[Tok]) -> bool:
    """True for `#[test]` and `#[cfg(test)]` (the tokens inside the brackets)."""
    texts = [t.text for t in toks]
    return texts == ["test"] or texts == ["cfg", "(", "test", ")"]


def match_close(toks: list[Tok], i: int) -> int:
    """Index of the bracket closing the one at i (or len(toks))."""
    opening = toks[i].text
    closing = {"{": "}", "(": ")", "[": "]"}[opening]
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind != "punct":
            continue
        if t.text == opening:
            depth += 1
        elif t.text == closing:
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def item_end(toks: list[Tok], i: int) -> int:
    """Index just past the item starting at i: its `;`, `,` or closing brace."""
    depth = 0
    j = i
    while j < len(toks):
        t = toks[j]
        if t.kind == "punct":
            if t.text in "([":
                depth += 1
            elif t.text in ")]":
                depth -= 1
            elif t.text == "{":
                return match_close(toks, j) + 1
            elif t.text == "}":
                return j  # the enclosing block ends: leave its brace
            elif t.text in ";," and depth <= 0:
                return j + 1
        j += 1
    return j


def find_body(toks: list[Tok], i: int) -> int | None:
    """From a `fn`/`impl`/`mod` at i, the index of its body's `{`, or None if `;`."""
    depth = 0
    for j in range(i + 1, len(toks)):
        t = toks[j]
        if t.kind != "punct":
            continue
        if t.text in "([":
            depth += 1
        elif t.text in ")]":
            depth -= 1
        elif depth == 0 and t.text == "{":
            return j
        elif depth == 0 and t.text in ";}":
            return None
    return None


def impl_type(toks: list[Tok], i: int, body: int) -> str:
    """The self type's name of the `impl` at i whose body opens at `body`."""
    j = i + 1
    if j < body and toks[j].text == "<":  # impl<T>
        depth = 0
        while j < body:
            if toks[j].text == "<":
                depth += 1
            elif toks[j].text == ">":
                depth -= 1
                if depth == 0:
                    j += 1
                    break
            j += 1
    part: list[Tok] = []
    depth = 0
    for t in toks[j:body]:
        if t.text == "<":
            depth += 1
        elif t.text == ">":
            depth -= 1
        elif depth == 0 and t.text == "where":
            break
        elif depth == 0 and t.text == "for":
            part = []
            continue
        if depth == 0:
            part.append(t)
    names = [t.text for t in part if t.kind == "ident" and t.text not in KEYWORDS_NOT_TYPES]
    return names[-1] if names else "?"


def parse_use(toks: list[Tok], i: int, end: int) -> list[tuple[list[str], str | None]]:
    """Flattens the use tree in toks[i:end] into (path, bound name) pairs.

    The bound name is None for a glob (`a::*`)."""
    out: list[tuple[list[str], str | None]] = []

    def tree(j: int, prefix: list[str]) -> int:
        segs = list(prefix)
        while j < end:
            t = toks[j]
            if t.kind == "ident" and t.text != "as":
                segs.append(t.text)
                j += 1
            elif t.text == "::":
                j += 1
            elif t.text == "*":
                out.append((segs, None))
                return j + 1
            elif t.text == "{":
                j += 1
                while j < end and toks[j].text != "}":
                    j = tree(j, segs)
                    if j < end and toks[j].text == ",":
                        j += 1
                return j + 1
            else:
                break
        if segs and segs[-1] == "self":
            segs = segs[:-1]
        alias = segs[-1] if segs else None
        if j < end and toks[j].text == "as" and j + 1 < end:
            alias = toks[j + 1].text
            j += 2
        if segs and alias not in (None, "_"):
            out.append((segs, alias))
        return j

    tree(i, [])
    return out


def raw_path(segs: list[str], ctx: tuple[str, ...], line: int, is_use: bool) -> RawPath | None:
    """Classifies a path by its first segment; None for paths that start elsewhere."""
    if not segs:
        return None
    if segs[0] == "crate":
        return RawPath("crate", 0, segs[1:], ctx, line, is_use)
    if segs[0] == "self":
        return RawPath("self", 0, segs[1:], ctx, line, is_use)
    if segs[0] == "super":
        n = 0
        while n < len(segs) and segs[n] == "super":
            n += 1
        return RawPath("super", n, segs[n:], ctx, line, is_use)
    return RawPath("rel", 0, segs, ctx, line, is_use)


@dataclass
class Frame:
    """An open brace: what it belongs to."""

    kind: str  # "mod", "impl", "fn", "block"
    name: str
    ctx: tuple[str, ...]
    line: int


def scan_file(toks: list[Tok], modpath: tuple[str, ...], rel: str, test: bool) -> FileScan:
    """Scans one file whose module path is `modpath`."""
    out = FileScan()
    out.modules[modpath] = Module(rel, test)
    frames: list[Frame] = []
    body_kind: dict[int, Frame] = {}
    pending_test = False
    i = 0

    def ctx() -> tuple[str, ...]:
        for f in reversed(frames):
            if f.kind == "mod":
                return f.ctx
        return modpath

    def at_module_level() -> bool:
        return not frames or frames[-1].kind == "mod"

    while i < len(toks):
        t = toks[i]
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        # Attributes: `#[...]` and `#![...]`.
        if t.text == "#" and nxt is not None and nxt.text in ("[", "!"):
            open_i = i + 1 if nxt.text == "[" else i + 2
            if open_i < len(toks) and toks[open_i].text == "[":
                close = match_close(toks, open_i)
                if attr_is_test(toks[open_i + 1 : close]):
                    if nxt.text == "!":  # #![cfg(test)]: the whole file
                        out.modules[modpath].test = True
                    else:
                        pending_test = True
                i = close + 1
                continue
        if pending_test:
            # Skip the test item, noting a `mod x;` so its file counts as test code.
            pending_test = False
            end = item_end(toks, i)
            words = [x.text for x in toks[i:end]]
            if "mod" in words:
                k = words.index("mod")
                if k + 1 < len(words) and (k + 2 >= len(words) or words[k + 2] == ";"):
                    out.mod_decls.append((ctx(), words[k + 1], True))
            i = end
            continue
        if t.kind == "ident":
            if t.text == "mod" and nxt is not None and nxt.kind == "ident":
                body = find_body(toks, i)
                if body is None:
                    out.mod_decls.append((ctx(), nxt.text, nxt.text == "tests"))
                    i += 3
                    continue
                if nxt.text == "tests":
                    i = match_close(toks, body) + 1
                    continue
                inner = ctx() + (nxt.text,)
                out.modules[inner] = Module(rel, out.modules[modpath].test)
                body_kind[body] = Frame("mod", nxt.text, inner, t.line)
                i = body
                continue
            if t.text == "impl" and at_module_level():
                body = find_body(toks, i)
                if body is not None:
                    body_kind[body] = Frame("impl", impl_type(toks, i, body), ctx(), t.line)
            if t.text == "fn" and nxt is not None and nxt.kind == "ident":
                body = find_body(toks, i)
                if body is not None:
                    body_kind[body] = Frame("fn", nxt.text, ctx(), t.line)
            if at_module_level() and nxt is not None and nxt.kind == "ident":
                if t.text in ITEM_KEYWORDS or (t.text == "macro_rules" and nxt.text == "!"):
                    out.modules[ctx()].defs.add(nxt.text)
            if t.text == "use":
                end = i + 1
                while end < len(toks) and toks[end].text != ";":
                    end += 1
                is_pub = i > 0 and (toks[i - 1].text == "pub" or toks[i - 1].text == ")")
                for segs, alias in parse_use(toks, i + 1, end):
                    rp = raw_path(segs, ctx(), t.line, True)
                    if rp is None:
                        continue
                    rp.is_pub = is_pub
                    out.paths.append(rp)
                    if at_module_level():
                        if alias is None:
                            out.modules[ctx()].globs.append(rp)
                        else:
                            out.modules[ctx()].bindings[alias] = rp
                i = end + 1
                continue
            prev = toks[i - 1].text if i > 0 else ""
            if nxt is not None and nxt.text == "::" and prev not in ("::", "$", "in"):
                segs = [t.text]
                j = i + 1
                while j + 1 < len(toks) and toks[j].text == "::" and toks[j + 1].kind == "ident":
                    segs.append(toks[j + 1].text)
                    j += 2
                rp = raw_path(segs, ctx(), t.line, False)
                if rp is not None:
                    out.paths.append(rp)
                i = j
                continue
        elif t.text == "{":
            frames.append(body_kind.pop(i, Frame("block", "", ctx(), t.line)))
        elif t.text == "}" and frames:
            f = frames.pop()
            if f.kind == "fn":
                owner = next((g.name for g in reversed(frames) if g.kind == "impl"), None)
                name = f"{owner}::{f.name}" if owner else f.name
                out.fns.append((name, f.line, t.line - f.line + 1))
        i += 1
    return out


# ---------------------------------------------------------------------------------
# Per-crate resolution and the cycle search.


def module_path_of(rel_src: Path) -> tuple[str, ...]:
    """Module path of a file under src/: lib.rs -> (), a/mod.rs -> (a,), a/b.rs -> (a, b)."""
    parts = list(rel_src.with_suffix("").parts)
    if parts in (["lib"], ["main"]):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


class Crate:
    """The modules of one crate and the dependencies between their files."""

    def __init__(self, root: Path, crate_dir: Path):
        self.name = crate_dir.name
        self.dir = crate_dir
        self.modules: dict[tuple[str, ...], Module] = {}
        self.paths: list[RawPath] = []
        self.long_fns: list[LongFn] = []
        self.files: dict[str, FileScan] = {}
        self.file_module: dict[str, tuple[str, ...]] = {}
        scans: list[tuple[tuple[str, ...], FileScan]] = []
        for f in sorted((crate_dir / "src").rglob("*.rs")):
            rel_src = f.relative_to(crate_dir / "src")
            if rel_src.parts[0] == "bin":
                continue  # binaries are crates of their own
            rel = str(f.relative_to(crate_dir))
            test = "tests" in rel_src.parts[:-1] or rel_src.stem == "tests"
            scan = scan_file(lex(f.read_text()), module_path_of(rel_src), rel, test)
            scans.append((module_path_of(rel_src), scan))
            self.files[rel] = scan
            self.file_module[rel] = module_path_of(rel_src)
            for mp, m in scan.modules.items():
                self.modules.setdefault(mp, m)
            self.paths.extend(scan.paths)
        # `#[cfg(test)] mod x;` and `mod tests;` make x's file (and below) test code.
        for _, scan in scans:
            for parent, name, test in scan.mod_decls:
                if test:
                    for mp, m in self.modules.items():
                        if mp[: len(parent) + 1] == parent + (name,):
                            m.test = True
        for rel, scan in self.files.items():
            if self.modules[next(iter(scan.modules))].test:
                continue
            for name, line, lines in scan.fns:
                if lines > MAX_FN_LINES:
                    self.long_fns.append(LongFn(self.name, rel, name, line, lines))

    def absolute(self, rp: RawPath) -> tuple[str, ...] | None:
        """The path from the crate root, or None if it leaves the crate."""
        if rp.anchor == "crate":
            return tuple(rp.segs)
        if rp.anchor == "self":
            return rp.ctx + tuple(rp.segs)
        if rp.anchor == "super":
            if rp.supers > len(rp.ctx):
                return None
            return rp.ctx[: len(rp.ctx) - rp.supers] + tuple(rp.segs)
        # A relative path is ours if it starts with a child module of where it is.
        if rp.ctx + (rp.segs[0],) in self.modules:
            return rp.ctx + tuple(rp.segs)
        return None

    def resolve(self, path: tuple[str, ...], depth: int = 0) -> str:
        """The file of the deepest module on `path`, following re-exports."""
        cur: tuple[str, ...] = ()
        for k, seg in enumerate(path):
            if cur + (seg,) in self.modules:
                cur = cur + (seg,)
                continue
            m = self.modules[cur]
            if seg in m.defs or depth > 8:
                return m.file
            target = m.bindings.get(seg)
            if target is not None:
                base = self.absolute(target)
                if base is not None:
                    return self.resolve(base + path[k + 1 :], depth + 1)
                return m.file
            for g in m.globs:
                base = self.absolute(g)
                if base is not None and base in self.modules:
                    gm = self.modules[base]
                    if seg in gm.defs or seg in gm.bindings:
                        return self.resolve(base + path[k:], depth + 1)
            return m.file
        return self.modules[cur].file

    def edges(self) -> dict[str, dict[str, int]]:
        """file -> {file it depends on -> first line of the reference}."""
        out: dict[str, dict[str, int]] = {}
        test_files = {m.file for m in self.modules.values() if m.test}
        for rp in self.paths:
            src = self.modules[rp.ctx].file if rp.ctx in self.modules else None
            if src is None or self.modules[rp.ctx].test:
                continue
            path = self.absolute(rp)
            if path is None:
                continue
            dst = self.resolve(path)
            if dst == src or dst in test_files:
                continue
            # A re-export of the module's own descendant is its public face, like the
            # `mod` declaration itself, not a use of the child's code.
            if rp.is_pub and self.file_module[dst][: len(rp.ctx)] == rp.ctx:
                continue
            out.setdefault(src, {}).setdefault(dst, rp.line)
        return out


def sccs(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components (Tarjan), iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    nodes = sorted(set(graph) | {d for v in graph.values() for d in v})
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, {}))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, {})))))
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
                out.append(sorted(comp))
    return out


def shortest_cycle(start: str, members: set[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest cycle from `start` back to it inside `members` (breadth-first)."""
    prev: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, {})):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w in members and w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def cycles_covering(comp: list[str], graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Shortest cycles, one after another, until every module of the component is on one."""
    members = set(comp)
    covered: set[str] = set()
    out = []
    for v in comp:
        if v in covered:
            continue
        cyc = shortest_cycle(v, members, graph)
        # Start each cycle at its alphabetically first file, so the output is stable.
        k = cyc.index(min(cyc[:-1]))
        cyc = cyc[k:-1] + cyc[:k] + [cyc[k]]
        if cyc not in out:
            out.append(cyc)
        covered.update(cyc)
    return out


def short(f: str) -> str:
    """A file name without the leading src/."""
    return f[4:] if f.startswith("src/") else f


@dataclass
class Findings:
    """What a check found: violations, allowed ones, and allowlist entries now unused."""

    violations: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)


def group_of(f: str) -> str:
    """The top-level module a file belongs to: `src/builder/finish.rs` -> `src/builder/`."""
    parts = f.split("/")
    if len(parts) > 2 and parts[0] == "src":
        return f"src/{parts[1]}/"
    if f.endswith("/mod.rs"):
        return f[: -len("mod.rs")]
    return f


def group_graph(graph: dict[str, dict[str, int]]) -> dict[str, dict[str, str]]:
    """The file graph collapsed to top-level modules; each edge keeps one example,
    `file:line`."""
    out: dict[str, dict[str, str]] = {}
    for a, targets in graph.items():
        ga = group_of(a)
        out.setdefault(ga, {})
        for b, line in targets.items():
            gb = group_of(b)
            out.setdefault(gb, {})
            if ga != gb:
                out[ga].setdefault(gb, f"{a}:{line}")
    return out


def check(root: Path) -> Findings:
    """Runs both checks on every crate under root/crates."""
    found = Findings()
    used_cycles: set[int] = set()
    used_fns: set[tuple[str, str, str]] = set()
    for crate_dir in sorted(p.parent for p in (root / "crates").glob("*/Cargo.toml")):
        crate = Crate(root, crate_dir)
        graph = crate.edges()
        for comp in sccs(graph):
            if len(comp) < 2:
                continue
            allowed = next((k for k, (c, files) in enumerate(ALLOWED_CYCLES)
                            if c == crate.name and set(comp) <= files), None)
            if allowed is not None:
                used_cycles.add(allowed)
            for cyc in cycles_covering(comp, graph):
                text = f"{crate.name}: module cycle {' -> '.join(short(f) for f in cyc)}"
                if allowed is not None:
                    found.allowed.append(text)
                    continue
                for a, b in zip(cyc, cyc[1:]):
                    text += f"\n    crates/{crate.name}/{a}:{graph[a][b]} uses {short(b)}"
                found.violations.append(text)
        # The same between top-level modules: a directory module counts as one, so a
        # cycle through files of different depths (builder/finish.rs uses model.rs,
        # model.rs uses builder/mod.rs) is found too.
        groups = group_graph(graph)
        for comp in sccs(groups):
            if len(comp) < 2 or not any(g.endswith("/") for g in comp):
                continue  # only plain files: the file-level pass reported it
            cyc = next(iter(cycles_covering(comp, groups)), comp + comp[:1])
            text = f"{crate.name}: module cycle {' -> '.join(short(g) for g in cyc)}"
            for a, b in zip(cyc, cyc[1:]):
                text += f"\n    crates/{crate.name}/{groups[a][b]} uses {short(b)}"
            found.violations.append(text)
        for lf in crate.long_fns:
            key = (lf.crate, lf.file, lf.name)
            text = (f"{lf.crate}: crates/{lf.crate}/{lf.file}:{lf.line}: fn {lf.name} is "
                    f"{lf.lines} lines (limit {MAX_FN_LINES} outside tests)")
            if key in ALLOWED_LONG_FNS:
                used_fns.add(key)
                found.allowed.append(text)
            else:
                found.violations.append(text)
    for k, (c, files) in enumerate(ALLOWED_CYCLES):
        if k not in used_cycles and (root / "crates" / c).is_dir():
            found.stale.append(f"ALLOWED_CYCLES: {c} {', '.join(sorted(files))}")
    for key in sorted(ALLOWED_LONG_FNS - used_fns):
        if (root / "crates" / key[0]).is_dir():
            found.stale.append(f"ALLOWED_LONG_FNS: {key[0]} {key[1]} {key[2]}")
    return found


def print_edges(root: Path) -> None:
    """Prints every crate's module dependency edges (to see why a cycle is one)."""
    for crate_dir in sorted(p.parent for p in (root / "crates").glob("*/Cargo.toml")):
        crate = Crate(root, crate_dir)
        graph = crate.edges()
        for a in sorted(graph):
            for b in sorted(graph[a]):
                print(f"{crate.name}: {short(a)} -> {short(b)} (line {graph[a][b]})")


SELF_TEST_CRATE = {
    "src/lib.rs": """
        //! A crate root: `crate::b` in a comment is no edge.
        mod a;
        mod b;
        mod c;
        mod d;
        mod e;
        #[cfg(test)]
        mod tests;
        pub use a::A;
        pub use d::D;
        pub const ROOT: u32 = 1;
    """,
    "src/a.rs": """
        use crate::b::B;
        pub struct A;
        fn f() -> u32 { crate::ROOT }
    """,
    "src/b.rs": """
        pub struct B;
        fn g() { let _ = super::a::A; let s = "crate::c::C {"; let c = '{'; }
        mod inner { use super::B; }
        #[cfg(test)]
        mod t { use crate::c::C; }
    """,
    "src/c.rs": """
        pub struct C;
        const R: &str = r#"crate::e::E }"#;
        fn h() { let _ = crate::D; }
    """,
    "src/d.rs": "pub struct D;\n",
    "src/e.rs": """
        pub struct E;
        pub fn uses_c() { let _ = crate::c::C; }
    """,
    "src/tests.rs": "use crate::a::A;\n",
}


def self_test() -> int:
    """Checks the checker on a small made-up crate."""
    import tempfile

    body = "\n".join(["    let x = 1;"] * 119)
    crate = dict(SELF_TEST_CRATE)
    # 121 lines from `fn` to `}`; 120 in `ok`; the test function is exempt.
    crate["src/d.rs"] += (
        f"impl D {{\n    fn long(&self) {{\n{body}\n    }}\n}}\n"
        f"fn ok() {{\n{body[: -len(chr(10) + '    let x = 1;')]}\n}}\n"
        f"#[cfg(test)]\nmod tests {{\n    fn long_test() {{\n{body}\n{body}\n    }}\n}}\n"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in crate.items():
            f = root / "crates" / "demo" / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        (root / "crates" / "demo" / "Cargo.toml").write_text("[package]\nname = \"demo\"\n")
        demo = Crate(root, root / "crates" / "demo")
        got = {(short(a), short(b)) for a, v in demo.edges().items() for b in v}
        found = check(root)
    want_edges = {
        ("a.rs", "b.rs"), ("a.rs", "lib.rs"), ("b.rs", "a.rs"), ("c.rs", "d.rs"), ("e.rs", "c.rs")
    }
    want = [
        "demo: module cycle a.rs -> b.rs -> a.rs\n"
        "    crates/demo/src/a.rs:2 uses b.rs\n"
        "    crates/demo/src/b.rs:3 uses a.rs",
        "demo: crates/demo/src/d.rs:3: fn D::long is 121 lines (limit 120 outside tests)",
    ]
    ok = True
    if got != want_edges:
        print(f"self-test: edges {sorted(got)}, want {sorted(want_edges)}", file=sys.stderr)
        ok = False
    if found.violations != want:
        print(f"self-test: violations {found.violations}, want {want}", file=sys.stderr)
        ok = False
    print("check-structure: self-test " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                    help="workspace root (default: this script's repository)")
    ap.add_argument("--all", action="store_true", help="also list allowed violations")
    ap.add_argument("--edges", action="store_true",
                    help="print every crate's module dependencies instead of checking")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker on a made-up crate")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if not any((args.root / "crates").glob("*/Cargo.toml")):
        print(f"check-structure: no crates under {args.root / 'crates'}", file=sys.stderr)
        return 2
    if args.edges:
        print_edges(args.root)
        return 0
    found = check(args.root)
    for text in found.allowed if args.all else []:
        print(f"allowed: {text}")
    for text in found.violations:
        print(text)
    # Entries that match nothing any more should be deleted, not kept as a loophole.
    for text in found.stale:
        print(f"check-structure: note: allowlist entry matches nothing, remove it: {text}",
              file=sys.stderr)
    if found.violations:
        print(f"check-structure: {len(found.violations)} violation(s): break the module "
              f"cycles, keep functions to {MAX_FN_LINES} lines", file=sys.stderr)
        return 1
    print(f"check-structure: no module cycles, no function over {MAX_FN_LINES} lines "
          "outside tests")
    return 0


if __name__ == "__main__":
    sys.exit(main())

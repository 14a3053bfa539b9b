#!/usr/bin/env python3
"""Checks the layering of src/ that the README's Development section states.

- No import cycle between files, whatever form the path takes (`crate::`,
  `$crate::`, `super::`, `self::`, in `use` lines, braces or inline paths).
- Pure folders (`common/` and each family's `core/`) use no Redis, no glue,
  no clock reads, and import only `common` and their own family's core.
- `glue/` (the Redis-facing code the families share) imports no family: a
  family declares itself (`glue::family::Family`) and `lib.rs` lists them.
- A family imports no other family.
- The families are found in the tree: every folder of src/ with a `mod.rs`
  but `common` and `glue`.
- No Rust file in src/ or tests/ is over MAX_LINES lines.

Run by `make lint`; prints each problem and exits 1 if there is any.
SHOW_IMPORTS=1 prints the edges."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SRC = os.path.join(ROOT, "src")
TESTS = os.path.join(ROOT, "tests")
MAX_LINES = 900
SHARED = ("common", "glue")
FAMILIES = tuple(sorted(
    d for d in os.listdir(SRC)
    if d not in SHARED and os.path.isfile(os.path.join(SRC, d, "mod.rs"))
))
FORBIDDEN_IN_PURE = ("redis_module", "RedisModule_", "SystemTime::now", "Instant::now")


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return "::".join(rel)


def files(top, ext):
    for root, _, names in os.walk(top):
        for n in names:
            if n.endswith(ext):
                yield os.path.join(root, n)


def strip_comments_and_strings(text):
    """The code with comments and string/char literals blanked (line breaks kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = '"' + hashes
            j = text.find(end, i + 2 + len(hashes))
            j = n if j < 0 else j + len(end)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            j = text.index("'", i + 2 if text[i + 1] != "\\" else i + 3) + 1
            out.append("' '")
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def expand_use(body):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    body = re.sub(r"\s+as\s+\w+", "", body)
    body = re.sub(r"\s+", "", body)
    brace = body.find("{")
    if brace < 0:
        return [body]
    prefix, inner = body[:brace], body[brace + 1:-1]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        if part:
            for p in expand_use(part):
                out.append(prefix + p if prefix else p)
    return out


def paths_in(code):
    """Every path used in `code` with the inline-module depth at its place:
    (path, depth), where `depth` counts the `mod name {` blocks around it."""
    found = []
    # Inline module spans: `mod name {` ... matching `}`.
    spans = []
    for m in re.finditer(r"\bmod\s+\w+\s*\{", code):
        depth, j = 0, m.end() - 1
        while j < len(code):
            depth += code[j] == "{"
            depth -= code[j] == "}"
            if depth == 0:
                break
            j += 1
        spans.append((m.end(), j))

    def depth_at(pos):
        return sum(1 for a, b in spans if a <= pos < b)

    used = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        used.append((m.start(), m.end()))
        for p in expand_use(m.group(1)):
            found.append((p, depth_at(m.start())))
    rest = list(code)
    for a, b in used:
        rest[a:b] = " " * (b - a)
    rest = "".join(rest)
    for m in re.finditer(r"(?<![\w:])(\$?crate|super|self)((?:::\w+)+)", rest):
        found.append((m.group(1) + m.group(2), depth_at(m.start())))
    return found


def resolve(path, module, inline_depth):
    """The absolute module path `path` names from `module`, or None (an
    extern crate, `std`, a glob of the file itself)."""
    parts = [p for p in path.split("::") if p]
    if parts and parts[0] in ("crate", "$crate"):
        return parts[1:]
    if not parts or parts[0] not in ("super", "self"):
        return None
    # The module the path starts in: inline modules first, then files.
    here = module.split("::") if module else []
    depth = inline_depth
    while parts and parts[0] in ("super", "self"):
        head = parts.pop(0)
        if head == "self":
            continue
        if depth > 0:
            depth -= 1  # leaves an inline module: still inside this file
        else:
            here = here[:-1]
    if depth > 0:
        # Still inside an inline module of this file: a path into it names
        # this file.
        return here + ["<inline>"]
    return here + parts


def module_map():
    """Module path -> file, with files that `#[path]` declares (a unit-test
    file beside its code) under the module that declares them."""
    named = {f: module_of(f) for f in files(SRC, ".rs")}
    declared = []
    for f in named:
        text = open(f, encoding="utf-8").read()
        for d in re.finditer(r'#\[path\s*=\s*"([^"]+)"\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text):
            target = os.path.normpath(os.path.join(os.path.dirname(f), d.group(1)))
            for g in named:
                if os.path.normpath(g) == target:
                    declared.append((f, g, d.group(2)))
    # Until nothing moves: a file declared by a file itself declared this
    # way (a module's tests beside it) follows its declarer's new name.
    moved = True
    while moved:
        moved = False
        for f, g, name in declared:
            m = named[f]
            full = f"{m}::{name}" if m else name
            if named[g] != full:
                named[g], moved = full, True
    return {m: f for f, m in named.items()}


def main():
    modules = module_map()
    edges = {m: set() for m in modules}
    problems = []
    for m, f in modules.items():
        code = strip_comments_and_strings(open(f, encoding="utf-8").read())
        for path, depth in paths_in(code):
            if path.endswith("::*") and path.startswith("super::") and depth > 0:
                continue  # `use super::*` in a test module: the file itself
            parts = resolve(path.rstrip("*").rstrip(":"), m, depth)
            if parts is None:
                continue
            parts = [p for p in parts if p != "<inline>"]
            for k in range(len(parts), 0, -1):
                dep = "::".join(parts[:k])
                if dep in modules:
                    if dep != m:
                        edges[m].add(dep)
                    break
        layer = layer_of(m)
        if layer == "pure":
            for bad in FORBIDDEN_IN_PURE:
                if bad in code:
                    problems.append(f"{os.path.relpath(f, ROOT)}: the pure code uses {bad}")
        for d in edges[m]:
            why = forbidden(m, d)
            if why:
                problems.append(f"{os.path.relpath(f, ROOT)}: {why} (imports crate::{d})")
    # Cycles: depth-first search over file edges (the crate root is exempt:
    # it declares every module).
    state = {}

    def visit(m, stack):
        state[m] = 1
        for d in sorted(edges[m]):
            if d == "":
                continue
            if state.get(d) == 1:
                cycle = stack[stack.index(d):] + [d]
                problems.append("import cycle: " + " -> ".join(cycle))
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(modules):
        if m and m not in state:
            visit(m, [m])
    for f in list(files(SRC, ".rs")) + list(files(TESTS, ".rs")):
        lines = sum(1 for _ in open(f, encoding="utf-8"))
        if lines > MAX_LINES:
            problems.append(f"{os.path.relpath(f, ROOT)}: {lines} lines (at most {MAX_LINES})")
    if os.environ.get("SHOW_IMPORTS"):
        for m in sorted(edges):
            print(f"{m or '(root)'} -> {', '.join(sorted(edges[m]))}")
    for p in problems:
        print(p)
    return 1 if problems else 0


def layer_of(m):
    """'pure', 'glue', 'family' or 'root'."""
    parts = m.split("::") if m else []
    if not parts:
        return "root"
    if parts[0] == "common" or (parts[0] in FAMILIES and len(parts) > 1 and parts[1] == "core"):
        return "pure"
    if parts[0] == "glue":
        return "glue"
    return "family"


def forbidden(m, d):
    """Why module `m` may not import module `d`; None when it may."""
    mp, dp = m.split("::"), d.split("::")
    layer, dlayer = layer_of(m), layer_of(d)
    if layer == "pure":
        if dp[0] == "common" or (dlayer == "pure" and dp[0] == mp[0]):
            return None
        return "pure code imports only common and its own family's core"
    if layer == "glue":
        if dp[0] in SHARED:
            return None
        return "glue imports no family"
    if layer == "family":
        if dp[0] in ("common", "glue", mp[0]):
            return None
        return "a family imports no other family"
    return None


if __name__ == "__main__":
    sys.exit(main())

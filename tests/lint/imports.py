#!/usr/bin/env python3
"""Checks the layering of src/: no import cycles between files, and the pure
core (src/core) free of Redis, the host layer and the module's other parts.
Run by `make lint`; prints each problem and exits 1 if there is any."""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
USE = re.compile(r"\buse\s+crate::([a-z_:{}, ]+)")
PATH = re.compile(r"crate::([a-z_]+(?:::[a-z_]+)*)")


def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].split(os.sep)
    if rel[-1] in ("mod", "lib"):
        rel = rel[:-1]
    return "::".join(rel)


def files():
    for root, _, names in os.walk(SRC):
        for n in names:
            if n.endswith(".rs"):
                yield os.path.join(root, n)


def main():
    modules = {module_of(f): f for f in files()}
    edges = {m: set() for m in modules}
    problems = []
    for m, f in modules.items():
        text = open(f, encoding="utf-8").read()
        # `use crate::a::{b, c::d}`: expand one level of braces.
        targets = []
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        uses = [(u.group(1), "") for u in re.finditer(r"use\s+crate::([^;]+);", text, re.S)]
        uses += [(u.group(1), parent) for u in re.finditer(r"use\s+super::([^;]+);", text, re.S)]
        for body, base in uses:
            body = re.sub(r"\s+as\s+\w+", "", body)
            body = re.sub(r"\s+", "", body)
            if body.endswith("*"):
                continue  # `use super::*` in a test module: the file itself
            if base:
                body = f"{base}::{body}"
            brace = re.match(r"([a-z_:]*?)::\{(.*)\}$", body) or re.match(r"()\{(.*)\}$", body)
            if brace:
                prefix = brace.group(1)
                for part in brace.group(2).split(","):
                    targets.append(f"{prefix}::{part}" if prefix else part)
            else:
                targets.append(body)
        targets += PATH.findall(re.sub(r"use\s+crate::[^;]+;", "", text))
        for t in targets:
            parts = [p for p in t.split("::") if p and p != "self"]
            # The longest prefix that is a module (a file).
            for n in range(len(parts), 0, -1):
                dep = "::".join(parts[:n])
                if dep in modules and dep != m:
                    edges[m].add(dep)
                    break
        if m == "core" or m.startswith("core::"):
            for bad in ("redis_module", "crate::host", "RedisModule_", "SystemTime::now", "Instant::now"):
                if bad in text:
                    problems.append(f"{f}: the pure core uses {bad}")
            outside = [d for d in edges[m] if not (d == "core" or d.startswith("core::"))]
            for d in outside:
                problems.append(f"{f}: the pure core imports crate::{d}")
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
    if os.environ.get("SHOW_IMPORTS"):
        for m in sorted(edges):
            print(f"{m or '(root)'} -> {', '.join(sorted(edges[m]))}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Import circles between a crate's modules.

    scripts/cycles.py CRATE_DIR...    # e.g. scripts/cycles.py scenarios sim checker

One node per module file (src/a/b.rs and src/a/b/mod.rs are `a::b`). An
edge A -> B for every `crate::…` or `super::…` path in A (code and doc
links alike) that names module B or an item in it: the deepest module file
the path reaches. A module naming its own ancestor is not an edge (a child
uses its parent's namespace by construction); naming anything else is. A
strongly connected component of more than one module is a circle, printed
one per line; the exit code is 1 if there is any.
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super|self)((?:::\s*[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^}]*)\}", re.S)


def modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(root, f), src)[:-3].split(os.sep)
            if rel[-1] == "mod" or rel == ["lib"] or rel == ["main"]:
                rel = rel[:-1]
            if rel and rel[0] in ("bin",):
                continue
            mods[tuple(rel)] = os.path.join(root, f)
    return mods


def resolve(cur, head, rest, mods):
    if head == "crate":
        base = ()
    elif head == "super":
        base = cur[:-1]
    else:
        base = cur
    parts = list(base)
    for p in rest:
        if p == "super":
            parts = parts[:-1]
        else:
            parts.append(p)
    # the deepest module the path reaches
    for n in range(len(parts), -1, -1):
        if tuple(parts[:n]) in mods:
            return tuple(parts[:n])
    return None


def paths(text):
    for m in GROUP.finditer(text):
        prefix = [p for p in m.group(2).split("::") if p]
        for item in m.group(3).split(","):
            first = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", item)
            yield m.group(1), prefix + first[:1]
    for m in PATH.finditer(text):
        yield m.group(1), [p.strip() for p in m.group(2).split("::") if p.strip()]


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main(dirs):
    found = 0
    for d in dirs:
        src = os.path.join(d, "src")
        mods = modules(src)
        edges = {}
        for cur, f in mods.items():
            text = open(f, encoding="utf-8").read()
            for head, rest in paths(text):
                to = resolve(cur, head, rest, mods)
                if to is None or to == cur or cur[: len(to)] == to:
                    continue
                edges.setdefault(cur, set()).add(to)
        for comp in sccs(mods, edges):
            if len(comp) > 1:
                found += 1
                names = sorted("::".join(m) or "crate" for m in comp)
                print(f"{d}: circle of {len(comp)}: {', '.join(names)}")
    if not found:
        print(f"no import circles in {', '.join(dirs)}")
    return 1 if found else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip())
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))

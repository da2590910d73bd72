#!/usr/bin/env python3
"""Spells the recipes' `RecipeResult<T>` out as `Result<T, RecipeError>`.

cargo-mutants reads only the syntax: to it `RecipeResult<T>` is an unknown
type, so for a function returning one it proposes nothing viable (only
`RecipeResult::new()` and the like, which mutants.sh skips) and the most
telling mutants of all are never made: a take that answers `Ok(true)`
("mine") or `Ok(false)` without looking, an acquire that returns at once.
mutants.sh runs cargo-mutants on a copy of the tree rewritten by this
script, in place and on the same lines, so that every mutant's line and
column name the real source.

    spell-result.py DIR   # rewrites DIR/recipes/src/**/*.rs
    spell-result.py --self-test
"""

import pathlib
import sys

ALIAS = "RecipeResult<"
ERROR = "crate::error::RecipeError"


def spell(text: str) -> str:
    out, i = [], 0
    while True:
        j = text.find(ALIAS, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        # The alias's own definition, and longer names ending in it, stay.
        line_start = text.rfind("\n", 0, j) + 1
        if "type RecipeResult" in text[line_start:j + len(ALIAS)] or (j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_")):
            out.append(text[i:j + len(ALIAS)])
            i = j + len(ALIAS)
            continue
        depth, k = 1, j + len(ALIAS)
        while depth:
            c = text[k]
            if c == "<":
                depth += 1
            elif c == ">" and text[k - 1] != "-":  # not the `->` of an Fn type
                depth -= 1
            k += 1
        inner = spell(text[j + len(ALIAS):k - 1])
        out.append(text[i:j])
        out.append(f"Result<{inner}, {ERROR}>")
        i = k


def self_test() -> int:
    cases = [
        ("fn f() -> RecipeResult<bool> {", f"fn f() -> Result<bool, {ERROR}> {{"),
        ("-> RecipeResult<Option<Vec<u8>>>;", f"-> Result<Option<Vec<u8>>, {ERROR}>;"),
        ("Output = RecipeResult<Box<dyn Fn() -> u8>>>", f"Output = Result<Box<dyn Fn() -> u8>, {ERROR}>>"),
        ("RecipeResult<RecipeResult<()>>", f"Result<Result<(), {ERROR}>, {ERROR}>"),
        ("pub type RecipeResult<T> = Result<T, RecipeError>;", None),
        ("MyRecipeResult<u8>", None),
        ("use crate::error::RecipeResult;", None),
    ]
    for given, want in cases:
        got = spell(given)
        if got != (given if want is None else want):
            print(f"spell-result.py: {given!r} -> {got!r}, want {want!r}", file=sys.stderr)
            return 1
    print(f"spell-result.py: self-test passed ({len(cases)} cases)")
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    src = pathlib.Path(sys.argv[1]) / "recipes" / "src"
    if not src.is_dir():
        print(f"spell-result.py: {src} is not a directory", file=sys.stderr)
        return 2
    changed = 0
    for path in sorted(src.rglob("*.rs")):
        old = path.read_text()
        new = spell(old)
        if new != old:
            assert new.count("\n") == old.count("\n"), path
            path.write_text(new)
            changed += 1
    print(f"spell-result.py: {changed} files spelled out under {src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

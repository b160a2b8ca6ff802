#!/usr/bin/env python3
"""Writes the shipped library less its untranslated rules, for a like-work run.

    python3 benches/upstream-corpus/translated_only.py GRAIL OUT

OUT (a folder, emptied first; never committed) receives every `.grail` file
of `policies/guardrails/` with each `rule` item removed whose id is no string
literal of the Rego translation (`benches/rego/*.rego`); then, until the folder
compiles (`GRAIL check --no-cache --policy OUT`), each function, table or
question that a compile error points into (it names a removed rule, or a
function removed before it). What is left is the library's documents,
records, enumerations and matrices, the functions the kept rules call, and
the rules regorus runs: `grail check --policy OUT` evaluates the same rules
as `bench_stream rego-each`. A compile error anywhere else stops it.

What is not a `rule` item stays, translated or not: the findings a document
kind declares in its schema (`on missing_key rule schema.missing_key`, `on
type rule schema.type`, `on unknown_key rule ...`, `unique rule ...`, the
floors and ceilings of fields) and its layers (`on loosen rule ...`). They
are the loading of the document, which grail does whatever rules run; the
agreement lists any of them the translation lacks as `grail only`.

An item is a line at column 0 that is not a comment, with the `///` and `//`
lines right above it and the indented or blank lines below it, up to the next
column-0 line. The policy files are read, never changed.
"""

import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "policies" / "guardrails"
REGO = ROOT / "benches" / "rego"

# A string literal of the translation that may be a rule id.
LITERAL = re.compile(r'"([a-z_]+\.[a-z0-9_]+)"')


def translated() -> set[str]:
    """The string literals of the translation: a rule item is kept when its id is one."""
    ids = set()
    for path in sorted(REGO.glob("*.rego")):
        ids.update(LITERAL.findall(path.read_text()))
    return ids


def items(lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line ranges of the top-level items, comments above included."""
    heads = [i for i, l in enumerate(lines) if l[:1] not in ("", " ", "\t", "\n", "/")]
    out = []
    for n, head in enumerate(heads):
        first = head
        while first > 0 and lines[first - 1].startswith("//"):
            first -= 1
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        while end > head + 1 and lines[end - 1].startswith("//"):
            end -= 1
        out.append((first, end))
    return out


def head_of(lines: list[str], first: int, end: int) -> str:
    return next(l for l in lines[first:end] if not l.startswith("//"))


# Where a compile error points: `[FILE:LINE:COLUMN]`.
LOCATED = re.compile(r"\[([^\]:]+\.grail):(\d+):\d+\]")


def compile_errors(grail: str, out: pathlib.Path) -> list[tuple[str, int]]:
    run = subprocess.run(
        [grail, "check", "--no-cache", "--policy", str(out), "--format", "json", "/dev/null"],
        capture_output=True,
        text=True,
    )
    if "does not compile" not in run.stderr:
        return []
    found = sorted({(pathlib.Path(f).name, int(n)) for f, n in LOCATED.findall(run.stderr)})
    if not found:
        sys.exit(f"the folder does not compile, and no error is located:\n{run.stderr}")
    return found


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: translated_only.py GRAIL OUT")
    grail, out = sys.argv[1], pathlib.Path(sys.argv[2])
    keep = translated()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    removed, kept = [], []
    for path in sorted(LIBRARY.glob("*.grail")):
        lines = path.read_text().splitlines(keepends=True)
        drop = set()
        for first, end in items(lines):
            m = re.match(r"rule ([A-Za-z0-9_.-]+)", head_of(lines, first, end))
            if not m:
                continue
            (kept if m.group(1) in keep else removed).append(m.group(1))
            if m.group(1) not in keep:
                drop.update(range(first, end))
        (out / path.name).write_text("".join(l for i, l in enumerate(lines) if i not in drop))
    helpers = []
    while errors := compile_errors(grail, out):
        for name in sorted({f for f, _ in errors}):
            path = out / name
            lines = path.read_text().splitlines(keepends=True)
            drop = set()
            for first, end in items(lines):
                if not any(f == name and first < n <= end for f, n in errors):
                    continue
                head = head_of(lines, first, end)
                if not re.match(r"(fn|table|question) ", head):
                    sys.exit(f"{name}:{first + 1}: a compile error in `{head.strip()}`, which is not removed")
                helpers.append(f"{name}: {head.split('(')[0].split(' {')[0].strip()}")
                drop.update(range(first, end))
            path.write_text("".join(l for i, l in enumerate(lines) if i not in drop))
    print(
        f"{out}: {len(kept)} rule items kept ({', '.join(sorted(kept))}), {len(removed)} removed,"
        f" and {len(helpers)} functions, tables and questions that named them"
    )


if __name__ == "__main__":
    main()

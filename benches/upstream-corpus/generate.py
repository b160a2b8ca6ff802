#!/usr/bin/env python3
"""A corpus of upstream-shaped security bindings, for grail against regorus.

    python3 benches/upstream-corpus/generate.py OUT [COUNT] [SEED]

Writes OUT/bindings/00000.json ... (COUNT of them, 10,000 unless told),
OUT/probe-transcripts/ (upstream's probe transcripts, copied: the bindings
attach them by `probe_evidence`, resolved with `--probe-evidence-root OUT`)
and OUT/index.json (per binding: its base and the fixtures whose defects it
carries). Nothing it writes is committed.

Where the documents come from (tests/data/upstream/, upstream's graded
corpus; oracle.json says what upstream's checker answered):
- a base is one of the fixtures the oracle accepts (exit 0);
- a defect is what a fixture the oracle refuses (exit 1) changes against
  upstream's `valid.json`, as a list of edits (a key set to the fixture's
  value, or a key removed; a list is replaced whole). A family is a
  fixture's name up to its first `-` (upstream's manifest has no grouping
  of its own; tests/upstream.rs groups the same way).
Half the bindings stay as their base; the others carry the defects of one
to three families, each taken from one of that family's failing fixtures,
applied in turn to the base. A probe fixture's defect is mostly its
`probe_evidence` pointing at a defective transcript, which is why the
transcripts travel with the corpus. What the fixtures pass beside the
binding (`--evidence`, `--egress-hosts`, `--credential-roots`) does not
travel: the corpus is checked with one set of flags.

Deterministic: Python's `random.Random(SEED)` (seed 42 unless told) over
the fixtures in sorted order; the same COUNT and SEED write the same bytes.
"""
import json
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "tests" / "data" / "upstream"
FIXTURES = UPSTREAM / "fixtures" / "security-binding"


def family(name):
    return name.split("-")[0]


def diff(base, other, path=()):
    """The edits that turn `base` into `other`: ("set", path, value) and ("del", path)."""
    if isinstance(base, dict) and isinstance(other, dict):
        edits = []
        for key in base:
            if key not in other:
                edits.append(("del", path + (key,)))
        for key, value in other.items():
            if key not in base:
                edits.append(("set", path + (key,), value))
            else:
                edits.extend(diff(base[key], value, path + (key,)))
        return edits
    if base == other and type(base) is type(other):
        return []
    return [("set", path, other)]


def apply(doc, edit):
    """One edit on `doc`; a step through a value that is not a mapping makes it one."""
    kind, path = edit[0], edit[1]
    if not path:
        return json.loads(json.dumps(edit[2])) if kind == "set" else doc
    if not isinstance(doc, dict):
        return doc
    here = doc
    for key in path[:-1]:
        if not isinstance(here.get(key), dict):
            if kind == "del":
                return doc
            here[key] = {}
        here = here[key]
    if kind == "set":
        here[path[-1]] = json.loads(json.dumps(edit[2]))
    else:
        here.pop(path[-1], None)
    return doc


def load(name):
    return json.loads((FIXTURES / name).read_text())


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: generate.py OUT [COUNT] [SEED]")
    out = Path(sys.argv[1])
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 42
    oracle = json.loads((UPSTREAM / "oracle.json").read_text())["fixtures"]
    valid = load("valid.json")
    bases, families = [], {}
    for name in sorted(oracle):
        # The binding the checker was run on: the first argument (an
        # evidence fixture's key names its event array, not its binding).
        binding = oracle[name]["args"][0]
        if not (FIXTURES / binding).is_file():
            continue
        if oracle[name]["exit"] == 0:
            bases.append((name, load(binding)))
        else:
            edits = diff(valid, load(binding))
            if edits:
                families.setdefault(family(name), []).append((name, edits))
    names = sorted(families)
    rng = random.Random(seed)
    (out / "bindings").mkdir(parents=True, exist_ok=True)
    shutil.copytree(FIXTURES / "probe-transcripts", out / "probe-transcripts", dirs_exist_ok=True)
    index, total = [], 0
    for i in range(count):
        base_name, base = rng.choice(bases)
        doc = json.loads(json.dumps(base))
        carried = []
        if rng.random() < 0.5:
            for fam in rng.sample(names, rng.randint(1, 3)):
                fixture, edits = rng.choice(families[fam])
                for edit in edits:
                    doc = apply(doc, edit)
                carried.append(fixture)
        text = json.dumps(doc, indent=2) + "\n"
        total += len(text)
        (out / "bindings" / f"{i:05}.json").write_text(text)
        index.append({"file": f"bindings/{i:05}.json", "base": base_name, "defects": carried})
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    print(f"wrote {count} bindings ({total} bytes), {len(bases)} bases, "
          f"{sum(len(v) for v in families.values())} defects of {len(names)} families, to {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the inputs of the memory cases of issue 40 (class 8) into a folder.

Each case is a folder holding an agent-written document that names one large
file many times, or one document that is one long line; the large files are
generated here, never committed. Measure each with `run.sh` (it prints the
peak memory and the wall time of `grail check` under `/usr/bin/time -v`).

    python3 benches/memory/generate.py OUT [--refs N] [--levels N]
"""

import argparse
import json
import os

MB = 1000 * 1000
MIB = 1024 * 1024

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(REPO, "policies", "guardrails", "tests", "probe.surface", "pass")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def big_text(size):
    line = "observer event: write to /canary refused (EACCES)\n"
    return (line * (size // len(line) + 1))[:size]


def run_record(out, refs):
    """A boundary-scenario run (scenarios.grail) whose evidence names one 16 MB file `refs` times."""
    folder = os.path.join(out, f"run-{refs}")
    write(os.path.join(folder, "observer.txt"), big_text(16 * MB))
    evidence = "".join(f"  - {{id: ev{i}, source: observer, ref: observer.txt}}\n" for i in range(refs))
    write(
        os.path.join(folder, "run.yaml"),
        "kind: boundary-run\nschema_version: \"1.0\"\ncase: S-01\npack_version: \"0.1\"\n"
        "date: \"2026-10-23\"\nsubject:\n  component: docker-engine\n  mocked: []\n"
        "  enforcement_point: mount-policy\n  enforcement_point_mocked: false\n"
        "claim_scope: deployment\nboundary: prevention\n"
        "grades: {enforcement: PASS, evidence: PASS, utility: PASS}\n"
        "observations: {forbidden_effect: false, detection_reported: true}\n"
        "evidence:\n" + evidence,
    )


def registry(out, refs):
    """A sub-agent registry (harness.grail) whose `package_path` names one 16 MB file `refs` times."""
    folder = os.path.join(out, f"registry-{refs}")
    write(os.path.join(folder, "packages", "package.md"), big_text(16 * MB))
    agents = "".join(
        f"  - agent_id: A-{i}\n    workflow_id: WF-3\n    role_id: builder\n    subagent_type: org-builder\n"
        f"    started_at: \"2026-07-11T09:58:00Z\"\n    package_path: packages/package.md\n"
        f"    package_sha256: \"{'0' * 64}\"\n"
        for i in range(refs)
    )
    write(
        os.path.join(folder, "registry.yaml"),
        "kind: subagent-registry\nschema_version: \"1.0\"\nworkflows:\n  - {workflow_id: WF-3, tier: heavy}\n"
        "agents:\n" + agents,
    )


def transcript(size, field):
    """The probe.surface pass fixture's transcript, `field` of its workspace assertion padded to `size` bytes."""
    with open(os.path.join(PROBE, "probe-transcripts", "ci-pool-a-l2.json"), encoding="utf-8") as f:
        t = json.load(f)
    block = t["assertions"]["workspace_host_write_contained"]
    base = len(json.dumps(t))
    if field == "hosts":
        # Many comma-separated entries: what `split` turns into a list.
        egress = t["assertions"]["egress_denied"]
        n = (size - base) // len("example.com,")
        egress["host"] = ",".join(["example.com"] * n)
    else:
        block["workspace_host_path"] = "/w" * ((size - base) // 2)
    return json.dumps(t)


def levels(out, count, field):
    """A security binding with `count` surfaces whose L2 levels name one 14 MiB transcript."""
    folder = os.path.join(out, f"levels-{count}-{field}")
    with open(os.path.join(PROBE, "binding.json"), encoding="utf-8") as f:
        binding = json.load(f)
    level = binding["isolation_bindings"]["ci-pool-a"]["L2"]
    surfaces = {}
    for i in range(count):
        entry = json.loads(json.dumps(level))
        entry["probe_evidence"] = "probe-transcripts/shared.json"
        entry["runtime_markers"] = {"runner-pool": f"pool-{i}"}
        surfaces[f"pool-{i}"] = {"L2": entry}
    binding["isolation_bindings"] = surfaces
    write(os.path.join(folder, "binding.json"), json.dumps(binding, indent=2))
    write(os.path.join(folder, "probe-transcripts", "shared.json"), transcript(14 * MIB, field))


def one_line(out, field):
    """A security binding that is one 15 MiB line: minified, with one long value."""
    folder = os.path.join(out, f"line-{field}")
    with open(os.path.join(PROBE, "binding.json"), encoding="utf-8") as f:
        binding = json.load(f)
    level = binding["isolation_bindings"]["ci-pool-a"]["L2"]
    base = len(json.dumps(binding, separators=(",", ":")))
    room = 15 * MIB - base
    if field == "hosts":
        level["component_reachable_hosts"] = ["example.com"] * (room // len('"example.com",'))
    else:
        level["substrate"] = "s" * room
    write(os.path.join(folder, "binding.json"), json.dumps(binding, separators=(",", ":")))
    write(os.path.join(folder, "probe-transcripts", "ci-pool-a-l2.json"),
          open(os.path.join(PROBE, "probe-transcripts", "ci-pool-a-l2.json"), encoding="utf-8").read())


def one_line_many(out, count):
    """A security binding that is one 15 MiB line on which `count` findings
    point: its surfaces name a transcript that is not there (a finding at
    each `probe_evidence`), and a recorded allowlist fills the line."""
    folder = os.path.join(out, f"line-many-{count}")
    with open(os.path.join(PROBE, "binding.json"), encoding="utf-8") as f:
        binding = json.load(f)
    level = binding["isolation_bindings"]["ci-pool-a"]["L2"]
    surfaces = {}
    for i in range(count):
        entry = json.loads(json.dumps(level))
        entry["runtime_markers"] = {"runner-pool": f"pool-{i}"}
        entry["probe_evidence"] = f"probe-transcripts/pool-{i}.json"
        surfaces[f"pool-{i}"] = {"L2": entry}
    binding["isolation_bindings"] = surfaces
    base = len(json.dumps(binding, separators=(",", ":")))
    level = surfaces["pool-0"]["L2"]
    level["base_egress_allowlist"] = ["example.com"] * ((15 * MIB - base) // len('"example.com",'))
    write(os.path.join(folder, "binding.json"), json.dumps(binding, separators=(",", ":")))
    write(os.path.join(folder, "probe-transcripts", "ci-pool-a-l2.json"),
          open(os.path.join(PROBE, "probe-transcripts", "ci-pool-a-l2.json"), encoding="utf-8").read())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--refs", type=int, nargs="*", default=[100, 2000])
    p.add_argument("--levels", type=int, default=300)
    a = p.parse_args()
    for n in a.refs:
        run_record(a.out, n)
        registry(a.out, n)
    for field in ("path", "hosts"):
        levels(a.out, a.levels, field)
        one_line(a.out, field)
    one_line_many(a.out, a.levels)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Where the simulator's time goes, counted instead of timed: the instructions, and the data
cache misses in a model of this machine's first- and second-level caches, per event of the
simulation loop and by function, for the benchmark's dumbbells and the slowest run of each
paper's full form. The counts come from valgrind's callgrind, collected inside the loop only
(`Sim::run_until` and everything it calls; the scenario's setup and the output are left out).
valgrind runs with the address space's randomisation off (`setarch --addr-no-randomize`) and
the loop in fixed slices of simulated time (`ecnlab-run --slice`), and one build then counts
the same instructions on every run of a scenario but for a few tens in glibc's allocator
(`malloc_consolidate`), which valgrind does not hold still: dt1g-1000 twice on 7be9895,
3 101 850 797 both times; red100-ecn1 four times on one build, 536 183 267 to 536 183 293. The
modelled misses move by up to about a tenth of a per cent from run to run (dt1g-1000's L1
write misses: 9 744 307 against 9 733 772). So two builds compare in one run each, to a
millionth for instructions, on a host whose speed drifts from minute to minute, where timings
of one build against another need many alternating rounds to say a few per cent.

    .venv/bin/python bench/profile.py                       # every run: results/profile.md, .json
    .venv/bin/python bench/profile.py --before HEAD~1       # + that build, run for run, side by side
    python3 bench/profile.py --runs red100-ecn1,dt1g        # some of them
    python3 bench/profile.py --list                         # the runs and what they are

The paper runs are built by the installed ecnlab package (`.venv/bin/python`, or any Python
where `import ecnlab` works); the benchmark's dumbbells need only Python and the Rust
toolchain. A paper run is its full form's scenario (default reading, first seed), cut to its
first seconds where it is long (the column 'simulated'): under callgrind a run takes 100-300
times as long as on its own. The misses are a model's (valgrind's caches set to the sizes,
ways and lines of this machine's L1 data, L1 instruction and L2 caches, read from /sys; no
prefetcher, no out-of-order overlap): a miss costs time only where the processor waits for
it, so they say where the data comes from, not how long it takes. The time per event in the
table is one run of the loop on its own, beside the counts. `--before` needs a build that
has `--slice` (be0c214 on); an older build's slices would follow the wall clock.

Not part of CI (minutes per run); tests/test_profile.py checks the reading of callgrind's
output on a written example and, where valgrind is installed, one short run counted twice.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
#: The loop: everything it calls is counted, nothing outside it.
LOOP_FUNCTION = "ecnlab::net::Sim::run_until"
#: Functions listed per run, by instructions.
TOP = 15
#: The loop runs in slices of this much simulated time (`ecnlab-run --slice`), on its own and
#: under valgrind alike: slices sized to the wall clock would end a hundred times more often
#: under valgrind, and each end settles every port.
SLICE = "1s"


def _load_bench():
    """python/ecnlab/bench.py (its builders and runner), loaded without the ecnlab package."""
    path = REPO / "python" / "ecnlab" / "bench.py"
    spec = importlib.util.spec_from_file_location("_ecnlab_bench", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up here
    spec.loader.exec_module(mod)
    return mod


# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class Run:
    name: str
    what: str
    #: A benchmark scenario (bench/scenarios/<file>) or a paper run (experiment, run name).
    bench_file: str | None = None
    experiment: str | None = None
    run: str | None = None
    #: Simulated seconds kept of a paper run (its full form runs longer).
    cut_s: float | None = None


RUNS = [
    Run("red100-ecn1", "benchmark: 100 Mb/s RED+ECN dumbbell, 8 flows, 10 s", bench_file="red100-ecn1.toml"),
    Run("dt1g", "benchmark: 1 Gb/s drop-tail dumbbell, 10 flows, 5 s", bench_file="dt1g.toml"),
    Run("dt1g-1000", "benchmark: dt1g with 1000 flows", bench_file="dt1g-1000.toml"),
    Run("dt1g-10000", "benchmark: dt1g with 10 000 flows on 1000 hosts a side", bench_file="dt1g-10000.toml"),
    # Each paper's slowest run: the setting whose runs took longest on average in one run of
    # its default form (9714766's simulator; HFCC's recorded form, the others' run beside other
    # work, so a close second may have been the slowest), its first seed. HFCC's second run is
    # its costliest experiment after that one, for the contrast: the two are 46 % and 35 % of
    # the form's loop time. Mix-UNO is ecnlab's own experiment, not a paper's.
    Run(
        "eecn.table3",
        "EECN Table 3: 8 EECN flows (elephants and short flows), threshold setting th0.2-0.4, base RTT 1.4 ms",
        experiment="eecn.table3", run="th0.2-0.4-short-s1",
    ),
    Run(
        "mecn.queue",
        "MECN Figs. 3a/3b: two MECN sources with the same RTT, min_th 1 (every MECN run loops for milliseconds)",
        experiment="mecn.queue", run="mecn-min1-s1",
    ),
    Run(
        "uno.staggered",
        "UNO Fig. 6: VCP flows joining 100 s apart (two of its five by the cut)",
        experiment="uno.staggered", run="vcp-s1", cut_s=150.0,
    ),
    Run(
        "apcc.mobility",
        "APCC Figs. 6-7: two mobile clients, Zhuge",
        experiment="apcc.mobility", run="zhuge-s1", cut_s=10.0,
    ),
    Run(
        "hfcc.multibottleneck",
        "HFCC Fig. 8: 7 links of 150 Mb/s, 45 flows, HFCC; 46 % of HFCC's default form's loop time",
        experiment="hfcc.multibottleneck", run="hfcc-s1", cut_s=10.0,
    ),
    Run(
        "hfcc.buffer",
        "HFCC Fig. 6: 150 Mb/s dumbbell, 10 + 10 flows, HFCC, buffer 0.2 BDP (the slowest of its 70 settings); "
        "35 % of HFCC's default form's loop time",
        experiment="hfcc.buffer", run="hfcc-0.2bdp-s1", cut_s=20.0,
    ),
]
BY_NAME = {r.name: r for r in RUNS}


def scenario_text(r: Run, bench) -> tuple[str, str]:
    """The run's scenario TOML, cut to `cut_s` simulated seconds where it says so, and the
    duration it has uncut."""
    if r.bench_file is not None:
        text = (REPO / "bench" / "scenarios" / r.bench_file).read_text()
        return text, _duration(text)
    try:
        from ecnlab import experiments as ex
        from ecnlab.experiments.base import Reading
        from ecnlab.scenario import load_scenario
    except ImportError as e:
        raise SystemExit(
            f"error: run {r.name} is a paper's run, built by the ecnlab package, which this Python "
            f"cannot import ({e}); use .venv/bin/python"
        ) from e
    (exp,) = [e for e in ex.select(r.experiment) if e.name == r.experiment]
    (default,) = [rd for rd in Reading.choose(exp.axes, None) if rd.name == "default"]
    runs = exp.runs(False, exp.seeds(False)[:1], default)
    if r.run not in runs:
        raise SystemExit(f"error: {r.experiment} has no run {r.run!r} (it has {', '.join(sorted(runs))})")
    text = load_scenario(runs[r.run]).to_toml()
    return (bench.with_duration(text, f"{r.cut_s:g}s") if r.cut_s is not None else text), _duration(text)


# --------------------------------------------------------------------------- callgrind's output


@dataclass
class Profile:
    """Self cost per function (what its own instructions did, not its callees'), by callgrind's
    event names (Ir, D1mr, ...)."""

    events: list[str]
    totals: dict[str, int]
    functions: dict[str, dict[str, int]] = field(default_factory=dict)


def parse_callgrind(text: str) -> Profile:
    """Reads a callgrind output file (format version 1, positions `line`): the self cost of
    each function, summed over the files its code (inlined code included) came from. A cost
    line right after `calls=` is the call's inclusive cost, the callee's, and is not the
    caller's own."""
    events: list[str] = []
    totals: dict[str, int] = {}
    names: dict[str, str] = {}  # compressed function ids, `(n)`, to names
    functions: dict[str, dict[str, int]] = {}
    current: dict[str, int] | None = None
    after_calls = False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head = line[0]
        if head.isdigit() or head in "+-*":
            if after_calls:
                after_calls = False
                continue
            if current is None:
                raise ValueError(f"cost line before any fn=: {raw!r}")
            fields = line.split()[1:]  # the position (a line) first
            for ev, v in zip(events, fields):
                current[ev] = current.get(ev, 0) + int(v)
            continue
        key, _, value = line.partition("=")
        if key == "fn":
            name = _name(value, names)
            current = functions.setdefault(name, {})
        elif key == "cfn":
            _name(value, names)  # a callee's first mention names its id
        elif key == "calls":
            after_calls = True
        elif line.startswith("events:"):
            events = line.split(":", 1)[1].split()
        elif line.startswith("totals:") or line.startswith("summary:"):
            totals = dict(zip(events, (int(v) for v in line.split(":", 1)[1].split())))
        elif line.startswith("positions:") and line.split(":", 1)[1].split() != ["line"]:
            raise ValueError(f"positions other than 'line' are not read: {raw!r}")
    if not events:
        raise ValueError("no 'events:' line: not a callgrind output file")
    return Profile(events, totals, functions)


def _name(value: str, names: dict[str, str]) -> str:
    """`(n) name` defines id n, `(n)` refers to it, a bare name is itself."""
    value = value.strip()
    if value.startswith("("):
        ident, _, name = value.partition(")")
        ident += ")"
        name = name.strip()
        if name:
            names[ident] = name
            return name
        if ident not in names:
            raise ValueError(f"function id {ident} used before it was named")
        return names[ident]
    return value


# --------------------------------------------------------------------------- this machine


def cache_geometry() -> dict[str, tuple[int, int, int]]:
    """valgrind's I1, D1 and LL (here: L2) as (bytes, ways, line) from /sys, for CPU 0."""
    out: dict[str, tuple[int, int, int]] = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            level = int((idx / "level").read_text())
            kind = (idx / "type").read_text().strip()
            size = _bytes((idx / "size").read_text().strip())
            ways = int((idx / "ways_of_associativity").read_text())
            line = int((idx / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        key = {(1, "Data"): "D1", (1, "Instruction"): "I1", (2, "Unified"): "LL"}.get((level, kind))
        if key:
            out[key] = (size, ways, line)
    return out


def _bytes(s: str) -> int:
    mult = {"K": 1024, "M": 1024**2, "G": 1024**3}
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


# --------------------------------------------------------------------------- one run


def profile_one(exe: Path, toml_text: str, caches: dict[str, tuple[int, int, int]], work: Path) -> dict[str, Any]:
    scenario = work / "scenario.toml"
    scenario.write_text(toml_text)
    run = [str(exe), str(scenario), "--slice", SLICE]
    alone = subprocess.run(run, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if alone.returncode == 2 and 'unexpected argument "--slice"' in alone.stderr:
        raise SystemExit(
            f"error: {exe} has no --slice (it was built before it existed): its loop's slices would follow the wall clock"
        )
    if alone.returncode != 0:
        raise SystemExit(f"error: ecnlab-run failed (exit {alone.returncode}): {alone.stderr.strip()[-2000:]}")
    native = json.loads(alone.stdout)
    out = work / "callgrind.out"
    # Without the address space's randomisation: where memory lies moves the allocator's and
    # the copies' paths by a few instructions from run to run.
    cmd = ["setarch", platform.machine(), "--addr-no-randomize"]
    cmd += ["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--toggle-collect={LOOP_FUNCTION}", f"--callgrind-out-file={out}"]
    cmd += [f"--{k}={s},{w},{ln}" for k, (s, w, ln) in sorted(caches.items())]
    t0 = time.monotonic()
    proc = subprocess.run(cmd + run, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"error: valgrind failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}")
    counted = json.loads(proc.stdout)["events"]
    if counted != native["events"]:
        raise SystemExit(f"error: the run under valgrind executed {counted} events, on its own {native['events']}")
    prof = parse_callgrind(out.read_text())
    if prof.totals.get("Ir", 0) == 0:
        raise SystemExit(f"error: nothing was counted inside {LOOP_FUNCTION}: is the binary built with its symbols?")
    n = native["events"]

    def per_event(c: dict[str, int]) -> dict[str, float]:
        return {
            "instructions": c.get("Ir", 0) / n,
            "l1d_misses": (c.get("D1mr", 0) + c.get("D1mw", 0)) / n,
            "l2_misses": (c.get("DLmr", 0) + c.get("DLmw", 0)) / n,
        }

    funcs = sorted(prof.functions.items(), key=lambda kv: -kv[1].get("Ir", 0))
    return {
        "events": n,
        "loop_cpu_s": native["cpu_s"],
        "ns_per_event": native["cpu_s"] * 1e9 / n if native.get("cpu_s") else None,
        "valgrind_s": round(took, 1),
        "totals": prof.totals,
        "per_event": per_event(prof.totals),
        "functions": [
            {"function": name, **per_event(c), "share": c.get("Ir", 0) / prof.totals["Ir"]}
            for name, c in funcs if c.get("Ir", 0) > 0
        ],
    }


# --------------------------------------------------------------------------- the report


def _short(fn: str) -> str:
    """A function's name without the crate's own name, which every other one has too."""
    return fn.replace("ecnlab::", "")


def render(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    caches = ", ".join(f"{k} {s // 1024} KiB {w}-way" for k, (s, w, _) in sorted(m["caches"].items()))
    lines = [
        f"# Where the time goes — {doc['date']} on {m['host']}",
        "",
        f"Written by `bench/profile.py` (see its docstring). {m['cpu']}; the caches modelled: {caches} "
        f"({_lines(m['caches'])}; LL is the L2). ecnlab {doc['commit']} ({doc['build']})"
        + (f", beside {doc['before']['commit']} ({doc['before']['build']})" if doc.get("before") else "")
        + ".",
        "",
        "Counted by valgrind's callgrind inside the simulation loop only, per event of the loop "
        "(the events of events/s), the loop run in slices of "
        f"{doc['slice']} of simulated time (`ecnlab-run --slice`), without address-space randomisation: one build "
        "counts the same instructions on every run of a scenario to within a millionth, and misses that move by up "
        "to about a tenth of a per cent. The L1 and L2 misses are those of a model of this machine's caches without "
        "a prefetcher: where the data comes from, not how long the processor waits for it. "
        "ns/event is one run of the loop on its own (CPU time), not a count.",
        "",
        "| run | simulated | events | instructions / event | L1d misses / event | L2 misses / event | ns / event (one run) |"
        + (" instructions: after / before | L1d misses: after / before | L2 misses: after / before |" if doc.get("before") else ""),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: | ---: | ---: |" if doc.get("before") else ""),
    ]
    for r in doc["runs"]:
        pe = r["after"]["per_event"]
        row = (
            f"| {r['name']} | {r['simulated']} | {r['after']['events']} | {pe['instructions']:.0f} | "
            f"{pe['l1d_misses']:.2f} | {pe['l2_misses']:.2f} | {_ns(r['after']['ns_per_event'])} |"
        )
        if r.get("before"):
            b = r["before"]["per_event"]
            row += "".join(f" {_ratio(pe[k], b[k])} |" for k in ("instructions", "l1d_misses", "l2_misses"))
        lines.append(row)
    differ = [r for r in doc["runs"] if r.get("before") and r["before"]["events"] != r["after"]["events"]]
    if differ:
        lines += ["", "The two builds ran different events (so they did not simulate the same thing): " + "; ".join(
            f"{r['name']} {r['before']['events']} before, {r['after']['events']} after" for r in differ
        ) + "."]
    for r in doc["runs"]:
        lines += ["", f"## {r['name']}: {r['what']}", ""]
        if r.get("source"):
            lines += [r["source"], ""]
        lines += [
            "| function (its own code, inlined code included) | share of instructions | instructions / event "
            "| L1d misses / event | L2 misses / event |",
            "| --- | ---: | ---: | ---: | ---: |",
        ]
        for f in r["after"]["functions"][:TOP]:
            lines.append(
                f"| `{_short(f['function'])}` | {f['share']:.1%} | {f['instructions']:.1f} "
                f"| {f['l1d_misses']:.2f} | {f['l2_misses']:.3f} |"
            )
        rest = r["after"]["functions"][TOP:]
        if rest:
            share = sum(f["share"] for f in rest)
            total = {k: sum(f[k] for f in rest) for k in ("instructions", "l1d_misses", "l2_misses")}
            lines.append(
                f"| {len(rest)} other functions | {share:.1%} | {total['instructions']:.1f} "
                f"| {total['l1d_misses']:.2f} | {total['l2_misses']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def _lines(caches: dict[str, Any]) -> str:
    sizes = sorted({ln for (_, _, ln) in caches.values()})
    return " and ".join(f"{b}-byte" for b in sizes) + " lines"


def _ns(v: float | None) -> str:
    return "–" if v is None else f"{v:.0f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "–"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", help="comma-separated names (default: every run; --list names them)")
    ap.add_argument("--before", metavar="REV|BIN", help="also profile this git revision (built) or ecnlab-run binary")
    ap.add_argument("--ecnlab-bin", metavar="BIN", help="profile this ecnlab-run binary instead of building the checkout")
    ap.add_argument(
        "--out", type=Path, default=RESULTS / "profile", help="writes OUT.md and OUT.json (default: bench/results/profile)"
    )
    ap.add_argument("--list", action="store_true", help="name the runs and exit")
    args = ap.parse_args(argv)
    if args.list:
        for r in RUNS:
            print(f"{r.name:22s} {r.what}" + (f" (first {r.cut_s:g} s)" if r.cut_s else ""))
        return 0
    names = [s.strip() for s in args.runs.split(",")] if args.runs else [r.name for r in RUNS]
    unknown = [s for s in names if s not in BY_NAME]
    if unknown:
        print(f"error: --runs: unknown run {', '.join(map(repr, unknown))} (known: {', '.join(BY_NAME)})", file=sys.stderr)
        return 2
    needed = (
        ("valgrind", "it counts the instructions and models the caches"),
        ("setarch", "it turns the address space's randomisation off"),
    )
    for tool, why in needed:
        if shutil.which(tool) is None:
            print(f"error: {tool} is not installed ({why})", file=sys.stderr)
            return 2
    caches = cache_geometry()
    if set(caches) != {"I1", "D1", "LL"}:
        print(f"error: cannot read this machine's L1 and L2 caches from /sys (found {sorted(caches)})", file=sys.stderr)
        return 2
    bench = _load_bench()
    try:
        return _profile(args, names, caches, bench)
    except bench.BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def _profile(args: argparse.Namespace, names: list[str], caches: dict[str, tuple[int, int, int]], bench) -> int:
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    before_exe = None
    before_label = None
    if args.before:
        try:
            before_label, before_exe = bench.resolve_before(REPO, args.before)
        except ValueError as e:
            print(f"error: --before: {e}", file=sys.stderr)
            return 2
        if before_exe is None:
            before_exe = bench.build_before(REPO, before_label, log)
            before_label = before_label[:7]
    if args.ecnlab_bin:
        exe = Path(args.ecnlab_bin).resolve()
        if not (exe.is_file() and os.access(exe, os.X_OK)):
            print(f"error: --ecnlab-bin: {args.ecnlab_bin} is not an executable file", file=sys.stderr)
            return 2
    else:
        exe = bench.build_ecnlab(REPO, log)
    doc: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": bench._git_commit(REPO),
        "build": bench.build_kind(exe),
        "machine": {"host": platform.node() or "unknown", "cpu": bench._cpu_model(), "caches": caches},
        "loop_function": LOOP_FUNCTION,
        "slice": SLICE,
        "runs": [],
    }
    if before_exe is not None:
        doc["before"] = {"commit": before_label, "build": bench.build_kind(before_exe)}
    for name in names:
        r = BY_NAME[name]
        text, full = scenario_text(r, bench)
        entry: dict[str, Any] = {"name": r.name, "what": r.what, "simulated": _duration(text)}
        if r.experiment:
            entry["source"] = f"The full form's run `{r.run}` of `{r.experiment}` (default reading, first seed)" + (
                f": its first {r.cut_s:g} s of {full}." if r.cut_s else f", whole ({full})."
            )
        for side, binary in (("after", exe), ("before", before_exe)):
            if binary is None:
                continue
            log(f"{r.name}: {side} ({binary})")
            with tempfile.TemporaryDirectory(prefix="ecnlab-profile-") as tmp:
                entry[side] = profile_one(binary, text, caches, Path(tmp))
        doc["runs"].append(entry)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    md = render(doc)
    for path, content in ((args.out.with_suffix(".json"), json.dumps(doc, indent=1) + "\n"), (args.out.with_suffix(".md"), md)):
        part = path.with_name(f"{path.name}.part-{os.getpid()}")
        part.write_text(content)
        os.replace(part, path)
    print(md)
    return 0


def _duration(toml_text: str) -> str:
    for line in toml_text.splitlines():
        if line.startswith("duration"):
            return line.split("=", 1)[1].strip().strip('"')
    return "?"


if __name__ == "__main__":
    sys.exit(main())

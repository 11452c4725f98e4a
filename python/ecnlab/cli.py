"""The ``ecnlab`` command.

Exit codes: 0 success; 2 invalid input (a scenario, path, option or experiment name that
cannot work: the message on stderr names it); 1 anything else (an interrupted run, an I/O
failure, an internal error). A user error never prints a Python traceback;
``ECNLAB_DEBUG=1`` prints one for any error.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
import traceback
from pathlib import Path
from typing import Any, Sequence

from .errors import EmulationError, ExperimentError, InternalError, OutputError, ScenarioError

EXIT_OK = 0
EXIT_FAILURE = 1
# Stopped by a signal: 128 + its number, as a shell reports it (130 for Ctrl-C), so a script
# running ecnlab tells an interruption from a failure.
EXIT_SIGNAL_BASE = 128
EXIT_INVALID = 2


class _UsageError(Exception):
    pass


def _nonneg_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer up to 2^63 − 1, got {text!r}")
    return v


#: Seeds are 64-bit in the core, and written back into the scenario as TOML, whose integers end at 2^63 − 1.
MAX_SEED = 2**63 - 1


def _add_skip_identical(parser: argparse.ArgumentParser, written: str) -> None:
    """``--no-skip-identical``, as `reproduce` and `sweep` both take it (``written``: how a
    skipped run is written and says so)."""
    parser.add_argument(
        "--no-skip-identical",
        action="store_true",
        help="simulate every run, even one that a finished run of the same scenario under other queue limits "
        "proves identical (its ports never reached nor read the limits that differ); by default such runs "
        f"run in increasing order of their limits and such a run is {written}",
    )


def _pos_int(text: str) -> int:
    v = _nonneg_int(text)
    if v == 0:
        raise argparse.ArgumentTypeError("expected a positive integer, got 0")
    return v


#: Seeds per configuration of ``reproduce``: a paper's claims are decided on 5 to 10.
MAX_SEEDS_PER_CONFIG = 1000


def _seeds(text: str) -> int:
    v = _pos_int(text)
    if v > MAX_SEEDS_PER_CONFIG:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_SEEDS_PER_CONFIG} seeds per configuration (the experiments decide their claims on 5 to 10; "
            f"{v} would be {v} runs of every configuration), got {text!r}"
        )
    return v


def _show_progress(quiet: bool) -> bool:
    return not quiet and sys.stderr.isatty()


# --------------------------------------------------------------------------- run


def _warn_and_report(res: Any, args: argparse.Namespace) -> None:
    """After a run directory is written: its warnings on stderr, and its report if asked."""
    for w in res.meta.get("warnings") or []:
        print(f"warning: {w}", file=sys.stderr)
    if args.report:
        from .report import write_run_report

        write_run_report(args.out)


def cmd_run(args: argparse.Namespace) -> int:
    from . import results
    from .fsutil import check_replaceable
    from .progress import ProgressBar

    # Everything that can be checked is checked before anything is written.
    results.validate(Path(args.scenario))
    check_replaceable(args.out)
    bar = ProgressBar() if _show_progress(args.quiet) else None
    try:
        # The warnings are printed once, after the run directory is written.
        res = results.write_run_dir(Path(args.scenario), args.out, seed=args.seed, progress=bar, warn=False)
    finally:
        if bar:
            bar.close()
    _warn_and_report(res, args)
    if not args.quiet:
        m = res.meta
        wall = m["wall_s"] or 1e-9
        print(
            f"wrote {args.out}: {res.flows.height} flows, {res.ports.height} ports, "
            f"{res.timeseries.height} samples; {m['events']} events in {m['wall_s']:.2f} s "
            f"({m['events'] / wall / 1e6:.2f} M events/s)"
        )
    return EXIT_OK


def cmd_emulate(args: argparse.Namespace) -> int:
    from . import results
    from .emulate import emulate, netns, plan
    from .fsutil import atomic_dir, check_replaceable

    if args.cleanup:
        netns.check_host()
        gone = netns.cleanup_stale()
        if not args.quiet:
            print(f"removed {len(gone)} thing(s) killed emulations left (namespaces, traffic agents, temporary result directories, BPF controllers)" + (f": {', '.join(gone)}" if gone else ""))
        return EXIT_OK
    if not args.scenario or not args.out:
        raise _UsageError("emulate needs SCENARIO and --out DIR (or --cleanup)")
    plan(Path(args.scenario), args.seed, force=args.force)
    check_replaceable(args.out)
    netns.check_host()
    show = _show_progress(args.quiet)
    if args.compare_sim:
        from .emulate.compare import compare

        compare(Path(args.scenario), args.out, seed=args.seed, force=args.force)
        if not args.quiet:
            sys.stdout.write((Path(args.out) / "compare.md").read_text(encoding="utf-8"))
        return EXIT_OK

    def progress(elapsed: float) -> None:
        if show:
            print(f"\r{elapsed:6.1f} s", end="", file=sys.stderr, flush=True)

    with atomic_dir(args.out) as tmp:
        res = emulate(Path(args.scenario), seed=args.seed, pcap_dir=tmp / "pcap", progress=progress, force=args.force)
        if show:
            print(file=sys.stderr)
        results._write_into(res, tmp, {"mode": "emulation", "emulation": {k: v for k, v in res.meta.items() if k != "warnings"}})
    _warn_and_report(res, args)
    if not args.quiet:
        m = res.meta
        print(
            f"wrote {args.out}: {res.flows.height} flows on Linux TCP, {res.ports.height} ports; "
            f"{m['rx_pkts']} packets forwarded in {m['wall_s']:.1f} s, forwarder CPU {m['forwarder_cpu_s']:.1f} s, "
            f"events late by {(m['lateness_p99_s'] or 0) * 1e6:.0f} µs at the 99th percentile"
        )
    return EXIT_OK


def _pos_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not (v > 0 and v < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def cmd_mobility_trace(args: argparse.Namespace) -> int:
    from .wireless import MAX_TRACE_LINES, MobilityModel, mahimahi_lines, max_lines, write_mahimahi

    out = Path(args.out)
    if out.is_dir():
        raise _UsageError(f"{out}: is a directory; give the trace file's path")
    if not out.parent.is_dir():
        raise _UsageError(f"{out.parent}: no such directory")
    if args.mtu < 64:
        raise _UsageError(f"--mtu: at least 64 bytes, got {args.mtu}")
    model = MobilityModel(
        clients=args.clients,
        side_m=args.side,
        speed_min=args.speed_min,
        speed_max=args.speed_max,
        fading_db=args.fading_db,
        efficiency=args.efficiency,
        step_s=args.step,
    )
    if not 0 < model.efficiency <= 1:
        raise _UsageError(f"--efficiency: must be in (0, 1], got {model.efficiency}")
    if model.speed_min > model.speed_max:
        raise _UsageError(f"--speed-min: {model.speed_min} is above --speed-max ({model.speed_max})")
    if not 0 <= model.fading_db < float("inf"):
        raise _UsageError(f"--fading-db: must be a non-negative number of dB, got {model.fading_db}")
    step_ms = model.step_s * 1e3
    if abs(step_ms - round(step_ms)) > 1e-9 or model.step_s > args.duration:
        raise _UsageError(f"--step: a whole number of milliseconds, at most --duration, got {model.step_s:g} s")
    steps = args.duration / model.step_s
    if steps > MAX_TRACE_LINES:
        raise _UsageError(f"--duration: {args.duration:g} s is {steps:.3g} steps of --step {model.step_s:g} s, beyond {MAX_TRACE_LINES:.0e}")
    most = max_lines(model, args.duration, args.mtu)
    if most > MAX_TRACE_LINES:
        raise _UsageError(
            f"--duration: {args.duration:g} s could give up to {most:.3g} delivery opportunities of {args.mtu} bytes "
            f"(at the fastest MCS), beyond the {MAX_TRACE_LINES:.0e} a trace file holds here; the trace repeats, so "
            f"a shorter one (at most {args.duration * MAX_TRACE_LINES / most:.0f} s) serves a longer run"
        )
    rates = model.rates_bps(args.duration, args.seed)
    lines = mahimahi_lines(rates, model.step_s, args.mtu)
    write_mahimahi(out, lines)
    if not args.quiet:
        n = len(lines)
        mean = sum(rates) / len(rates)
        print(
            f"wrote {out}: {n} delivery opportunities of {args.mtu} bytes in {args.duration:g} s "
            f"(then repeating); capacity mean {mean / 1e6:.1f} Mb/s, per {model.step_s * 1e3:g} ms "
            f"step {min(rates) / 1e6:.1f}–{max(rates) / 1e6:.1f} Mb/s"
        )
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from . import results

    toml = results.validate(Path(args.scenario))
    if args.print:
        sys.stdout.write(toml)
    elif not args.quiet:
        print(f"{args.scenario}: valid")
    return EXIT_OK


# ------------------------------------------------------------------------ report


def cmd_report(args: argparse.Namespace) -> int:
    from .report import write_run_report

    d = Path(args.dir)
    try:
        if (d / "sweep.json").is_file():
            from .sweeps.report import write_sweep_report

            path = write_sweep_report(d, metrics=args.metric, port=args.port)
        elif not (d / "run.json").is_file():
            raise OutputError(f"{d} is not a run directory or a sweep store (it has no run.json or sweep.json); make one with `ecnlab run` or `ecnlab sweep`")
        else:
            if args.metric or args.port:
                raise _UsageError("--metric and --port are for sweep stores; a run's report shows every metric")
            path = write_run_report(d)
    except PermissionError as e:
        # The report is written into DIR: a store or run one may read but not write.
        raise OutputError(f"cannot write the report in {d}: {e.strerror or e} ({e.filename or d})") from None
    if not args.quiet:
        print(f"wrote {path}")
    return EXIT_OK


# ------------------------------------------------------------------------- sweep


#: Runs of a sweep whose warnings are printed (the rest are counted).
SWEEP_WARNINGS_SHOWN = 5


def cmd_sweep(args: argparse.Namespace) -> int:
    from . import sweeps

    try:
        summary = sweeps.run_sweep(
            Path(args.sweep),
            args.out,
            scheduler=args.scheduler,
            workers=args.workers,
            threads=args.threads,
            retry="failed" if args.retry == "failed" else "all",
            progress=_show_progress(args.quiet),
            log=None if args.quiet else sys.stdout,
            skip_identical=not args.no_skip_identical,
        )
    except KeyboardInterrupt as e:
        done = len([k for k, v in sweeps.Store(args.out).statuses().items() if v == "ok"])
        why = f"stopped by {e}" if isinstance(e, _Terminated) else "interrupted"
        print(f"error: {why}; {done} finished runs are in {args.out}; the same command resumes", file=sys.stderr)
        return _interrupted(e)
    for point, err in summary.failures:
        print(f"failed: {point}: {err}", file=sys.stderr)
    # Every warning is in the runs table's `warnings` column; the terminal gets a few.
    for point, ws in summary.warned[:SWEEP_WARNINGS_SHOWN]:
        for w in ws:
            print(f"warning: {point}: {w}", file=sys.stderr)
    if len(summary.warned) > SWEEP_WARNINGS_SHOWN:
        print(
            f"warning: {len(summary.warned) - SWEEP_WARNINGS_SHOWN} more runs warned; "
            f"the `warnings` column of the runs table (`ecnlab.read_sweep(out, \"runs\")`) has them all",
            file=sys.stderr,
        )
    if not args.quiet:
        print(
            f"{args.out}: {summary.total} runs, {summary.skipped} "
            + ("were not retried (done, or never run)" if args.retry else "were already done")
            + ", "
            f"{summary.ok} ran now"
            + (f" ({len(summary.damaged)} of them again: they were damaged in the store)" if summary.damaged else "")
            + f", {summary.failed} failed"
            + f"; {summary.simulated} simulated, {len(summary.identical)} proven identical"
            + (" (skipping proven-identical runs is off)" if args.no_skip_identical else "")
            + ("; `--retry failed` runs the failed ones again" if summary.failed else "")
        )
    return EXIT_FAILURE if summary.failed else EXIT_OK


# --------------------------------------------------------------------- reproduce


def cmd_reproduce(args: argparse.Namespace) -> int:
    from . import experiments

    if args.list:
        rows = experiments.describe_all()
        width = max((len(n) for n, _ in rows), default=10)
        for name, title in rows:
            print(f"{name:<{width}}  {title}")
        for mod, err in experiments.load_failures():
            print(f"warning: experiments module {mod} failed to load: {err}", file=sys.stderr)
        return EXIT_OK
    if not args.name:
        raise _UsageError("reproduce needs an experiment name (or --list)")
    if not args.out:
        raise _UsageError("reproduce needs --out DIR")
    if args.reuse_any_build and not args.reuse:
        raise _UsageError("--reuse-any-build needs --reuse DIR")
    try:
        summary = experiments.reproduce(
            args.name,
            out=args.out,
            quick=args.quick,
            seeds=args.seeds,
            jobs=args.jobs,
            progress=_show_progress(args.quiet),
            log=None if args.quiet else sys.stdout,
            readings=args.readings,
            scheduler=args.scheduler,
            threads=args.threads,
            reuse=args.reuse,
            reuse_any_build=args.reuse_any_build,
            skip_identical=not args.no_skip_identical,
        )
    except KeyboardInterrupt as e:
        out = Path(args.out).absolute()
        kept = out.parent / f".{out.name}.resume"
        n = len(list(kept.glob("*/run.json"))) if kept.is_dir() else 0
        why = f"stopped by {e}" if isinstance(e, _Terminated) else "interrupted"
        print(
            f"error: {why}; {args.out} was not written"
            + (f"; {n} finished runs are kept in {kept} and the same command resumes" if n else ""),
            file=sys.stderr,
        )
        return _interrupted(e)
    if not args.quiet:
        counts = ", ".join(f"{n} {k}" for k, n in summary["verdicts"].items())
        rec = summary.get("verdicts_vs_reconstructed") or {}
        ours = summary.get("verdicts_our_statements") or {}
        apart = f"; against reconstructed rivals: {', '.join(f'{n} {k}' for k, n in rec.items())}" if sum(rec.values()) else ""
        fixed = summary.get("verdicts_fixed_by_mechanism") or {}
        if sum(fixed.values()):
            apart += f"; fixed by the mechanism (what the runs say): {', '.join(f'{n} {k}' for k, n in fixed.items())}"
        apart += f"; statements ours: {', '.join(f'{n} {k}' for k, n in ours.items())}" if sum(ours.values()) else ""
        stalls = len(summary["stalls"])
        print(f"wrote {args.out}/report.html and summary.json; claims (default reading): {counts}{apart}; stalled runs: {stalls}")
        missing = summary.get("provenance_missing") or {}
        if missing:
            print(f"{len(missing)} experiment(s) with parameters without a source (report: 'Parameters without a source')")
        # The counts alone would send a reader to the report for what matters most.
        # The same claims the count counts: a family once, by its verdict as one claim (named
        # by the family), a claim repeated on the same per-seed values once; each claim named by
        # its metric (two claims can share a text: "Zhuge above P-Scheduler" of the delay and
        # of the queue).
        from .experiments import headline_verdict

        for c in summary.get("comparisons") or []:
            if headline_verdict(c) != "contradicted":
                continue
            metric, text = c.get("metric"), c.get("claim")
            what = f"{metric} ({text})" if metric and text else (metric or text or "a claim")
            if c.get("family") and c.get("family_whole"):
                what = f"family '{c['family']}' ({c['family_whole']['reason']})"
            rival = " [against a rival we reconstructed]" if c.get("rival_reconstructed") else ""
            rival += " [statement ours]" if c.get("our_statement") and not c.get("rival_reconstructed") else ""
            print(f"contradicted: {c.get('experiment', '')}: {what}{rival}")
        if len(summary["readings"]) > 1:
            print(f"{len(summary['depends_on_reading'])} claim(s) change verdict with the reading")
    return EXIT_OK


# ------------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(
        prog="ecnlab",
        description="Packet-level laboratory for network-assisted congestion control.",
        epilog="Exit codes: 0 success, 2 invalid input, 1 anything else.",
    )
    p.add_argument("--version", action="version", version=f"ecnlab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser(
        "run",
        help="run a scenario and write its result tables",
        description="Run a scenario (TOML or JSON) and write DIR/flows.parquet, "
        "DIR/ports.parquet, DIR/timeseries.parquet (long: time_s, kind, entity, value), "
        "DIR/pcap/*.pcap for captured ports, and DIR/run.json. DIR appears complete or not "
        "at all; an earlier result in DIR is replaced.",
    )
    r.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    r.add_argument("--out", "-o", required=True, metavar="DIR", help="result directory")
    r.add_argument("--seed", type=_nonneg_int, metavar="N", help="override the scenario's seed")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress bar, no summary line")
    r.add_argument("--report", action="store_true", help="also write DIR/report.html")
    r.set_defaults(func=cmd_run)

    e = sub.add_parser(
        "emulate",
        help="run a scenario's network on real Linux TCP (root)",
        description="Build one network namespace per host, forward their packets through the "
        "scenario's routers (the simulator's ports, queues, markers and links on the wall "
        "clock) and run the flows as real Linux TCP (reno, cubic, bbr). Writes DIR in the "
        "layout of `ecnlab run`. Needs root; every namespace it makes is removed at the end.",
    )
    e.add_argument("scenario", nargs="?", metavar="SCENARIO", help="scenario file (.toml or .json)")
    e.add_argument("--out", "-o", metavar="DIR", help="result directory")
    e.add_argument("--seed", type=_nonneg_int, metavar="N", help="override the scenario's seed")
    e.add_argument("--quiet", "-q", action="store_true", help="no progress, no summary line")
    e.add_argument("--report", action="store_true", help="also write DIR/report.html")
    e.add_argument("--compare-sim", action="store_true", help="also simulate the scenario and write DIR/sim, DIR/emulation and DIR/compare.md side by side")
    e.add_argument("--force", action="store_true", help="run even where the flows could ask for more than the forwarder holds on this machine")
    e.add_argument("--cleanup", action="store_true", help="remove what ecnlab emulations whose process is gone left (namespaces, traffic agents, temporary result directories, registered BPF controllers), and exit")
    e.set_defaults(func=cmd_emulate)

    v = sub.add_parser(
        "validate",
        help="check a scenario without running it",
        description="Check a scenario; with --print, write it back as normalised TOML "
        "(every default filled in).",
    )
    v.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml or .json)")
    v.add_argument("--print", action="store_true", help="print the normalised scenario")
    v.add_argument("--quiet", "-q", action="store_true")
    v.set_defaults(func=cmd_validate)

    rep = sub.add_parser(
        "report",
        help="write an HTML report of a run directory or a sweep store",
        description="Write DIR/report.html (self-contained: figures embedded, opens offline) "
        "and its figures as DIR/figures/*.png: queue length per sampled port, cwnd and "
        "throughput per flow (when sampled), the FCT distribution (when flows finished), and "
        "the port and flow tables. Of a sweep store: each metric's mean over seeds with its "
        "spread, as lines over the axes and a heatmap of two, and a table of every combination.",
    )
    rep.add_argument("dir", metavar="DIR", help="a directory written by `ecnlab run` or a store written by `ecnlab sweep`")
    rep.add_argument(
        "--metric",
        action="append",
        metavar="TABLE.COLUMN[:HOW]",
        help="of a sweep: a metric to plot over the axes (repeatable), e.g. ports.dropped_pkts or "
        "flows.goodput_bps:sum (a run's flows reduced by mean, sum, min, max or p95)",
    )
    rep.add_argument("--port", metavar="NAME", help="of a sweep: the port of the port metrics (default: the busiest)")
    rep.add_argument("--quiet", "-q", action="store_true")
    rep.set_defaults(func=cmd_report)

    sw = sub.add_parser(
        "sweep",
        help="run a sweep of a scenario over axes, on Dask, into one Parquet store",
        description="Run every point of SWEEP (a base scenario and axes over its key paths: "
        "grid, zip, variants, random samples, seeds) on a local Dask cluster (one worker "
        "process per core) or an existing one (--scheduler), into the store DIR: "
        "DIR/{runs,flows,ports,timeseries}/<run>.parquet, axis values as columns. Every "
        "scenario is validated first. Runs already in DIR are skipped, failed ones run "
        "again; Ctrl-C leaves a store the same command resumes. Points that differ only in "
        "queue limits run in increasing order of them, and a point that a finished one proves "
        "identical (its ports never needed the limits that differ, nor read them) is written "
        "from that run instead of simulated (--no-skip-identical simulates every point).",
    )
    sw.add_argument("sweep", metavar="SWEEP", help="sweep file (.toml)")
    sw.add_argument("--out", "-o", required=True, metavar="DIR", help="result store")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (tcp://host:8786)")
    sw.add_argument("--workers", type=_pos_int, metavar="N", help="local workers (default: number of cores)")
    sw.add_argument("--threads", action="store_true", help="local workers as threads of one process, not processes")
    sw.add_argument("--retry", choices=["failed"], help="run only the runs that failed before")
    _add_skip_identical(sw, "written from that run's tables and its row in DIR/runs says so (identical_to, identical_reason)")
    sw.add_argument("--quiet", "-q", action="store_true")
    sw.set_defaults(func=cmd_sweep)

    rp = sub.add_parser(
        "reproduce",
        help="reproduce a paper's experiments",
        description="Run a registered experiment (e.g. core.mdl) or all experiments of a "
        "paper (e.g. core) and write DIR/report.html, DIR/summary.json and every "
        "underlying run under DIR/runs/<run-name>/.",
    )
    rp.add_argument("name", nargs="?", metavar="NAME", help="experiment or paper name")
    rp.add_argument("--list", action="store_true", help="list the registered experiments")
    rp.add_argument("--quick", action="store_true", help="short runs, fewer seeds (seconds)")
    rp.add_argument("--out", "-o", metavar="DIR", help="output directory")
    rp.add_argument("--seeds", type=_seeds, metavar="N", help=f"number of seeds per configuration (at most {MAX_SEEDS_PER_CONFIG})")
    rp.add_argument(
        "--jobs", "-j", type=_pos_int, metavar="N", help="runs in parallel (default: number of cores)"
    )
    rp.add_argument("--scheduler", metavar="ADDRESS", help="run on a running Dask cluster (tcp://host:8786)")
    rp.add_argument("--threads", action="store_true", help="local workers as threads of one process, not processes")
    rp.add_argument(
        "--readings",
        metavar="WHICH",
        help="the paper's ambiguous readings to run: 'default' (the default), 'all' (every "
        "other value of each reading beside the default, one at a time) or axis=value[,axis=value…]",
    )
    rp.add_argument(
        "--reuse",
        metavar="DIR",
        help="an earlier reproduction whose runs are read instead of run when their scenario TOML is the "
        "same byte for byte and they were written by this build (judges them again with today's analysis)",
    )
    rp.add_argument(
        "--reuse-any-build",
        action="store_true",
        help="with --reuse: read every run from DIR whatever simulator build wrote them and run nothing (a run "
        "DIR lacks, or holds with another scenario, exits 2 naming it); summary.json names the builds",
    )
    _add_skip_identical(rp, "written from that run and its run.json says so")
    rp.add_argument("--quiet", "-q", action="store_true")
    rp.set_defaults(func=cmd_reproduce)

    mt = sub.add_parser(
        "mobility-trace",
        help="write a mahimahi capacity trace of clients moving around an access point",
        description="Generate the wireless hop's capacity for clients moving by random waypoint "
        "around an access point (log-distance path loss, a random loss per step, the 802.11ax "
        "MCS table, a MAC efficiency, the harmonic mean over clients: ecnlab.wireless) and "
        "write it as a mahimahi trace (one line per delivery opportunity of one MTU, in ms), "
        "for a link's `trace`. The same options and seed give the same file. This models the "
        "hop by its capacity, not a MAC/PHY.",
    )
    mt.add_argument("out", metavar="FILE", help="trace file to write (replaced if it exists)")
    mt.add_argument("--duration", type=_pos_float, default=60.0, metavar="S", help="seconds of trace (default 60)")
    mt.add_argument("--clients", type=_pos_int, default=2, metavar="N", help="moving clients sharing the medium (default 2)")
    mt.add_argument("--seed", type=_nonneg_int, default=1, metavar="N", help="random seed (default 1)")
    mt.add_argument("--side", type=_pos_float, default=10.0, metavar="M", help="side of the square around the AP, metres (default 10)")
    mt.add_argument("--speed-min", type=_pos_float, default=0.5, metavar="M/S", help="slowest walking speed (default 0.5)")
    mt.add_argument("--speed-max", type=_pos_float, default=1.5, metavar="M/S", help="fastest walking speed (default 1.5)")
    mt.add_argument("--fading-db", type=float, default=30.0, metavar="DB", help="random loss per step, uniform in [0, DB] (default 30)")
    mt.add_argument("--efficiency", type=_pos_float, default=0.6, metavar="F", help="MAC efficiency in (0, 1] (default 0.6)")
    mt.add_argument("--step", type=_pos_float, default=0.01, metavar="S", help="seconds per capacity step (default 0.01)")
    mt.add_argument("--mtu", type=_pos_int, default=1500, metavar="BYTES", help="bytes per delivery opportunity (default 1500)")
    mt.add_argument("--quiet", "-q", action="store_true", help="no summary line")
    mt.set_defaults(func=cmd_mobility_trace)

    from . import bench

    b = sub.add_parser(
        "bench",
        help="speed and memory beside ns-3 on the reference dumbbells",
        description="Run the benchmark scenarios of bench/scenarios/ with ecnlab-run and, when "
        "the ns3 wheel is installed, the same scenarios on ns-3 (bench/ns3/SCENARIOS.md), "
        "alternately; print and write bench/results/*.json and bench/results/latest.md with "
        "times, peak memory, the ratios and both simulators' key results. Needs a checkout of "
        "the repository (it builds ecnlab-run with cargo).",
    )
    bench.add_arguments(b)
    b.set_defaults(func=bench.run_from_args)
    return p


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled as Ctrl-C is: runs stop, nothing half-written stays."""


def _interrupted(e: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by Ctrl-C (SIGINT) or by a _Terminated signal."""
    if isinstance(e, _Terminated) and e.args:
        return EXIT_SIGNAL_BASE + signal.Signals[e.args[0]].value
    return EXIT_SIGNAL_BASE + signal.SIGINT.value


def _on_signal(signum: int, _frame: Any) -> None:
    raise _Terminated(signal.Signals(signum).name)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    debug = bool(os.environ.get("ECNLAB_DEBUG"))
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            # One ignored at start stays ignored, as Python leaves SIGINT and the shell any
            # (POSIX `trap`): `nohup` ignores SIGHUP so that a run outlives its terminal.
            if signal.getsignal(sig) != signal.SIG_IGN:
                previous[sig] = signal.signal(sig, _on_signal)
    try:
        return _dispatch(args, debug)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _message(e: Exception) -> str:
    """The error's text; a scenario error's key path quoted when it is not plain (a key of
    spaces or punctuation a scenario used)."""
    if isinstance(e, ScenarioError) and e.path and not re.fullmatch(r"[\w.\[\]*+{}-]+", e.path):
        return f"{e.path!r}: {e.message}"
    return str(e)


def _one_line(text: str) -> str:
    """A message as one line: a key may hold a newline or a control character (a scenario's
    own key echoed back), shown escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _dispatch(args: argparse.Namespace, debug: bool) -> int:
    try:
        return args.func(args)
    except (ScenarioError, OutputError, ExperimentError, _UsageError) as e:
        if debug:
            traceback.print_exc()
        print(f"error: {_one_line(_message(e))}", file=sys.stderr)
        return EXIT_INVALID
    except _Terminated as e:
        print(f"error: stopped by {e}; no results were written", file=sys.stderr)
        return _interrupted(e)
    except KeyboardInterrupt as e:
        print("error: interrupted; no results were written", file=sys.stderr)
        return _interrupted(e)
    except EmulationError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except InternalError as e:
        if debug:
            traceback.print_exc()
        print(f"error: internal error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except OSError as e:
        if debug:
            traceback.print_exc()
        print(f"error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as e:  # noqa: BLE001 - the last line of defence: a message, no traceback
        if debug:
            traceback.print_exc()
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Run the ns-3 reference scenarios and check that their results make sense.

    python3 bench/ns3/check.py                 red100 (ecn 0 and 1) and dt1g
    python3 bench/ns3/check.py --with-1000     also dt1g-1000 (several minutes)
    python3 bench/ns3/check.py --json DIR      also keep each run's JSON in DIR

Prints one summary per run and exits non-zero if a check fails. The checks are
sanity bounds (the bottleneck is busy, RED marks only with ECN, short flows finish,
no queue other than the bottleneck drops), not expected values.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_runner():
    # Load python/ecnlab/ns3.py by path, so this works without building ecnlab itself.
    path = HERE.parents[1] / "python" / "ecnlab" / "ns3.py"
    spec = importlib.util.spec_from_file_location("ecnlab_ns3_runner", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def summary(name: str, r: dict) -> str:
    b = r["bottleneck"]
    lines = [
        f"== {name}: wall {r['wall_seconds']:.2f} s (cpu {r.get('cpu_seconds', float('nan')):.2f} s, "
        f"setup {r['setup_seconds']:.2f} s), "
        f"{r['events']:,} events ({r['events_per_second'] / 1e6:.2f} M/s), "
        f"peak RSS {r['peak_rss_kb'] / 1024:.0f} MiB",
        f"   bottleneck: util {b['utilisation']:.3f} (after warmup "
        f"{b['utilisation_after_warmup']:.3f}), drops {b['dropped']} {b['dropped_by_reason']}, "
        f"marks {b['marked']}, mean queue {b['mean_queue_pkts']:.1f} pkts "
        f"(after warmup {b['mean_queue_pkts_after_warmup']:.1f}, max {b['max_queue_pkts']})",
    ]
    flows = r["flows"]
    shown = flows if len(flows) <= 12 else flows[:5] + flows[-3:]
    for f in shown:
        fct = f"{f['fct_s'] * 1e3:8.2f} ms" if f["fct_s"] is not None else "      --   "
        lines.append(
            f"   flow {f['id']:4d}: {f['bytes_received']:>11,} B  fct {fct}  "
            f"{f['goodput_bps'] / 1e6:8.3f} Mbps  retx {f['retransmissions']}"
        )
    if len(flows) > len(shown):
        tp = sorted(f["goodput_bps"] for f in flows)
        lines.append(
            f"   ({len(flows)} flows; throughput min {tp[0] / 1e6:.3f}, median "
            f"{tp[len(tp) // 2] / 1e6:.3f}, max {tp[-1] / 1e6:.3f} Mbps)"
        )
    return "\n".join(lines)


def check(name: str, r: dict, failures: list[str]) -> None:
    b = r["bottleneck"]

    def need(cond: bool, what: str) -> None:
        if not cond:
            failures.append(f"{name}: {what}")

    need(r["other_queue_drops"] == 0, "a queue other than the bottleneck dropped packets")
    need(b["received"] == b["enqueued"] + b["dropped"], "queue disc arrivals != enqueued + dropped")
    need(r["events"] > 0 and r["wall_seconds"] > 0, "no events or no wall time")
    if r["scenario"] == "red100":
        ecn = r["params"]["ecn"]
        need(b["red_forced_drops"] == 0, "forced drops with a 100-packet buffer")
        if ecn:
            need(b["marked"] > 0, "ECN run without marks")
        else:
            need(b["marked"] == 0, "marks without ECN")
        for f in r["flows"][2:]:
            need(f["fct_s"] is not None, f"short flow {f['id']} did not finish")
            if f["fct_s"] is not None:
                # at least handshake + one base RTT/2 (24 ms RTT), at most a few seconds
                need(0.036 <= f["fct_s"] < 3.0, f"short flow {f['id']} FCT {f['fct_s']}")
        need(b["utilisation_after_warmup"] > 0.5, "bottleneck mostly idle")
    else:
        need(b["marked"] == 0, "marks on a FIFO")
        need(b["utilisation_after_warmup"] > 0.95, "1 Gbps bottleneck not saturated")
        need(all(f["bytes_received"] > 0 for f in r["flows"]), "a flow received nothing")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--with-1000", action="store_true", help="also run dt1g-1000")
    ap.add_argument("--json", type=Path, help="keep each run's JSON in this folder")
    args = ap.parse_args()

    ns3 = load_runner()
    if not ns3.available():
        print("ns3 wheel not installed: pip install -r bench/ns3/requirements.txt", file=sys.stderr)
        return 2
    ns3.build()

    runs = [("red100-ecn0", "red100", {"ecn": 0}), ("red100-ecn1", "red100", {"ecn": 1}),
            ("dt1g", "dt1g", {})]
    if args.with_1000:
        runs.append(("dt1g-1000", "dt1g-1000", {}))

    failures: list[str] = []
    for name, scenario, params in runs:
        r = ns3.run(scenario, **params)
        print(summary(name, r), flush=True)
        check(name, r, failures)
        if args.json:
            args.json.mkdir(parents=True, exist_ok=True)
            (args.json / f"{name}.json").write_text(json.dumps(r, indent=1) + "\n")

    for f in failures:
        print("FAIL", f)
    print(f"{len(runs) - len({f.split(':')[0] for f in failures})} passed, "
          f"{len({f.split(':')[0] for f in failures})} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""How well the forwarder keeps time on this machine: ``python -m ecnlab.emulate.accuracy``.

One Linux CUBIC flow (MSS 1448) through a dumbbell whose bottleneck runs at each rate given
(default 10, 100, 300, 600 and 1000 Mb/s; access links 10× faster, 24 ms base RTT, a
2-BDP DropTail buffer), 8 s each. Prints a Markdown table: the goodput the receiving
application got against what the link can carry (rate × 1448/1500), the bottleneck's
utilisation as the forwarder's port counted it, drops at the port against the sender's
retransmissions and the packets the hosts' devices dropped before the forwarder read them, how late the forwarder ran its events (median, 99th percentile, maximum), its CPU time
per forwarded packet (the receiving hosts' TCP processing included: a TUN write delivers
the packet into the host's stack on the writer's CPU), and the smallest RTT the sender saw
(never below the 24 ms of propagation). Needs root.
"""

from __future__ import annotations

import argparse
import sys

from . import emulate

PAYLOAD = 1448 / 1500


def scenario(rate_mbps: float, duration_s: float) -> dict:
    bdp_pkts = rate_mbps * 1e6 * 0.024 / 8 / 1500
    return {
        "name": f"forwarder accuracy, {rate_mbps:g} Mb/s",
        "duration": f"{duration_s}s",
        "seed": 1,
        "topology": {
            "kind": "dumbbell",
            "left": 1,
            "right": 1,
            "access": {"rate": f"{rate_mbps * 10:g}Mbps", "delay": "1ms"},
            "bottleneck": {"rate": f"{rate_mbps:g}Mbps", "delay": "10ms"},
            "bottleneck_queue": {"kind": "droptail", "limit": max(50, int(2 * bdp_pkts))},
        },
        "flows": [{"name": "a", "src": "l0", "dst": "r0", "cc": "cubic", "ecn": "none", "tcp": {"mss": 1448}}],
        "measure": {"interval": "100ms", "sample_ports": ["rl->rr"]},
    }


def measure(rate_mbps: float, duration_s: float = 8.0) -> dict:
    r = emulate(scenario(rate_mbps, duration_s), force=True)
    f, p, m = r.flow("a"), r.port("rl->rr"), r.meta
    pkts = max(1, m["rx_pkts"])
    return {
        "rate_mbps": rate_mbps,
        "goodput_mbps": f["goodput_bps"] / 1e6,
        "of_capacity": f["goodput_bps"] / (rate_mbps * 1e6 * PAYLOAD),
        "utilization": p["utilization"],
        "drops": p["dropped_pkts"],
        "retransmissions": f["retransmissions"],
        "device_drops": m["device_drops"],
        "late_p50_us": (m["lateness_p50_s"] or 0) * 1e6,
        "late_p99_us": (m["lateness_p99_s"] or 0) * 1e6,
        "late_max_us": m["lateness_max_s"] * 1e6,
        "cpu_us_per_pkt": m["forwarder_cpu_s"] / pkts * 1e6,
        "rtt_min_ms": f["rtt_min_s"] * 1e3 if f["rtt_min_s"] else float("nan"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ecnlab.emulate.accuracy", description=__doc__.split("\n\n")[0])
    ap.add_argument("rates", nargs="*", type=float, default=[10, 100, 300, 600, 1000], help="bottleneck rates in Mb/s")
    ap.add_argument("--duration", type=float, default=8.0, help="seconds per rate")
    a = ap.parse_args(argv)
    print("| rate Mb/s | goodput Mb/s | of capacity | utilisation | drops | device drops | retransmissions | late p50 µs | late p99 µs | late max µs | CPU µs/pkt | min RTT ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for rate in a.rates:
        x = measure(rate, a.duration)
        print(
            f"| {rate:g} | {x['goodput_mbps']:.1f} | {x['of_capacity']:.3f} | {x['utilization']:.3f} | {x['drops']} | {x['device_drops']} | {x['retransmissions']} | "
            f"{x['late_p50_us']:.1f} | {x['late_p99_us']:.1f} | {x['late_max_us']:.0f} | {x['cpu_us_per_pkt']:.1f} | {x['rtt_min_ms']:.2f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

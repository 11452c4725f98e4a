#!/usr/bin/env python3
"""Writes the benchmark scenarios (TOML) that mirror bench/ns3/SCENARIOS.md.

Run from anywhere: python3 bench/scenarios/generate.py
Every value below is the one SCENARIOS.md defines for the ns-3 program; ecnlab-only
additions (the 10,000-flow variant) say so.
"""

from pathlib import Path

HERE = Path(__file__).resolve().parent

# TCP as SCENARIOS.md §3: NewReno growth as ns-3 does it (+1 SMSS per ACK in slow start,
# +SMSS²/cwnd per ACK in congestion avoidance), SACK on, timestamps off, min RTO 200 ms
# floored as RFC 6298 (as ns-3), no quick ACKs, a fixed receive window.
TCP = """[tcp]
mss = 1000
initial_window = 10
min_rto_s = 0.2
rto_floor = "rfc6298"
initial_rto_s = 1.0
clock_granularity_s = 0.001
delayed_ack = true
delack_segments = 2
delack_timeout_s = 0.2
quickack = false
# ns-3 acknowledges every out-of-order segment at once.
sack_compress_max = 0
tso_defer = false
sack = true
timestamps = false
window_scaling = true
limited_transmit = true
# ns-3 has no receive-buffer autotuning.
rcv_autotune = false
rcv_buf = 67108864
"""

NEWRENO = 'cc = "newreno"\ncc_params = { abc_limit = 1, ca_increase = "per_ack" }\n'


def red100(ecn: bool) -> str:
    flows = [(0, "125000000", 0.0), (1, "125000000", 0.1), (2, "9000", 1.0), (3, "16000", 2.0),
             (4, "9000", 3.0), (5, "16000", 4.0), (6, "9000", 5.0), (7, "16000", 6.0)]
    out = [f"""# The EECN paper's dumbbell (bench/ns3/SCENARIOS.md, scenario A, ecn = {int(ecn)}).
name = "red100-ecn{int(ecn)}"
duration = "10s"
seed = 1

[topology]
kind = "dumbbell"
left = 3
right = 3
access = {{ rate = "1Gbps", delay = "1ms", framing = 2 }}
bottleneck = {{ rate = "100Mbps", delay = "10ms", framing = 2 }}
bottleneck_queue = {{ kind = "red", limit = 100, min_th = 30, max_th = 60, max_p = 0.02, w_q = 0.002, gentle = true, wait = true, hard_drop = true, mean_pkt_size = 1040, ecn = {str(ecn).lower()} }}
reverse_queue = {{ kind = "droptail", limit = 1000 }}
access_queue = {{ kind = "droptail", limit = 1000 }}

[measure]
interval = "1ms"
sample_ports = ["rl->rr"]
sample_flows = false

{TCP}"""]
    for i, size, start in flows:
        out.append(f"""[[flows]]
name = "{'bulk' if i < 2 else 'short'}{i}"
src = "l{i % 3}"
dst = "r{i % 3}"
size = {size}
start = {start}
{NEWRENO}ecn = "{'ecn' if ecn else 'none'}"
""")
    return "\n".join(out)


def dt1g(n_flows: int, hosts: int, note: str) -> str:
    out = [f"""# {note}
name = "dt1g-{n_flows}"
duration = "5s"
seed = 1

[topology]
kind = "dumbbell"
left = {hosts}
right = {hosts}
access = {{ rate = "10Gbps", delay = "1ms", framing = 2 }}
bottleneck = {{ rate = "1Gbps", delay = "20ms", framing = 2 }}
bottleneck_queue = {{ kind = "droptail", limit = 2000 }}
reverse_queue = {{ kind = "droptail", limit = 1000 }}
access_queue = {{ kind = "droptail", limit = 1000 }}

[measure]
interval = "1ms"
sample_ports = ["rl->rr"]
sample_flows = false

{TCP}"""]
    for i in range(n_flows):
        out.append(f"""[[flows]]
src = "l{i % hosts}"
dst = "r{i % hosts}"
start = "{i % 100}ms"
{NEWRENO}""")
    return "\n".join(out)


def dt1g_10000() -> str:
    """ecnlab only: 10,000 bulk flows, 10 per host pair on 1000 hosts per side; the ten
    flows of a pair start 1 ms apart."""
    head = dt1g(0, 1000, "ecnlab only: 10,000 bulk flows, 10 per host pair, on 1000 hosts per side.")
    head = head.replace('name = "dt1g-0"', 'name = "dt1g-10000"')
    flows = [f"""[[flows]]
name = "f{j}.{{k}}"
src = "l{{k}}"
dst = "r{{k}}"
count = 1000
start = "{j}ms"
{NEWRENO}""" for j in range(10)]
    return head + "\n" + "\n".join(flows)


def dt1g_1m() -> str:
    """ecnlab only, memory: 1,000,000 bulk flows, 1000 per host pair on 1000 hosts per side;
    the flows of a pair start 1 ms apart over the first second. Far more flows than the
    bottleneck can carry in 5 s (most wait in SYN back-off): it measures what a flow costs,
    idle or active."""
    head = dt1g(0, 1000, "ecnlab only, memory: 1,000,000 bulk flows, 1000 per host pair, on 1000 hosts per side.")
    head = head.replace('name = "dt1g-0"', 'name = "dt1g-1m"')
    flows = [f"""[[flows]]
name = "f{j}.{{k}}"
src = "l{{k}}"
dst = "r{{k}}"
count = 1000
start = "{j}ms"
{NEWRENO}""" for j in range(1000)]
    return head + "\n" + "\n".join(flows)


def files() -> dict[str, str]:
    """Every benchmark scenario file by name, as this script writes it."""
    return {
        "red100-ecn0.toml": red100(False),
        "red100-ecn1.toml": red100(True),
        "dt1g.toml": dt1g(10, 10, "1 Gbps / 20 ms dumbbell, 10 bulk flows (SCENARIOS.md, scenario B)."),
        "dt1g-1000.toml": dt1g(1000, 1000, "dt1g with 1000 flows on 1000 sender hosts (SCENARIOS.md, scenario C)."),
        "dt1g-10000.toml": dt1g_10000(),
        "dt1g-1m.toml": dt1g_1m(),
    }


def main() -> None:
    for name, text in files().items():
        (HERE / name).write_text(text)
        print("wrote", HERE / name)


if __name__ == "__main__":
    main()

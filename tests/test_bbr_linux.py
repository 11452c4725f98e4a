"""BBR as Linux runs it: two BBR flows on a 100 Mb/s, 40 ms path with a 1000-packet DropTail buffer (about 3 BDP)
keep a standing queue of about one BDP (Linux's ACK-aggregation allowance and quantization
budget keep their windows above the BDP through ProbeBW's gain cycle). With draft-00's
algorithm alone the two flows' 3/4 phases line up after 15–20 s and the queue collapses to about a
tenth of a BDP, which no Linux sender shows."""

from __future__ import annotations

import ecnlab

DRAFT00 = {"pacing_margin": 0.0, "btlbw_filter": "exact", "extra_acked_gain": 0.0, "linux_quantization": False}


def two_bbr(cc_params: dict | None) -> ecnlab.Scenario:
    flows = []
    for k, start in ((0, "0s"), (1, "1s")):
        f = {"name": f"f{k}", "src": f"l{k}", "dst": f"r{k}", "cc": "bbr", "start": start}
        if cc_params:
            f["cc_params"] = cc_params
        flows.append(f)
    return ecnlab.Scenario(
        {
            "name": "two BBR flows",
            "duration": "40s",
            "seed": 1,
            "topology": {
                "kind": "dumbbell",
                "left": 2,
                "right": 2,
                "access": {"rate": "1Gbps", "delay": "1ms"},
                "bottleneck": {"rate": "100Mbps", "delay": "18ms"},
                "bottleneck_queue": {"kind": "droptail", "limit": 1000},
            },
            "flows": flows,
            "measure": {"interval": "100ms", "sample_ports": ["rl->rr"]},
        }
    )


def standing_queue(r: ecnlab.Results) -> float:
    q = r.series("queue_bytes", "rl->rr")
    return float(q.filter(q["time_s"] > 20.0)["value"].mean())


def test_two_bbr_flows_keep_about_one_bdp_queued():
    bdp = 100e6 * 0.04 / 8  # bytes
    linux = standing_queue(ecnlab.run(two_bbr(None)))
    draft = standing_queue(ecnlab.run(two_bbr(DRAFT00)))
    assert 0.7 * bdp < linux < 1.5 * bdp, linux
    assert draft < linux, (draft, linux)

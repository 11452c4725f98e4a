"""The starved-flow rule: each bulk flow against its own max-min fair share on its own path.

Before, a flow's share was the first declared bottleneck's capacity over every bulk flow
active in the run, reverse-direction flows and flows that never cross that link included:
on HFCC's Fig. 8 chain that is 150/45 = 3.3 Mb/s where a long flow's max-min share is 15
Mb/s, so long flows at 5–8 % of it were not flagged. The hand-computed allocations below are
the bottleneck-link algorithm's (Bertsekas & Gallager, Data Networks, §6.5.2) on parking lots.
"""

from __future__ import annotations

import polars as pl
import pytest

import ecnlab
from ecnlab.experiments.base import STALL_WARMUP_S, STARVED_FRACTION, starved_flows
from ecnlab.experiments.fairshare import max_min


# ------------------------------------------------------------------ max-min, by hand


def test_max_min_parking_lot_of_equal_links():
    """3 links of 10 Mb/s, one flow across all 3 and one cross flow per link: every link
    has two flows, so every flow gets 5 Mb/s."""
    rates, by = max_min({"a": 10e6, "b": 10e6, "c": 10e6}, [["a", "b", "c"], ["a"], ["b"], ["c"]])
    assert rates == [5e6, 5e6, 5e6, 5e6]
    assert by == ["a", "a", "b", "c"]


def test_max_min_parking_lot_with_a_faster_link():
    """Link b at 20 Mb/s: the long flow is held to 5 Mb/s by a (and c), so b's cross flow
    gets the rest of b, 15 Mb/s."""
    rates, by = max_min({"a": 10e6, "b": 20e6, "c": 10e6}, [["a", "b", "c"], ["a"], ["b"], ["c"]])
    assert rates == [5e6, 5e6, 15e6, 5e6]
    assert by[2] == "b"


def test_max_min_levels_fill_progressively():
    """Two long flows over a (10) and b (4); one cross flow on a: b holds the long flows
    to 2 each, a's cross flow gets 10 − 4 = 6."""
    rates, by = max_min({"a": 10.0, "b": 4.0}, [["a", "b"], ["a", "b"], ["a"]])
    assert rates == [2.0, 2.0, 6.0]
    assert by == ["b", "b", "a"]


def test_max_min_refuses_what_it_cannot_share():
    with pytest.raises(ValueError, match="crosses no link"):
        max_min({"a": 1.0}, [[]])
    with pytest.raises(ValueError, match="x, which has no capacity"):
        max_min({"a": 1.0}, [["a", "x"]])


# ------------------------------------------------------------------ on results built by hand


def _results(scenario: ecnlab.Scenario, delivered_bps: dict[str, float], duration: float = 20.0, first_bps: dict[str, float] | None = None) -> ecnlab.Results:
    """Results of ``scenario`` as if every flow (all bulk, running the whole run) had
    delivered ``delivered_bps`` of payload while backlogged (after ``STALL_WARMUP_S``) and
    ``first_bps`` (default nothing) before; delivery sampled every 100 ms; the ports carry
    the scenario's link rates."""
    d = scenario.to_dict()
    first = first_bps or {}
    times = [round(0.1 * (k + 1), 1) for k in range(round(duration * 10))]
    ts = pl.DataFrame(
        [(tt, "delivery_bps", f["name"], first.get(f["name"], 0.0) if tt <= STALL_WARMUP_S else delivered_bps[f["name"]]) for f in d["flows"] for tt in times],
        schema={"time_s": pl.Float64, "kind": pl.String, "entity": pl.String, "value": pl.Float64},
        orient="row",
    )
    flows = pl.DataFrame(
        {
            "name": [f["name"] for f in d["flows"]],
            "src": [f["src"] for f in d["flows"]],
            "dst": [f["dst"] for f in d["flows"]],
            "transport": ["tcp"] * len(d["flows"]),
            "size_bytes": pl.Series([None] * len(d["flows"]), dtype=pl.Int64),
            "start_s": [0.0] * len(d["flows"]),
            "fct_s": pl.Series([None] * len(d["flows"]), dtype=pl.Float64),
            "bytes_delivered": [round((delivered_bps[f["name"]] * (duration - STALL_WARMUP_S) + first.get(f["name"], 0.0) * STALL_WARMUP_S) / 8) for f in d["flows"]],
        }
    )
    # The ports and their rates as a run of the network makes them.
    ports = ecnlab.run(ecnlab.Scenario.from_dict({**d, "duration": "1ms", "flows": []})).ports.select("port", "rate_bps")
    return ecnlab.Results(flows, ports, ts, {"duration_s": duration}, scenario.to_toml())


def _parking_lot(rates_mbps: list[float], reverse: int = 0) -> ecnlab.Scenario:
    """Routers c0..cN in a line; a long flow l0 → r0 across every link, one cross flow per
    link (x{i}_0 → x{i+1}_0) and ``reverse`` flows r0 → l0."""
    nodes = [{"name": f"c{i}", "kind": "router"} for i in range(len(rates_mbps) + 1)]
    nodes += [{"name": n, "kind": "host"} for n in ["l0", "r0"] + [f"x{i}_0" for i in range(len(rates_mbps) + 1)]]
    links = [{"a": f"c{i}", "b": f"c{i + 1}", "rate": f"{r}Mbps", "delay": "5ms"} for i, r in enumerate(rates_mbps)]
    links += [{"a": "l0", "b": "c0", "rate": "1Gbps", "delay": "1ms"}, {"a": "r0", "b": f"c{len(rates_mbps)}", "rate": "1Gbps", "delay": "1ms"}]
    links += [{"a": f"x{i}_0", "b": f"c{i}", "rate": "1Gbps", "delay": "1ms"} for i in range(len(rates_mbps) + 1)]
    flows = [{"name": "long", "src": "l0", "dst": "r0", "cc": "newreno"}]
    flows += [{"name": f"cross-{i}", "src": f"x{i}_0", "dst": f"x{i + 1}_0", "cc": "newreno"} for i in range(len(rates_mbps))]
    flows += [{"name": f"rev-{k}", "src": "r0", "dst": "l0", "cc": "newreno"} for k in range(reverse)]
    return ecnlab.Scenario.from_dict({"duration": "20s", "seed": 1, "topology": {"kind": "explicit", "nodes": nodes, "links": links}, "flows": flows})


#: A default flow's payload part of its packets: 1448-byte segments with 40 bytes of IP and
#: TCP headers and 12 of timestamps.
PAYLOAD = 1448 / 1500


def _share_bps(x: dict) -> float:
    return x["share_bits"] / (x["to_s"] - x["from_s"])


def test_a_long_flow_is_measured_against_its_max_min_share():
    """3 links of 10 Mb/s: the long flow's share is 5 Mb/s, not 10/4 = 2.5. At 0.4 Mb/s it
    has 8 % of its share (starved); the old rule saw 16 % and did not flag it."""
    r = _results(_parking_lot([10, 10, 10]), {"long": 0.4e6, "cross-0": 9.6e6, "cross-1": 9.6e6, "cross-2": 9.6e6})
    (x,) = starved_flows(r)
    assert x["flow"] == "long" and x["port"] == "c0->c1"
    assert _share_bps(x) == pytest.approx(5e6 * PAYLOAD)
    assert x["of_share"] == pytest.approx(0.08 / PAYLOAD)


def test_the_cross_flow_of_a_faster_link_gets_the_rest_of_it():
    """Link c1->c2 at 20 Mb/s: its cross flow's share is 15 Mb/s; at 1.2 Mb/s it has 8 %
    of it (the old rule: 10/4 = 2.5 Mb/s of the first link, 48 %)."""
    r = _results(_parking_lot([10, 20, 10]), {"long": 5e6, "cross-0": 5e6, "cross-1": 1.2e6, "cross-2": 5e6})
    (x,) = starved_flows(r)
    assert x["flow"] == "cross-1" and x["port"] == "c1->c2"
    assert _share_bps(x) == pytest.approx(15e6 * PAYLOAD)
    assert x["of_share"] == pytest.approx(0.08 / PAYLOAD)


def test_reverse_flows_take_nothing_of_the_forward_share():
    """One 10 Mb/s link each way, two flows each way: each forward flow's share is 5 Mb/s
    (the old rule counted the reverse flows: 2.5). At 0.4 Mb/s it has 8 %; the reverse
    flows have their own 5 Mb/s on the reverse link."""
    r = _results(_parking_lot([10], reverse=2), {"long": 0.4e6, "cross-0": 9.6e6, "rev-0": 5e6, "rev-1": 0.45e6})
    got = {x["flow"]: x for x in starved_flows(r)}
    assert set(got) == {"long", "rev-1"}
    assert _share_bps(got["long"]) == pytest.approx(5e6 * PAYLOAD) and got["long"]["of_share"] == pytest.approx(0.08 / PAYLOAD)
    assert got["rev-1"]["port"] == "c1->c0" and _share_bps(got["rev-1"]) == pytest.approx(5e6 * PAYLOAD)


def test_a_dumbbell_share_is_as_before():
    """One bottleneck crossed by every bulk flow in one direction: the share is its
    capacity over the bulk flows active at each instant, the old rule's (in payload bits)."""
    import numpy as np

    s = ecnlab.Scenario.dumbbell(left=3, right=3, bottleneck_rate="10Mbps", duration="30s", seed=1)
    for i in range(3):
        s = s.add_tcp_flow(f"l{i}", f"r{i}", cc="newreno", name=f"f{i}")
    r = _results(s, {"f0": 0.2e6, "f1": 0.3e6, "f2": 6e6}, duration=30.0)
    # Flows that start and end apart, so the number active changes.
    r.flows = r.flows.with_columns(pl.Series("start_s", [0.0, 5.0, 12.0]), pl.Series("fct_s", [None, 10.0, None], dtype=pl.Float64))
    got = {x["flow"]: x for x in starved_flows(r)}
    # The old rule, as it was written.
    dur, cap = 30.0, 10e6
    spans = np.array([(0.0, 30.0), (5.0, 15.0), (12.0, 30.0)])
    dt = dur / 2000
    t = (np.arange(2000) + 0.5) * dt
    share = cap / np.maximum(((spans[:, :1] <= t) & (t < spans[:, 1:])).sum(axis=0), 1) * dt
    old = {n: PAYLOAD * float(share[(t >= a + 1.0) & (t < b)].sum()) for n, (a, b) in zip(["f0", "f1", "f2"], spans)}
    delivered = {n: 8.0 * b for n, b in zip(r.flows["name"], r.flows["bytes_delivered"])}
    assert set(got) == {n for n in old if delivered[n] < STARVED_FRACTION * old[n]} == {"f0"}
    assert got["f0"]["share_bits"] == pytest.approx(old["f0"], rel=1e-12) and got["f0"]["port"] == "rl->rr"


# ------------------------------------------------------------------ on real runs


def _chain_run(hops: int = 6, duration: str = "20s") -> ecnlab.Results:
    """ecnlab's chain: a NewReno flow l0 → r0 across ``hops`` links of 10 Mb/s (20-packet
    DropTail queues) and two NewReno cross flows on each link (x{i}_j → x{i+1}_j)."""
    flows = [{"name": "long", "src": "l0", "dst": "r0", "cc": "newreno"}]
    flows += [{"name": f"cross-{i}-{j}", "src": f"x{i}_{j}", "dst": f"x{i + 1}_{j}", "cc": "newreno", "start": f"{0.1 * j + 0.05 * i}s"} for i in range(hops) for j in range(2)]
    topology = {"kind": "chain", "hops": hops, "end_hosts": 1, "cross_hosts": 2, "link": {"rate": "10Mbps", "delay": "5ms"}, "access": {"rate": "1Gbps", "delay": "1ms"}, "queue": {"kind": "droptail", "limit": 20}}
    return ecnlab.run(ecnlab.Scenario.from_dict({"duration": duration, "seed": 1, "topology": topology, "flows": flows}))


def test_flow_paths_are_the_ports_the_run_carried_them_on():
    """Each flow's path is recomputed from the scenario; the run's per-port counters bear
    it out: a port carries at least the payload of the flows whose data crosses it, and at
    most their data sent (+10 % of headers) and the acknowledgements (at most 100 bytes
    each, one per data packet) of the flows whose return path crosses it."""
    r = _chain_run(hops=3, duration="5s")
    paths = r.flow_paths()
    assert paths["long"] == ["l0->c0", "c0->c1", "c1->c2", "c2->c3", "c3->r0"]
    assert paths["cross-1-0"] == ["x1_0->c1", "c1->c2", "c2->x2_0"]
    f = r.flows
    back = dict(zip(f["name"], ecnlab._core.host_paths(r.scenario_toml, list(zip(f["dst"], f["src"])))))
    assert back["long"] == ["r0->c3", "c3->c2", "c2->c1", "c1->c0", "c0->l0"]
    sent, delivered, packets = (dict(zip(f["name"], f[c])) for c in ("bytes_sent", "bytes_delivered", "packets_sent"))
    assert min(delivered.values()) > 100_000
    for port, carried in zip(r.ports["port"], r.ports["dequeued_bytes"]):
        data = [n for n, p in paths.items() if port in p]
        acks = [n for n, p in back.items() if port in p]
        assert sum(delivered[n] for n in data) <= carried <= 1.1 * sum(sent[n] for n in data) + 100 * sum(packets[n] + 10 for n in acks), port


def test_a_starved_long_flow_on_a_real_chain_is_flagged():
    """6 links of 10 Mb/s with 2 cross flows each: the long flow's max-min share is 10/3 =
    3.3 Mb/s. NewReno beats it down to 6.4 % of that (0.21 Mb/s): starved. The old rule's
    share (10 Mb/s over all 13 bulk flows, 0.77 Mb/s) had it at 28 %, not starved."""
    r = _chain_run()
    got = {x["flow"]: x for x in starved_flows(r)}
    assert set(got) == {"long"}
    x = got["long"]
    assert _share_bps(x) == pytest.approx(10e6 / 3 * PAYLOAD, rel=1e-6)
    assert 0.03 < x["of_share"] < 0.09
    old_share = 10e6 / 13 * (x["to_s"] - x["from_s"])
    assert x["delivered_bits"] > 2 * STARVED_FRACTION * old_share


# ------------------------------------------------------------------ a link whose rate changes


def _dropping_dumbbell() -> ecnlab.Scenario:
    """A dumbbell whose bottleneck runs 600 → 180 → 600 Mb/s (APCC's access-point drop:
    600 until 4 s, 180 until 12 s, 600 to the end at 20 s; mean 312 Mb/s), two bulk flows."""
    return ecnlab.Scenario.from_dict({
        "duration": "20s", "seed": 1,
        "topology": {"kind": "dumbbell", "left": 2, "right": 2, "access": {"rate": "10Gbps", "delay": "1ms"},
                     "bottleneck": {"rate": "600Mbps", "delay": "5ms", "schedule": [{"at": "4s", "rate": "180Mbps"}, {"at": "12s", "rate": "600Mbps"}]}},
        "flows": [{"name": "f0", "src": "l0", "dst": "r0", "cc": "newreno"}, {"name": "f1", "src": "l1", "dst": "r1", "cc": "newreno"}],
        "measure": {"interval": "100ms", "sample_flows": True},
    })


def test_a_link_whose_rate_changes_is_judged_at_its_schedule_not_its_first_rate():
    """The starved share follows the bottleneck's schedule: 300 Mb/s each while it runs at 600,
    90 while it runs at 180 (mean over 1–20 s: (3·300 + 8·90 + 8·300)/19 = 211.6 Mb/s). At
    20 Mb/s a flow has 9.5 % of that (starved); before, its share was 300 Mb/s throughout
    (6.7 %, and a flow at 25 Mb/s, 11.8 % of its share, was flagged at 8.3 %)."""
    r = _results(_dropping_dumbbell(), {"f0": 20e6, "f1": 25e6})
    assert r.ports.filter(pl.col("port") == "rl->rr")["rate_bps"][0] == 600e6
    got = {x["flow"]: x for x in starved_flows(r)}
    assert set(got) == {"f0"}
    assert _share_bps(got["f0"]) == pytest.approx((3 * 300e6 + 8 * 90e6 + 8 * 300e6) / 19 * PAYLOAD, rel=1e-3)
    assert got["f0"]["port"] == "rl->rr"


def test_a_flow_carrying_most_of_what_a_dropping_link_offered_is_not_a_stall():
    """The stall rule's capacity is what the link offered over the judged window (its
    schedule integrated), not its first rate: a run delivering 65 % of what the 600 → 180 →
    600 Mb/s link offered over 1–20 s (mean 423.2 Mb/s) is not stalled; 40 % is. Before,
    both were held against 600 Mb/s (45.8 % and 28.2 %: both stalls)."""
    from ecnlab.experiments.base import stall

    s = _dropping_dumbbell()
    offered = (3 * 600e6 + 8 * 180e6 + 8 * 600e6) / 19
    for fraction, stalled in ((0.65, False), (0.40, True)):
        r = _results(s, {"f0": fraction * offered / 2, "f1": fraction * offered / 2})
        # Delivery samples every 100 ms: the flows' rates while backlogged.
        times = [round(0.1 * (k + 1), 1) for k in range(200)]
        rate = [fraction * offered / 2 if tt > STALL_WARMUP_S else 0.0 for tt in times]
        ts = pl.DataFrame({"time_s": times * 2, "kind": ["delivery_bps"] * 400, "entity": ["f0"] * 200 + ["f1"] * 200, "value": rate * 2})
        r = ecnlab.Results(r.flows, r.ports, ts, r.meta, r.scenario_toml)
        got = stall(r, "rl->rr")
        assert (got is not None) is stalled, (fraction, got)
        if got is not None:
            # Delivery is payload; the link offered its bits times 1448/1500 of payload.
            assert got["utilisation"] == pytest.approx(fraction / PAYLOAD, rel=0.01)


def test_a_stall_is_judged_in_payload_bits_as_delivery_is():
    """Delivery counts payload, a link carries whole packets: a full link of default flows
    (1448-byte segments in 1500 bytes) delivers 0.965 of its rate. A run delivering payload
    at 49 % of the link's rate carries 50.8 % of the payload it could (not a stall); 47 % of
    the rate is 48.7 % (a stall), the figure in payload. Before, the link's wire bits were
    the capacity: 49 % read 0.49 and was flagged. With 24 bytes of framing a packet the
    payload part is 1448/1524."""
    from ecnlab.experiments.base import stall

    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="20s", seed=1)
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    assert stall(_results(s, {"f0": 0.245 * 10e6, "f1": 0.245 * 10e6}), "rl->rr") is None
    got = stall(_results(s, {"f0": 0.235 * 10e6, "f1": 0.235 * 10e6}), "rl->rr")
    assert got is not None and got["utilisation"] == pytest.approx(0.47 / PAYLOAD)
    d = s.to_dict()
    d["topology"]["bottleneck"]["framing"] = 24
    got = stall(_results(ecnlab.Scenario.from_dict(d), {"f0": 0.235 * 10e6, "f1": 0.235 * 10e6}), "rl->rr")
    assert got is not None and got["utilisation"] == pytest.approx(0.47 * 1524 / 1448)


def test_the_share_is_counted_in_payload_bits_as_delivery_is():
    """HFCC's packets: 960-byte segments, 40 bytes of headers, no timestamps (1000 on the
    wire). Two flows on 10 Mb/s: each one's share is 5 Mb/s on the wire, 4.8 Mb/s of
    payload. A flow delivering 0.49 Mb/s of payload has 10.2 % of its share (not starved);
    0.47 has 9.8 % (starved). Before, the share was in wire bits: 0.49 read 9.8 % and was
    flagged. Framing counts too: with 24 bytes a packet on the bottleneck the share is
    960/1024 of the wire's."""
    base = dict(duration="20s", seed=1)
    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", **base)
    s = ecnlab.Scenario.from_dict({**s.to_dict(), "tcp": {"mss": 960, "timestamps": False}})
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    assert starved_flows(_results(s, {"f0": 0.49e6, "f1": 9e6})) == []
    (x,) = starved_flows(_results(s, {"f0": 0.47e6, "f1": 9e6}))
    assert _share_bps(x) == pytest.approx(4.8e6) and x["of_share"] == pytest.approx(0.47 / 4.8)
    d = s.to_dict()
    d["topology"]["bottleneck"]["framing"] = 24
    (x,) = starved_flows(_results(ecnlab.Scenario.from_dict(d), {"f0": 0.45e6, "f1": 9e6}))
    assert _share_bps(x) == pytest.approx(5e6 * 960 / 1024)


def test_delivery_and_share_are_counted_over_the_same_span():
    """A flow that delivered 8 Mb/s in its first second and 0.4 Mb/s after it, beside one
    other flow on 10 Mb/s: from 1 s on it had 0.4 of a 4.83 Mb/s share, 8.3 % (starved).
    Before, its first second's 8 Mb was counted against a share from 1 s on (17 %, not
    flagged). Without delivery samples a flow is judged from its start on both sides."""
    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="20s", seed=1)
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    r = _results(s, {"f0": 0.4e6, "f1": 9e6}, first_bps={"f0": 8e6})
    (x,) = starved_flows(r)
    assert x["flow"] == "f0" and x["from_s"] == STALL_WARMUP_S
    assert x["of_share"] == pytest.approx(0.4 / (5 * PAYLOAD)) and x["delivered_bits"] == pytest.approx(0.4e6 * 19)
    unsampled = ecnlab.Results(r.flows, r.ports, pl.DataFrame(), r.meta, r.scenario_toml)
    assert starved_flows(unsampled) == []


# ------------------------------------------------------------------ which runs are checked


def _two_flow_runs(scenario_toml: str | None = None) -> "RunSet":
    from ecnlab.experiments.base import RunSet

    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="20s", seed=1)
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    r = _results(s, {"f0": 0.2e6, "f1": 9e6})
    if scenario_toml is not None:
        r = ecnlab.Results(r.flows, r.ports, r.timeseries, r.meta, scenario_toml)
    return r


def test_an_experiment_without_a_bottleneck_has_its_flows_checked():
    """The share needs only the flows and their paths: an experiment that declares no
    bottleneck (hfcc.efficiency, hfcc.fct, core.mdl) has its starved flows found too. Before,
    the check ran only where a bottleneck was declared."""
    from ecnlab.experiments.base import Experiment, RunSet

    class NoBottleneck(Experiment):
        name = "toy.nobottleneck"
        no_bottleneck = "flows on several links"

    rs = RunSet({"x-s1": _two_flow_runs()}, NoBottleneck())
    v = rs.per_seed("x", lambda r: 1.0)
    assert v.starved == {1: ["f0"]}


def test_a_run_shared_by_two_readings_is_checked_once(monkeypatch):
    """Each reading of a paper judges its runs in a RunSet of its own, and most of them are
    the default reading's runs: the checks' findings are kept on the run, so a second RunSet
    over the same run finds the same without checking again."""
    from ecnlab.experiments import base
    from ecnlab.experiments.base import Experiment, RunSet

    class NoBottleneck(Experiment):
        name = "toy.nobottleneck"
        no_bottleneck = "flows on several links"

    class Dumbbell(Experiment):
        name = "toy.dumbbell"

        def bottleneck(self, run_name):
            return "rl->rr"

    calls = []

    def counted(name, f):
        monkeypatch.setattr(base, name, lambda r, *a: calls.append(name) or f(r, *a))

    for name in ("starved_flows", "stall", "checked_outages"):
        counted(name, getattr(base, name))
    validate = ecnlab._core.validate
    monkeypatch.setattr(ecnlab._core, "validate", lambda *a: calls.append("scenario") or validate(*a))
    r = _two_flow_runs()
    for exp in (NoBottleneck(), Dumbbell()):
        calls.clear()
        first = RunSet({"x-s1": r}, exp).per_seed("x", lambda r: 1.0)
        second = RunSet({"x-s1": r}, exp).per_seed("x", lambda r: 2.0)
        assert first.starved == second.starved == {1: ["f0"]}
        assert (first.stalled, first.outages) == (second.stalled, second.outages)
        # Each check once, and the scenario read once for all of them: the starvation check
        # (and the scenario) with the first experiment, the stall and outages with the second.
        assert sorted(calls) == (["scenario", "starved_flows"] if isinstance(exp, NoBottleneck) else ["checked_outages", "stall"]), calls
    # What one reading does with a finding stays its own.
    RunSet({"x-s1": r}, exp).starved_of("x-s1")[0]["flow"] = "changed"
    assert RunSet({"x-s1": r}, exp).starved_of("x-s1")[0]["flow"] == "f0"
    # Another run of the same scenario is checked on its own.
    other = _two_flow_runs()
    calls.clear()
    RunSet({"x-s1": other}, NoBottleneck()).per_seed("x", lambda r: 1.0)
    assert sorted(calls) == ["scenario", "starved_flows"]


def test_a_recorded_scenario_that_does_not_build_leaves_starvation_unchecked_not_the_rejudge_stopped():
    """A recorded scenario the build can no longer read (judged again with
    --reuse-any-build) flags the claims "starvation not checked: …" instead of stopping the
    judgement. Before, the ScenarioError escaped."""
    from ecnlab.experiments.base import Experiment, RunSet, claim
    from ecnlab.experiments.verdict import Claim

    class Toy(Experiment):
        name = "toy.old"

        def bottleneck(self, run_name):
            return "rl->rr"

    r = _two_flow_runs()
    old = ecnlab.Results(r.flows, r.ports, r.timeseries, r.meta, r.scenario_toml + "\n[retired_table]\nkey = 1\n")
    rs = RunSet({"a-s1": old, "b-s1": r}, Toy())
    a, b = rs.per_seed("a", lambda r: 1.0), rs.per_seed("b", lambda r: 2.0)
    assert "retired_table" in a.starvation_unchecked[1] and b.starved == {1: ["f0"]}
    c = claim("x", Claim("less"), a, b)
    assert any(f.startswith("starvation not checked: a (a) seed 1: its recorded scenario does not build here") for f in c.decision.flags), c.decision.flags


def test_the_rule_text_says_what_the_share_leaves_out():
    """Short flows, UDP and ACKs load the links but take no part of the share; the share
    is in payload bits at each link's rate at each instant; flags never decide a claim. The
    rule text and the README say so (before, only the docstring said what was left out)."""
    from pathlib import Path

    from ecnlab.experiments import rule_text

    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text().split())
    for text in (" ".join(rule_text(0.05).split()), readme):
        assert "short flows, UDP and ACKs load the links but take no part of the share" in text
        assert "at its rate at each instant" in text and "in payload bits" in text
        assert "flags annotate claims and never decide them" in text


def test_a_bulk_flow_without_a_route_leaves_starvation_unchecked_not_the_judgement_stopped():
    """Now that every experiment's runs are checked, a run whose share cannot be computed (a
    bulk flow whose hosts the scenario does not route) flags its claims instead of stopping
    the judgement of the others."""
    from ecnlab.experiments.base import Experiment, RunSet

    class Toy(Experiment):
        name = "toy.unrouted"
        no_bottleneck = "a toy"

    r = _two_flow_runs()
    flows = r.flows.with_columns(pl.Series("dst", ["nowhere", "r1"]))
    rs = RunSet({"a-s1": ecnlab.Results(flows, r.ports, r.timeseries, r.meta, r.scenario_toml)}, Toy())
    v = rs.per_seed("a", lambda r: 1.0)
    assert "bulk flows without a route in the run's scenario: f0" in v.starvation_unchecked[1]


def test_a_finite_flow_that_finished_is_judged_by_its_completion_time_not_flagged():
    """A finite bulk flow that finished sent all it had; slow for its share (its ramp up, on a
    path of a few bandwidth-delay products) is its completion time, not starvation: it is not
    flagged, and still takes its part of the link from the other flow. Unfinished at the end,
    the same flow is judged. Before, a finished 2.6-MB flow alone on an idle path was flagged
    at 2.4 % of its share."""
    sc = _parking_lot([10], reverse=0)
    r = _results(sc, {"long": 0.2e6, "cross-0": 5e6})
    finished = r.flows.with_columns(
        pl.when(pl.col("name") == "long").then(pl.lit(2_600_000, dtype=pl.Int64)).otherwise(pl.col("size_bytes")).alias("size_bytes"),
        pl.when(pl.col("name") == "long").then(pl.lit(20.0 - 1e-9)).otherwise(pl.col("fct_s")).alias("fct_s"),
    )
    r_fin = ecnlab.Results(finished, r.ports, r.timeseries, r.meta, sc.to_toml())
    got = {x["flow"]: x for x in starved_flows(r_fin)}
    assert "long" not in got
    assert {x["flow"] for x in starved_flows(r)} == {"long"}


def test_paths_and_links_of_a_recorded_scenario_pass_the_builds_guards():
    """A recorded scenario read back to rebuild its paths is input like any other: its limits
    and integers are checked as a run's build checks them (a zero limit is refused, naming the
    key), not skipped because no run is built."""
    from ecnlab import _core

    bad = _parking_lot([10]).to_toml() + "\n[limits]\nflows = 0\n"
    for rebuild in (lambda: _core.host_paths(bad, [("l0", "r0")]), lambda: _core.port_links(bad)):
        with pytest.raises(ValueError, match="limits.flows"):
            rebuild()


def test_a_run_whose_recorded_scenario_lacks_the_port_has_its_stall_judged_on_the_links_mean_rate():
    """A run with no recorded scenario, or one whose rebuilt links lack the judged port, has no
    rate schedule to integrate: its stall is judged against the link's recorded mean rate, and
    the figures say so, instead of the judgement stopping (before, a rebuilt scenario without
    the port raised KeyError out of stall())."""
    from ecnlab.experiments.base import stall

    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="20s", seed=1)
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    r = _results(s, {"f0": 0.2e6, "f1": 0.2e6})
    for toml in ("", _parking_lot([10]).to_toml()):
        got = stall(ecnlab.Results(r.flows, r.ports, r.timeseries, r.meta, toml), "rl->rr")
        assert got is not None and "mean rate over the run" in got["measured_by"], got
    assert "mean rate" not in stall(r, "rl->rr")["measured_by"]


# ------------------------------------------------------------------ outages


def _with_gap(rate_bps: float, gap: tuple[float, float], during_bps: float = 0.0, seed: int = 1, queued_in_gap: int = 0) -> ecnlab.Results:
    """Two default flows on 10 Mb/s delivering ``rate_bps`` in all (100-ms samples) except
    ``during_bps`` in the samples whose interval lies in ``gap``; the bottleneck's queue
    sampled at 20 packets, and at ``queued_in_gap`` in the gap (0: the link idle)."""
    s = ecnlab.Scenario.dumbbell(left=2, right=2, bottleneck_rate="10Mbps", duration="20s", seed=seed)
    s = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").add_tcp_flow("l1", "r1", cc="newreno", name="f1")
    r = _results(s, {"f0": rate_bps / 2, "f1": rate_bps / 2})
    a, b = gap
    in_gap = (pl.col("time_s") > a + 1e-9) & (pl.col("time_s") <= b + 1e-9)
    ts = r.timeseries.with_columns(pl.when(in_gap).then(during_bps / 2).otherwise(pl.col("value")).alias("value"))
    times = sorted(set(ts["time_s"].to_list()))
    queue = pl.DataFrame({"time_s": times, "kind": "queue_pkts", "entity": "rl->rr", "value": 20.0}).with_columns(
        pl.when(in_gap).then(float(queued_in_gap)).otherwise(pl.col("value")).alias("value")
    )
    return ecnlab.Results(r.flows, r.ports, pl.concat([ts, queue.select(ts.columns)]), r.meta, r.scenario_toml)


def test_a_link_stalls_on_the_flows_that_cross_it():
    """Three 10 Mb/s links in a line: the middle link's flows (the long flow and cross-1)
    deliver 1.4 Mb/s, 15 % of what it offers, while the outer links' cross flows fill theirs.
    Before, every flow's delivery was held against the one link (2.1 of its capacity), so a
    stall on a chain could never be found. A reverse flow does not cross the forward port and
    is not counted either."""
    from ecnlab.experiments.base import stall

    r = _results(_parking_lot([10, 10, 10], reverse=1), {"long": 0.4e6, "cross-0": 9.6e6, "cross-1": 1.0e6, "cross-2": 9.6e6, "rev-0": 9e6})
    st = stall(r, "c1->c2")
    assert st is not None and st["utilisation"] == pytest.approx(1.4e6 / (10e6 * PAYLOAD))
    assert stall(r, "c0->c1") is None  # long + cross-0: 10.0 Mb/s of payload, all of it


def test_a_flow_without_a_path_is_left_out_and_named_not_a_reason_to_count_every_flow():
    """Results with one flow the scenario has no route for (a flows table that does not match
    the scenario): the middle link is judged on the flows that cross it, and the stall says
    which flow it left out. Before, one flow without a rebuilt path made every flow "crossing"
    (the outer links' cross flows and the reverse flow too): 2.9 of the middle link's
    capacity, no stall."""
    from ecnlab.experiments.base import crossing_flows, stall

    r = _results(_parking_lot([10, 10, 10], reverse=1), {"long": 0.4e6, "cross-0": 9.6e6, "cross-1": 1.0e6, "cross-2": 9.6e6, "rev-0": 9e6})
    ghost = r.flows.head(1).with_columns(pl.lit("ghost").alias("name"), pl.lit("nowhere").alias("src"))
    samples = r.timeseries.filter(pl.col("entity") == "long").with_columns(pl.lit("ghost").alias("entity"), pl.lit(9e6).alias("value"))
    r = ecnlab.Results(pl.concat([r.flows, ghost]), r.ports, pl.concat([r.timeseries, samples]), r.meta, r.scenario_toml)
    assert crossing_flows(r, "c1->c2") == ["long", "cross-1"]
    st = stall(r, "c1->c2")
    assert st is not None and st["utilisation"] == pytest.approx(1.4e6 / (10e6 * PAYLOAD))
    assert "no path: ghost" in st["measured_by"]
    # A run without a scenario to rebuild the paths from still counts every flow.
    assert crossing_flows(ecnlab.Results(r.flows, r.ports, r.timeseries, r.meta, ""), "c1->c2") == r.flows["name"].to_list()


def test_an_outage_is_found_where_the_runs_average_hides_it():
    """Two flows carrying 9 Mb/s of a 10 Mb/s link but nothing from 3.0 to 4.5 s average 84 %
    of what the link offered (no stall), yet sat 1.5 s in an outage. 0.8 s of nothing is
    not one (less than OUTAGE_S), nor is 10 % of the link's payload rate. Before, nothing
    looked inside the average."""
    from ecnlab.experiments.base import OUTAGE_FRACTION, OUTAGE_S, outages, stall

    assert OUTAGE_S == 1.0 and OUTAGE_FRACTION == 0.05
    r = _with_gap(9e6, (3.0, 4.5))
    assert stall(r, "rl->rr") is None
    (o,) = outages(r, "rl->rr")
    assert (o["from_s"], o["to_s"]) == pytest.approx((3.0, 4.5)) and o["delivered"] == 0.0
    assert outages(_with_gap(9e6, (3.0, 3.8)), "rl->rr") == []
    assert outages(_with_gap(9e6, (3.0, 4.5), during_bps=0.10 * 10e6 * PAYLOAD), "rl->rr") == []
    # The first STALL_WARMUP_S of the flows (slow start) is not judged: nothing in 0–1.8 s
    # leaves 0.8 s after it.
    assert outages(_with_gap(9e6, (0.0, 1.8)), "rl->rr") == []


def test_a_silence_with_the_link_at_work_is_not_an_outage():
    """Receivers hand on data in order: behind one lost segment they deliver nothing while the
    link sends at full rate, its queue full (APCC's NewReno runs: 7654-7988 packets of a
    12 MB buffer through every such silence). Before, 1.5 s of that was an outage and stalled
    the claims on the run; a silence with the queue sampled empty still is one, and a run
    whose port has no queue samples cannot tell the two apart and has none."""
    from ecnlab.experiments.base import outages

    assert outages(_with_gap(9e6, (3.0, 4.5), queued_in_gap=80), "rl->rr") == []
    assert len(outages(_with_gap(9e6, (3.0, 4.5)), "rl->rr")) == 1
    r = _with_gap(9e6, (3.0, 4.5))
    blind = ecnlab.Results(r.flows, r.ports, r.timeseries.filter(pl.col("kind") != "queue_pkts"), r.meta, r.scenario_toml)
    assert outages(blind, "rl->rr") == []


def test_an_outage_flags_the_claims_whose_measured_span_it_overlaps():
    """A seed whose run had an outage flags a claim measured over the run, not one measured
    from after it (window), and decides neither: the runs do not record a port's departures,
    so an empty sampled queue is a sign of an idle link, not a proof. Before, the outage made
    the claim inconclusive ('decided on stalled runs')."""
    from ecnlab.experiments.base import Experiment, RunSet, claim
    from ecnlab.experiments.verdict import Claim, Verdict

    class Toy(Experiment):
        name = "toy.outage"

        def bottleneck(self, run_name: str) -> str:
            return "rl->rr"

    runs = {f"x-s{k}": _with_gap(9e6, (3.0, 4.5)) for k in range(1, 6)}
    runs.update({f"y-s{k}": _with_gap(9e6, (20.0, 20.0), seed=2) for k in range(1, 6)})
    rs = RunSet(runs, Toy())
    whole = rs.per_seed("x", lambda r: 1.0)
    assert whole.stalled == {} and set(whole.outages) == {1, 2, 3, 4, 5}
    later = rs.per_seed("x", lambda r: 1.0, window=(5.0, None))
    assert later.outages == {}
    assert rs.per_seed("x", lambda r: 1.0, window=(0.0, 3.0)).outages == {}
    assert set(rs.per_seed("x", lambda r: 1.0, window=(4.0, 6.0)).outages) == {1, 2, 3, 4, 5}
    other = rs.per_seed("y", lambda r: 2.0)
    c = claim("toy", Claim("less"), whole, other)
    assert c.decision.verdict is Verdict.HOLDS and any(f.startswith("outages in the measured span") for f in c.decision.flags)
    c = claim("toy", Claim("less"), later, rs.per_seed("y", lambda r: 2.0, window=(5.0, None)))
    assert c.decision.verdict is Verdict.HOLDS and not any("outages" in f for f in c.decision.flags)
    assert [o["from_s"] for o in rs.outages_of("x-s1")] == pytest.approx([3.0])


def test_a_slow_climb_or_a_long_paths_ack_clock_is_not_an_outage():
    """Next to nothing is in time as well as in volume. A window growing slowly into a large
    BDP delivers 3 % of the link in every sampled interval for 5 s: not an outage (UNO's VCP at
    1 Gb/s was flagged for seconds of its climb). On a path of 1.5 s base RTT a window-limited
    flow delivers a burst once per round trip: silence within two round trips is its ACK clock,
    not an outage (UNO's 1.5-s paths were flagged every 1.5 s); 6 s without a burst is one
    (a window holding at most one burst is next to nothing: 1 of 30 intervals). Both were
    outages before (under 5 % of the link for over 1 s)."""
    from ecnlab.experiments.base import outages

    assert outages(_with_gap(9e6, (3.0, 8.0), during_bps=0.03 * 10e6 * PAYLOAD), "rl->rr") == []
    r = _with_gap(9e6, (0.0, 0.0))
    times = [round(0.1 * (k + 1), 1) for k in range(200)]
    flows = r.flows.with_columns(pl.lit(1.5).alias("rtt_min_s"))

    def clocked(silent: tuple[float, float]) -> ecnlab.Results:
        burst = [1e6 if round(t * 10) % 15 == 0 and not silent[0] < t <= silent[1] else 0.0 for t in times]
        ts = pl.DataFrame({"time_s": times * 3, "kind": ["delivery_bps"] * 400 + ["queue_pkts"] * 200, "entity": ["f0"] * 200 + ["f1"] * 200 + ["rl->rr"] * 200, "value": burst + [0.0] * 400})
        return ecnlab.Results(flows, r.ports, ts, r.meta, r.scenario_toml)

    assert outages(clocked((0.0, 0.0)), "rl->rr") == []
    # Bursts at 9.0 and 15.0 s, none between.
    (o,) = outages(clocked((10.0, 13.5)), "rl->rr")
    assert o["from_s"] < 9.0 and o["to_s"] > 15.0 and o["delivered"] < 0.01


def test_a_declared_port_no_bulk_flow_crosses_or_the_run_lacks_is_refused():
    """A bottleneck declared the wrong way round (rr->rl for flows from the left) is crossed by
    none of the run's bulk flows: its stalls and outages would read as none in every run. It is
    an error naming the port and the run, as a port the run lacks already was for stalls; for
    outages a port the run lacks is refused too. Before, both gave "no stall" and "no
    outage" (the outage rule skipped a missing port)."""
    from ecnlab.errors import ExperimentError
    from ecnlab.experiments.base import Experiment, RunSet

    class Toy(Experiment):
        name = "toy.port"
        port = "rr->rl"

        def bottleneck(self, run_name: str) -> str:
            return self.port

    runs = {"x-s1": _with_gap(9e6, (3.0, 4.5))}
    with pytest.raises(ExperimentError, match=r"'rr->rl', which none of run x-s1's 2 bulk flow\(s\) crosses"):
        RunSet(runs, Toy()).stall_of("x-s1")
    with pytest.raises(ExperimentError, match=r"'rr->rl', which none of run x-s1's"):
        RunSet(runs, Toy()).outages_of("x-s1")
    lacking = Toy()
    lacking.port = "nowhere"
    with pytest.raises(ExperimentError, match="'nowhere', which run x-s1 has no port of"):
        RunSet(runs, lacking).outages_of("x-s1")
    right = Toy()
    right.port = "rl->rr"
    assert len(RunSet(runs, right).outages_of("x-s1")) == 1
    # A run with no bulk flow (only short ones) has nothing for the port to be crossed by.
    r = runs["x-s1"]
    short = ecnlab.Results(r.flows.with_columns(pl.lit(10_000, dtype=pl.Int64).alias("size_bytes"), pl.lit(0.5).alias("fct_s")), r.ports, r.timeseries, r.meta, r.scenario_toml)
    assert RunSet({"x-s1": short}, Toy()).stall_of("x-s1") is None


def test_an_outage_check_that_could_not_be_made_says_so():
    """Without queue samples of the port, without delivery samples or without a bulk flow the
    outage rule cannot look: the run's outages are "not checked" with the reason, on the
    claims made on it (one phrase per reason, with its seeds) and in summary.json, instead of
    reading as "no outage". Before, all three gave an empty list and nothing said so."""
    from ecnlab.experiments.base import Experiment, RunSet, checked_outages, claim
    from ecnlab.experiments.verdict import Claim

    r = _with_gap(9e6, (3.0, 4.5))
    blind = ecnlab.Results(r.flows, r.ports, r.timeseries.filter(pl.col("kind") != "queue_pkts"), r.meta, r.scenario_toml)
    # Without delivery samples the stall rule reads the port's busy fraction.
    unsampled = ecnlab.Results(r.flows, r.ports.with_columns(pl.lit(0.9).alias("utilization")), r.timeseries.filter(pl.col("kind") != "delivery_bps"), r.meta, r.scenario_toml)
    short = ecnlab.Results(r.flows.with_columns(pl.lit(10_000, dtype=pl.Int64).alias("size_bytes"), pl.lit(0.5).alias("fct_s")), r.ports, r.timeseries, r.meta, r.scenario_toml)
    assert checked_outages(blind, "rl->rr") == ([], "no queue samples of rl->rr")
    assert checked_outages(unsampled, "rl->rr") == ([], "no delivery samples")
    assert checked_outages(short, "rl->rr") == ([], "no bulk flow in the run")
    assert checked_outages(r, "rr->rl") == ([], "no bulk flow crosses rr->rl")
    assert len(checked_outages(r, "rl->rr")[0]) == 1 and checked_outages(r, "rl->rr")[1] == ""

    class Toy(Experiment):
        name = "toy.blind"

        def bottleneck(self, run_name: str) -> str:
            return "rl->rr"

    # y's runs are another scenario than x's (a claim on the same runs is not comparable).
    y = _with_gap(9e6, (3.0, 4.5), seed=2)
    y_unsampled = ecnlab.Results(y.flows, unsampled.ports, y.timeseries.filter(pl.col("kind") != "delivery_bps"), y.meta, y.scenario_toml)
    runs = {**{f"x-s{k}": blind for k in range(1, 6)}, **{f"y-s{k}": y for k in range(1, 4)}, "y-s4": y_unsampled, "y-s5": y_unsampled}
    rs = RunSet(runs, Toy())
    assert rs.outages_unchecked("x-s1") == "no queue samples of rl->rr" and rs.outages_unchecked("y-s1") == ""
    x = rs.per_seed("x", lambda r: 1.0)
    assert x.outages == {} and x.outages_unchecked == {s: "no queue samples of rl->rr" for s in range(1, 6)}
    c = claim("toy", Claim("less"), x, rs.per_seed("y", lambda r: 2.0))
    (flag,) = [f for f in c.decision.flags if f.startswith("outages not checked")]
    assert flag == "outages not checked: a (x): no queue samples of rl->rr (seeds 1–5); b (y): no delivery samples (seeds 4, 5)"
    # Kept through derive() and join().
    assert x.derive({s: 3.0 for s in x}).outages_unchecked == x.outages_unchecked
    from ecnlab.experiments.base import SeedValues

    assert SeedValues.join([x, rs.per_seed("y", lambda r: 2.0)], max).outages_unchecked[4] == "x: no queue samples of rl->rr; y: no delivery samples"


def test_summary_json_lists_the_runs_whose_outages_were_not_checked(tmp_path, monkeypatch):
    """A reproduction whose runs sample no flows: summary.json lists each run with why its
    outages were not checked, and the claim's row says it."""
    from ecnlab import experiments as ex
    from ecnlab.experiments.base import claim
    from ecnlab.experiments.verdict import Claim

    class Unsampled(ex.Experiment):
        name = "toy.unsampled"
        title = "runs without flow samples"
        quick_seeds = 5

        def bottleneck(self, run_name: str) -> str:
            return "rl->rr"

        def runs(self, quick, seeds, reading):
            def one(rate: str) -> ecnlab.Scenario:
                s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate=rate, duration="2s")
                d = s.add_tcp_flow("l0", "r0", cc="newreno", name="f0").to_dict()
                d["measure"] = {"sample_flows": False}
                return ecnlab.Scenario.from_dict(d)

            return ex.for_seeds({"slow": one("5Mbps"), "fast": one("10Mbps")}, seeds)

        def analyze(self, runs, ctx):
            f = lambda r: r.port("rl->rr")["dequeued_bytes"]  # noqa: E731
            return [claim("bytes sent", Claim("less"), runs.per_seed("slow", f), runs.per_seed("fast", f))]

    exp = Unsampled()
    monkeypatch.setitem(ex._REGISTRY, exp.name, exp)
    summary = ex.reproduce(exp.name, tmp_path / "out", quick=True)
    assert len(summary["outages_unchecked"]) == 10 and {b["why"] for b in summary["outages_unchecked"]} == {"no delivery samples"}
    (c,) = summary["comparisons"]
    assert "outages not checked: a (slow): no delivery samples (seeds 1–5); b (fast): no delivery samples (seeds 1–5)" in c["decision"]["flags"]
    assert "Runs whose outages were not checked (10)" in (tmp_path / "out" / "summary.md").read_text()
    # The rule the report states says it (and every placeholder of it is filled in).
    assert "outages could not be checked" in summary["rule"]["text"] and "{" not in summary["rule"]["text"]


def test_a_runs_outages_are_summarised_in_the_claim_row():
    """A rival sitting out timeouts for most of a 200-s run has 20–30 outages per seed, and the
    row listed every one (one of HFCC's Fig. 6 rows carried about 150): per run and port the
    row now gives their number, their seconds in all and the longest; one span keeps its bounds
    and what it delivered. Every span stays in outages_of (summary.json's "outages")."""
    from ecnlab.experiments.base import Experiment, RunSet, outages_text

    class Toy(Experiment):
        name = "toy.spans"

        def bottleneck(self, run_name: str) -> str:
            return "rl->rr"

    one = _with_gap(9e6, (3.0, 4.5))
    two = _with_gap(9e6, (3.0, 4.5))
    # A second silence, its queue sampled empty, from 8 to 10 s.
    in_gap = (pl.col("time_s") > 8.0 + 1e-9) & (pl.col("time_s") <= 10.0 + 1e-9)
    two = ecnlab.Results(two.flows, two.ports, two.timeseries.with_columns(pl.when(in_gap).then(0.0).otherwise(pl.col("value")).alias("value")), two.meta, two.scenario_toml)
    rs = RunSet({"x-s1": one, "x-s2": two}, Toy())
    assert len(rs.outages_of("x-s2")) == 2
    got = rs.per_seed("x", lambda r: 1.0).outages
    assert got[1] == "rl->rr: 1 span, 3.00–4.50 s (0.0% of what it offered)"
    assert got[2] == "rl->rr: 2 spans, 3.5 s in all, longest 8.00–10.00 s"
    # Only the spans the measured window overlaps are counted.
    assert rs.per_seed("x", lambda r: 1.0, window=(6.0, None)).outages[2] == "rl->rr: 1 span, 8.00–10.00 s (0.0% of what it offered)"
    # Per port, in the order found.
    spans = [{"port": p, "from_s": a, "to_s": b, "span_s": b - a, "delivered": 0.0} for p, a, b in (("p", 1.0, 2.0), ("q", 1.0, 3.0), ("p", 5.0, 9.5), ("p", 20.0, 21.0))]
    assert outages_text(spans) == "p: 3 spans, 6.5 s in all, longest 5.00–9.50 s; q: 1 span, 1.00–3.00 s (0.0% of what it offered)"

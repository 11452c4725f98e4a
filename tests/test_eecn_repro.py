"""End to end: ``ecnlab reproduce eecn --quick`` and the directions of the EECN paper that our
simulation supports (the report lists the ones it does not)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import ecnlab
from ecnlab import experiments
from ecnlab.experiments import eecn
from ecnlab.experiments.base import Reading, stall
from ecnlab.scenario import Scenario

EXPERIMENTS = ("eecn.dynamics", "eecn.fct", "eecn.table3", "eecn.table4")


@pytest.fixture(scope="module")
def quick(quick_reproduction):
    """One quick reproduction of every EECN experiment, shared by the tests below (and the
    session's other users of it)."""
    return quick_reproduction("eecn")


def comparison(summary: dict, metric: str) -> dict:
    found = [c for c in summary["comparisons"] if c["metric"] == metric]
    assert len(found) == 1, f"{metric!r}: {len(found)} comparisons; metrics: {[c['metric'] for c in summary['comparisons']][:20]}"
    return found[0]


def flows(out: Path, experiment: str, config: str) -> pl.DataFrame:
    runs = sorted((out / "runs").glob(f"{experiment}-{config}-s*"))
    assert runs, f"no runs of {experiment} {config}"
    return pl.concat([pl.read_parquet(r / "flows.parquet") for r in runs])


def ports(out: Path, experiment: str, config: str) -> pl.DataFrame:
    runs = sorted((out / "runs").glob(f"{experiment}-{config}-s*"))
    assert runs
    return pl.concat([pl.read_parquet(r / "ports.parquet") for r in runs])


def test_every_experiment_is_registered_with_quick_and_full_forms():
    assert set(EXPERIMENTS) <= set(experiments.names())
    for name in EXPERIMENTS:
        exp = experiments.get(name)
        quick_runs = exp.runs(True, exp.seeds(True), Reading(exp.axes))
        full_runs = exp.runs(False, exp.seeds(False), Reading(exp.axes))
        assert len(exp.seeds(False)) > len(exp.seeds(True)) >= 5
        assert len(full_runs) > len(quick_runs) > 0
        some = next(iter(full_runs.values()))
        assert some["duration"] == "30s" and next(iter(quick_runs.values()))["duration"] == "6s"


def test_report_is_complete(quick):
    out, summary = quick
    assert (out / "report.html").is_file()
    assert json.loads((out / "summary.json").read_text()) == summary
    assert {s["experiment"] for s in summary["experiments"]} == set(EXPERIMENTS)
    pngs = list((out / "figures").glob("*.png"))
    assert len(pngs) >= 14  # one delay reading: every figure once
    assert all(p.stat().st_size > 5000 for p in pngs)
    html = (out / "report.html").read_text()
    for text in ("RTT₀ 1.4 ms", "Table 4", "Initial windows", "Readings: delays ∈ {short, bench}, default short"):
        assert text in html
    # Every published number of Table 4 appears beside ours, VCP included now that it is built;
    # absolute counts from a run of another length are not comparable, and say why.
    for scheme, label in (("newreno", "NewReno"), ("ecn", "NewReno+ECN"), ("vcp", "VCP"), ("eecn", "EECN")):
        c = comparison(summary, f"{label}: packets dropped")
        assert c["paper"] == eecn.PAPER_T4[scheme][0]
        assert c["ours"] is not None and c["ours"]["n"] == 5
        assert c["verdict"] == "not comparable" and "run length" in c["decision"]["reason"]
    # The headline counts each claim once (a family once); claims against reconstructed rivals
    # and claims whose statement is ours apart.
    units = summary["headline_units"]
    groups = ("verdicts", "verdicts_vs_reconstructed", "verdicts_our_statements")
    assert sum(sum(summary[g].values()) for g in groups) == units["claims"] + units["families"]
    assert units["claims"] + units["claims_in_families"] + units["repeats"] == sum(1 for c in summary["comparisons"] if c["verdict"])


def test_eecn_drops_fewer_packets_than_ecn_and_newreno(quick):
    """Against VCP the ratio is undefined: VCP's routers keep the queue near empty and drop
    nothing either (the report says so)."""
    _, summary = quick
    for other in ("ECN", "NewReno"):
        c = comparison(summary, f"drops EECN/{other}")
        assert c["verdict"] == "holds", c
        assert c["decision"]["agree"] == 5
    vcp = comparison(summary, "drops EECN/VCP")
    assert vcp["verdict"] == "inconclusive" and "0 vs 0" in vcp["decision"]["reason"]


def test_eecn_marks_fewer_packets_than_ecn_at_the_top_level(quick):
    """CL(2) marks (the ones that cut a window, like CE; Table 4's count as we read it, the
    default marks = cl2) are far fewer than ECN's CE marks. Counting CL(1) as well (marks =
    all), EECN marks more than ECN in our runs; the report says so."""
    out, summary = quick
    assert comparison(summary, "marks EECN/ECN")["verdict"] == "holds"
    assert comparisons_of(out, summary, "eecn.table4", {"marks": "all"})["marks EECN/ECN"].verdict.value == "contradicted"
    p = ports(out, "eecn.table4", "dumbbell-short-eecn").filter(pl.col("port") == "rl->rr")
    ecn = ports(out, "eecn.table4", "dumbbell-short-ecn").filter(pl.col("port") == "rl->rr")
    assert p["marked_ce"].sum() < ecn["marked_ce"].sum()
    assert p["dropped_pkts"].sum() < ecn["dropped_pkts"].sum()


def comparisons_of(out: Path, summary: dict, name: str, reading: dict) -> dict:
    """The comparisons of experiment ``name`` under an analysis reading, on the quick form's
    default runs (an analysis reading runs nothing else), by metric."""
    from ecnlab.experiments._standins import comparisons_under
    from ecnlab.results import read_run_dir

    exp = experiments.get(name)
    (section,) = [s for s in summary["experiments"] if s["experiment"] == exp.name]
    runs = {k[len(exp.name) + 1 :]: read_run_dir(out / d) for k, d in section["run_dirs"]["default"].items()}
    return {c.metric: c for c in comparisons_under(exp, runs, True, section["seeds"], Reading(exp.axes, reading))}


def test_the_marks_counted_are_the_runs_codepoints(quick):
    """What each marks claim counts, value by value: under marks = cl2 (the default) each arm's
    per-seed value is the bottleneck's count of packets raised to 11 (marked_ce: CE, CL(2),
    VCP's overload code), under marks = all every codepoint it changed (marked_pkts), read
    from each seed's ports table. Before, the test asked only whether the claims were
    comparable, so a count of the wrong codepoint passed it."""
    out, summary = quick
    per_scheme = {}
    for k in ("eecn", "ecn", "vcp"):
        t = ports(out, "eecn.table4", f"dumbbell-short-{k}").filter(pl.col("port") == "rl->rr")
        assert t.height == 5
    for name, col in (("cl2", "marked_ce"), ("all", "marked_pkts")):
        for k in ("eecn", "ecn", "vcp"):
            runs = sorted((out / "runs").glob(f"eecn.table4-dumbbell-short-{k}-s*"))
            per_scheme[(name, k)] = {int(r.name.rpartition("-s")[2]): pl.read_parquet(r / "ports.parquet").filter(pl.col("port") == "rl->rr")[col].item() for r in runs}
    # EECN's CL(1) marks exist, so the two readings count different things.
    assert all(per_scheme[("all", "eecn")][s] > per_scheme[("cl2", "eecn")][s] for s in per_scheme[("all", "eecn")])
    by_reading = {"cl2": {c["metric"]: c for c in summary["comparisons"]}, "all": comparisons_of(out, summary, "eecn.table4", {"marks": "all"})}
    for reading, comps in by_reading.items():
        for metric, a, b in (("marks EECN/ECN", "eecn", "ecn"), ("marks EECN/VCP", "eecn", "vcp"), ("marks VCP/ECN", "vcp", "ecn")):
            c = comps[metric]
            got = (c["per_seed"]["a"], c["per_seed"]["b"]) if isinstance(c, dict) else (c.a, c.b)
            got = tuple({int(s): v for s, v in arm.items()} for arm in got)
            assert got == (per_scheme[(reading, a)], per_scheme[(reading, b)]), (reading, metric)


def test_cl2_count_of_a_hand_computed_burst():
    """A count we know by hand, through the experiment's own router and count function: 60
    ECT(1) packets of 1000 bytes back to back at 1 Gbit/s (one every 8 µs) into the EECN
    router of the 100-packet RED buffer, drained at 1 Mbit/s (8 ms a packet, so none leaves
    during the burst but the first, dequeued onto the wire at once). Packet k ≥ 2 finds k − 2
    packets queued, and over the last 100 ms k arrivals (itself included) against 1 departure,
    so eq. (1) gives CL = ((k − 2) + (k − 1)) / 100 = (2k − 3) / 100, an odd number of
    hundredths that never equals a threshold. With (Th1, Th2) = (0.3, 0.5): CL(1) for
    2k − 3 ∈ [30, 50), k = 17…26 (10 packets), CL(2) for k ≥ 27 (34 packets); with (0.2, 0.4)
    k = 12…21 and 22…60 (10 and 39); with (0.5, 0.7) 27…36 and 37…60 (10 and 24). RED's
    average stays far below min_th (w_q 0.002), so nothing is dropped. At the boundary, with
    (Th1, Th2) = (0.31, 0.51) packet 17 has CL = 31/100 = Th1 exactly and packet 27 CL = 51/100
    = Th2 exactly (31.0 / 100.0 is the double nearest 0.31, as the literal is): §4.3's cases
    "Th2 > CL ≥ Th1" and "Th2 ≤ CL" make them CL(1) and CL(2), so k = 17…26 (10) and 27…60
    (34); with "> Th" they would be 18…27 (10, or 9 with "> Th1" alone) and 28…60 (33)."""
    assert 31.0 / 100.0 == 0.31 and 51.0 / 100.0 == 0.51
    for th, cl1, cl2 in (((0.3, 0.5), 10, 34), ((0.2, 0.4), 10, 39), ((0.5, 0.7), 10, 24), ((0.31, 0.51), 10, 34)):
        for router in eecn.AXES["eecn_router"].values:
            q, m = eecn.router("eecn", th, router)
            s = Scenario.dumbbell(left=1, right=1, bottleneck_rate="1Mbps", bottleneck_delay="1ms", access_rate="1Gbps", access_delay="0.1ms", queue=q, marker=m, duration="1s")
            s = s.add_udp_flow("l0", "r0", rate="1Gbps", packet_size=1000, stop="0.000476s", udp_ecn="ect1", name="burst")
            p = ecnlab.run(s).port("rl->rr")
            assert (p["arrived_pkts"], p["dropped_pkts"]) == (60, 0), (th, router)
            assert eecn.cl2_marks(p) == cl2, (th, router)
            assert p["marked_pkts"] == cl1 + cl2 and p["marked_ect0"] == cl1, (th, router)


def test_eecn_routers_red_drops_ect_packets_as_new_renos_does_by_default():
    """The eecn_router reading: by default RED beneath the EECN marker runs without ECN and
    keeps its early and forced drops for ECT packets (owns_ect = false); marker_owns is the
    marker taking over RED's decision. Before, the marker always owned ECT packets, so an
    EECN packet could be dropped only by a full buffer and the drop claims against New Reno
    were tilted by construction."""
    exp = experiments.get("eecn.table4")
    assert exp.axes[[a.name for a in exp.axes].index("eecn_router")].default == "red_drops"
    for reading, owns in (({}, False), ({"eecn_router": "marker_owns"}, True)):
        rd = Reading(exp.axes, reading)
        sc = exp.runs(True, [1], rd)["dumbbell-short-eecn-s1"]
        topo = (sc.to_dict() if hasattr(sc, "to_dict") else sc)["topology"]
        assert topo["bottleneck_marker"]["owns_ect"] is owns and topo["bottleneck_queue"]["ecn"] is owns
        newreno = exp.runs(True, [1], rd)["dumbbell-short-newreno-s1"]
        assert (newreno.to_dict() if hasattr(newreno, "to_dict") else newreno)["topology"]["bottleneck_queue"]["ecn"] is False


def test_eecn_router_drops_below_a_full_buffer_under_the_default_reading(quick):
    """§4.3's 'packet dropping when there is still ample space in the queue': with Table 3's
    (0.5, 0.7) thresholds the EECN queue reaches RED's min_th and RED drops EECN packets early
    (quick form: one early drop in seeds 2 and 3, the mean queue ~30 of 100). Before, no EECN
    packet was ever dropped below a full buffer."""
    out, _ = quick
    early = ports(out, "eecn.table3", "th0.5-0.7-short").filter(pl.col("port") == "rl->rr")["dropped_early"]
    assert early.sum() > 0


def test_marks_default_is_table_4s_codepoint_11():
    """Table 4's "packets marked" read as the codepoint 11 (CL(2) for EECN): the VCP count of
    the same column (1326 of ~3 M packets) cannot hold VCP's high-load code, which the VCP
    router writes while the load factor is at or above ρ₀ = 80 %, the boundary our VCP
    router runs with."""
    assert eecn.AXES["marks"].default == "cl2" and eecn.AXES["marks"].values == ("cl2", "all")
    exp = experiments.get("eecn.table4")
    sc = exp.runs(True, [1], Reading(exp.axes))["dumbbell-short-vcp-s1"]
    # The fully-defaulted scenario: the VCP router's low/high boundary is ρ₀.
    assert f"low_load = {eecn.VCP_RHO0}" in ecnlab.validate(Scenario.from_dict(sc)).splitlines()


def test_vcp_load_codes_are_not_set_against_congestion_marks(quick):
    """VCP's "marks" under marks = all are its load codes (the high-load code on every packet
    at or above ρ₀ = 80 % load): the claims setting them against ECN's or EECN's congestion
    marks are not comparable; under marks = cl2 (the default: VCP's overload code, a window
    cut like CE) they are decided. What each arm counts, value by value:
    test_the_marks_counted_are_the_runs_codepoints."""
    out, summary = quick
    every = comparisons_of(out, summary, "eecn.table4", {"marks": "all"})
    for m in ("marks EECN/VCP", "marks EECN/VCP: size", "marks VCP/ECN"):
        assert every[m].verdict.value == "not comparable" and "load codes" in every[m].decision.reason, m
        assert comparison(summary, m)["verdict"] != "not comparable", m
    assert every["marks EECN/ECN"].verdict.value != "not comparable"


def test_eecn_cuts_short_flow_fct_against_ecn_at_short_rtt(quick):
    _, summary = quick
    c = comparison(summary, "[dumbbell] SF FCT EECN/ECN")
    assert c["verdict"] == "holds" and c["ours"]["max"] < 1.0


def test_eecn_keeps_a_shorter_queue_and_delay_than_ecn_and_newreno(quick):
    _, summary = quick
    for other in ("NewReno+ECN", "NewReno"):
        for metric in ("mean bottleneck queue", "bottleneck sojourn", "end-to-end delay"):
            assert comparison(summary, f"{metric} EECN/{other}")["verdict"] == "holds"


def test_initial_windows_in_the_reproduction(quick):
    """Every EECN short flow starts at 10, 5 or 1 segments; behind classic ECN elephants some
    start below 10; flows of other schemes start at the configured 10."""
    out, _ = quick
    for cfg in ("coexist-short-eecn", "dumbbell-short-eecn", "multihop-short-eecn"):
        f = flows(out, "eecn.fct", cfg).filter(pl.col("name").str.starts_with("SF"))
        assert set(f["init_cwnd"].to_list()) <= {10, 5, 1}, cfg
    behind_ecn = flows(out, "eecn.fct", "coexist-short-eecn").filter(pl.col("name").str.starts_with("SF"))
    assert 5 in behind_ecn["init_cwnd"].to_list()
    for cfg in ("dumbbell-short-ecn", "dumbbell-short-newreno", "coexist-short-ecn"):
        assert set(flows(out, "eecn.fct", cfg)["init_cwnd"].to_list()) == {10}


def test_initial_window_is_10_5_1_by_the_level_the_syn_ack_meets():
    """§4.4.1 through the whole stack: an ECT(1) UDP load slightly above the bottleneck rate
    fills the EECN router's queue; a download whose SYN-ACK crosses it while it predicts
    30–50 % occupancy starts with 5 segments, above 50 % with 1, after it drained with 10."""
    s = eecn.scenario(eecn.Setup("eecn", delays="short", quick=True), 1)
    s["duration"] = "2s"
    load = {"name": "load", "kind": "udp", "src": "l2", "dst": "r2", "rate": "101.5Mbps", "udp_ecn": "ect1", "stop": "0.45s"}

    def download(name: str, start: float) -> dict:
        return {"name": name, "src": "l0", "dst": "r0", "size": 9000, "start": start, "client_initiated": True, "cc": "eecn"}

    s["flows"] = [load, download("cl1", 0.08), download("cl2", 0.3), download("drained", 1.0)]
    r = ecnlab.run(Scenario.from_dict(s))
    assert [r.flow(n)["init_cwnd"] for n in ("cl1", "cl2", "drained")] == [5, 1, 10]
    assert all(r.flow(n)["fct_s"] is not None for n in ("cl1", "cl2", "drained"))


def test_owd_of_a_lone_segment_is_the_path_delay():
    """The end-to-end delay the report uses: one 1000-byte segment over an idle dumbbell takes
    the three links' propagation plus three serialisations of its 1042 link-layer bytes. (The
    client opens the connection, so no handshake ACK waits ahead of it in the server's NIC.)"""
    s = eecn.scenario(eecn.Setup("newreno", delays="bench", quick=True), 1)
    s["flows"] = [{"name": "one", "src": "l0", "dst": "r0", "size": 1000, "cc": "newreno", "client_initiated": True}]
    r = ecnlab.run(Scenario.from_dict(s))
    wire = (1000 + 40 + eecn.FRAMING) * 8
    expect = 2 * 1e-3 + 10e-3 + 2 * wire / 1e9 + wire / 100e6
    assert r.flow("one")["owd_mean_s"] == pytest.approx(expect, abs=1e-9)
    assert r.flow("one")["owd_max_s"] == pytest.approx(expect, abs=1e-9)


def test_a_missing_scheme_is_reported_not_faked(tmp_path, monkeypatch):
    real = eecn.unavailable

    def without_vcp(scheme: str):
        return "unknown congestion controller \"vcp\"" if scheme == "vcp" else real(scheme)

    monkeypatch.setattr(eecn, "unavailable", without_vcp)
    exp = experiments.get("eecn.table4")
    runs = exp.runs(True, [1], Reading(exp.axes))
    assert runs and not any("-vcp-" in n for n in runs)
    summary = experiments.reproduce("eecn.table4", tmp_path / "out", quick=True, seeds=1, jobs=2)
    c = comparison(summary, "drops EECN/VCP")
    assert c["ours"] is None and c["verdict"] == "not comparable"
    assert "not available" in c["decision"]["reason"]
    one = comparison(summary, "drops EECN/ECN")
    assert one["ours"]["n"] == 1 and one["verdict"] == "inconclusive" and "fewer than 5" in one["decision"]["reason"]


def test_elephants_on_an_idle_path_grow_instead_of_stalling():
    """The run that exposed EECN's stalled window (Table 3, thresholds (0.2, 0.4), RTT₀ 24 ms,
    seed 7): with RTT samples at a millisecond clock both elephants finish; with exact samples
    their windows stay near 16 segments and the framework flags the run as a stall."""

    def run(**changed):
        rd = Reading(eecn.SENDER_AXES, {"delays": "bench", **changed})
        return ecnlab.run(Scenario.from_dict(eecn.scenario(eecn.setup("eecn", rd, False, thresholds=(0.2, 0.4)), 7)))

    for r in (run(), run(rtt_compare="inclusive")):
        assert all(x is not None for x in eecn.flows_of(r, "EF")["fct_s"].to_list())
        assert stall(r, eecn.BOTTLENECK) is None
    frozen = run(rtt_resolution_s=0.0)
    assert eecn.flows_of(frozen, "EF")["fct_s"].to_list() == [None, None]
    st = stall(frozen, eecn.BOTTLENECK)
    assert st is not None and st["utilisation"] < 0.25


def test_every_parameter_of_every_run_has_a_source_under_every_reading():
    """ns-3's hosts (the paper's simulator) and a source for every other key of every run's
    fully-defaulted scenario, under every reading."""
    from ecnlab.experiments._provenance import check_sources, join
    from ecnlab.scenario import load_scenario

    for name in EXPERIMENTS:
        e = experiments.get(name)
        assert e.hosts is not None and e.hosts.name == "ns-3"
        for rd in Reading.choose(e.axes, "all"):
            runs = {k: load_scenario(v).to_toml() for k, v in e.runs(True, e.seeds(True), rd).items()}
            own = e.provenance(True, rd)
            check_sources(own)
            p = join(runs, own, e.hosts)
            assert p.complete, (name, rd.name, p.problems())


def test_every_reading_changes_the_runs_of_each_experiment_that_has_it():
    def scenarios(e, rd: Reading) -> str:
        return json.dumps(e.runs(True, e.seeds(True), rd), sort_keys=True, default=str)

    for name in EXPERIMENTS:
        e = experiments.get(name)
        base = scenarios(e, Reading(e.axes))
        for rd in Reading.choose(e.axes, "all")[1:]:
            ax = next(a for a in e.axes if a.name == rd.name.split("=")[0])
            if ax.affects == "runs":
                assert scenarios(e, rd) != base, (name, rd.name)


def test_the_tcp_readings_are_the_bench_table_and_ns3s_hosts():
    from ecnlab.experiments.base import NS3_HOSTS

    rd = Reading(eecn.SENDER_AXES, {"tcp": "ns3"})
    s = eecn.scenario(eecn.setup("eecn", rd, True), 1)
    assert s["tcp"] == NS3_HOSTS.tcp() | {"mss": 1000, "rcv_buf": 64 << 20}
    assert eecn.scenario(eecn.setup("eecn", Reading(eecn.SENDER_AXES), True), 1)["tcp"] == eecn.TCP


#: Table 3 as printed (EF Mbit/s, SF Mbit/s, drops, EF delay ms, SF delay ms), typed from the
#: paper, not from the experiment's module.
TABLE3 = {"th0.5-0.7": (48.7, 16.1, 425, 2.5, 3.0), "th0.3-0.5": (48.6, 16.1, 462, 1.9, 2.7), "th0.2-0.4": (46.8, 12.7, 614, 1.86, 2.5)}
#: The orderings claimed: (quantity, its column, the arm the paper has lower, the other arm).
TABLE3_CLAIMED = (
    ("packets dropped", 2, "th0.5-0.7", "th0.3-0.5"),
    ("packets dropped", 2, "th0.3-0.5", "th0.2-0.4"),
    ("SF throughput", 1, "th0.2-0.4", "th0.3-0.5"),
    ("EF throughput", 0, "th0.2-0.4", "th0.3-0.5"),
    ("EF end-to-end delay", 3, "th0.3-0.5", "th0.5-0.7"),
    ("SF end-to-end delay", 4, "th0.3-0.5", "th0.5-0.7"),
    ("SF end-to-end delay", 4, "th0.2-0.4", "th0.3-0.5"),
)


def test_table3_orderings_are_the_papers_arms_and_directions(quick):
    """Each Table 3 ordering claimed, against the table typed from the paper: the arm the paper
    has lower is arm a of a "less" claim (a flipped direction or swapped arms fails), the size
    claim's target is the paper's two numbers' ratio, drop counts carry the count tie rule
    (COUNT_TIE) and the rest the framework's 2 %; no other ordering is claimed (1.86 vs 1.9 is
    below the paper's printing precision). Before, the test checked only that a drop claim was
    a direction, so ``lower_is_claim=False`` or swapped arms passed it."""
    out, summary = quick
    got = {}
    for c in summary["comparisons"]:
        if c["experiment"] == "eecn.table3" and c.get("tests") == "direction" and c.get("arms"):
            got[(c["metric"].split(":")[0], c["arms"]["a"], c["arms"]["b"])] = c
    want = {(q, f"{lo}-short", f"{hi}-short"): (i, lo, hi) for q, i, lo, hi in TABLE3_CLAIMED}
    assert set(got) == set(want), sorted(set(got) ^ set(want))
    for key, (i, lo, hi) in want.items():
        c = got[key]
        assert TABLE3[lo][i] < TABLE3[hi][i], key
        assert c["kind"]["kind"] == "less", key
        assert c["kind"]["min_effect"] == 0.02, key
        assert c["kind"].get("count_spread") == (2.0 if key[0] == "packets dropped" else None), key
        size = comparison(summary, c["metric"] + ": size")
        if "not testable" in json.dumps(size):  # the band of the paper's ratio ±25 % holds 1
            assert 0.75 <= TABLE3[lo][i] / TABLE3[hi][i] * 0.75 or TABLE3[lo][i] / TABLE3[hi][i] * 0.75 <= 1 <= TABLE3[lo][i] / TABLE3[hi][i] * 1.25, key
        else:
            assert size["kind"]["target"] == pytest.approx(TABLE3[lo][i] / TABLE3[hi][i]), key
    # The drop claims' values are the bottleneck's drop counts of the paper-lower arm (a).
    c = got[("packets dropped", "th0.5-0.7-short", "th0.3-0.5-short")]
    t = ports(out, "eecn.table3", "th0.5-0.7-short").filter(pl.col("port") == "rl->rr")
    assert sorted(c["per_seed"]["a"].values()) == sorted(float(v) for v in t["dropped_pkts"])
    assert comparison(summary, "packets dropped: (0.5, 0.7) vs (0.3, 0.5): size")["verdict"] == "not comparable"


def test_table3_drops_per_seed_under_each_router(quick):
    """What each router reading drops in Table 3's quick runs (the finding behind the default
    router): red_drops drops EECN packets early only at (0.5, 0.7), where the marker lets the
    queue reach RED's min_th, and none at the lower thresholds; marker_owns drops none
    (nothing fills the buffer). Neither gives the paper's more drops at lower thresholds."""
    out, summary = quick
    t3 = experiments.get("eecn.table3")
    for th in ((0.3, 0.5), (0.2, 0.4)):
        assert ports(out, "eecn.table3", f"th{th[0]:g}-{th[1]:g}-short").filter(pl.col("port") == "rl->rr")["dropped_pkts"].sum() == 0
    owns = Reading(t3.axes, {"eecn_router": "marker_owns"})
    runs = {n: ecnlab.run(Scenario.from_dict(sc)) for n, sc in t3.runs(True, [2, 3], owns).items()}
    assert all(r.port("rl->rr")["dropped_pkts"] == 0 for r in runs.values())


def test_drops_against_new_reno_are_fixed_by_the_router_under_marker_owns(quick):
    """Under eecn_router = marker_owns the EECN router cannot drop an ECT packet below a full
    buffer while New Reno's RED drops early: "EECN drops fewer than New Reno" (and its size) is
    decided by the router, declared fixed by the mechanism and counted apart. ECN's gentle RED
    (forced drops from 2·max_th, beyond the buffer) and VCP's DropTail drop ECT packets only at a
    full buffer too: those pairs compare overflows and stay claims; under red_drops none is
    fixed. Before, "drops EECN/NewReno" held under marker_owns like any finding."""
    from ecnlab.experiments.eecn import MARKER_OWNS_DROPS

    out, summary = quick
    owns = comparisons_of(out, summary, "eecn.table4", {"eecn_router": "marker_owns"})
    for m in ("drops EECN/NewReno", "drops EECN/NewReno: size"):
        assert owns[m].fixed == MARKER_OWNS_DROPS and owns[m].verdict.value == "fixed by the mechanism", m
    fixed = sorted(m for m, c in owns.items() if c.fixed)
    assert fixed == ["drops EECN/NewReno", "drops EECN/NewReno: size"]
    default = comparisons_of(out, summary, "eecn.table4", {})
    assert not [m for m, c in default.items() if c.fixed]
    t3 = comparisons_of(out, summary, "eecn.table3", {"eecn_router": "marker_owns"})
    assert not [m for m, c in t3.items() if c.fixed]


def test_the_ratio_tolerance_is_a_reading():
    """§7's −19 % (a ratio of 0.81) cannot be told from no effect at the default ±25 % (the
    band holds 1): reported not testable. Under ratio_tol = 0.1 it is tested, and a ratio of
    0.95 in every seed contradicts it."""
    from ecnlab.experiments.base import SeedValues, Stat

    class _Runs:
        def __init__(self, values):
            self.values = values

        def per_seed(self, config, f, window=None):
            return SeedValues(self.values[config], config=config)

        def stat(self, config, f):
            return Stat.of(self.values[config].values())

    runs = _Runs({"eecn": {s: 0.95 for s in range(1, 11)}, "ecn": {s: 1.0 for s in range(1, 11)}})
    _, wide = eecn.ratio_claim(runs, "e2e", "eecn", "ecn", None, 0.81, "−19 %", tol=eecn.RATIO_TOLERANCE)
    _, narrow = eecn.ratio_claim(runs, "e2e", "eecn", "ecn", None, 0.81, "−19 %", tol=0.1)
    assert "not testable" in wide.decision.reason and narrow.verdict.value == "contradicted"
    for name in EXPERIMENTS:
        assert "ratio_tol" in [a.name for a in experiments.get(name).axes], name

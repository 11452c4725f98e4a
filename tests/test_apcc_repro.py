"""APCC's experiments as declared (no runs): every parameter of every run has a source under
every reading, each figure's claims are made on that figure's runs, every stated size is
tested as a size beside its direction, and each reading changes the runs it is about."""

from __future__ import annotations

import json

from ecnlab.experiments import apcc, get
from ecnlab.experiments._provenance import check_sources, join
from ecnlab.experiments.base import Reading, SeedValues, Stat
from ecnlab.scenario import load_scenario

NAMES = ("apcc.motivation", "apcc.bwdrop", "apcc.cdf", "apcc.mobility", "apcc.params", "apcc.fairness")


def scenarios(name: str, reading: Reading) -> dict[str, dict]:
    e = get(name)
    return {k: load_scenario(v).to_dict() for k, v in e.runs(True, e.seeds(True), reading).items()}


def test_every_parameter_of_every_run_has_a_source_under_every_reading():
    for name in NAMES:
        e = get(name)
        for rd in Reading.choose(e.axes, "all"):
            runs = {k: load_scenario(v).to_toml() for k, v in e.runs(True, e.seeds(True), rd).items()}
            own = e.provenance(True, rd)
            check_sources(own)
            p = join(runs, own, e.hosts)
            assert p.complete, (name, rd.name, p.problems())


def test_every_reading_changes_the_runs_of_each_experiment_that_has_it():
    for name in NAMES:
        e = get(name)
        base = json.dumps(scenarios(name, Reading(e.axes)), sort_keys=True)
        for rd in Reading.choose(e.axes, "all")[1:]:
            assert json.dumps(scenarios(name, rd), sort_keys=True) != base, (name, rd.name)


def test_the_p_scheduler_is_mac80211s_fq_codel_and_zhuge_runs_over_copa_by_default():
    rd = Reading(get("apcc.cdf").axes)
    runs = scenarios("apcc.cdf", rd)
    q = runs["psched-s1"]["topology"]["ap_queue"]
    assert (q["target"], q["quantum"], q["limit"], q["flows"], q["overflow"]) == ("20ms", 300, 8192, 4096, "mac80211")
    assert {f["cc"] for f in runs["zhuge-s1"]["flows"]} == {"copa"}
    # One batch stays below K (§3.2), and the schedule is the hop's throughput.
    assert runs["apcc-s1"]["topology"]["wireless"]["batch"] == {"max_pkts": apcc.K_PKTS - 1, "overhead": "0s"}


def test_figure_2s_drop_is_at_5_s_and_figure_4s_at_4_s():
    def drop_at(name: str) -> str:
        runs = scenarios(name, Reading(get(name).axes))
        return runs["cubic-s1"]["topology"]["wireless"]["schedule"][0]["at"]

    assert drop_at("apcc.motivation") == "5.000000s"
    assert drop_at("apcc.bwdrop") == "4.000000s"


class _Runs:
    """Per-seed values of one metric per configuration, as RunSet hands them to claims."""

    def __init__(self, values: dict[str, dict[int, float]]):
        self.values = values

    def per_seed(self, config, f):
        return SeedValues(self.values[config], config=config)

    def stat(self, config, f):
        return Stat.of(self.values[config].values())


def test_a_stated_size_is_tested_as_a_size_beside_its_direction():
    """Before, "−70 %" was decided as plain a < b: APCC's queue at 0.7 % of Zhuge's held."""
    runs = _Runs({"apcc": {s: 1.0 for s in range(1, 6)}, "zhuge": {s: 140.0 + s for s in range(1, 6)}})
    direction, size = apcc.reduction("p95 AP queue: APCC vs Zhuge", runs, "apcc", "zhuge", None, 0.30, "Fig. 5", "−70 %", "pkts")
    assert (direction.tests, direction.verdict.value) == ("direction", "holds")
    assert (size.tests, size.verdict.value) == ("size", "contradicted")
    assert size.rival == "zhuge" and not size.rival_reconstructed
    # At the paper's size, both hold.
    runs.values["apcc"] = {s: 0.3 * (140.0 + s) for s in range(1, 6)}
    assert [c.verdict.value for c in apcc.reduction("q", runs, "apcc", "zhuge", None, 0.30, "Fig. 5", "−70 %")] == ["holds", "holds"]
    # −18 % at ±50 % is the band [0.41, 1.23], which holds 1: the size is not testable.
    _, size = apcc.reduction("p95 RTT: APCC vs Zhuge", runs, "apcc", "zhuge", None, 0.82, "Fig. 5", "−18 %", "s")
    assert size.verdict.value == "not comparable" and "not testable" in size.decision.reason

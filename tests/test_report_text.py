"""How a reproduction report prints what it decided: numbers with the digits that tell them
apart, infinities named and counted, each claim's values in the unit of the paper's statement,
the per-seed values a verdict rests on, and legends beside the data rather than on it."""

from __future__ import annotations

import math

from ecnlab.experiments import Comparison, apcc, summary_markdown
from ecnlab.experiments import _verdict_cell, _why
from ecnlab.experiments.base import SeedValues, Stat
from ecnlab.experiments.eecn import grouped_bars
from ecnlab.experiments.verdict import Claim, not_comparable


def test_a_spread_is_printed_with_the_digits_that_tell_its_values_apart():
    """Before, Jain's index at 0.9991 – 0.9999 printed as "1 [1 – 1]"."""
    s = str(Stat.of([0.9991, 0.9996, 0.9999]))
    assert s == "0.9995 [0.9991 – 0.9999]"
    assert str(Stat.of([1.0] * 5)) == "1"
    assert str(Stat.of([0.9995, 1, 1, 1, 1])) == "0.9999 [0.9995 – 1]"
    # Three digits stay when they are enough.
    assert str(Stat.of([1.0, 3.0, 2.0])) == "2 [1 – 3]"
    assert str(Stat.of([3102, 3055, 3159])) == "3105 [3055 – 3159]"


def test_infinite_values_are_counted_and_named_not_averaged():
    """Before, a short flow that never finished made the table say "inf [12.1 – inf]"."""
    s = Stat.of([12.1, math.inf, 13.2, math.inf, 12.6])
    assert str(s) == "12.6 [12.1 – 13.2] in the other 3; ∞ in 2 of 5 seeds"
    assert s.text("a short flow unfinished") == "12.6 [12.1 – 13.2] in the other 3; a short flow unfinished in 2 of 5 seeds"
    never = Stat.of([math.inf] * 5, "no drop-free min_th in the sweep")
    assert str(never) == "no drop-free min_th in the sweep in all 5 of 5 seeds"
    assert never.to_json()["infinite"] == "no drop-free min_th in the sweep"
    assert "inf" not in str(Stat.of([math.inf, 1.0]))


def test_a_why_cell_without_a_claim_text_starts_with_its_reason():
    """Before, every not-comparable row's why cell started with ": "."""
    c = Comparison("m", "p", None, not_comparable(None, "the paper gives no quantity"))
    cell = _verdict_cell(c)
    assert ">the paper gives no quantity</td>" in cell and ">: " not in cell


def test_the_why_names_the_per_seed_values_the_verdict_rests_on():
    """Before: "4 agree, 1 disagree" beside arms printed "1" and "0.984 [0.936 – 1]", with
    nothing showing which seed disagreed and by how much."""
    a = SeedValues({1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 1.0}, config="seq")
    b = SeedValues({1: 0.936, 2: 1.0, 3: 1.0, 4: 1.0, 5: 0.984}, config="rnd")
    d = Claim("approx", within=0.05).decide(a, b)
    why = _why(d.to_json())
    assert "a/b by seed: 1: 1.068, 2: 1, 3: 1, 4: 1, 5: 1.016" in why
    # A direction claim at a smallest effect of 0.5 % says so (was "0%") and prints its
    # ratios to the digits that show a 0.5 % difference.
    d = Claim("greater", min_effect=0.005).decide(SeedValues({1: 1.0032, 2: 1.0061}), SeedValues({1: 1.0, 2: 1.0}))
    assert "0.5%" in d.claim and "1: 1.0032" in _why(d.to_json())


class _Runs:
    def __init__(self, values: dict[str, dict[int, float]]):
        self.values = values

    def per_seed(self, config, f, window=None):
        return SeedValues(self.values[config], config=config)

    def stat(self, config, f):
        return Stat.of(self.values[config].values())


def test_a_stated_reduction_shows_ours_in_the_unit_of_the_statement():
    """Before, summary.md put "paper −73 %" beside "ours 0.0696" (APCC's peak delay in s)."""
    runs = _Runs({"apcc": {s: 0.0696 for s in range(1, 6)}, "cubic": {s: 0.26 for s in range(1, 6)}})
    direction, _ = apcc.reduction("peak delay: APCC vs CUBIC", runs, "apcc", "cubic", None, 0.27, "Fig. 4", "−73 %", "s", tol=apcc.SIZE_TOL)
    assert str(direction.ours_stat()) == "-73.2" and direction.unit.startswith("% change")
    assert "APCC 0.0696 s" in direction.note and "CUBIC 0.26 s" in direction.note
    runs = _Runs({"apcc": {s: 10.0 for s in range(1, 6)}, "cubic": {s: 60.0 for s in range(1, 6)}})
    direction, _ = apcc.reduction("q", runs, "apcc", "cubic", None, 1 / 6, "Fig. 5", "6× shorter", "pkts", tol=apcc.SIZE_TOL)
    assert str(direction.ours_stat()) == "6" and direction.unit.startswith("×")
    summary = {"experiment": "apcc.bwdrop", "experiments": [], "comparisons": [dict(direction.to_json(), experiment="apcc.bwdrop")]}
    row = [line for line in summary_markdown(summary).splitlines() if line.startswith("| apcc.bwdrop | q |")][0]
    assert "| 6 (n = 5) | × (CUBIC/APCC) |" in row


def test_summary_md_prints_infinities_and_spreads_as_the_html_does():
    c = Comparison("smallest min_th", "lower", Stat.of([math.inf] * 5, "no drop-free min_th in the sweep"), Claim("less").decide(SeedValues({s: math.inf for s in range(1, 6)}), SeedValues({s: math.inf for s in range(1, 6)})), unit="packets")
    summary = {"experiment": "x", "experiments": [], "comparisons": [dict(c.to_json(), experiment="x")]}
    md = summary_markdown(summary)
    assert "inf [inf – inf]" not in md and "no drop-free min_th in the sweep in all 5 of 5 seeds (n = 5) | packets |" in md


def test_grouped_bars_keep_their_legend_off_the_data():
    """Before, EECN's Fig. 9a legend sat inside the axes over the bars of SF1 and SF2."""
    series = {k: [Stat.of([10.0, 12.0])] * 8 for k in ("NewReno", "NewReno+ECN", "VCP", "EECN")}
    fig, ax = grouped_bars("FCT per flow", "ms", [f"F{i}" for i in range(8)], series, log=True)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(r).x0 >= ax.get_window_extent(r).x1


def test_a_sweeps_lines_keep_their_legend_off_the_data():
    """Before, the sweep's line plots (e.g. marked_pkts over min_th, a line per scheme) had
    their legend inside the axes, over the lines."""
    import polars as pl

    from ecnlab.sweeps import report as sweep_report

    xs = [5, 15, 25, 35]
    rows = [{"x": x, "scheme": s, "m mean": float(i * x), "m min": float(i * x), "m max": float(i * x)} for i, s in enumerate(("ecn", "mecn", "eecn")) for x in xs]
    figs = []

    class Doc:
        def figure(self, fig, name, caption=""):
            figs.append(fig)

    sweep_report._lines(Doc(), pl.DataFrame(rows), "m", "x", ["scheme"], "m")
    (fig,) = figs
    ax = fig.axes[0]
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    assert ax.get_legend().get_window_extent(r).x0 >= ax.get_window_extent(r).x1


def test_a_group_of_bars_without_any_value_says_so():
    """Before, Fig. 9a's elephants, finished in no seed of the quick form, were an empty gap
    that read as zero."""
    series = {"ECN": [Stat.of([None, None]), Stat.of([3.0, 4.0])], "EECN": [Stat.of([]), Stat.of([2.0])]}
    fig, ax = grouped_bars("FCT per flow", "ms", ["EF1", "SF1"], series, log=True)
    assert [t.get_text() for t in ax.texts] == ["no value\nin any seed"]

"""The verdict rule on constructed data: ties, consistent differences, outliers, tolerances,
exclusions, the smallest effect that counts, infinities, bands that contain no effect, and
Holm's correction over a family."""

import json
import math

import pytest

from ecnlab.experiments.verdict import (
    ALPHA,
    COUNT_SPREAD,
    MIN_EFFECT,
    Claim,
    Excluded,
    Verdict,
    approx,
    at_least,
    can_fail,
    greater,
    less,
    holm,
    json_number,
    matches,
    ratio,
    sign_test_p,
)

SEEDS = range(1, 11)


def seeds(values):
    return dict(zip(SEEDS, values))


def test_sign_test_p_matches_the_binomial_tail():
    assert sign_test_p(10, 10) == pytest.approx(1 / 1024)
    assert sign_test_p(9, 10) == pytest.approx(11 / 1024)
    assert sign_test_p(5, 5) == pytest.approx(1 / 32)
    assert sign_test_p(4, 4) == pytest.approx(1 / 16)
    assert sign_test_p(0, 0) == 1.0


def test_zero_vs_zero_is_inconclusive_not_a_pass():
    d = less(seeds([0] * 10), seeds([0] * 10))
    assert d.verdict is Verdict.INCONCLUSIVE
    assert "0 vs 0" in d.reason
    assert d.ties == 10 and d.agree == 0


def test_equal_values_are_ties():
    d = greater(seeds([0.9] * 10), seeds([0.9] * 10))
    assert d.verdict is Verdict.INCONCLUSIVE
    assert "tie" in d.reason


def test_a_consistent_five_percent_difference_over_ten_seeds_holds():
    base = [100 + 7 * i for i in range(10)]
    d = less(seeds([0.95 * x for x in base]), seeds(base))
    assert d.verdict is Verdict.HOLDS
    assert d.agree == 10 and d.p_claim == pytest.approx(1 / 1024)
    assert all(v == pytest.approx(0.95) for v in d.effect.values())
    # and the opposite claim on the same data is contradicted
    assert greater(seeds([0.95 * x for x in base]), seeds(base)).verdict is Verdict.CONTRADICTED


def test_one_outlier_seed_cannot_flip_a_verdict_on_its_own():
    base = [100.0] * 10
    a = [95.0] * 9 + [10_000.0]  # one seed wildly the other way
    d = less(seeds(a), seeds(base))
    assert d.verdict is Verdict.HOLDS, d.reason
    assert d.disagree == 1
    # nor can one outlier in the claim's favour make a split verdict hold
    split = [95.0] * 4 + [105.0] * 5 + [0.0]
    assert less(seeds(split), seeds(base)).verdict is Verdict.INCONCLUSIVE


def test_too_few_seeds_are_inconclusive_and_say_so():
    d = less({1: 1.0, 2: 1.0, 3: 1.0}, {1: 2.0, 2: 2.0, 3: 2.0})
    assert d.verdict is Verdict.INCONCLUSIVE
    assert "fewer than 5" in d.reason
    # five agreeing seeds are enough at 5 %
    assert sign_test_p(5, 5) <= ALPHA < sign_test_p(4, 4)


def test_missing_values_are_listed_not_dropped_silently():
    a = seeds([1.0] * 8 + [None, Excluded("EF2 unfinished")])
    b = seeds([2.0] * 10)
    d = less(a, b)
    assert d.n == 8
    assert d.verdict is Verdict.HOLDS
    reasons = dict(d.excluded)
    assert set(reasons) == {9, 10}
    assert "EF2 unfinished" in reasons[10]
    assert "left out" in d.reason


def test_no_value_at_all_is_not_comparable():
    d = less(seeds([None] * 10), seeds([1.0] * 10))
    assert d.verdict is Verdict.NOT_COMPARABLE
    assert len(d.excluded) == 10


def test_matches_the_paper_within_tolerance():
    # 47.8 vs the paper's 48.7: within 2 %, so within a 10 % tolerance in every seed
    d = matches(seeds([47.8 + 0.05 * i for i in range(10)]), 48.7, within=0.10)
    assert d.verdict is Verdict.HOLDS
    # 30 % below the paper in every seed: contradicted
    d = matches(seeds([34.0] * 10), 48.7, within=0.10)
    assert d.verdict is Verdict.CONTRADICTED
    # straddling the bound: inconclusive
    d = matches(seeds([43.0, 44.5] * 5), 48.7, within=0.10)
    assert d.verdict is Verdict.INCONCLUSIVE


def test_ratio_and_approx_are_two_sided():
    b = seeds([100.0] * 10)
    assert ratio(seeds([30.0] * 10), b, 0.3, within=0.2).verdict is Verdict.HOLDS
    assert ratio(seeds([60.0] * 10), b, 0.3, within=0.2).verdict is Verdict.CONTRADICTED
    assert ratio(seeds([10.0] * 10), b, 0.3, within=0.2).verdict is Verdict.CONTRADICTED
    assert approx(seeds([103.0] * 10), b, within=0.05).verdict is Verdict.HOLDS
    assert approx(seeds([120.0] * 10), b, within=0.05).verdict is Verdict.CONTRADICTED


def test_a_zero_denominator_excludes_the_seed_with_its_reason():
    d = ratio(seeds([5.0] + [30.0] * 9), seeds([0.0] + [100.0] * 9), 0.3, within=0.2)
    assert dict(d.excluded)[1].startswith("b is 0")
    assert d.n == 9 and d.verdict is Verdict.HOLDS


def test_bounds():
    assert at_least(seeds([0.95] * 10), 0.9).verdict is Verdict.HOLDS
    assert at_least(seeds([0.5] * 10), 0.9).verdict is Verdict.CONTRADICTED


def test_claims_are_data():
    c = Claim("ratio", target=0.3, within=0.2)
    assert c.to_json() == {"kind": "ratio", "target": 0.3, "within": 0.2, "tests": "size", "min_effect": None, "text": "a/b ≈ 0.3 (±20%)"}
    with pytest.raises(ValueError, match="one of"):
        Claim("smaller")
    with pytest.raises(ValueError, match="tolerance"):
        Claim("approx")
    with pytest.raises(ValueError, match="pass b"):
        Claim("less").decide({1: 1.0})
    d = less(seeds(range(10)), seeds(range(1, 11)))
    js = d.to_json()
    assert js["verdict"] == "holds" and js["n"] == 10 and not math.isnan(js["p_claim"])


def test_every_claim_says_what_it_tests():
    assert [Claim(k, target=1.0 if k not in ("less", "greater", "not_below", "not_above", "approx") else None, within=0.1 if k in ("approx", "ratio", "matches") else None, **({"null_ok": "equality"} if k == "ratio" else {})).tests for k in Claim.KINDS] == [
        "direction", "direction", "level kept", "level kept", "size", "size", "size", "value", "value"
    ]
    d = less(seeds(range(10)), seeds(range(1, 11)))
    assert d.to_json()["tests"] == "direction" and d.to_json()["min_effect"] == MIN_EFFECT


def test_differences_below_the_smallest_effect_are_ties():
    """Jain's index 0.9991 against 0.9996 in every seed (a 0.05 % gap) is ten ties, not ten
    findings; a metric with a finer resolution may say so."""
    ucp2 = seeds([0.9996] * 10)
    vcp = seeds([0.9991 + 1e-5 * i for i in range(10)])
    d = greater(ucp2, vcp)
    assert d.verdict is Verdict.INCONCLUSIVE and d.ties == 10, d.reason
    assert "closer than 2%" in d.reason
    assert greater(ucp2, vcp, min_effect=1e-4).verdict is Verdict.HOLDS
    # A 5 % difference is well above the default and still decides.
    assert less(seeds([95.0] * 10), seeds([100.0] * 10)).verdict is Verdict.HOLDS
    with pytest.raises(ValueError, match="direction claim"):
        Claim("ratio", target=0.5, within=0.1, min_effect=0.1)


def test_a_quantity_kept_holds_on_ties_and_fails_past_the_smallest_effect():
    """"Utilisation with the burst not below the level before it": a level kept exactly (a
    tie under a direction claim, inconclusive) holds; a fall past the smallest effect that
    counts goes against it; a rise agrees."""
    before = seeds([0.845 + 1e-4 * i for i in range(10)])
    kept = seeds([0.853 + 1e-4 * i for i in range(10)])
    assert greater(kept, before).verdict is Verdict.INCONCLUSIVE
    d = Claim("not_below").decide(kept, before)
    assert d.verdict is Verdict.HOLDS and d.agree == 10, d.reason
    fell = seeds([0.80] * 10)
    assert Claim("not_below").decide(fell, before).verdict is Verdict.CONTRADICTED
    # Within the smallest effect (1.5 % below) is kept; past it (3 % below) is not.
    assert Claim("not_below").decide(seeds([0.845 * 0.985] * 10), seeds([0.845] * 10)).verdict is Verdict.HOLDS
    assert Claim("not_below").decide(seeds([0.845 * 0.97] * 10), seeds([0.845] * 10)).verdict is Verdict.CONTRADICTED
    assert Claim("not_above").decide(seeds([10.2] * 10), seeds([10.0] * 10)).verdict is Verdict.HOLDS
    assert Claim("not_above").decide(seeds([11.0] * 10), seeds([10.0] * 10)).verdict is Verdict.CONTRADICTED
    assert Claim("not_below").text().startswith("a not below b by more than 2% of the larger")
    ok, how = can_fail(Claim("not_below"), kept, before)
    assert ok, how
    ok, how = can_fail(Claim("not_above"), kept, before)
    assert ok, how


def test_a_level_kept_is_its_own_test_with_its_own_rule_margin_and_reason():
    """not_below / not_above say "a level kept", not "a direction": no seed is a tie, 0 vs 0
    agrees, the margin is measured as a direction's smallest effect is (of the larger) for both
    kinds, mirror images of each other, and the reason, the rule text and the row say so.
    Before, they were labelled "direction" (whose rule makes a seed within 2 % a tie), the
    inconclusive reason said "0 tied (closer than 2%)", not_above measured the margin from b
    (10.203 against 10, 1.99 % of the larger, was contradicted) and not_above was missing from
    the module's names."""
    from ecnlab.experiments import Comparison, rule_text, summary_markdown
    from ecnlab.experiments import verdict as v

    assert Claim("not_below").tests == Claim("not_above").tests == "level kept"
    assert "not_above" in v.__all__ and all(hasattr(v, n) for n in v.__all__)
    assert Claim("not_above").decide(seeds([10.203] * 10), seeds([10.0] * 10)).verdict is Verdict.HOLDS
    assert Claim("not_above").decide(seeds([10.3] * 10), seeds([10.0] * 10)).verdict is Verdict.CONTRADICTED
    # Mirror images: not_above(a, b) is not_below(b, a), seed by seed.
    pairs = [(1.0, 1.0), (0.97, 1.0), (0.985, 1.0), (1.02, 1.0), (1.03, 1.0), (0.0, 0.0), (-1.0, -0.97), (-0.985, -1.0), (math.inf, 5.0), (5.0, math.inf), (math.inf, math.inf)]
    for a, b in pairs:
        below = Claim("not_below").decide(seeds([a] * 10), seeds([b] * 10))
        above = Claim("not_above").decide(seeds([b] * 10), seeds([a] * 10))
        assert (below.verdict, below.agree, below.disagree) == (above.verdict, above.agree, above.disagree), (a, b)
    d = Claim("not_below").decide(seeds([0.0] * 10), seeds([0.0] * 10))
    assert d.verdict is Verdict.HOLDS and d.ties == 0
    # Inconclusive: its own reason, no ties.
    d = Claim("not_below").decide(seeds([0.97] * 8 + [1.0] * 2), seeds([1.0] * 10))
    assert d.verdict is Verdict.INCONCLUSIVE and d.ties == 0
    assert d.reason.startswith("2 within 2% of b or above it, 8 below it by more, of 10 seeds") and "tied" not in d.reason, d.reason
    # A claim's own margin, stated in its row.
    own = Claim("not_below", min_effect=0.05)
    assert own.decide(seeds([0.96] * 10), seeds([1.0] * 10)).verdict is Verdict.HOLDS
    assert own.decide(seeds([0.94] * 10), seeds([1.0] * 10)).verdict is Verdict.CONTRADICTED
    assert "by more than 5% of the larger (the claim's own margin)" in own.text()
    assert "not a tolerance the paper states" in Claim("not_below").text()
    with pytest.raises(ValueError, match="count_spread"):
        Claim("not_below", count_spread=2)
    rule = rule_text(0.05)
    assert "A level kept has no ties" in rule and "zero against zero agrees" in rule and "a detection floor, not a loss the paper says it tolerates" in rule
    assert "zero against zero in a direction claim" in rule
    c = Comparison("kept", "the level is kept", None, Claim("not_below").decide(seeds([1.0] * 10), seeds([0.99] * 10)), claim="the level with the burst, not below the level before it", kind=Claim("not_below"))
    summary = {"experiment": "x", "experiments": [], "comparisons": [dict(c.to_json(), experiment="x")]}
    row = next(line for line in summary_markdown(summary).splitlines() if line.startswith("| x | kept |"))
    assert "| level kept |" in row and "the level with the burst, not below the level before it — a not below b by more than 2% of the larger" in row


def test_a_level_kept_is_shown_to_fail_just_past_its_margin():
    """can_fail builds b 1.5 margins past a on the side the claim rules out, within what a run
    gives (a utilisation of 0.85 against b = 0.876, not 1.74). Before, b was a / 0.49: a doubled
    level, which proved only that a gross fall fails the claim."""
    from ecnlab.experiments.verdict import contradicting

    a, b = seeds([0.85] * 10), seeds([0.86] * 10)
    for claim, side in ((Claim("not_below"), 1), (Claim("not_above"), -1), (Claim("not_below", min_effect=0.05), 1)):
        m = claim.effect_min
        ((how, x, y),) = contradicting(claim, a, b)
        for s_ in x:
            gap = (y[s_] - x[s_]) * side / max(abs(x[s_]), abs(y[s_]))
            assert gap == pytest.approx(1.5 * m), (claim, x[s_], y[s_])
        assert all(v < 1 for v in y.values()), y
        assert claim.decide(x, y).verdict is Verdict.CONTRADICTED and can_fail(claim, a, b)[0]
    # Negative values and zero: still 1.5 margins past, on the ruled-out side.
    for base in (-2.0, 0.0):
        for claim, side in ((Claim("not_below"), 1), (Claim("not_above"), -1)):
            ((how, x, y),) = contradicting(claim, seeds([base] * 10), seeds([base] * 10))
            assert claim.decide(x, y).verdict is Verdict.CONTRADICTED
            assert all((y[s_] - x[s_]) * side > 0 for s_ in x)
            if base:
                assert all((y[s_] - x[s_]) * side / max(abs(x[s_]), abs(y[s_])) == pytest.approx(0.03) for s_ in x)


def test_infinity_is_a_value_not_a_tie():
    """Before: |15 − ∞| ≤ 1e-9·∞ made every finite-vs-∞ pair a tie, so "a < b" with b = ∞ in
    every seed ("no min_th without drops") was inconclusive and could never be contradicted."""
    inf = math.inf
    d = less(seeds([15.0] * 10), seeds([inf] * 10))
    assert d.verdict is Verdict.HOLDS and d.ties == 0, d.reason
    assert greater(seeds([15.0] * 10), seeds([inf] * 10)).verdict is Verdict.CONTRADICTED
    assert less(seeds([inf] * 10), seeds([15.0] * 10)).verdict is Verdict.CONTRADICTED
    # ∞ against ∞ is a tie.
    d = less(seeds([inf] * 10), seeds([inf] * 10))
    assert d.verdict is Verdict.INCONCLUSIVE and d.ties == 10
    # Against a bound, and as a size: ∞ is far outside any band.
    assert at_least(seeds([inf] * 10), 0.9).verdict is Verdict.HOLDS
    assert ratio(seeds([inf] * 10), seeds([1.0] * 10), 0.5, within=0.2).verdict is Verdict.CONTRADICTED
    assert dict(ratio(seeds([inf] * 10), seeds([inf] * 10), 0.5, within=0.2).excluded)[1].endswith("undefined")


def test_every_number_survives_json():
    """Before: Decision.to_json kept ±∞ as floats and json.dumps(allow_nan=False) raised at
    the end of a reproduction whose value was ∞."""
    d = less(seeds([15.0] * 10), seeds([math.inf] * 10))
    text = json.dumps(d.to_json(), allow_nan=False)
    assert json.loads(text)["effect"]["1"] == 0.0
    d = greater(seeds([math.inf] * 10), seeds([15.0] * 10))
    back = json.loads(json.dumps(d.to_json(), allow_nan=False))
    assert back["effect"]["1"] == "inf" and float(back["effect"]["1"]) == math.inf
    assert [json_number(x) for x in (math.nan, -math.inf, 2.5, None)] == [None, "-inf", 2.5, None]


def test_a_size_band_that_contains_no_effect_is_refused():
    """"ratio 0.81 ± 25 %" is [0.61, 1.01]: it holds with no effect at all."""
    with pytest.raises(ValueError, match=r"contains 1"):
        Claim("ratio", target=0.81, within=0.25)
    with pytest.raises(ValueError, match="reason"):
        Claim("ratio", target=1.0, within=0.1, null_ok=True)
    c = Claim("ratio", target=1.0, within=0.1, null_ok="the paper says the two are equal")
    assert c.to_json()["null_ok"].startswith("the paper")
    assert Claim("ratio", target=0.81, within=0.15).band() == pytest.approx((0.6885, 0.9315))
    # approx is equality by definition: its band is allowed to hold 1.
    assert Claim("approx", within=0.05).tests == "size"


def test_holm_over_a_family():
    """Thirteen claims, two of which reach p = 1/32 on five seeds: alone each holds; as a
    family of thirteen neither survives α/13."""
    five = {s: v for s, v in enumerate([1.0] * 5, start=1)}
    strong = less(five, {s: 2.0 for s in five})
    weak = less(five, {1: 2.0, 2: 2.0, 3: 0.5, 4: 2.0, 5: 0.5})
    fam = holm([strong, strong] + [weak] * 11, "per min_th")
    assert [d.verdict for d in fam[:2]] == [Verdict.HOLDS] * 2
    assert [d.family_verdict for d in fam] == [Verdict.INCONCLUSIVE] * 13
    assert fam[0].family_size == 13 and fam[0].counted is Verdict.INCONCLUSIVE
    # Ten seeds each (p = 1/1024) survive a family of thirteen.
    ten = less(seeds([1.0] * 10), seeds([2.0] * 10))
    fam = holm([ten, ten] + [weak] * 11, "per min_th")
    assert [d.family_verdict for d in fam[:2]] == [Verdict.HOLDS] * 2
    assert fam[0].to_json()["counted"] == "holds" and fam[2].to_json()["counted"] == "inconclusive"


def test_counts_within_their_poisson_spread_are_ties():
    """A drop count of 1 against 0 is within the spread of a difference of two Poisson counts
    (√(a + b)): with the count tie rule it is a tie, however large its relative difference;
    50 against 0 is not. Before the rule, 1 vs 0 in every seed held (100 % relative)."""
    rule = Claim("greater", count_spread=COUNT_SPREAD)
    one = rule.decide(seeds([1.0] * 10), seeds([0.0] * 10))
    assert one.verdict is Verdict.INCONCLUSIVE and one.ties == 10, one.reason
    assert "√(a + b)" in one.reason
    assert rule.decide(seeds([50.0] * 10), seeds([0.0] * 10)).verdict is Verdict.HOLDS
    # 5 vs 2 is within 2·√7 ≈ 5.3; 20 vs 5 is not (2·√25 = 10).
    assert rule.decide(seeds([5.0] * 10), seeds([2.0] * 10)).ties == 10
    assert Claim("less", count_spread=COUNT_SPREAD).decide(seeds([5.0] * 10), seeds([20.0] * 10)).verdict is Verdict.HOLDS
    # Without it, the relative rule alone decides 1 vs 0.
    assert greater(seeds([1.0] * 10), seeds([0.0] * 10)).verdict is Verdict.HOLDS
    assert rule.to_json()["count_spread"] == COUNT_SPREAD and "√(a + b)" in rule.text()
    with pytest.raises(ValueError, match="direction claim"):
        Claim("ratio", target=0.5, within=0.1, count_spread=2.0)
    # A count claim can still come out contradicted on values built against it.
    from ecnlab.experiments.verdict import can_fail

    for a, b in (([1.0] * 5, [0.0] * 5), ([0.0] * 5, [0.0] * 5), ([450.0] * 5, [600.0] * 5)):
        for kind in ("less", "greater"):
            ok, how = can_fail(Claim(kind, count_spread=COUNT_SPREAD), seeds(a), seeds(b))
            assert ok, (kind, a, b, how)


def test_an_arm_constant_in_every_seed_is_stated():
    """The decision knows which arm took one value in every seed that entered it (two seeds or
    more): a = 0 against a varying b; both arms; a one-arm claim. Before, nothing said it: a
    marker that drops nothing held "drops fewer" like a finding."""
    from ecnlab.experiments.verdict import constant_flag

    b = seeds([3.0, 5, 4, 6, 7, 3, 4, 5, 8, 9])
    d = less(seeds([0.0] * 10), b)
    assert d.verdict is Verdict.HOLDS and d.constant == (("a", 0.0),) and d.constant_text() == "a = 0 in every seed (10)"
    assert not d.every_arm_constant and constant_flag(d) is None
    assert d.to_json()["constant"] == {"a": 0.0}
    both = less(seeds([1.0] * 10), seeds([30.0] * 10))
    assert both.every_arm_constant and both.constant_text() == "a = 1 and b = 30 in every seed (10)"
    assert "one outcome repeated" in constant_flag(both)
    # Both constant and tied: inconclusive already, no flag (nothing decided on it).
    zero = less(seeds([0.0] * 10), seeds([0.0] * 10))
    assert zero.every_arm_constant and zero.verdict is Verdict.INCONCLUSIVE and constant_flag(zero) is None
    one_arm = at_least(seeds([1.0] * 10), 0.8)
    assert one_arm.every_arm_constant and one_arm.verdict is Verdict.HOLDS and constant_flag(one_arm)
    # ∞ is a value like any other; a varying arm is not constant; one seed says nothing.
    assert less(seeds([15.0, 16] * 5), seeds([math.inf] * 10)).constant == (("b", math.inf),)
    assert less(seeds([1.0, 2] * 5), b).constant == ()
    assert less({1: 0.0}, {1: 1.0}).constant == ()
    # Seeds left out do not count: a is 0 in the seeds that entered.
    assert less({1: 0.0, 2: 0.0, 3: None}, {1: 2.0, 2: 3.0, 3: 1.0}).constant == (("a", 0.0),)


def test_a_count_claim_is_contradicted_on_counts_a_run_can_give():
    """Values built to contradict a claim on counts stay counts: 0 against 0 under "a < b" is
    contradicted by a raised past b, not by b moved below zero (before: b = −5, a value no
    run can give)."""
    from ecnlab.experiments.verdict import can_fail, contradicting

    for a, b in (([0.0] * 5, [0.0] * 5), ([0.0] * 5, [3.0] * 5), ([2.0] * 5, [0.0] * 5), ([450.0] * 5, [600.0] * 5)):
        for kind in ("less", "greater"):
            c = Claim(kind, count_spread=COUNT_SPREAD)
            built = contradicting(c, seeds(a), seeds(b))
            assert all(v >= 0 for _, x, y in built for v in list(x.values()) + list((y or {}).values())), (kind, a, b, built)
            assert can_fail(c, seeds(a), seeds(b))[0], (kind, a, b)
    how = can_fail(Claim("less", count_spread=COUNT_SPREAD), seeds([0.0] * 5), seeds([0.0] * 5))[1]
    assert how.startswith("a raised past b")


def test_a_difference_of_exactly_the_margin_is_within_it():
    """The rule's text says a difference of at most 2 % of the larger agrees (a level kept) or is
    a tie (a direction). Before, |a − b| was compared in floating point: 1.0 − 0.98 gives
    0.020000000000000018 > 0.02, so not_below(0.98, 1.0) was contradicted and less(1.0, 0.98)
    held, as did 0.833 vs 0.85 and 0.49 vs 0.5 (each exactly 2 % of the larger)."""
    from ecnlab.experiments.verdict import not_above, not_below

    for lo, hi in ((0.98, 1.0), (0.833, 0.85), (0.49, 0.5)):
        assert not_below(seeds([lo] * 10), seeds([hi] * 10)).verdict is Verdict.HOLDS, (lo, hi)
        assert not_above(seeds([hi] * 10), seeds([lo] * 10)).verdict is Verdict.HOLDS, (lo, hi)
        for d in (less(seeds([lo] * 10), seeds([hi] * 10)), greater(seeds([hi] * 10), seeds([lo] * 10)),
                  less(seeds([hi] * 10), seeds([lo] * 10))):
            assert d.verdict is Verdict.INCONCLUSIVE and d.ties == 10, (lo, hi, d.reason)
        # Just past the margin still counts.
        past = lo * (1 - 1e-6)
        assert not_below(seeds([past] * 10), seeds([hi] * 10)).verdict is Verdict.CONTRADICTED, (lo, hi)
        assert less(seeds([past] * 10), seeds([hi] * 10)).verdict is Verdict.HOLDS, (lo, hi)

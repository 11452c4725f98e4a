"""The verdict rule on constructed data: ties, consistent differences, outliers, tolerances,
exclusions."""

import math

import pytest

from ecnlab.experiments.verdict import (
    ALPHA,
    Claim,
    Excluded,
    Verdict,
    approx,
    at_least,
    greater,
    less,
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
    assert c.to_json() == {"kind": "ratio", "target": 0.3, "within": 0.2, "text": "a/b ≈ 0.3 (±20%)"}
    with pytest.raises(ValueError, match="one of"):
        Claim("smaller")
    with pytest.raises(ValueError, match="tolerance"):
        Claim("approx")
    with pytest.raises(ValueError, match="pass b"):
        Claim("less").decide({1: 1.0})
    d = less(seeds(range(10)), seeds(range(1, 11)))
    js = d.to_json()
    assert js["verdict"] == "holds" and js["n"] == 10 and not math.isnan(js["p_claim"])

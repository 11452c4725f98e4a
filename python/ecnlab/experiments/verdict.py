"""Claims about a paper's results, and the one rule that decides them.

A claim is data: what is compared (``less``: a < b, ``greater``: a > b, ``not_below`` /
``not_above``: a kept at b's level or on the claimed side of it, ``approx``: a ≈ b within
x %, ``ratio``: a / b ≈ r within x %, ``matches``: a ≈ a published value within x %,
``at_least`` / ``at_most``: a against a fixed bound), decided over per-seed values paired by
seed (the same seed gives every compared configuration the same random draws, so the seed is
the unit of pairing). Every claim says what it tests (:attr:`Claim.tests`): a **direction**
(less, greater), a **level kept** (not_below, not_above), a **size** (ratio, approx,
matches: the paper's number within a declared tolerance) or a **value** (at_least, at_most:
a fixed bound).

The rule, the same for every experiment:

- Each paired seed scores +1 when it agrees with the claim, −1 when it disagrees, 0 for a tie.
  A direction claim's tie is a pair closer than its smallest effect that counts, the relative
  difference |a − b| / max(|a|, |b|) ≤ ``min_effect`` (default ``MIN_EFFECT`` = 2 %; a metric
  with a natural resolution passes its own): Jain's index at 0.9991 against 0.9996 is a tie, not
  a finding. A claim on **counts** (packets dropped, marked) may also pass ``count_spread``
  = k: a pair of counts with |a − b| ≤ k·√(a + b) is a tie, whatever its relative size — the
  difference of two independent Poisson counts has variance a + b (Skellam), so 1 against 0,
  or 3 against 1, is within the counts' own spread while 50 against 0 is not (``COUNT_SPREAD``
  = 2: two standard deviations). Zero against zero is a tie. ∞ is a value (a state never reached): ∞ against a
  finite value is decided like any other pair, ∞ against ∞ is a tie. Seeds with a missing
  value (an unfinished flow, a zero denominator, NaN) are left out and listed with their
  reason.
- A **level kept** (``not_below``: "a is not lower than b", ``not_above`` its mirror) has no
  ties: a seed agrees unless a is on the wrong side of b by more than the margin, measured as
  a direction claim's smallest effect is, |a − b| / max(|a|, |b|) (``min_effect``, default
  ``MIN_EFFECT``), and goes against it otherwise; zero against zero agrees, and
  ``not_above(a, b)`` is ``not_below(b, a)``. The default margin is a detection floor (the
  smallest difference the rule counts), not a loss the paper says it tolerates; a claim with
  a stated tolerance passes its own. With every seed scored, the sign test is an exact
  non-inferiority test of the per-seed median at that margin.
- An exact one-sided **sign test** on the non-tied seeds at level ``ALPHA`` (5 %): the claim
  **holds** when the agreeing seeds are too many to be chance (P(Bin(n, ½) ≥ agree) ≤ α), and
  is **contradicted** when the disagreeing ones are. Otherwise it is **inconclusive**, with the
  reason (too few seeds for the level, ties, a split). With α = 5 % at least five agreeing
  seeds are needed; one outlier among ten cannot overturn nine (p = 0.011).
- A claim with a tolerance (``approx``, ``ratio``, ``matches``) is two one-sided statements
  (below the upper bound, above the lower bound); it holds when both do and is contradicted
  when either side's opposite does — the sign-test form of a two one-sided equivalence test.
  A ``ratio`` band that contains 1 (no effect at all) cannot tell the paper's size from no
  effect and is refused at construction, unless ``null_ok`` gives the reason the claim's
  point is equality.
- **Not comparable**: no seed has a value, or the experiment declares the quantity not
  comparable with the paper's (a different run length, a scheme missing from the build), with
  the reason.

Around the rule, the experiment framework (:mod:`.base`, :mod:`ecnlab.experiments`) adds:
a claim one of whose arms includes a stalled run is inconclusive ("decided on stalled
runs"); claims over one axis (a family) are also decided with Holm's correction, and the
headline counts each family once, by :func:`family_whole`; a claim decided twice on the same
per-seed values counts once.

What the seeds cannot show: an arm that takes one value in every seed that entered the claim
is stated with the decision (:attr:`Decision.constant`, "a = 0 in every seed (10)"), and a
claim that holds or is contradicted on arms that all do (both arms; a one-arm claim's a) is
flagged (:func:`constant_flag`): its seeds repeat one outcome, which the sign test counts as
many. Where the mechanism under test fixes the outcome — no run of it can come out otherwise,
e.g. a marker that drops only a full buffer its own signal keeps from filling, compared with
RED's early drops — the experiment declares it with the reason (``claim(..., fixed=...)``):
the claim is still decided, its verdict is :attr:`Verdict.FIXED` with what the runs say, and
the headline counts it apart. :func:`can_fail` builds its contradicting values within what a
run can give where the claim says what they are (a count is never negative).

The sign test uses only the direction of each seed, never its size, so a single extreme seed
weighs as much as any other; the size is reported beside the verdict as the per-seed effect
(the paired ratio a/b, or the values), its mean and range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, Callable, Iterable, Mapping

from ..errors import OutputError

__all__ = [
    "ALPHA",
    "COUNT_SPREAD",
    "MIN_EFFECT",
    "Claim",
    "Decision",
    "Excluded",
    "PerSeed",
    "Verdict",
    "can_fail",
    "contradicting",
    "family_whole",
    "holm",
    "json_number",
    "sign_test_p",
    "not_comparable",
    "less",
    "greater",
    "not_below",
    "not_above",
    "approx",
    "ratio",
    "matches",
    "at_least",
    "at_most",
]

#: Level of the one-sided sign tests.
ALPHA = 0.05
#: A direction claim's smallest relative difference |a − b| / max(|a|, |b|) that counts
#: (per seed); pairs closer than this are ties. 2 %: well above the seed-to-seed noise of a
#: deterministic simulator's aggregate over a run, well below any effect a paper states.
MIN_EFFECT = 0.02
#: The count tie rule's k (``Claim(count_spread=...)``): two counts a, b whose difference is
#: within k·√(a + b), k standard deviations of the difference of two Poisson counts (Skellam),
#: are a tie. 2: a 1-vs-0 or 5-vs-2 seed is a tie, 50 vs 0 is not.
COUNT_SPREAD = 2.0
#: Values whose relative difference is at most this are a tie (bounds and tolerances).
TIE_REL = 1e-9
#: Relative slack on every "at most x of the larger" boundary (ties, a level kept's margin):
#: floating-point rounding of |a − b| must not move a difference of exactly x past it.
BOUNDARY_SLACK = 1e-9


class Verdict(str, Enum):
    HOLDS = "holds"
    CONTRADICTED = "contradicted"
    INCONCLUSIVE = "inconclusive"
    NOT_COMPARABLE = "not comparable"
    #: A claim whose outcome the mechanism under test fixes (declared, with the reason: EECN's
    #: marker that drops only a full buffer cannot drop more than its overflow): decided by
    #: the rule like any other, shown with what the runs say, but not a finding.
    FIXED = "fixed by the mechanism"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Excluded:
    """A seed's value that cannot enter a claim, and why (e.g. "EF2 unfinished")."""

    reason: str


#: Per-seed values of one quantity: a number, None (no value, reason unknown) or Excluded.
PerSeed = Mapping[int, "float | int | None | Excluded"]


def percent(x: float) -> str:
    """A fraction as a percentage with the digits it has (0.005 is 0.5%, not 0%)."""
    return f"{x * 100:.3g}%"


def json_number(x: Any) -> Any:
    """A number as JSON can hold it: NaN (no value) as null, ±∞ as the strings ``"inf"`` and
    ``"-inf"`` (``float()`` reads them back), anything else unchanged."""
    if isinstance(x, float):
        if math.isnan(x):
            return None
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


@dataclass(frozen=True)
class Decision:
    """The verdict on one claim and everything needed to check it."""

    verdict: Verdict
    reason: str
    #: The claim as text, e.g. "a < b" or "a/b ≈ 0.3 (±10 %)".
    claim: str
    #: Seeds that entered the test (ties included), those agreeing and disagreeing.
    n: int = 0
    agree: int = 0
    disagree: int = 0
    ties: int = 0
    #: One-sided sign-test p-values for the claim and for its opposite (the smaller side of
    #: a two-sided claim).
    p_claim: float | None = None
    p_opposite: float | None = None
    #: Per seed: the effect the claim is about (a/b, or a's value), by seed.
    effect: Mapping[int, float] = field(default_factory=dict)
    #: Seeds left out, with the reason.
    excluded: tuple[tuple[int, str], ...] = ()
    alpha: float = ALPHA
    #: What the claim tests: "direction", "level kept", "size" or "value" ("" for a row
    #: without a claim).
    tests: str = ""
    #: The smallest relative difference that counted (direction claims; a level kept's margin).
    min_effect: float | None = None
    #: Flags the framework adds (stalled runs, starved flows), each a sentence.
    flags: tuple[str, ...] = ()
    #: The verdict the sign test gave before a flag made the claim inconclusive.
    unflagged: Verdict | None = None
    #: With a family: its name, size and the verdict under Holm's correction.
    family: str | None = None
    family_size: int = 0
    family_verdict: Verdict | None = None
    #: Per arm that took one value in every seed that entered the claim (two seeds or more):
    #: (arm, value), e.g. (("a", 0.0),) for "a = 0 in every seed".
    constant: tuple[tuple[str, float], ...] = ()
    #: Why the mechanism fixes the claim's outcome, where the experiment declares it does
    #: (the verdict is then FIXED and ``unflagged`` what the runs say).
    fixed: str | None = None
    #: Whether the claim compares two arms (set by :meth:`Claim.decide`).
    paired: bool = False

    @property
    def every_arm_constant(self) -> bool:
        """Whether every arm of the claim (a and b; a and the bound of a one-arm claim) took one
        value in every seed: the seeds then repeat one outcome instead of sampling several."""
        arms = {arm for arm, _ in self.constant}
        return bool(arms) and (arms == {"a", "b"} if self.paired else arms == {"a"})

    def constant_text(self) -> str:
        """"a = 0 in every seed (10)", "a = 0 and b = 0 in every seed (10)", or ""."""
        if not self.constant:
            return ""
        return " and ".join(f"{arm} = {_number_text(v)}" for arm, v in self.constant) + f" in every seed ({self.n})"

    @property
    def counted(self) -> Verdict:
        """The verdict the headline counts: the family's under Holm's correction, if any."""
        return self.family_verdict if self.family_verdict is not None else self.verdict

    def to_json(self) -> dict[str, Any]:
        num = json_number
        return {
            "verdict": self.verdict.value,
            "reason": self.reason,
            "claim": self.claim,
            "tests": self.tests,
            "min_effect": self.min_effect,
            "n": self.n,
            "agree": self.agree,
            "disagree": self.disagree,
            "ties": self.ties,
            "p_claim": num(self.p_claim),
            "p_opposite": num(self.p_opposite),
            "alpha": self.alpha,
            "effect": {str(k): num(v) for k, v in sorted(self.effect.items())},
            "excluded": [{"seed": s, "reason": r} for s, r in self.excluded],
            "flags": list(self.flags),
            "unflagged": None if self.unflagged is None else self.unflagged.value,
            "family": self.family,
            "family_size": self.family_size,
            "family_verdict": None if self.family_verdict is None else self.family_verdict.value,
            "counted": self.counted.value,
            "constant": {arm: num(v) for arm, v in self.constant} or None,
            "fixed": self.fixed,
        }


def _number_text(x: float) -> str:
    """A per-seed value as a row states it: integers whole, ∞ as ∞, the rest to 4 digits."""
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.0f}" if x == int(x) and abs(x) < 1e15 else f"{x:.4g}"


def constant_flag(d: "Decision") -> str | None:
    """The flag of a decided claim (holds, contradicted) every arm of which took one value in
    every seed: the seeds did not vary the comparison, so its agreeing seeds are one outcome
    repeated, not independent ones; None otherwise."""
    if not d.every_arm_constant or d.verdict not in (Verdict.HOLDS, Verdict.CONTRADICTED):
        return None
    return (
        f"every arm takes one value in every seed: the seeds do not vary this comparison, so its {d.n} seeds are one outcome repeated, "
        "not independent ones; the verdict says what that one outcome is, not that it is robust to chance"
    )


def sign_test_p(k: int, n: int) -> float:
    """P(X ≥ k) for X ~ Binomial(n, ½): the exact one-sided sign-test p-value of k agreeing
    seeds out of n non-tied ones (1 when n = 0)."""
    if n <= 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(max(k, 0), n + 1)) / 2**n


def _min_seeds(alpha: float) -> int:
    n = 1
    while sign_test_p(n, n) > alpha:
        n += 1
    return n


def _value(x: Any) -> float | Excluded:
    if isinstance(x, Excluded):
        return x
    if x is None:
        return Excluded("no value")
    v = float(x)
    if math.isnan(v):
        return Excluded("no value (NaN)")
    return v


def _tie(a: float, b: float, rel: float = TIE_REL) -> bool:
    """Whether a and b are closer than ``rel`` relative to the larger. An infinity ties only
    with itself (∞ − x over ∞ is not a relative difference)."""
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    # "At most rel of the larger": |a − b| is rounded in floating point (1.0 − 0.98 gives
    # 0.020000000000000018), so a difference of exactly rel would land past it; a relative
    # slack of 1e-9, far below any difference a metric resolves, puts the boundary where the
    # rule's text says it is.
    return abs(a - b) <= rel * max(abs(a), abs(b)) * (1 + BOUNDARY_SLACK)


def _ratio(x: float, y: float) -> float:
    """x / y for the effect column; NaN where undefined (0/0, ∞/∞)."""
    if y == 0:
        return math.nan if x == 0 else math.copysign(math.inf, x)
    try:
        return x / y
    except (OverflowError, ZeroDivisionError):
        return math.nan


@dataclass(frozen=True)
class Claim:
    """A claim as data. ``kind`` is one of less, greater, not_below, not_above, approx, ratio,
    matches, at_least, at_most; ``target`` is r (ratio), the published value (matches) or the
    bound (at_least / at_most); ``within`` the relative tolerance of approx, ratio and
    matches; ``min_effect`` the smallest relative difference a direction claim counts, and a
    level kept's margin (not_below / not_above; default ``MIN_EFFECT`` for both);
    ``null_ok`` the reason a ratio band may contain 1 (a claim whose point is equality);
    ``count_spread`` (direction claims on counts) k of the count tie rule: a pair with
    |a − b| ≤ k·√(a + b) is also a tie (``COUNT_SPREAD``)."""

    kind: str
    target: float | None = None
    within: float | None = None
    min_effect: float | None = None
    null_ok: str | bool = False
    count_spread: float | None = None

    KINDS = ("less", "greater", "not_below", "not_above", "approx", "ratio", "matches", "at_least", "at_most")
    TESTS = {"less": "direction", "greater": "direction", "not_below": "level kept", "not_above": "level kept", "ratio": "size", "approx": "size", "matches": "size", "at_least": "value", "at_most": "value"}
    #: What has a smallest difference that counts (``min_effect``): a direction's ties, a
    #: level kept's margin.
    MARGINED = ("direction", "level kept")

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise ValueError(f"claim kind must be one of {', '.join(self.KINDS)}, got {self.kind!r}")
        if self.kind in ("approx", "ratio", "matches") and (self.within is None or self.within < 0):
            raise ValueError(f"a {self.kind} claim needs a tolerance within ≥ 0")
        if self.kind in ("ratio", "matches", "at_least", "at_most") and self.target is None:
            raise ValueError(f"a {self.kind} claim needs a target")
        if self.min_effect is not None:
            if self.tests not in self.MARGINED:
                raise ValueError(f"min_effect is the smallest difference a direction claim counts (a level kept's margin); a {self.kind} claim has its tolerance or bound")
            if not 0 <= self.min_effect < 1:
                raise ValueError(f"min_effect is a relative difference in [0, 1), got {self.min_effect}")
        if self.count_spread is not None:
            if self.tests != "direction":
                raise ValueError(f"count_spread is a direction claim's tie rule for counts; a {self.kind} claim has its tolerance or bound")
            if not self.count_spread > 0:
                raise ValueError(f"count_spread is a number of standard deviations > 0, got {self.count_spread}")
        if self.null_ok is True:
            raise ValueError("null_ok takes the reason the claim's point is equality (a string), not True")
        if self.kind == "ratio" and not self.null_ok:
            lo, hi = self.band()
            if lo <= 1 <= hi:
                raise ValueError(
                    f"a/b ≈ {self.target:g} ±{self.within:.0%} is the band [{lo:.3g}, {hi:.3g}], which contains 1 (no effect): "
                    "it cannot tell the stated size from no effect; tighten the tolerance, or pass null_ok with the reason equality is the point"
                )

    @property
    def tests(self) -> str:
        """What the claim tests: "direction" (less, greater), "level kept" (not_below,
        not_above), "size" (ratio, approx, matches) or "value" (at_least, at_most)."""
        return self.TESTS[self.kind]

    @property
    def paired(self) -> bool:
        return self.kind in ("less", "greater", "not_below", "not_above", "approx", "ratio")

    @property
    def effect_min(self) -> float | None:
        """The smallest relative difference that counts (direction claims; a level kept's
        margin)."""
        if self.tests not in self.MARGINED:
            return None
        return MIN_EFFECT if self.min_effect is None else self.min_effect

    def band(self) -> tuple[float, float]:
        """[lo, hi] of a tolerance claim: around r (ratio), 1 (approx) or the published value
        (matches)."""
        center = 1.0 if self.kind == "approx" else float(self.target)  # type: ignore[arg-type]
        w = float(self.within)  # type: ignore[arg-type]
        lo, hi = sorted((center * (1 - w), center * (1 + w)))
        return lo, hi

    def text(self) -> str:
        k, t = self.kind, self.target
        w = f" (±{percent(self.within)})" if self.within is not None else ""
        m = self.effect_min
        eff = f", by ≥ {percent(m)}" if m else ""
        if self.count_spread is not None:
            eff += f" and by > {self.count_spread:g}·√(a + b) (counts)"
        if k == "less":
            return f"a < b{eff}"
        if k == "greater":
            return f"a > b{eff}"
        if k in ("not_below", "not_above"):
            margin = "the smallest difference counted as the margin, not a tolerance the paper states" if self.min_effect is None else "the claim's own margin"
            return f"a not {k[4:]} b by more than {percent(m)} of the larger ({margin})"
        if k == "approx":
            return f"a ≈ b{w}"
        if k == "ratio":
            return f"a/b ≈ {t:.3g}{w}"
        if k == "matches":
            return f"a ≈ {t:.4g}{w}"
        return f"a {'≥' if k == 'at_least' else '≤'} {t:.4g}"

    def to_json(self) -> dict[str, Any]:
        out = {"kind": self.kind, "target": json_number(self.target), "within": self.within, "tests": self.tests, "min_effect": self.effect_min, "text": self.text()}
        if self.count_spread is not None:
            out["count_spread"] = self.count_spread
        if self.null_ok:
            out["null_ok"] = self.null_ok
        return out

    # ------------------------------------------------------------------ deciding

    def decide(self, a: PerSeed, b: PerSeed | None = None, alpha: float = ALPHA) -> Decision:
        """The verdict of this claim on per-seed values ``a`` (and ``b`` for paired kinds)."""
        if self.paired and b is None:
            raise ValueError(f"a {self.kind} claim compares two quantities: pass b")
        seeds = sorted(set(a) | set(b or {})) if self.paired else sorted(a)
        excluded: list[tuple[int, str]] = []
        scores: list[tuple[int, int]] = []
        effect: dict[int, float] = {}
        zero_zero = 0
        seen: dict[str, set[float]] = {"a": set(), "b": set()}
        for s in seeds:
            x = _value(a.get(s))
            y = _value(b.get(s)) if self.paired and b is not None else 0.0
            if isinstance(x, Excluded) or isinstance(y, Excluded):
                why = [f"{w}: {v.reason}" for w, v in (("a", x), ("b", y)) if isinstance(v, Excluded)]
                excluded.append((s, "; ".join(why)))
                continue
            sc = self._score(x, y)
            if not isinstance(sc, str) or (x == 0 and y == 0):
                seen["a"].add(x)
                if self.paired:
                    seen["b"].add(y)
            if isinstance(sc, str):
                if x == 0 and y == 0:
                    zero_zero += 1
                    scores.append((0, 0))
                    continue
                excluded.append((s, sc))
                continue
            up, lo, eff = sc
            scores.append((up, lo))
            effect[s] = eff
            if self.paired and x == 0 and y == 0:
                zero_zero += 1
        d = self._verdict(scores, effect, excluded, zero_zero, alpha)
        if len(scores) >= 2:
            const = tuple((arm, next(iter(v))) for arm, v in seen.items() if len(v) == 1)
            d = replace(d, constant=const)
        return replace(d, paired=self.paired)

    def _score(self, x: float, y: float) -> tuple[int, int, float] | str:
        """(+1/−1/0 on the upper-side statement, on the lower-side statement, effect), or the
        reason the claim cannot be scored for this seed (a ratio over zero, ∞/∞)."""
        k = self.kind
        if k in ("less", "greater"):
            eff = _ratio(x, y)
            if _tie(x, y, self.effect_min or 0.0) or self._count_tie(x, y):
                return 0, 0, eff
            agree = (x < y) if k == "less" else (x > y)
            return (1 if agree else -1), (1 if agree else -1), eff
        if k in ("not_below", "not_above"):
            # A statement that a quantity is kept ("not lower than before"): a seed on the
            # claimed side, or within the margin of it (measured as a direction's smallest
            # effect, of the larger), agrees; only a difference past it goes against.
            right_side = x >= y if k == "not_below" else x <= y
            agree = right_side or _tie(x, y, self.effect_min or 0.0)
            return (1 if agree else -1), (1 if agree else -1), _ratio(x, y)
        if k in ("at_least", "at_most"):
            t = float(self.target)  # type: ignore[arg-type]
            if _tie(x, t):
                return 0, 0, x
            agree = (x > t) if k == "at_least" else (x < t)
            return (1 if agree else -1), (1 if agree else -1), x
        # Tolerance kinds: the effect is compared with [lo, hi].
        if k == "matches":
            eff = x
        else:
            if y == 0:
                return f"b is 0 (a = {x:g}): the ratio is undefined"
            eff = _ratio(x, y)
            if math.isnan(eff):
                return f"a/b = {x:g}/{y:g} is undefined"
        lo, hi = self.band()

        def side(v: float, bound: float, below: bool) -> int:
            if _tie(v, bound):
                return 0
            return 1 if (v < bound) == below else -1

        return side(eff, hi, True), side(eff, lo, False), eff

    def _count_tie(self, x: float, y: float) -> bool:
        """The count tie rule: |x − y| ≤ k·√(x + y) (never for an infinity or a negative)."""
        if self.count_spread is None or math.isinf(x) or math.isinf(y) or x < 0 or y < 0:
            return False
        return abs(x - y) <= self.count_spread * math.sqrt(x + y)

    def _verdict(self, scores, effect, excluded, zero_zero, alpha) -> Decision:
        text = self.text()
        base = dict(claim=text, effect=effect, excluded=tuple(excluded), alpha=alpha, tests=self.tests, min_effect=self.effect_min)
        if not scores:
            why = "no seed has a value" if not excluded else f"no seed has a value ({len(excluded)} left out)"
            return Decision(Verdict.NOT_COMPARABLE, why, **base)
        need = _min_seeds(alpha)
        two_sided = self.kind in ("approx", "ratio", "matches")
        sides = [0, 1] if two_sided else [0]
        p_for, p_against, counts = [], [], []
        for i in sides:
            col = [sc[i] for sc in scores]
            ag, dis = col.count(1), col.count(-1)
            m = ag + dis
            p_for.append(sign_test_p(ag, m))
            p_against.append(sign_test_p(dis, m))
            counts.append((ag, dis, col.count(0)))
        # Report the counts of the weaker side (the one that decides).
        weak = max(range(len(sides)), key=lambda i: p_for[i])
        ag, dis, ties = counts[weak]
        n = len(scores)
        p_c, p_o = max(p_for), min(p_against)
        common = dict(n=n, agree=ag, disagree=dis, ties=ties, p_claim=p_c, p_opposite=p_o, **base)
        left = f"; {len(excluded)} seed(s) left out" if excluded else ""
        if p_o <= alpha:
            return Decision(Verdict.CONTRADICTED, f"{dis} of {n} seeds go against it (sign test p = {p_o:.3g} ≤ {alpha:g}){left}", **common)
        if p_c <= alpha:
            return Decision(Verdict.HOLDS, f"{ag} of {n} seeds agree (sign test p = {p_c:.3g} ≤ {alpha:g}){left}", **common)
        if self.tests == "level kept":
            # No ties: every seed is within the margin or past it.
            side = "below" if self.kind == "not_below" else "above"
            why = f"{ag} within {percent(self.effect_min or 0.0)} of b or {'above' if side == 'below' else 'below'} it, {dis} {side} it by more, of {n} seeds: "
            why += f"the sign test cannot reach {alpha:g} with fewer than {need}" if n < need else f"not significant (p = {p_c:.3g}, against: p = {p_o:.3g})"
            return Decision(Verdict.INCONCLUSIVE, why + left, **common)
        small = f" (closer than {percent(self.effect_min)})" if self.effect_min else ""
        if self.count_spread is not None:
            small = f" (closer than {percent(self.effect_min)} or within {self.count_spread:g}·√(a + b))"
        if zero_zero == n:
            why = f"0 vs 0 in every seed ({n})"
        elif ties == n:
            why = f"a tie in every seed ({n}){small}"
        elif n < need:
            why = f"{n} paired seed(s): the sign test cannot reach {alpha:g} with fewer than {need}"
            if ties:
                why += f" ({ties} tied{small})"
        else:
            why = f"{ag} agree, {dis} disagree, {ties} tied{small} of {n} seeds: not significant (p = {p_c:.3g})"
            if zero_zero:
                why += f"; 0 vs 0 in {zero_zero}"
        return Decision(Verdict.INCONCLUSIVE, why + left, **common)


def holm(decisions: list[Decision], family: str, alpha: float = ALPHA) -> list[Decision]:
    """The decisions of one family of claims (a claim per min_th, per capacity) with Holm's
    step-down correction applied to the family: a claim holds as part of the family when its
    sign-test p-value is at most α/(m − i) at its rank i (0-based, smallest p first) and every
    smaller p did too; likewise for contradicted on the opposite p-values. Decisions that are
    not comparable, or not decided because of a flag (stalled runs), keep their verdict and do
    not count towards m."""
    live = [i for i, d in enumerate(decisions) if d.p_claim is not None and d.unflagged is None and d.verdict is not Verdict.NOT_COMPARABLE]
    m = len(live)

    def passing(ps: list[tuple[float, int]]) -> set[int]:
        ok: set[int] = set()
        for rank, (p, i) in enumerate(sorted(ps)):
            if p > alpha / (m - rank):
                break
            ok.add(i)
        return ok

    holds = passing([(decisions[i].p_claim, i) for i in live])  # type: ignore[misc]
    against = passing([(decisions[i].p_opposite, i) for i in live])  # type: ignore[misc]
    out = []
    for i, d in enumerate(decisions):
        if i not in live:
            fv = d.verdict
        elif i in against:
            fv = Verdict.CONTRADICTED
        elif i in holds:
            fv = Verdict.HOLDS
        else:
            fv = Verdict.INCONCLUSIVE
        out.append(replace(d, family=family, family_size=m, family_verdict=fv))
    return out


def family_whole(verdicts: Iterable[Verdict]) -> tuple[Verdict, str]:
    """The verdict of a family as the one claim it makes, from its members' verdicts under
    Holm's correction (:func:`holm`); the headline counts a family once, by this verdict.

    A family states one thing over a whole axis ("higher for all values of min_threshold",
    "better at every buffer size"), so it **holds** when every comparable member holds, and is
    **contradicted** when any member is: a member contradicted under Holm's correction is a
    point of the axis where the runs say the opposite at the family-wise level, which a
    statement over every point cannot survive. Anything else (a member inconclusive, e.g. tied
    or decided on stalled runs, and none contradicted) leaves the statement **inconclusive**.
    Members not comparable stay out, as they do of Holm's m; a family none of whose members is
    comparable is **not comparable**. The reason gives the split."""
    vs = [Verdict(v) for v in verdicts]
    n = len(vs)
    k = {v: vs.count(v) for v in Verdict}
    split = (
        f"family split: {k[Verdict.HOLDS]} hold, {k[Verdict.CONTRADICTED]} contradicted, {k[Verdict.INCONCLUSIVE]} inconclusive"
        + (f", {k[Verdict.NOT_COMPARABLE]} not comparable" if k[Verdict.NOT_COMPARABLE] else "")
        + f" of {n}"
    )
    comparable = n - k[Verdict.NOT_COMPARABLE]
    if comparable == 0:
        return Verdict.NOT_COMPARABLE, f"no claim of the family is comparable ({split})"
    if k[Verdict.CONTRADICTED]:
        return Verdict.CONTRADICTED, f"contradicted at {k[Verdict.CONTRADICTED]} of its points ({split})"
    if k[Verdict.HOLDS] == comparable:
        return Verdict.HOLDS, f"every comparable claim holds ({split})"
    return Verdict.INCONCLUSIVE, split


def _numbers(v: PerSeed | None) -> dict[int, float]:
    out: dict[int, float] = {}
    for k, x in (v or {}).items():
        x = _value(x)
        if not isinstance(x, Excluded):
            out[int(k)] = x
    return out


def _ten(a: dict[int, float], b: dict[int, float], paired: bool) -> tuple[dict[int, float], dict[int, float]]:
    """Ten seeds of values like the measured ones (cycled; 1.0 where none was measured), so
    the sign test can reach its level."""
    seeds = sorted(set(a) & set(b)) if paired else sorted(a)
    if not seeds:
        seeds = [1]
        a = {1: a.get(1, next(iter(a.values()), 1.0))}
        b = {1: b.get(1, next(iter(b.values()), 1.0))}
    pick = [seeds[i % len(seeds)] for i in range(10)]
    return ({i + 1: a[s] for i, s in enumerate(pick)}, {i + 1: b[s] for i, s in enumerate(pick)} if paired else {})


def contradicting(claim: Claim, a: PerSeed, b: PerSeed | None = None) -> list[tuple[str, dict[int, float], dict[int, float] | None]]:
    """Per-seed values built from the measured ones to contradict the claim, each with how:
    a level kept gets b on the side it rules out, 1.5 margins from a; a direction claim gets
    its arms swapped, and b moved to the wrong side of a past its smallest effect (a claim on counts, which are never negative, gets a raised past b
    where b would fall below zero); a size claim the null effect (a = b), or a/b far
    outside its band for a claim whose point is equality; a value claim its quantity halved,
    set to zero, or (at_most) doubled and raised past the bound."""
    x, y = _ten(_numbers(a), _numbers(b), claim.paired)
    k = claim.kind
    if k in ("not_below", "not_above"):
        # b just past the margin on the side the claim rules out: a and b differ by 1.5 margins
        # of the larger in every seed, so the claim is shown to fail just past its margin (not
        # only on a gross change, which could leave a margin too wide unnoticed).
        m = claim.effect_min or 0.0
        d = min(1.5 * m, (1 + m) / 2) if m > 0 else 0.01
        a_at = {s_: (v if not math.isinf(v) else (y[s_] if not math.isinf(y[s_]) else 1.0)) for s_, v in x.items()}
        up = k == "not_below"  # b above a

        def past(base: float) -> float:
            if base == 0:
                return 1.0 if up else -1.0
            # b farther from zero than a (b the larger: a = (1 − d)·b), or nearer (a the larger).
            return base / (1 - d) if (base > 0) == up else base * (1 - d)

        return [(f"b past a by {percent(d)} of the larger (1.5 times the margin)", a_at, {s_: past(base) for s_, base in a_at.items()})]
    if k in ("less", "greater"):
        # Swapped arms contradict a claim the runs support; where the arms tie (0 vs 0, ∞ vs
        # ∞) b is moved to the wrong side of a, past the smallest effect that counts.
        d = (1 + (claim.effect_min or 0.0)) / 2
        moved = {}
        a_at = {s_: (v if not math.isinf(v) else (y[s_] if not math.isinf(y[s_]) else 1.0)) for s_, v in x.items()}
        raised = False
        for s_, base in a_at.items():
            lower = base * (1 - d) if base > 0 else (-1.0 if base == 0 else base / (1 - d))
            higher = base / (1 - d) if base > 0 else (1.0 if base == 0 else base * (1 - d))
            moved[s_] = lower if k == "less" else higher
            if claim.count_spread is not None:
                # Past the count tie rule too: |a − b| > k·√(a + b) for D = k² + k·√(2|a|) + 1
                # (either way: D² > k²·(2|a| + D)).
                kk = claim.count_spread
                gap = kk * kk + kk * math.sqrt(2 * abs(base)) + 1
                moved[s_] = min(moved[s_], base - gap) if k == "less" else max(moved[s_], base + gap)
                if moved[s_] < 0 <= base:
                    # A count is never negative: a run can give a above b, not b below zero.
                    raised = True
        if raised:  # only "less" lowers b
            kk = float(claim.count_spread)  # type: ignore[arg-type]
            up = {s_: max(base / (1 - d) if base > 0 else 1.0, base + kk * kk + kk * math.sqrt(2 * abs(base)) + 1) for s_, base in a_at.items()}
            return [("arms swapped", y, x), ("a raised past b by more than the smallest effect (a count is never negative)", up, a_at)]
        return [("arms swapped", y, x), ("b moved past a by more than the smallest effect", a_at, moved)]
    if k in ("ratio", "approx"):
        # On b as measured, or 1 where a ratio over it is undefined (0, ∞).
        y = {s_: (v if v != 0 and not math.isinf(v) else 1.0) for s_, v in y.items()}
        if k == "ratio" and not claim.null_ok:
            return [("no effect (a = b)", dict(y), y)]
        lo, hi = claim.band()
        far = 2 * max(abs(hi), abs(lo), 1.0)
        return [(f"a = {far:g}·b", {s_: far * v for s_, v in y.items()}, y)]
    if k == "matches":
        return [("a halved", {s: v / 2 for s, v in x.items()}, None), ("a = 0", {s: 0.0 for s in x}, None)]
    if k == "at_least":
        return [("a halved", {s: v / 2 for s, v in x.items()}, None), ("a = 0", {s: 0.0 for s in x}, None)]
    t = abs(float(claim.target)) if claim.target is not None and not math.isinf(claim.target) else 1.0
    return [("a doubled", {s: 2 * v for s, v in x.items()}, None), ("a raised by twice the bound", {s: v + 2 * t + 1 for s, v in x.items()}, None)]


def can_fail(claim: Claim, a: PerSeed, b: PerSeed | None = None) -> tuple[bool, str]:
    """Whether the claim comes out contradicted on at least one of :func:`contradicting`'s
    constructions, and how (or what each gave). A claim that holds or stays inconclusive on
    all of them cannot be contradicted by any run like the ones measured: its kind, band,
    tie rule or bound is wrong."""
    tried = []
    for how, x, y in contradicting(claim, a, b):
        d = claim.decide(x, y)
        if d.verdict is Verdict.CONTRADICTED:
            return True, how
        tried.append(f"{how}: {d.verdict.value} ({d.reason})")
    return False, "; ".join(tried)


def not_comparable(claim: Claim | None, reason: str) -> Decision:
    """A claim that cannot be compared with the paper's, and why."""
    return Decision(Verdict.NOT_COMPARABLE, reason, claim.text() if claim else "", tests=claim.tests if claim else "")


def less(a: PerSeed, b: PerSeed, min_effect: float | None = None) -> Decision:
    return Claim("less", min_effect=min_effect).decide(a, b)


def greater(a: PerSeed, b: PerSeed, min_effect: float | None = None) -> Decision:
    return Claim("greater", min_effect=min_effect).decide(a, b)


def not_below(a: PerSeed, b: PerSeed, min_effect: float | None = None) -> Decision:
    return Claim("not_below", min_effect=min_effect).decide(a, b)


def not_above(a: PerSeed, b: PerSeed, min_effect: float | None = None) -> Decision:
    return Claim("not_above", min_effect=min_effect).decide(a, b)


def approx(a: PerSeed, b: PerSeed, within: float) -> Decision:
    return Claim("approx", within=within).decide(a, b)


def ratio(a: PerSeed, b: PerSeed, r: float, within: float) -> Decision:
    return Claim("ratio", target=r, within=within).decide(a, b)


def matches(a: PerSeed, paper: float, within: float) -> Decision:
    return Claim("matches", target=paper, within=within).decide(a)


def at_least(a: PerSeed, bound: float) -> Decision:
    return Claim("at_least", target=bound).decide(a)


def at_most(a: PerSeed, bound: float) -> Decision:
    return Claim("at_most", target=bound).decide(a)


def per_seed(items: Iterable[tuple[int | None, Any]], f: Callable[[Any], Any]) -> dict[int, Any]:
    """``{seed: f(item)}``; ``f`` may return :class:`Excluded` or raise ``KeyError`` /
    ``ValueError`` / ``ZeroDivisionError``, which exclude the seed with the message (an
    :class:`~ecnlab.OutputError`, a recorded output that does not read, is raised)."""
    out: dict[int, Any] = {}
    for seed, item in items:
        if seed is None:
            continue
        try:
            out[seed] = f(item)
        except OutputError:
            raise
        except (KeyError, ValueError, ZeroDivisionError, TypeError) as e:
            out[seed] = Excluded(f"{type(e).__name__}: {e}")
    return out

"""Runs not simulated because a finished run is provably the same run.

A buffer sweep runs one scenario at several buffer limits. A run whose queues never needed
their limits does not depend on them: the simulator records, per port, the most any arrival
asked the port to hold (its backlog plus the arrival, in packets and, where a limit is in
bytes, in bytes) and whether anything read a limit for a decision (a marker such as EECN's,
which divides by the limit; a node element; a discipline that does not say it leaves its
limit alone). Every limit check of a discipline compares what it holds plus the arrival with
the limit, so the same run under other limits takes every branch it took, event for event,
as long as each changed limit is at least what the run needed and no limit was read.

Two runs are candidates when their fully-defaulted scenarios (the normalised TOML, not the
experiment's labels) are the same but for their names and the ``limit`` of queue tables; the
limits a scenario gives each port are asked of the simulator (:func:`_core.buffer_limits`),
not inferred from the keys. Such runs form a chain, run in increasing order of their
limits (chains in parallel, a chain's runs one after another); before a run of a chain is
simulated, every finished run of the chain is asked whether it proves it (:func:`proof`):
each port whose limits differ must have had no limit read, the same kinds of limit, and
every arrival within the smaller of the two. A proven run is written from the proving run's
tables (the same files) with its own scenario and ``run.json``, which says where it came
from (``identical_to``) and why (``identical_reason``).

:class:`Schedule` is that order, shared by :func:`..run_many` (``ecnlab reproduce``) and
:func:`ecnlab.sweeps.run_sweep` (``ecnlab sweep``). Because a chain's runs run one after
another, which finished runs a run is offered to depends on the chain alone, never on the
order in which runs on other workers finish: the same runs give the same outputs, the same
runs proven and by the same run, whatever the executor does. (Running a chain's runs at
once and keeping whichever finished first as the proof would save wall time on a sweep of
one chain, but would make which run is simulated depend on timing.)
"""

from __future__ import annotations

import json
import tomllib
from typing import Any, Callable, Iterable, Mapping, NamedTuple

from .. import _core

__all__ = ["IdenticalRuns", "Proven", "Schedule", "chains", "identical_meta", "proof", "split_limits"]

Path_ = tuple[Any, ...]


def _limits_in(tree: Any, path: Path_, under_queue: bool, out: list[tuple[Path_, Any]]) -> Any:
    """``tree`` with the ``limit`` of every table under a queue key blanked; the blanked
    values (path, value) appended to ``out``."""
    if isinstance(tree, dict):
        blanked = {}
        for k, v in tree.items():
            if under_queue and k == "limit" and not isinstance(v, (dict, list)):
                out.append((path + (k,), v))
                blanked[k] = None
            else:
                blanked[k] = _limits_in(v, path + (k,), under_queue or "queue" in k, out)
        return blanked
    if isinstance(tree, list):
        return [_limits_in(v, path + (i,), under_queue, out) for i, v in enumerate(tree)]
    return tree


def split_limits(toml: str) -> tuple[str, tuple[tuple[Path_, Any], ...]]:
    """A validated scenario TOML as (its shape: the scenario without its name and with every
    queue's ``limit`` blanked, as canonical JSON; the blanked limits by key path, in order)."""
    data = tomllib.loads(toml)
    data.pop("name", None)
    found: list[tuple[Path_, Any]] = []
    shape = _limits_in(data, (), False, found)
    return json.dumps(shape, sort_keys=True, default=str), tuple(found)


def _order(limits: tuple[tuple[Path_, Any], ...]) -> tuple[Any, ...]:
    return tuple((0, v) if isinstance(v, (int, float)) else (1, str(v)) for _, v in limits)


def chains(tomls: Mapping[str, str]) -> list[list[str]]:
    """The runs (keys of ``tomls``, validated scenario TOMLs) that differ only in queue
    limits, grouped, each group in increasing order of its limits (key paths in order; ties
    by key); groups of one are left out."""
    groups: dict[str, list[tuple[tuple[Any, ...], str]]] = {}
    for key, toml in tomls.items():
        shape, limits = split_limits(toml)
        if limits:
            groups.setdefault(shape, []).append((_order(limits), key))
    return [[k for _, k in sorted(g)] for g in groups.values() if len(g) > 1]


def _unit_and_value(limit: Mapping[str, int]) -> tuple[str, int]:
    ((unit, value),) = limit.items()
    return unit, value


def proof(buffers: Mapping[str, Any] | None, limits: Mapping[str, list[Mapping[str, int]]]) -> str | None:
    """Why a finished run whose record of its ports' buffers is ``buffers`` (its
    ``meta["buffers"]``) is, event for event, the run of the same scenario under the port
    limits ``limits`` (:func:`_core.buffer_limits`), or None when that is not proven: some
    port whose limits differ had a limit read, has other kinds or number of limits, or had an
    arrival asking for more than the smaller of its two limits; or no limit differs at all
    (the scenarios differ in something the limits do not show)."""
    if not buffers or set(buffers) != set(limits):
        return None
    why = []
    for port, rec in buffers.items():
        old, new = rec["limits"], limits[port]
        if old == new:
            continue
        if rec["limit_read"] or len(old) != len(new):
            return None
        for o, n in zip(old, new):
            if o == n:  # a limit kept (a priority queue's other band) checks alike
                continue
            (unit, was), (unit_n, now) = _unit_and_value(o), _unit_and_value(n)
            need = rec["needed_packets"] if unit == "packets" else rec["needed_bytes"]
            if unit != unit_n or need is None or need > min(was, now):
                return None
            why.append(f"{port} needed at most {need} {unit} (limit {was} there, {now} here)")
    if not why:
        return None
    return "limit never reached, never read: " + "; ".join(why)


class IdenticalRuns:
    """Whether runs proven identical are skipped (``enabled``), the limits each scenario
    gives its ports (asked once), and the tally over every :func:`run_many` call of a
    reproduction (or of one sweep): runs simulated, runs proven identical (with the run that
    proved each and why), runs read from a kept or earlier reproduction."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.simulated = 0
        self.read = 0
        self.proven: list[dict[str, str]] = []
        self._limits: dict[str, dict[str, list[dict[str, int]]]] = {}

    def limits(self, toml: str) -> dict[str, list[dict[str, int]]]:
        """The limits of each port of the scenario ``toml``."""
        got = self._limits.get(toml)
        if got is None:
            got = self._limits[toml] = _core.buffer_limits(toml)
        return got

    def proven_by(self, toml: str, finished: Iterable[tuple[str, Mapping[str, Any]]]) -> tuple[str, str] | None:
        """The first of ``finished`` (name, meta) that proves the run of ``toml``, with why."""
        if not self.enabled:
            return None
        for name, meta in finished:
            why = proof(meta.get("buffers"), self.limits(toml))
            if why is not None:
                return name, why
        return None

    @property
    def identical(self) -> int:
        return len(self.proven)

    def counts(self) -> dict[str, int]:
        return {"simulated": self.simulated, "proven_identical": self.identical, "read": self.read}

    def text(self) -> str:
        n = self.simulated + self.identical + self.read
        read = f", {self.read} read from kept runs" if self.read else ""
        off = "" if self.enabled else " (skipping proven-identical runs is off)"
        return f"{n} runs, {self.simulated} simulated, {self.identical} proven identical{read}{off}"

    def to_json(self) -> dict[str, Any]:
        return {
            "enabled": self.enabled,
            **self.counts(),
            "runs": self.proven,
            "rule": (
                "a run whose scenario is a finished run's but for its name and the limits of its queues is not "
                "simulated when each port whose limits differ had no limit read for a decision (by a marker, a node "
                "element or the discipline) and no arrival asking for more than the smaller of the two limits (its "
                "backlog plus itself, in the limit's unit): it is then the same run, event for event; it is written "
                "from that run's tables with its own scenario, and its run.json names the run (identical_to) and why "
                "(identical_reason)"
            ),
        }


def identical_meta(src: Mapping[str, Any], limits: Mapping[str, list[Mapping[str, int]]], identical_to: Any, why: str) -> dict[str, Any]:
    """The ``meta`` of a run proven identical to the finished run whose meta is ``src``: that
    run's, with the run's own port ``limits`` in its ``buffers``, no time spent, and where it
    came from (``identical_to``) and why (``identical_reason``)."""
    meta = dict(src)
    meta["buffers"] = {p: {**rec, "limits": limits[p]} for p, rec in src["buffers"].items()}
    meta["wall_s"] = 0.0
    meta.pop("cpu_s", None)
    meta["identical_to"] = identical_to
    meta["identical_reason"] = why
    return meta


class Proven(NamedTuple):
    """The run ``key`` is the finished run ``src``, for the reason ``why``."""

    key: str
    src: str
    why: str


class Schedule:
    """Which runs to simulate, in which order, and which to write from a finished run that
    proves them identical, for runs by key (their validated scenario TOMLs ``tomls``): the
    runs ``todo`` are to be done, every other key of ``tomls`` is finished, its meta given
    by ``finished(key)`` when a run asks for it (None, or no ``buffers``: it proves nothing).
    Runs that differ only in queue limits (:func:`chains`) are done in increasing order of
    them, a chain's runs one after another (chains in parallel); other runs at once. With
    skipping off (``tally.enabled``) every run is simply simulated, all at once.

    :meth:`start` and :meth:`finished` (called as each simulated run ends) say what to do
    next: the runs to simulate now and the runs proven identical, each to be written from its
    proving run (which is finished), in that order."""

    def __init__(
        self,
        tally: IdenticalRuns,
        tomls: Mapping[str, str],
        todo: Iterable[str],
        finished: Callable[[str], Mapping[str, Any] | None] = lambda key: None,
    ) -> None:
        self.tally = tally
        self.tomls = tomls
        self.todo = list(todo)
        self._finished = finished
        self._meta: dict[str, Mapping[str, Any] | None] = {}
        self._waiting = set(self.todo)
        self._running: set[str] = set()
        self._chain_of: dict[str, list[str]] = {}
        if tally.enabled and self.todo:
            for chain in chains(tomls):
                if any(k in self._waiting for k in chain):
                    self._chain_of.update((k, chain) for k in chain)

    def start(self) -> tuple[list[str], list[Proven]]:
        """The runs to simulate at once, and the runs already proven by finished ones."""
        run = [k for k in self.todo if k not in self._chain_of]
        self._waiting.difference_update(run)
        self._running.update(run)
        proven: list[Proven] = []
        for chain in {id(c): c for c in self._chain_of.values()}.values():
            run += self._advance(chain, proven)
        return run, proven

    def finished(self, key: str, meta: Mapping[str, Any] | None) -> tuple[list[str], list[Proven]]:
        """The simulated run ``key`` ended with ``meta`` (None: it failed): the runs to
        simulate now, and the runs of its chain proven identical (by it or another finished
        run)."""
        self._running.discard(key)
        self._meta[key] = meta
        proven: list[Proven] = []
        run = self._advance(self._chain_of[key], proven) if key in self._chain_of else []
        return run, proven

    def _advance(self, chain: list[str], proven: list[Proven]) -> list[str]:
        """Proves the chain's next runs that a finished run proves (appended to ``proven``);
        the first that none does is returned to be run (nothing while one of the chain is
        running)."""
        for i, key in enumerate(chain):
            if key in self._running:
                return []  # the rest wait for it
            if key not in self._waiting:
                continue
            self._waiting.discard(key)
            # The closest finished runs first: below, nearest first, then above.
            order = [k for k in reversed(chain[:i])] + chain[i + 1 :]
            done = [(k, m) for k in order if k not in self._waiting and k not in self._running and (m := self.meta(k)) is not None]
            found = self.tally.proven_by(self.tomls[key], done)
            if found is None:
                self._running.add(key)
                return [key]
            src, why = found
            self._meta[key] = identical_meta(self.meta(src), self.tally.limits(self.tomls[key]), src, why)
            proven.append(Proven(key, src, why))
        return []

    def meta(self, key: str) -> Mapping[str, Any] | None:
        """The meta of a finished run (of one proven here: :func:`identical_meta`, with
        ``identical_to`` its proving run's key)."""
        if key not in self._meta:
            self._meta[key] = self._finished(key)
        return self._meta[key]

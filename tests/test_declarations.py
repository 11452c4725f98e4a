"""Every registered experiment against the framework's declarations: it names its
bottleneck (or why none), every reading of a run axis changes one of its runs, and every key
of every run's fully-defaulted scenario has a source. These run without simulating (the runs
are only declared and validated).

Experiments still missing a declaration are listed below by name, each an expected failure
until its module declares it; the list only shrinks."""

from __future__ import annotations

import functools

import pytest

from ecnlab import experiments as ex
from ecnlab.experiments import check_bottleneck, check_readings_change_runs, scenario_key
from ecnlab.experiments._provenance import join
from ecnlab.experiments.base import Reading
from ecnlab.scenario import load_scenario

NAMES = ex.names()

#: Experiments with a run axis one of whose values changes none of their runs (an axis
#: declared on an experiment it does not affect).
READINGS_MISSING: dict[str, str] = {}

#: Experiments that do not yet declare where their parameters come from (provenance()).
PROVENANCE_MISSING: dict[str, str] = {}


def expected(name: str, missing: dict[str, str]):
    if name in missing:
        return pytest.param(name, marks=pytest.mark.xfail(strict=False, reason=missing[name]))
    return name


@functools.cache
def plan(name: str) -> tuple[ex.Experiment, list[tuple[Reading, dict]]]:
    """The quick form's runs of seed 1 under every reading (what the declarations are about
    does not change with the seed)."""
    exp = ex.get(name)
    return exp, [(rd, exp.runs(True, [1], rd)) for rd in Reading.choose(exp.axes, "all")]


@pytest.mark.parametrize("name", NAMES)
def test_every_experiment_names_its_bottleneck(name):
    exp, per_reading = plan(name)
    check_bottleneck(exp, [k for _, runs in per_reading for k in runs])


@pytest.mark.parametrize("name", [expected(n, READINGS_MISSING) for n in NAMES])
def test_every_reading_of_a_run_axis_changes_a_run(name):
    exp, per_reading = plan(name)
    check_readings_change_runs(exp, per_reading, [{k: scenario_key(v) for k, v in runs.items()} for _, runs in per_reading])


@pytest.mark.parametrize("name", [expected(n, PROVENANCE_MISSING) for n in NAMES])
def test_every_parameter_has_a_source(name):
    exp, per_reading = plan(name)
    problems = []
    for rd, runs in per_reading:
        p = join({k: load_scenario(v).to_toml() for k, v in runs.items()}, exp.provenance(True, rd), exp.hosts)
        problems += [f"[{rd.name}] {x}" for x in p.problems()]
    assert not problems, f"{name}: {len(problems)} key(s) without a source or undeclared:\n" + "\n".join(problems[:60])

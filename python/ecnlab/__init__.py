"""ecnlab: a fast, deterministic packet-level laboratory for network-assisted congestion
control.

>>> import ecnlab
>>> s = ecnlab.Scenario.dumbbell(left=1, right=1, bottleneck_rate="10Mbps", duration="2s")
>>> r = ecnlab.run(s.add_udp_flow("l0", "r0", rate="5Mbps"))
>>> r.flows.select("name", "goodput_bps")  # doctest: +SKIP
"""

from __future__ import annotations

from . import _core
from .errors import ExperimentError, InternalError, OutputError, RunWarning, ScenarioError
from .results import Results, read_run_dir, run, validate, write_run_dir
from .scenario import Scenario, load_scenario
from .sweeps import read_sweep, sweep

__version__ = _core.__version__

__all__ = [
    "ExperimentError",
    "InternalError",
    "OutputError",
    "Results",
    "RunWarning",
    "Scenario",
    "ScenarioError",
    "__version__",
    "load_scenario",
    "read_run_dir",
    "read_sweep",
    "run",
    "sweep",
    "validate",
    "write_run_dir",
]

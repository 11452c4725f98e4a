"""The runs of an earlier reproduction, taken instead of running them again.

A reproduction's verdicts depend on its runs and on the analysis; when only the analysis
changed (a claim, a tolerance, the verdict rule), its runs need not be run again. A run is
taken from the earlier reproduction only when running it now would give the same bytes: its
``run.json`` holds the very scenario TOML the new run would run (byte for byte, the run's
name included) and was written by this simulator build (the same ``ecnlab_version`` and
``source_hash``, the hash of the simulator's source). Anything else is run, and counted by
why it was not taken: the scenario changed, the build differs, or the earlier reproduction
has no run of that name.

With ``any_build`` the build is not asked: a recorded reproduction is judged again from its
own runs whatever simulator wrote them, and nothing is run. Every run must then be there
with the very scenario TOML; one that is not is an error naming it (before anything is read),
and summary.json names the builds the runs came from.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from .. import _core
from ..errors import OutputError
from ..results import read_run_json

__all__ = ["Reuse"]


def _digest(toml: str) -> str:
    return hashlib.sha256(toml.encode()).hexdigest()


class Reuse:
    """The run directories of the reproduction in ``directory`` (its ``runs/`` tree, and the
    runs kept beside it from an interrupted attempt, ``.<name>.resume/``), indexed by their
    scenario TOML. :meth:`take` answers whether a new run may be read from one of them, and
    counts the answers."""

    def __init__(self, directory: str | os.PathLike[str], any_build: bool = False) -> None:
        root = Path(directory).absolute()
        self.any_build = any_build
        if not (root / "summary.json").is_file() and not (root / "runs").is_dir():
            raise OutputError(f"--reuse {directory}: not a reproduction (it has neither summary.json nor runs/)")
        self.root = root
        self.build = {"ecnlab_version": _core.__version__, "source_hash": _core.source_hash}
        self._by_toml: dict[str, tuple[Path, dict[str, Any]]] = {}
        self._names: set[str] = set()
        dirs = [root / "runs", root.parent / f".{root.name}.resume"]
        for top in dirs:
            if not top.is_dir():
                continue
            for f in sorted(top.rglob("run.json")):
                info = read_run_json(f.parent)
                toml = info.get("scenario_toml")
                if not isinstance(toml, str) or not toml:
                    continue
                self._by_toml.setdefault(_digest(toml), (f.parent, info))
                if top.name == "runs":  # there a run's directory is named after the run
                    self._names.add(f.parent.name)
        self.reused = 0
        self.ran = 0
        self.not_taken = {"scenario changed": 0, "other build": 0, "no such run": 0}
        self.other_builds: dict[str, int] = {}
        self.read_builds: dict[str, int] = {}  # the builds of the runs taken, with how many

    @staticmethod
    def _build_key(built: dict[str, Any]) -> str:
        return f"{built['ecnlab_version']} {built['source_hash']}"

    def _why_not(self, name: str, toml: str) -> str | None:
        """Why the run ``name`` of scenario ``toml`` cannot be taken, or None."""
        found = self._by_toml.get(_digest(toml))
        if found is not None:
            built = {k: found[1].get(k) for k in self.build}
            return None if self.any_build or built == self.build else "other build"
        return "scenario changed" if name in self._names else "no such run"

    def require(self, name: str, toml: str, reading: str | None = None) -> None:
        """With ``any_build``: raises naming the run ``name`` (of ``reading``) unless it can be taken."""
        why = self._why_not(name, toml)
        if why is not None:
            raise OutputError(
                f"--reuse {self.root} --reuse-any-build: run {name}"
                + (f" (reading {reading})" if reading else "")
                + f": {why} (its scenario TOML is not among the "
                "recorded runs); judging again from another build's runs runs nothing"
            )

    def take(self, name: str, toml: str) -> Path | None:
        """The earlier run directory to read instead of running the run ``name`` whose
        validated, fully-defaulted scenario is ``toml``, or None (then the caller runs it and
        it is counted as run)."""
        if self.any_build:
            self.require(name, toml)
        why = self._why_not(name, toml)
        if why is None:
            d, info = self._by_toml[_digest(toml)]
            key = self._build_key({k: info.get(k) for k in self.build})
            self.read_builds[key] = self.read_builds.get(key, 0) + 1
            self.reused += 1
            return d
        if why == "other build":
            key = self._build_key({k: self._by_toml[_digest(toml)][1].get(k) for k in self.build})
            self.other_builds[key] = self.other_builds.get(key, 0) + 1
        self.not_taken[why] += 1
        self.ran += 1
        return None

    def to_json(self) -> dict[str, Any]:
        """What ``summary.json`` says of the reuse (``"reuse"``)."""
        return {
            "from": str(self.root),
            "build": dict(self.build),
            "reused": self.reused,
            "run": self.ran,
            "not_taken": dict(self.not_taken),
            "other_builds": dict(self.other_builds),
            "any_build": self.any_build,
            "runs_from_builds": dict(self.read_builds),
            "rule": (
                "every run is read from the earlier reproduction, whatever build wrote it (runs_from_builds), when its "
                "run.json holds the very scenario TOML (byte for byte); a run it lacks is an error and nothing is run"
                if self.any_build
                else "a run is taken from the earlier reproduction only when its run.json holds the very scenario TOML "
                "(byte for byte) and was written by this build (ecnlab_version and source_hash); every other run is run"
            ),
        }

    def text(self) -> str:
        """One line for the log: how many runs were taken, how many run and why."""
        why = ", ".join(f"{n} {k}" for k, n in self.not_taken.items() if n)
        built = "; written by " + ", ".join(f"{k} ({n})" for k, n in self.read_builds.items()) if self.any_build else ""
        return f"reused {self.reused} runs from {self.root}, ran {self.ran}" + (f" ({why})" if why else "") + built

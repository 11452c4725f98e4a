"""Exceptions raised by ecnlab."""

from __future__ import annotations


class ScenarioError(ValueError):
    """A scenario that cannot run: ``path`` is the offending key (``flows[3].cc``, empty
    for the whole file) and ``message`` says what is wrong and what is allowed."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)

    def __reduce__(self):
        return (type(self), (self.path, self.message))


class RunWarning(UserWarning):
    """What a run says about itself when it probably did not do what was meant (a bottleneck
    left mostly idle by backlogged bulk flows, a scheme whose path writes none of its
    feedback, an element that never acted). ``ecnlab.run`` issues one per warning of the
    run (they are also in ``Results.meta["warnings"]`` and run.json); filter them with the
    :mod:`warnings` module."""


class InternalError(RuntimeError):
    """A bug in the simulator (a failed internal check, or a Rust panic); the message says
    which."""


class ExperimentError(ValueError):
    """An unknown experiment name or an invalid experiment option."""


class OutputError(ValueError):
    """An output directory that cannot be written or would overwrite something that is not
    an ecnlab result."""


class EmulationError(RuntimeError):
    """Emulation cannot run here (no root, no namespaces, a missing tool) or failed to set
    up; the message says what to do."""

"""Running many scenarios on Dask distributed: a local cluster by default, or an existing
one by its scheduler's address, through one code path.

Each task runs one scenario and returns its tables; the client writes them (so workers need
no shared file system). A worker that dies mid-run loses nothing: the scheduler gives its
task to another worker, and the run, being deterministic, gives the same numbers. A run
that fails (an internal error) is returned as failed, not raised, so one bad run does not
stop a sweep.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, TextIO

from ..progress import _clock

__all__ = ["Executor", "run_scenario", "SweepProgress"]

#: Set when the client is interrupted; runs in this process (thread workers) stop at their
#: next progress report.
_CANCEL = threading.Event()


def _stop_if_cancelled(_p: dict) -> bool:
    return not _CANCEL.is_set()


def run_scenario(toml: str) -> dict[str, Any]:
    """One run on a worker: ``{"status": "ok", "tables", "meta", "scenario_toml"}`` or
    ``{"status": "failed", "error"}``."""
    from .. import _core, _tables
    from ..errors import InternalError, ScenarioError

    t0 = time.perf_counter()
    try:
        out = _core.run(toml, "toml", seed=None, pcap_dir=None, progress=_stop_if_cancelled)
    except (ScenarioError, InternalError) as e:
        return {"status": "failed", "error": f"{type(e).__name__}: {e}", "meta": {"wall_s": time.perf_counter() - t0}}
    return {
        "status": "ok",
        "tables": {t: _tables.to_polars(out[t]) for t in ("flows", "ports", "timeseries")},
        "meta": dict(out["meta"]),
        "scenario_toml": out["scenario_toml"],
        "pid": os.getpid(),
    }


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Interrupted(Exception):
    """A :meth:`Executor.map` stopped through :attr:`Executor.interrupt`."""


class Executor:
    """A Dask client: ``Executor()`` starts a local cluster of ``workers`` processes (one per
    core) with one thread each, ``Executor(threads=True)`` one process with ``workers``
    threads (the simulator releases the GIL), ``Executor(scheduler="tcp://host:8786")`` uses
    an existing cluster. Use as a context manager."""

    def __init__(self, scheduler: str | None = None, workers: int | None = None, threads: bool = False) -> None:
        self.scheduler = scheduler
        self.workers = workers or default_workers()
        self.threads = threads
        self.client: Any = None
        self.cluster: Any = None
        self.scratch: str | None = None
        #: Set from another thread to stop a :meth:`map` going on in one (its caller failed):
        #: the map cancels its runs and raises :class:`Interrupted` at its next look.
        self.interrupt = threading.Event()

    def __enter__(self) -> "Executor":
        return self.start()

    def start(self) -> "Executor":
        """Connects (or starts the local cluster); does nothing when already started."""
        if self.client is not None:
            return self
        import dask
        from distributed import Client, LocalCluster

        from ..errors import OutputError

        _quiet_dask()
        # A killed worker's task is given to another worker (and again, up to this many
        # deaths) before it counts as failed.
        dask.config.set({"distributed.scheduler.allowed-failures": 3})
        if self.scheduler:
            try:
                self.client = Client(self.scheduler, timeout="5s")
            except (OSError, TimeoutError, ValueError) as e:
                raise OutputError(f"cannot reach the Dask scheduler at {self.scheduler}: {e}") from None
        else:
            with _sigint_ignored():
                self.cluster = LocalCluster(
                    n_workers=1 if self.threads else self.workers,
                    threads_per_worker=self.workers if self.threads else 1,
                    processes=not self.threads,
                    dashboard_address=":0",
                    silence_logs=logging.CRITICAL,
                    # Its own scratch space: Dask's shared one under /tmp is purged of every
                    # other cluster's leftovers by each new one, slowly on a busy machine.
                    local_directory=self._scratch_dir(),
                )
            self.client = Client(self.cluster)
            # Ctrl-C in a terminal reaches the whole process group: local workers leave it to
            # the client, which cancels the runs and shuts them down.
            from ._plugin import IgnoreInterrupt

            self.client.register_plugin(IgnoreInterrupt(), name="ecnlab-ignore-sigint")
        _CANCEL.clear()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _scratch_dir(self) -> str:
        import tempfile

        self.scratch = tempfile.mkdtemp(prefix="ecnlab-dask-")
        return self.scratch

    def close(self) -> None:
        for thing in (self.client, self.cluster):
            if thing is not None:
                try:
                    thing.close(timeout=5)
                except Exception:  # noqa: BLE001 - closing a cluster that lost workers may complain
                    pass
        self.client = self.cluster = None
        if self.scratch is not None:
            import shutil

            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def slots(self) -> int:
        """How many runs the cluster runs at once."""
        try:
            return max(1, sum(self.client.nthreads().values()))
        except Exception:  # noqa: BLE001
            return self.workers

    def worker_pids(self) -> dict[str, int]:
        return self.client.run(os.getpid)

    def map(
        self,
        items: Iterable[tuple[str, str]],
        on_done: Callable[[str, dict[str, Any]], Iterable[tuple[str, str]] | None],
        progress: "SweepProgress | None" = None,
    ) -> None:
        """Runs every ``(key, scenario_toml)`` and calls ``on_done(key, outcome)`` in this
        thread as each finishes, in completion order; what ``on_done`` returns (more
        ``(key, scenario_toml)``, or None) is run too (a run that waited for this one).
        Ctrl-C cancels what has not finished (and raises KeyboardInterrupt) after the runs
        already done have been handed over."""
        from distributed import as_completed

        def submit(key: str, toml: str) -> Any:
            return self.client.submit(run_scenario, toml, key=f"ecnlab-run-{key}", pure=False, retries=0)

        # A map that failed before in this process left the thread workers' stop signal set.
        _CANCEL.clear()
        futures = {submit(key, toml): key for key, toml in items}
        ac = as_completed(futures)
        try:
            while not ac.is_empty():
                if self.interrupt.is_set():
                    raise Interrupted("the runs were stopped: their caller failed")
                batch = ac.next_batch(block=False)
                if not batch:
                    if progress is not None:
                        progress.draw()
                    time.sleep(0.05)
                    continue
                for f in batch:
                    key = futures[f]
                    if f.status == "error":
                        outcome = {"status": "failed", "error": _task_error(f)}
                    else:
                        outcome = f.result()
                    more = on_done(key, outcome)
                    if progress is not None:
                        progress.finished(outcome)
                    f.release()
                    for k, toml in more or ():
                        nf = submit(k, toml)
                        futures[nf] = k
                        ac.add(nf)
        except BaseException:
            _CANCEL.set()
            self.client.cancel(list(futures), force=True)
            raise
        finally:
            if progress is not None:
                progress.close()


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Processes started meanwhile inherit SIGINT ignored (before any plugin can run)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _task_error(f: Any) -> str:
    try:
        e = f.exception()
    except Exception as x:  # noqa: BLE001
        e = x
    name = type(e).__name__
    if name == "KilledWorker":
        return "KilledWorker: every worker that ran it died (out of memory, or killed)"
    return f"{name}: {e}"


#: The warnings Dask's own code raises about the cluster rather than the results: its
#: scratch space slow to create on a loaded machine (raised from contextlib, so known by its
#: text), and whatever its modules warn. ecnlab's warnings (a run's, printed by the CLI) are
#: not among them.
_DASK_WARNING_TEXTS = ("Creating scratch directories is taking",)
_DASK_MODULES = r"(distributed|dask|tornado|bokeh)(\..*)?$"


def _quiet_dask() -> None:
    """Dask's own log lines and warnings off the terminal. Workers that are shut down or
    killed log at WARNING/ERROR, the client and its garbage-collection monitor at WARNING
    (their levels set by Dask's configuration, not inherited from ``distributed``), and
    slow scratch space raises a UserWarning in the client and in every worker process:
    messages about the cluster, not the results, which would scramble the progress line."""
    import warnings

    import dask

    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in ("distributed", "tornado", "bokeh")]
    for name in {"distributed", "distributed.client", "distributed.gc", *names}:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    for text in _DASK_WARNING_TEXTS:
        warnings.filterwarnings("ignore", message=text)
    warnings.filterwarnings("ignore", module=_DASK_MODULES)
    # Worker processes start as new interpreters: they read the same filters from their
    # environment, which a nanny sets before it spawns them.
    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    if "PYTHONWARNINGS" not in env and "PYTHONWARNINGS" not in os.environ:
        env["PYTHONWARNINGS"] = ",".join(f"ignore:{t}" for t in _DASK_WARNING_TEXTS)
        dask.config.set({"distributed.nanny.pre-spawn-environ": env})


@dataclass
class SweepProgress:
    """A one-line progress report of a sweep: done / running / failed, ETA."""

    total: int
    slots: int
    stream: TextIO | None = None
    enabled: bool = True
    done: int = 0
    failed: int = 0
    skipped: int = 0
    #: Runs not simulated, proven identical to a finished run (counted in ``done`` too).
    identical: int = 0

    def __post_init__(self) -> None:
        self.stream = self.stream or sys.stderr
        self.t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def finished(self, outcome: dict[str, Any]) -> None:
        if outcome.get("status") == "ok":
            self.done += 1
        else:
            self.failed += 1
        self.draw(force=True)

    def proven_identical(self) -> None:
        self.done += 1
        self.identical += 1
        self.draw(force=True)

    def line(self) -> str:
        left = self.total - self.done - self.failed
        running = min(left, self.slots)
        wall = time.monotonic() - self.t0
        finished = self.done + self.failed
        eta = ""
        if 0 < finished < self.total:
            eta = f"  eta {_clock(wall / finished * left)}"
        skipped = f" ({self.skipped} already in the store)" if self.skipped else ""
        if self.identical:
            skipped += f"  simulated {self.done - self.skipped - self.identical}, {self.identical} proven identical"
        return (
            f"sweep: {finished}/{self.total} runs{skipped}  done {self.done}  running {running}  "
            f"failed {self.failed}  wall {_clock(wall)}{eta}"
        )

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        self.stream.write("\r\x1b[2K" + self.line()[: _columns()])
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._shown = False


def _columns() -> int:
    import shutil

    return shutil.get_terminal_size((80, 24)).columns - 1


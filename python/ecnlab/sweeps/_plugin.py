"""Worker plugins (a module of its own: it needs distributed, which the rest of ecnlab
imports only when a sweep starts)."""

from __future__ import annotations

import signal
import threading
from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin


class IgnoreInterrupt(WorkerPlugin):
    """A worker plugin: the worker process ignores SIGINT (also a worker the nanny restarts)."""

    def setup(self, worker: Any) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    def teardown(self, worker: Any) -> None:
        pass

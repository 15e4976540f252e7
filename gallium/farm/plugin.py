"""The Dask worker plugin of the farm (imports distributed: loaded only when farming)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from .worker import release_all, worker_screen


class ScreenPlugin(WorkerPlugin):
    """Makes the worker's numpipe screen when the worker starts (so the first task does
    not pay for it) and destroys screens and traces when the worker stops."""

    name = "numpipe-screen"

    def __init__(self, threads: int | None = 0) -> None:
        self.threads = threads

    def setup(self, worker: Any = None) -> None:
        worker_screen(self.threads)

    def teardown(self, worker: Any = None) -> None:
        release_all()

"""The Dask worker plugin of the farm (imports distributed: loaded only when farming)."""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from .worker import release_all, worker_screen


class ScreenPlugin(WorkerPlugin):
    """Makes the worker's numpipe screen when the worker starts (so the first task does
    not pay for it) and destroys screens and traces when the worker stops.

    ``quiet`` (the farm's own LocalCluster): also stops the worker's statistical
    profiler, which samples the task's thread every 10 ms (bench/README.md: what it
    cost a frame).  A cluster the caller brings keeps its settings."""

    name = "numpipe-screen"

    def __init__(self, threads: int | None = 0, quiet: bool = False) -> None:
        self.threads = threads
        self.quiet = quiet

    def setup(self, worker: Any = None) -> None:
        if self.quiet and worker is not None:
            for name in ("profile", "profile-cycle"):
                callback = getattr(worker, "periodic_callbacks", {}).get(name)
                if callback is not None:
                    callback.stop()
        worker_screen(self.threads)

    def teardown(self, worker: Any = None) -> None:
        release_all()

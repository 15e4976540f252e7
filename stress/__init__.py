"""numpipe's thread-safety stress suites: ``python -m stress --seconds N``.

Each suite module exposes ``NAME`` and ``run(seconds, seed) -> Report``.  A
suite runs for the given time with every random choice drawn from its seed
(printed, so ``--suite NAME --seed S`` replays the same choices; thread
interleavings, by nature, differ from run to run), checks exact results
(pixels, counts, orders, buffer bytes) rather than the mere absence of
exceptions, and reports iterations, frames checked, the worst event-loop lag
where it measures one, and every failure.

Suites (see each module's docstring):

* ``many_contexts``      -- threaded contexts on one screen, every frame bit-exact
* ``cross_thread_fences`` -- fences waited on from other threads and event loops
* ``cancellation_storm`` -- awaiting tasks cancelled at random; no leaked callbacks
* ``screen_hammer``      -- screen methods from many threads while contexts render
* ``error_isolation``    -- one context's errors stay its own, reported once
* ``ring_pressure``      -- a flooded ring and no-stall buffer paths equal a direct run
* ``query_storm``        -- occlusion counts equal independently counted pixels
* ``compute_mix``        -- compute grids on several contexts next to rendering, word-exact
* ``primitive_mix``      -- points, lines and geometry shaders on several contexts, bit-exact
* ``band_processes``     -- heavy scenes through band processes on several contexts, bit-exact
* ``dense_stores``       -- full-screen pass-through passes into RGBA8/float targets, byte-exact
* ``pipeline_mix``       -- stream output, tessellation, indirect draws and shader stores
* ``soak``               -- a mixed load of every kind; resident memory returns to its baseline
"""

from __future__ import annotations

import importlib
import time
from types import ModuleType

from ._harness import Report

SUITES = (
    "many_contexts",
    "cross_thread_fences",
    "cancellation_storm",
    "screen_hammer",
    "error_isolation",
    "ring_pressure",
    "query_storm",
    "compute_mix",
    "primitive_mix",
    "band_processes",
    "dense_stores",
    "pipeline_mix",
    "soak",
)


def suite_module(name: str) -> ModuleType:
    if name not in SUITES:
        raise ValueError(f"suite must be one of {', '.join(SUITES)}; got {name!r}")
    return importlib.import_module(f"stress.{name}")


def run_suite(name: str, seconds: float, seed: int) -> Report:
    """Run one suite; an exception escaping it becomes a failure of its report."""
    module = suite_module(name)
    t0 = time.monotonic()
    try:
        report = module.run(seconds, seed)
    except Exception as exc:
        report = Report(name, seed, seconds)
        report.exception(f"suite {name}", exc)
    report.elapsed_s = time.monotonic() - t0
    return report


__all__ = ["SUITES", "Report", "run_suite", "suite_module"]

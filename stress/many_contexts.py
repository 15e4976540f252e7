"""Suite many_contexts: K threads, each with its own threaded context on one shared screen.

Each thread renders its own deterministic scenes (seeded random triangles, a
LESS depth test, alpha blending, a constant-buffer tint, indexed or not,
culling or not) over and over, and every frame is compared bit for bit with
the image the same scene gives on a direct context of a separate one-worker
screen, rendered once up front.  The contexts share the screen's worker pool,
so their scenes' bands interleave on the same workers; DESIGN.md's
determinism rule says that must not change a single pixel.
"""

from __future__ import annotations

import random

import gallium

from ._harness import Report, run_threads
from ._renderer import count_frames, plan_renderers
from ._scene import ReferenceRenderer

NAME = "many_contexts"
THREADS = 6
SIZES = ((64, 64), (96, 80), (130, 70), (40, 150), (100, 129), (77, 33))


def run(seconds: float, seed: int, threads: int = THREADS) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((1, 2, 3, 4))
    report.counters["pool_workers"] = workers
    screen = gallium.create_screen(num_threads=workers)
    reference = ReferenceRenderer()
    try:
        deadline, renderers = plan_renderers(
            report, screen, reference, rng, SIZES, threads, (8, 30), (1, 3), seconds
        )
        run_threads(report, deadline, [(r.name, r.run) for r in renderers])
        count_frames(report, renderers, seconds)
    finally:
        reference.close()
        screen.destroy()
    return report

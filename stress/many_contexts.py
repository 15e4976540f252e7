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

from ._harness import Deadline, Report, run_threads
from ._renderer import CheckedRenderer
from ._scene import ReferenceRenderer, make_spec

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
        plans = []
        for i in range(threads):
            w, h = SIZES[i % len(SIZES)]
            specs = [
                make_spec(rng.getrandbits(32), w, h, triangles=rng.randint(8, 30))
                for _ in range(rng.randint(1, 3))
            ]
            plans.append((f"ctx{i}", specs, rng.getrandbits(32)))
        reference.warm([s for _, specs, _ in plans for s in specs])
        deadline = Deadline(seconds)
        renderers = [
            CheckedRenderer(name, report, deadline, screen, reference, specs, s)
            for name, specs, s in plans
        ]
        run_threads(report, deadline, [(r.name, r.run) for r in renderers])
        for r in renderers:
            report.counters[f"{r.name}_frames"] = r.frames
            if r.frames == 0 and report.ok:
                report.fail(f"{r.name}: rendered no frame in {seconds}s")
    finally:
        reference.close()
        screen.destroy()
    return report

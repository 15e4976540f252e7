"""Suite band_processes: heavy scenes on several contexts through band processes.

K threads, each with its own threaded context on one screen whose workers
hand their scenes (thousands of triangles; every scene counts as heavy
here) to their band processes (workers/bandproc.py), render seeded scenes over and over, every frame
compared bit for bit with the same scene on a direct context of a separate
one-worker screen (no processes).  Meanwhile a churn thread creates large
textures (shared blocks), writes them and drops them, so the children are
told about freed blocks while they rasterize.  The suite fails if any frame
differs, if the pool gave up its processes, or if no band ran in a process.
"""

from __future__ import annotations

import gc
import random

import numpy as np

import gallium
from gallium import pipe
from workers import bandproc

from ._harness import Deadline, Report, run_threads
from ._renderer import count_frames, plan_renderers
from ._scene import ReferenceRenderer

NAME = "band_processes"
THREADS = 4
SIZES = ((160, 128), (200, 100), (128, 160), (180, 120))  # targets of 64 KiB or more


def _churn(screen, deadline: Deadline, rng: random.Random, report: Report) -> None:
    ctx = screen.context_create(threaded=rng.random() < 0.5)
    made = 0
    try:
        while deadline.running():
            side = rng.choice((128, 256, 512))
            res = screen.resource_create(
                pipe.ResourceTemplate(
                    target=pipe.TextureTarget.TEXTURE_2D,
                    format=pipe.Format.R8G8B8A8_UNORM,
                    width0=side,
                    height0=side,
                    bind=pipe.Bind.SAMPLER_VIEW,
                )
            )
            data = np.full((side, side, 4), made & 0xFF, np.uint8)
            box = pipe.Box(0, 0, 0, side, side, 1)
            ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, box, data, side * 4, data.nbytes)
            ctx.flush().wait(None)
            screen.resource_destroy(res)
            del res
            made += 1
            if made % 8 == 0:
                gc.collect()
    finally:
        ctx.destroy()
    report.counters["churned_blocks"] = made


def run(seconds: float, seed: int, threads: int = THREADS) -> Report:
    report = Report(NAME, seed, seconds)
    rng = random.Random(seed)
    workers = rng.choice((2, 3))
    report.counters["pool_workers"] = workers
    screen = gallium.create_screen(num_threads=workers, processes=True)
    reference = ReferenceRenderer()
    # these scenes are small enough to render many a second: count every one as heavy
    min_work, bandproc.MIN_WORK_MS = bandproc.MIN_WORK_MS, 0.0
    try:
        deadline, renderers = plan_renderers(
            report, screen, reference, rng, SIZES, threads, (2100, 3000), (1, 2), seconds
        )
        churn_rng = random.Random(rng.getrandbits(32))
        jobs = [(r.name, r.run) for r in renderers]
        jobs.append(("churn", lambda: _churn(screen, deadline, churn_rng, report)))
        run_threads(report, deadline, jobs)
        pool = screen.pool
        report.counters["process_bands"] = sum(pool.process_units)
        if pool.process_failure is not None:
            report.fail(f"the pool gave up its band processes: {pool.process_failure}")
        elif not sum(pool.process_units) and report.ok:
            report.fail("no band ran in a band process")
        count_frames(report, renderers, seconds)
    finally:
        bandproc.MIN_WORK_MS = min_work
        reference.close()
        screen.destroy()
    return report

"""Suite band_processes: heavy scenes on several contexts through band processes.

K threads, each with its own threaded context on one screen whose workers
hand their scenes (thousands of triangles; every scene counts as heavy
here) to their band processes (workers/bandproc.py), render seeded scenes over and over, every frame
compared bit for bit with the same scene on a direct context of a separate
one-worker screen (no processes); the scenes on the tallest targets take
narrow bands.  Meanwhile a churn thread creates large
textures (shared blocks), writes them and drops them, so the children are
told about freed blocks while they rasterize.  The suite fails if any frame
differs, if the pool gave up its processes, or if no band ran in a process.
"""

from __future__ import annotations

import gc
import random

import numpy as np

import gallium
import gallium.numpipe.scene as scene_mod
from gallium import pipe
from workers import bandproc

from ._harness import Deadline, Report, run_threads
from ._renderer import count_frames, plan_renderers
from ._scene import ReferenceRenderer

NAME = "band_processes"
THREADS = 4
# targets of 64 KiB or more; at 128x256 a scene of many triangles re-cuts its
# two 128-row bands into four of 64 (narrow bands, see run)
SIZES = ((160, 128), (200, 100), (128, 256), (180, 120))


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
    narrow = (scene_mod.NARROW_BAND_PIXELS, scene_mod.NARROW_MIN_BOX_PIXELS)
    recut = scene_mod.Scene._set_band_rows
    narrowed = [0]

    def counted(scene, rows):
        narrowed[0] += rows != scene.band_rows
        recut(scene, rows)

    try:
        deadline, renderers = plan_renderers(
            report, screen, reference, rng, SIZES, threads, (2100, 3000), (1, 2), seconds
        )
        # the reference images are made (with the usual bands): now let the
        # scenes whose triangles cover the target once take narrow bands
        # (Scene.wants_narrow_bands) of at most 8,192 pixels
        scene_mod.NARROW_BAND_PIXELS, scene_mod.NARROW_MIN_BOX_PIXELS = 1 << 13, 0
        scene_mod.Scene._set_band_rows = counted
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
        report.counters["narrow_scenes"] = narrowed[0]
        if not narrowed[0] and report.ok:
            report.fail("no scene took narrow bands")
        count_frames(report, renderers, seconds)
    finally:
        bandproc.MIN_WORK_MS = min_work
        scene_mod.NARROW_BAND_PIXELS, scene_mod.NARROW_MIN_BOX_PIXELS = narrow
        scene_mod.Scene._set_band_rows = recut
        reference.close()
        screen.destroy()
    return report

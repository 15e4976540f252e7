"""Threaded-context figures (issue 3 item 8 and item 5's event-loop lag).

Run one figure per process: ``python -m bench.tc calls|overlap|lag [--quick]``
prints one JSON object.  The parent (``python -m bench``) runs each in its own
subprocess so no worker pool, driver thread or allocator state carries over.

* ``calls`` -- recorded state calls per second on the application thread: a
  loop over eight state calls with pre-built arguments (``set_blend_color``
  twice, ``bind_blend_state``, ``bind_depth_stencil_alpha_state`` twice,
  ``bind_rasterizer_state``, ``set_stencil_ref``, ``set_sample_mask``).  The
  driver thread executes them concurrently, as it would in an application.
  Reported: calls / (time of the recording loop), and calls / (loop + drain);
  the same loop on the direct context for comparison.  And the recording
  cost (issue 21): the same eight calls against eight calls of a plain Python
  method of the same context object (a no-op taking one argument), measured
  alternately in one process, in rounds of 8,000 calls: with the driver thread
  held (the application thread's own cost: checking and recording a call)
  and running (what the two threads' share of the GIL makes of it).
* ``overlap`` -- an application loop that does heavy numpy work between
  frames: per frame, record the frame, flush, do the numpy work (elementwise
  ufuncs on 4M floats, which release the GIL, calibrated to take about as long
  as one direct frame), then wait for the frame's fence.  Total time threaded /
  total time direct; the two contexts alternate.  Two frames (see
  ``_OVERLAP_FRAMES``): "many-draws" (200 draws of 50 small triangles with a
  state change before each; the target is checked on this one) and "medium"
  (one draw of 10,000 medium triangles).
* ``lag`` -- an asyncio producer that records small draws (100 medium
  triangles each, plus a ``set_blend_color``) and flushes every 16 draws,
  awaiting ``ctx.ready_async()`` before each draw and yielding to the loop
  after it, while a ticker task sleeps 1 ms at a time and records how late it
  wakes.  The driver thread cannot keep up, so the ring stays full.  Reported:
  the longest step of the producer (from its resumption to its next await:
  how long the caller itself held the loop), the ticker's worst, p99 and
  median lag (the loop's stalls, whatever their cause: the caller, the driver
  thread holding the GIL, the machine), and the same ticker on an idle loop
  in the same process just before (the machine's own noise).  Compared with
  the time the driver thread takes per batch during the run (run time /
  batches executed) and with one batch's driver work on an idle direct
  context.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time

import numpy as np

import gallium
from gallium import pipe

from .numpipe_backend import NumpipeScene
from .scenes import SCENES

INF = pipe.PIPE_TIMEOUT_INFINITE


def _state_calls(ctx) -> list:
    """Eight bound methods with pre-built arguments, one loop iteration's calls."""
    blend = ctx.create_blend_state(
        pipe.BlendState(
            rt=[
                pipe.RtBlendState(
                    blend_enable=True,
                    rgb_src_factor=pipe.BlendFactor.SRC_ALPHA,
                    rgb_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                    alpha_src_factor=pipe.BlendFactor.ONE,
                    alpha_dst_factor=pipe.BlendFactor.INV_SRC_ALPHA,
                )
            ]
        )
    )
    dsa_a = ctx.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState())
    dsa_b = ctx.create_depth_stencil_alpha_state(
        pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
    )
    rast = ctx.create_rasterizer_state(pipe.RasterizerState())
    c1 = pipe.BlendColor(color=(0.25, 0.5, 0.75, 1.0))
    c2 = pipe.BlendColor(color=(1.0, 0.5, 0.0, 0.5))
    ref = pipe.StencilRef(ref_value=(3, 5))
    return [
        (ctx.set_blend_color, c1),
        (ctx.bind_blend_state, blend),
        (ctx.bind_depth_stencil_alpha_state, dsa_b),
        (ctx.bind_rasterizer_state, rast),
        (ctx.set_stencil_ref, ref),
        (ctx.set_sample_mask, 0xFFFFFFFF),
        (ctx.set_blend_color, c2),
        (ctx.bind_depth_stencil_alpha_state, dsa_a),
    ]


def _call_loop(ctx, n: int) -> tuple[float, float]:
    calls = _state_calls(ctx)
    iters = n // len(calls)
    (f0, a0), (f1, a1), (f2, a2), (f3, a3), (f4, a4), (f5, a5), (f6, a6), (f7, a7) = calls
    t0 = time.perf_counter()
    for _ in range(iters):
        f0(a0)
        f1(a1)
        f2(a2)
        f3(a3)
        f4(a4)
        f5(a5)
        f6(a6)
        f7(a7)
    t1 = time.perf_counter()
    ctx.flush().wait(None)
    t2 = time.perf_counter()
    done = iters * len(calls)
    return done / (t1 - t0), done / (t2 - t0)


def _noop(self, arg) -> None:
    """A plain Python method: what a recorded call's cost is measured against."""


def _timed_loop(calls: list, iters: int) -> float:
    """Seconds per call of ``iters`` rounds of the eight pre-bound calls."""
    (f0, a0), (f1, a1), (f2, a2), (f3, a3), (f4, a4), (f5, a5), (f6, a6), (f7, a7) = calls
    t0 = time.perf_counter()
    for _ in range(iters):
        f0(a0)
        f1(a1)
        f2(a2)
        f3(a3)
        f4(a4)
        f5(a5)
        f6(a6)
        f7(a7)
    return (time.perf_counter() - t0) / (iters * len(calls))


def measure_record_cost(ctx, rounds: int) -> dict:
    """Per-call cost of recorded state calls against a plain method call on
    ``ctx`` (a ThreadedContext), alternating round by round."""
    import threading
    import types

    calls = _state_calls(ctx)
    noop = types.MethodType(_noop, ctx)
    plain = [(noop, a) for _, a in calls]
    iters = 1000  # 8000 calls: fewer than the ring holds, so the producer never waits
    samples: dict[str, list[float]] = {"plain": [], "held": [], "running": []}
    for r in range(rounds + 1):
        gate = threading.Event()
        ctx.callback(lambda _, g=gate: g.wait(60))
        ctx.flush()
        held = _timed_loop(calls, iters)
        gate.set()
        ctx.flush().wait(None)
        running = _timed_loop(calls, iters)
        ctx.flush().wait(None)
        base = _timed_loop(plain, iters)
        if r:  # the first round warms up
            samples["held"].append(held)
            samples["running"].append(running)
            samples["plain"].append(base)
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {
        "rounds": rounds,
        "calls_per_round": iters * len(calls),
        "plain_ns": med["plain"] * 1e9,
        "recorded_held_ns": med["held"] * 1e9,
        "recorded_running_ns": med["running"] * 1e9,
        "ratio_held": med["held"] / med["plain"],
        "ratio_running": med["running"] / med["plain"],
    }


def measure_calls(quick: bool = False) -> dict:
    n = 40_000 if quick else 200_000
    reps = 3 if quick else 5
    screen = gallium.create_screen()
    out: dict = {"calls_per_rep": n, "reps": reps}
    try:
        for mode in ("threaded", "direct"):
            ctx = screen.context_create(threaded=mode == "threaded")
            _call_loop(ctx, n // 10)  # warm-up
            rec, drained = [], []
            for _ in range(reps):
                r, d = _call_loop(ctx, n)
                rec.append(r)
                drained.append(d)
            out[mode] = {
                "calls_per_s": statistics.median(rec),
                "calls_per_s_with_drain": statistics.median(drained),
            }
            if mode == "threaded":
                st = ctx.stats
                out[mode].update(
                    batches=st.batches, ring_full_waits=st.ring_full_waits, syncs=st.syncs
                )
                out["record_cost"] = measure_record_cost(ctx, 9 if quick else 21)
            ctx.destroy()
    finally:
        screen.destroy()
    return out


class _NumpyWork:
    """Elementwise ufuncs over 4M float32 (each call releases the GIL)."""

    def __init__(self) -> None:
        rng = np.random.default_rng(7)
        self.a = rng.uniform(1.0, 2.0, 1 << 22).astype(np.float32)
        self.b = np.empty_like(self.a)
        self.rounds = 1

    def step(self) -> None:
        a, b = self.a, self.b
        np.sqrt(a, out=b)
        np.multiply(b, 0.5, out=b)
        np.add(a, b, out=b)
        np.divide(b, 1.5, out=a)

    def run(self) -> None:
        for _ in range(self.rounds):
            self.step()

    def calibrate(self, target_s: float) -> float:
        """Choose ``rounds`` so that ``run()`` takes about ``target_s``; returns its time."""
        self.step()
        t0 = time.perf_counter()
        for _ in range(5):
            self.step()
        self.rounds = max(1, round(target_s / ((time.perf_counter() - t0) / 5)))
        took = 0.0
        for _ in range(2):  # correct once for what a whole run really takes
            t0 = time.perf_counter()
            self.run()
            took = time.perf_counter() - t0
            self.rounds = max(1, round(self.rounds * target_s / took))
        t0 = time.perf_counter()
        self.run()
        return time.perf_counter() - t0


def _record_many_draws(scene: NumpipeScene, draws: list, colors: list) -> object:
    """A frame of many small draws with a state change before each: clear, then
    for each draw ``set_blend_color`` + ``draw_vbo``; flush (no wait)."""
    ctx = scene.ctx
    ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0.0, 0.0, 0.0, 1.0), depth=1.0)
    for i, d in enumerate(draws):
        ctx.set_blend_color(colors[i & 1])
        ctx.draw_vbo(d)
    return ctx.flush()


def _app_loop(record, screen, work: _NumpyWork, frames: int) -> tuple[float, float]:
    """Total time of ``frames`` iterations, and the part spent in the numpy work."""
    in_work = 0.0
    t0 = time.perf_counter()
    for _ in range(frames):
        fence = record()
        t1 = time.perf_counter()
        work.run()
        in_work += time.perf_counter() - t1
        screen.fence_finish(None, fence, INF)
    return time.perf_counter() - t0, in_work


# The two application frames of the overlap figure.  "many-draws": the small
# scene's first 10,000 triangles as 200 draws of 50, a state change before each:
# a front-end-bound frame, the kind the threaded context exists for (the
# application thread only records; vertex processing, clipping, setup and
# binning move to the driver thread).  "medium": the medium scene's one draw
# of 10,000 triangles: a rasterizer-bound frame, where both contexts already
# rasterize on the worker pool while the application computes.
_OVERLAP_FRAMES = {"many-draws": ("small", 200, 150), "medium": ("medium", 1, 30_000)}


def _overlap_one(kind: str, frames: int, reps: int, screen) -> dict:
    scene_name, ndraws, per = _OVERLAP_FRAMES[kind]
    scene = SCENES[scene_name]
    data = scene.build(1024)
    draws = [
        pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=i * per, count=per) for i in range(ndraws)
    ]
    colors = [pipe.BlendColor(color=(0.1, 0.2, 0.3, 0.4)), pipe.BlendColor(color=(0.5,) * 4)]
    work = _NumpyWork()

    def recorder(s: NumpipeScene):
        return lambda: _record_many_draws(s, draws, colors)

    direct = NumpipeScene(scene, data, 1024, threaded=False, screen=screen)
    try:
        rec = recorder(direct)
        screen.fence_finish(None, rec(), INF)  # warm-up
        alone = []
        for _ in range(2):
            t0 = time.perf_counter()
            screen.fence_finish(None, rec(), INF)
            alone.append(time.perf_counter() - t0)
    finally:
        direct.close()
    frame_s = statistics.median(alone)
    work_s = work.calibrate(frame_s)
    totals: dict[str, list[float]] = {"direct": [], "threaded": []}
    works: dict[str, list[float]] = {"direct": [], "threaded": []}
    for _ in range(reps):
        for mode in ("direct", "threaded"):
            s = NumpipeScene(scene, data, 1024, threaded=mode == "threaded", screen=screen)
            try:
                rec = recorder(s)
                screen.fence_finish(None, rec(), INF)  # warm-up
                total, in_work = _app_loop(rec, screen, work, frames)
                totals[mode].append(total)
                works[mode].append(in_work / frames)
            finally:
                s.close()
    d = statistics.median(totals["direct"])
    t = statistics.median(totals["threaded"])
    return {
        "scene": scene_name,
        "draws_per_frame": ndraws,
        "triangles_per_frame": ndraws * per // 3,
        "frames": frames,
        "reps": reps,
        "frame_ms_direct_alone": frame_s * 1e3,
        "numpy_work_ms": work_s * 1e3,
        "numpy_work_ms_in_loop": {m: statistics.median(v) * 1e3 for m, v in works.items()},
        "direct_total_ms": d * 1e3,
        "threaded_total_ms": t * 1e3,
        "ratio": t / d,
    }


def measure_overlap(quick: bool = False) -> dict:
    """Threaded vs direct total time of an application loop with numpy work between
    frames, for the frames of ``_OVERLAP_FRAMES`` (the target is checked on
    "many-draws")."""
    screen = gallium.create_screen()
    out: dict = {}
    try:
        # (frames, reps): the medium frame is long, one alternation is enough for it
        plan = {"many-draws": (2, 1)} if quick else {"many-draws": (3, 2), "medium": (2, 1)}
        for kind, (frames, reps) in plan.items():
            out[kind] = _overlap_one(kind, frames, reps, screen)
    finally:
        screen.destroy()
    out["ratio"] = out["many-draws"]["ratio"]
    return out


def _small_draws(data) -> list:
    per = 300  # 100 triangles
    return [
        pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=i * per, count=per)
        for i in range(data.vertices.shape[0] // per)
    ]


_LAG_PER_BATCH = 16  # draws between flushes: one batch each


def _lag_batch_ms(screen, data, culled: bool) -> float:
    """Driver work of one batch (16 draws + flush) on an idle direct context."""
    s = NumpipeScene(SCENES["medium"], data, 1024, threaded=False, screen=screen)
    try:
        if culled:
            s.ctx.bind_rasterizer_state(_cull_all(s.ctx))
        draws = _small_draws(data)
        color = pipe.BlendColor(color=(0.1, 0.2, 0.3, 0.4))
        times = []
        for b in range(5):
            t0 = time.perf_counter()
            for i in range(_LAG_PER_BATCH):
                s.ctx.set_blend_color(color)
                s.ctx.draw_vbo(draws[(b * _LAG_PER_BATCH + i) % len(draws)])
            fence = s.ctx.flush()
            times.append(time.perf_counter() - t0)
            fence.wait(None)
        return statistics.median(times[1:]) * 1e3
    finally:
        s.close()


def _cull_all(ctx):
    return ctx.create_rasterizer_state(
        pipe.RasterizerState(front_ccw=False, cull_face=pipe.Face.FRONT_AND_BACK)
    )


async def _ticker(lags: list[float], running) -> None:
    """Sleep 1 ms at a time and record how late each wake-up is (seconds)."""
    while running():
        t = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - t - 0.001)


def _lag_summary(lags: list[float], prefix: str = "") -> dict:
    ms = sorted(x * 1e3 for x in lags)
    return {
        f"{prefix}ticks": len(ms),
        f"{prefix}worst_lag_ms": ms[-1] if ms else None,
        f"{prefix}p99_lag_ms": ms[int(0.99 * (len(ms) - 1))] if ms else None,
        f"{prefix}median_lag_ms": statistics.median(ms) if ms else None,
    }


def _idle_lag(seconds: float) -> dict:
    """The same ticker on an idle loop in this process: the machine's own noise."""
    lags: list[float] = []

    async def run() -> None:
        end = time.perf_counter() + seconds
        await _ticker(lags, lambda: time.perf_counter() < end)

    asyncio.run(run())
    return _lag_summary(lags, "idle_")


def _lag_run(screen, data, culled: bool, seconds: float) -> dict:
    """An asyncio producer against a full ring, with a 1 ms ticker beside it."""
    s = NumpipeScene(SCENES["medium"], data, 1024, screen=screen)
    ctx = s.ctx
    if culled:
        ctx.bind_rasterizer_state(_cull_all(ctx))
    draws = _small_draws(data)
    color = pipe.BlendColor(color=(0.1, 0.2, 0.3, 0.4))
    ctx.flush().wait(None)
    lags: list[float] = []
    steps: list[float] = []  # how long each producer step held the loop
    info: dict = {}

    async def run() -> None:
        loop = asyncio.get_running_loop()
        done = False
        tick = asyncio.create_task(_ticker(lags, lambda: not done))
        await asyncio.sleep(0.05)
        st = ctx.stats
        full0, exec0, ready0 = st.ring_full_waits, st.executed_batches, st.ready_waits
        t0 = time.perf_counter()
        end = loop.time() + seconds
        i = 0
        while loop.time() < end:
            # the async face: wait for ring space on the loop, never inside a call
            await ctx.ready_async()
            t = time.perf_counter()
            ctx.set_blend_color(color)
            ctx.draw_vbo(draws[i % len(draws)])
            i += 1
            if i % _LAG_PER_BATCH == 0:
                ctx.flush()
            steps.append(time.perf_counter() - t)
            await asyncio.sleep(0)
        window = time.perf_counter() - t0
        executed = st.executed_batches - exec0
        info.update(
            draws_recorded=i,
            ring_full_waits=st.ring_full_waits - full0,
            ready_waits=st.ready_waits - ready0,
            batches_executed=executed,
            batch_ms_under_load=window / executed * 1e3 if executed else None,
            longest_step_ms=max(steps) * 1e3 if steps else None,
        )
        done = True
        await tick
        t1 = time.perf_counter()
        await ctx.flush()  # drain: the queued batches, then the workers' backlog
        info["drain_ms"] = (time.perf_counter() - t1) * 1e3

    try:
        asyncio.run(run())
    finally:
        s.close()
    info.update(_lag_summary(lags))
    return info


def measure_lag(quick: bool = False) -> dict:
    """Worst event-loop lag of an asyncio producer facing a full ring.

    Two producers: ``culled`` draws (every triangle culled, so the driver thread
    is the bottleneck and the rasterizer idles: the ring's own behaviour) and
    ``visible`` draws (the workers rasterize too and compete for the GIL;
    their backlog is drained after the measurement).
    """
    data = SCENES["medium"].build(1024)
    screen = gallium.create_screen()
    out: dict = {"draws_per_batch": _LAG_PER_BATCH, "triangles_per_draw": 100}
    try:
        variants = (("culled", 1.5),) if quick else (("culled", 3.0), ("visible", 1.0))
        for name, seconds in variants:
            idle = _idle_lag(seconds)
            res = _lag_run(screen, data, name == "culled", seconds)
            res.update(idle)
            res["seconds"] = seconds
            res["batch_ms_idle"] = _lag_batch_ms(screen, data, name == "culled")
            out[name] = res
    finally:
        screen.destroy()
    return out


def measure_trace(quick: bool = False) -> dict:
    """Issue 22's recording cost: the ``calls`` loop on a threaded context and on a
    recording (gallium.trace) wrapper of a threaded context, alternating in one
    process.  ``recording_ratio``: traced / plain time of the recording loop (the
    recording calls themselves; the recorder holds the loop's records until the
    flush, as it does within a frame); ``with_encode_ratio``: the same with the
    flush that ends the loop, where the recorder encodes everything it holds."""
    import os
    import shutil
    import tempfile

    from gallium import trace

    n = 40_000 if quick else 200_000
    reps = 3 if quick else 7
    tmp = tempfile.mkdtemp(prefix="numpipe-trace-bench-")
    plain_screen = gallium.create_screen(trace=False)
    traced_screen = trace.record(
        gallium.create_screen(trace=False), os.path.join(tmp, "calls.trace"), pending_calls=2 * n
    )
    out: dict = {"calls_per_rep": n, "reps": reps}
    try:
        ctxs = {
            "threaded": plain_screen.context_create(threaded=True),
            "traced": traced_screen.context_create(threaded=True),
        }
        for c in ctxs.values():
            _call_loop(c, n // 10)  # warm-up
        rec: dict = {k: [] for k in ctxs}
        drained: dict = {k: [] for k in ctxs}
        for rep in range(reps):
            order = list(ctxs) if rep % 2 == 0 else list(reversed(ctxs))
            for k in order:
                r, d = _call_loop(ctxs[k], n)
                rec[k].append(r)
                drained[k].append(d)
        for k in ctxs:
            out[k] = {
                "calls_per_s": statistics.median(rec[k]),
                "calls_per_s_with_drain": statistics.median(drained[k]),
            }
        out["recording_ratio"] = out["threaded"]["calls_per_s"] / out["traced"]["calls_per_s"]
        out["with_encode_ratio"] = (
            out["threaded"]["calls_per_s_with_drain"] / out["traced"]["calls_per_s_with_drain"]
        )
        for c in ctxs.values():
            c.destroy()
    finally:
        traced_screen.destroy()
        plain_screen.destroy()
        out["trace_bytes"] = os.path.getsize(os.path.join(tmp, "calls.trace"))
        shutil.rmtree(tmp, ignore_errors=True)
    return out


FIGURES = {
    "calls": measure_calls,
    "overlap": measure_overlap,
    "lag": measure_lag,
    "trace": measure_trace,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in FIGURES:
        print(f"usage: python -m bench.tc {'|'.join(FIGURES)} [--quick]", file=sys.stderr)
        return 2
    try:
        result = FIGURES[argv[0]]("--quick" in argv)
    except gallium.UnsupportedError as exc:
        result = {"unsupported": str(exc)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

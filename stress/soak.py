"""Suite soak: a long mixed load whose resident memory must return to its baseline.

``make soak`` runs it for ``SOAK_SECONDS`` (600 by default; ``make stress``
runs it after the other suites); ``python -m stress --suite soak --seconds
N`` for any N, and the plain stress run gives it the same time as every
other suite.  The memory logic is the same at every length; a longer run
only sees a slower leak (see stress/_memory.py).

The load
--------
The run is cut into *rounds* (``plan``).  In each round these threads run
at once, every one checking what it gets word for word:

* two long-lived contexts, one direct and one threaded, made once for the
  whole run (a leak per frame of one context shows only there), render the
  frame recipes of stress/_recipes.py -- seeded scenes, the first of them
  again as one draw per triangle (many small queued draws), points, lines
  and geometry shaders drawn instanced, and a textured frame whose texture,
  view and index buffer are made and destroyed with the frame -- inside an
  occlusion and a pipeline-statistics query half of the time, flushed in
  every way (waited, ``fence_finish``, deferred, not at all, awaited under
  asyncio or trio) and read back by ``transfer_map`` or
  ``transfer_map_async``; every image and query result must equal the
  recipe's reference, computed once before the run;
* an event-loop thread (asyncio in even rounds, trio in odd ones) drives
  three new contexts as tasks: ``await ctx.ready_async()``, ``await
  ctx.flush()``, ``await ctx.transfer_map_async(...)``, ``await
  ctx.get_query_result_async(q)``, and waits on fences it cancels;
* a new context renders recipes for the round (threaded, then direct);
* compute grids (stress/compute_mix.py's mirror and histogram programs,
  every word compared with numpy) on a context of the round;
* a transfer thread writes a vertex buffer, a second buffer and a texture
  by every path (``buffer_subdata`` small and large, maps with and without
  discards, ``clear_buffer``, ``resource_copy_region``, ``texture_subdata``,
  texture maps) and reads them back by sync, DONTBLOCK and async maps,
  against a numpy model of their bytes;
* a churn thread makes and destroys contexts (some with work still queued),
  resources of every target, views, surfaces, CSOs, queries, shaders with
  immediates never seen before (each drawn and its colour checked), a whole
  screen once a round, and makes bad calls that must raise their named
  error at the call without a reset (the context then draws exactly);
* a threaded context on a second screen whose workers hand every scene to
  band processes (``bandproc.MIN_WORK_MS`` is 0 while the soak runs)
  renders 160x128 scenes, bit-exact; the first screen's workers rasterize
  in threads.

Between rounds every thread has stopped and everything made for the round
is destroyed; the long-lived contexts keep their targets, kits and queries.
That quiescent moment is a *checkpoint* (stress/_memory.py): resident
memory after ``gc.collect()`` and ``malloc_trim``, threads, open files, the
band processes' resident sets, and (from the baseline on) live objects by
type.  The checkpoint after the warm-up rounds is
the baseline (caches, worker pools, pymalloc arenas and interned programs
are full by then); the last one, after the load has stopped, is the end.
Then the long-lived contexts and both screens are destroyed and a last
measurement must find the threads and open files of before the run and no
band process left.

Limits, and why
---------------
* ``TOLERANCE_MIB`` (8 MiB): what the end checkpoint may sit above the
  baseline with nothing leaking.  After gc and ``malloc_trim`` what is left
  is live memory and the fragmentation around it: pymalloc frees a 1 MiB
  arena only when every object in it is dead, the heap keeps a page while
  one chunk on it lives.  Bounded caches may also still be filling after a
  short warm-up: the compiler's 64 recent kernels (~2.5 MiB), the 64
  flush fences a threaded context remembers, the numexpr cache.  Leak-free
  runs ended 1.0-2.0 MiB above their baselines in 20-90 s and 1.7 MiB in
  ten minutes (where the checkpoints stopped rising after four); 8 MiB is
  that with the caches twice over, and ~10% of the ~70 MiB the process
  holds when quiet.
* ``SLOPE_LIMIT`` (0.5 MiB a minute over the last half) with
  ``RISE_FLOOR_MIB`` (2 MiB): the soak checks ~150 frames (and draws ~500)
  a second, so a leak of 60 bytes a frame is over the limit, and at that
  rate a ten-minute run's last half rises 2.5 MiB, over the floor, while
  the end may still be inside the tolerance.  The floor keeps a short run,
  whose last half is seconds long, from reading a slope into the
  checkpoints' scatter.
* ``OBJECT_RISE_FLOOR`` (50): a type of object whose live count rises at
  every checkpoint of the last half, by 50 or more, fails the run (a cache
  fills and then holds still; the kernel cache is filled before the
  baseline).  A context that kept every buffer it wrote once grew by ~23
  objects of a few types a round: a fraction of a MiB in ten minutes, but
  caught here.
"""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections import Counter, deque
from functools import partial

import numpy as np
import trio

import gallium
from gallium import pipe
from gallium.pipe.errors import PipeError, PipeTypeError, PipeValueError, UnsupportedError
from gallium.tgsi.compiler import RECENT_KERNELS
from workers import bandproc

from . import _memory
from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
from ._recipes import (
    QUERY_TYPES,
    Expected,
    Recipe,
    SceneRecipe,
    make_recipes,
    references,
    render,
)
from ._scene import Target, describe_mismatch, make_spec
from .compute_mix import ComputeThread

NAME = "soak"
W, H = 96, 72
BAND_W, BAND_H = 160, 128  # 80 KiB targets: shared blocks, so their bands go to processes
TOLERANCE_MIB = 8.0
SLOPE_LIMIT = 0.5
RISE_FLOOR_MIB = 2.0
OBJECT_RISE_FLOOR = 50
LIMITS = _memory.Limits(TOLERANCE_MIB, SLOPE_LIMIT, RISE_FLOOR_MIB)
FLUSH_MODES = ("wait", "finish", "deferred", "none", "asyncio", "trio")


def plan(seconds: float) -> tuple[float, int, int]:
    """(round seconds, rounds, warm-up rounds) for a run of ``seconds``: about
    24 rounds of 1 to 25 s, the first 15% (at least one) warming up."""
    round_s = min(25.0, max(1.0, seconds / 24))
    rounds = max(3, round(seconds / round_s))
    warmup = max(1, round(rounds * 0.15))
    return round_s, rounds, warmup


# -- checking frames -------------------------------------------------------------------


class FrameChecker:
    """Renders recipes on one context into its own targets and checks each
    frame's image and query results against the recipe's reference.

    Used by one thread at a time (the context's).  ``close`` destroys every
    object it made on the context, not the context.
    """

    def __init__(self, name, soak, screen, ctx, recipes: list[Recipe], targets: int = 2) -> None:
        self.name, self.soak, self.screen, self.ctx = name, soak, screen, ctx
        self.recipes = recipes
        r0 = recipes[0]
        self.targets = [Target(screen, ctx, r0.width, r0.height) for _ in range(targets)]
        self.queries = [[ctx.create_query(t) for t in QUERY_TYPES] for _ in range(targets)]
        self.kits: dict[str, object] = {}
        self.frames = 0

    def kit(self, recipe: Recipe):
        if recipe.name not in self.kits:
            self.kits[recipe.name] = recipe.make_kit(self.screen, self.ctx)
        return self.kits[recipe.name]

    def record(self, slot: int, recipe: Recipe, with_queries: bool) -> None:
        queries = self.queries[slot] if with_queries else ()
        render(self.ctx, recipe, self.kit(recipe), self.targets[slot], queries)
        self.soak.count("draws", recipe.draws)
        self.soak.count(f"frames_{recipe.name}")

    def check(self, slot: int, recipe: Recipe, with_queries: bool, image, results=None) -> bool:
        """Compare an image read from ``slot`` (and, with queries, their results)."""
        want: Expected = self.soak.expected[recipe.name]
        self.frames += 1
        self.soak.report.add(frames=1)
        if not np.array_equal(image, want.image):
            self.soak.failure(
                f"{self.name}: frame {self.frames} ({recipe.name}) differs from its reference: "
                f"{describe_mismatch(image, want.image)}"
            )
            return False
        if with_queries:
            if results is None:
                results = tuple(
                    self.ctx.get_query_result(q, wait=True)[1] for q in self.queries[slot]
                )
            self.soak.count("queries_checked", len(results))
            if tuple(results) != want.queries:
                self.soak.failure(
                    f"{self.name}: frame {self.frames} ({recipe.name}): query results "
                    f"{results!r} != the reference's {want.queries!r}"
                )
                return False
        return True

    def read(self, slot: int) -> np.ndarray:
        t = self.targets[slot]
        return t.read(self.ctx)

    def read_async_run(self, slot: int) -> np.ndarray:
        """Read ``slot`` with ``transfer_map_async`` under a fresh asyncio loop."""

        async def go():
            return await read_async(self.ctx, self.targets[slot].rt)

        return asyncio.run(go())

    def close(self) -> None:
        ctx = self.ctx
        for kit in self.kits.values():
            kit.destroy(ctx)
        self.kits.clear()
        for qs in self.queries:
            for q in qs:
                ctx.destroy_query(q)
        for t in self.targets:
            t.destroy(self.screen, ctx)
        self.targets.clear()


async def read_async(ctx, res) -> np.ndarray:
    box = pipe.Box(0, 0, 0, res.width0, res.height0, 1)
    data, xfer = await ctx.transfer_map_async(res, 0, pipe.Transfer.READ, box)
    out = np.array(data[0])
    ctx.transfer_unmap(xfer)
    return out


def render_loop(checker: FrameChecker, deadline: Deadline, rng: random.Random) -> None:
    """Frames until the deadline, up to two in flight, flushed and read back
    in every way; each checked when read."""
    soak, ctx = checker.soak, checker.ctx
    inflight: deque[tuple[int, Recipe, bool]] = deque()
    free = list(range(len(checker.targets)))
    while deadline.running() and soak.running():
        slot = free.pop()
        recipe = rng.choice(checker.recipes)
        with_queries = rng.random() < 0.5
        checker.record(slot, recipe, with_queries)
        mode = rng.choice(FLUSH_MODES)
        if mode != "none":  # (not flushed: the read-back syncs)
            fence = ctx.flush(pipe.Flush.DEFERRED if mode == "deferred" else 0)
            soak.count("flushes")
            # a deferred fence not waited for is submitted by the read-back
            waited = mode != "deferred" or rng.random() < 0.5
            if waited and not wait_fence(soak, checker.screen, fence, mode, checker.name):
                return
        inflight.append((slot, recipe, with_queries))
        keep = rng.randint(0, len(checker.targets) - 1)
        while len(inflight) > keep or not free:
            s, r, q = inflight.popleft()
            image = checker.read_async_run(s) if rng.random() < 0.3 else checker.read(s)
            soak.count("reads")
            if not checker.check(s, r, q, image):
                return
            free.append(s)
    while inflight:
        s, r, q = inflight.popleft()
        if not checker.check(s, r, q, checker.read(s)):
            return


def wait_fence(soak, screen, fence, mode: str, who: str) -> bool:
    """Wait for ``fence`` as ``mode`` says (any other mode: ``Fence.wait``)."""
    if mode == "finish":
        ok = screen.fence_finish(None, fence, int(WAIT_LIMIT_S * 1e9))
    elif mode == "asyncio":
        asyncio.run(_await_asyncio(fence))
        ok = fence.signalled
    elif mode == "trio":
        trio.run(_await_trio, fence)
        ok = fence.signalled
    else:
        ok = fence.wait(WAIT_LIMIT_S)
    soak.count("fences_waited")
    if not ok:
        soak.failure(f"{who}: {fence!r} not signalled after {WAIT_LIMIT_S}s ({mode})")
    return ok


async def _await_asyncio(fence) -> None:
    async with asyncio.timeout(WAIT_LIMIT_S):
        await fence


async def _await_trio(fence) -> None:
    with trio.fail_after(WAIT_LIMIT_S):
        await fence


# -- the round's actors ------------------------------------------------------------------


class LongLived:
    """A context made for the whole run, rendering in every round."""

    def __init__(self, name: str, soak, screen, recipes, threaded: bool, seed: int) -> None:
        self.name, self.soak, self.screen = name, soak, screen
        self.rng = random.Random(seed)
        self.ctx = screen.context_create(threaded=threaded)
        soak.count("contexts_created")
        self.resets: list[object] = []
        self.ctx.set_device_reset_callback(self.resets.append)
        self.checker = FrameChecker(name, soak, screen, self.ctx, recipes)

    def run(self, deadline: Deadline) -> None:
        render_loop(self.checker, deadline, self.rng)
        status = self.ctx.get_device_reset_status()
        if status != pipe.ResetStatus.NO_RESET or self.resets:
            self.soak.failure(f"{self.name}: a reset was reported ({status!r}, {self.resets!r})")

    def close(self) -> None:
        self.checker.close()
        self.ctx.destroy()


def round_renderer(soak, screen, recipes, threaded: bool, seed: int, deadline: Deadline) -> None:
    """A context of the round: made, rendering until the deadline, destroyed."""
    ctx = screen.context_create(threaded=threaded)
    soak.count("contexts_created")
    checker = FrameChecker(f"round_{'tc' if threaded else 'direct'}", soak, screen, ctx, recipes)
    try:
        render_loop(checker, deadline, random.Random(seed))
    finally:
        checker.close()
        ctx.destroy()


class EventLoopClient:
    """Three contexts driven as tasks of one event loop (asyncio or trio)."""

    name = "eventloop"

    def __init__(self, soak, screen, recipes, lib: str, seed: int) -> None:
        self.soak, self.screen, self.recipes, self.lib = soak, screen, recipes, lib
        self.rng = random.Random(seed)

    def run(self, deadline: Deadline) -> None:
        contexts = [self.screen.context_create(threaded=t) for t in (True, True, False)]
        self.soak.count("contexts_created", len(contexts))
        checkers = [
            FrameChecker(f"{self.lib}{i}", self.soak, self.screen, ctx, self.recipes, targets=1)
            for i, ctx in enumerate(contexts)
        ]
        try:
            if self.lib == "trio":
                trio.run(self._trio_main, checkers, deadline)
            else:
                asyncio.run(self._asyncio_main(checkers, deadline))
        finally:
            for c in checkers:
                c.close()
                c.ctx.destroy()

    async def _asyncio_main(self, checkers, deadline) -> None:
        await asyncio.gather(*(self._client(c, deadline) for c in checkers))

    async def _trio_main(self, checkers, deadline) -> None:
        async with trio.open_nursery() as nursery:
            for c in checkers:
                nursery.start_soon(self._client, c, deadline)

    async def _cancelled_wait(self, fence) -> None:
        """Start waiting on ``fence`` and cancel the wait at once."""
        if self.lib == "trio":
            with trio.move_on_after(0):
                await fence
        else:
            try:
                async with asyncio.timeout(0):
                    await fence
            except TimeoutError:
                pass
        self.soak.count("waits_cancelled")

    async def _client(self, checker: FrameChecker, deadline: Deadline) -> None:
        soak, ctx = self.soak, checker.ctx
        rng = random.Random(self.rng.getrandbits(32))
        ready = getattr(ctx, "ready_async", None)
        while deadline.running() and soak.running():
            recipe = rng.choice(checker.recipes)
            with_queries = rng.random() < 0.5
            checker.record(0, recipe, with_queries)
            if ready is not None:
                await ready()
            fence = ctx.flush()
            if rng.random() < 0.3:
                await self._cancelled_wait(fence)
            await fence
            soak.count("fences_awaited")
            image = await read_async(ctx, checker.targets[0].rt)
            soak.count("reads")
            results = None
            if with_queries:
                results = tuple([await ctx.get_query_result_async(q) for q in checker.queries[0]])
            if not checker.check(0, recipe, with_queries, image, results):
                return
            if self.lib == "trio":
                await trio.lowlevel.checkpoint()
            else:
                await asyncio.sleep(0)


class TransferChecker:
    """Writes two buffers and a texture by every path and reads them back by
    every path, against a numpy model of their bytes."""

    name = "transfers"

    TEX_W, TEX_H = 64, 32

    def __init__(self, soak, screen, threaded: bool, seed: int) -> None:
        self.soak, self.screen, self.threaded = soak, screen, threaded
        self.rng = np.random.default_rng(seed)

    def _buffer(self, n: int):
        self.soak.count("resources_created")
        return self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER,
                format=pipe.Format.NONE,
                width0=n,
                bind=pipe.Bind.VERTEX_BUFFER | pipe.Bind.SHADER_BUFFER,
            )
        )

    def run(self, deadline: Deadline) -> None:
        ctx = self.screen.context_create(threaded=self.threaded)
        self.soak.count("contexts_created")
        rng = self.rng
        n = int(rng.choice((4096, 65536, 262144)))
        bufs = [self._buffer(n), self._buffer(n)]
        tex = self.screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D,
                format=pipe.Format.R8G8B8A8_UNORM,
                width0=self.TEX_W,
                height0=self.TEX_H,
                bind=pipe.Bind.SAMPLER_VIEW,
            )
        )
        self.soak.count("resources_created")
        models = [rng.integers(0, 256, n, dtype=np.uint8) for _ in bufs]
        tmodel = rng.integers(0, 256, (self.TEX_H, self.TEX_W, 4), dtype=np.uint8)
        try:
            for b, m in zip(bufs, models, strict=True):
                ctx.buffer_subdata(b, pipe.Transfer.WRITE, 0, m)
            full = pipe.Box(0, 0, 0, self.TEX_W, self.TEX_H, 1)
            ctx.texture_subdata(tex, 0, pipe.Transfer.WRITE, full, tmodel, self.TEX_W * 4, 0)
            ops = 0
            while deadline.running() and self.soak.running():
                self._op(ctx, bufs, models, tex, tmodel)
                ops += 1
                if ops % 8 == 0 and not self._verify(ctx, bufs, models, tex, tmodel):
                    return
            self._verify(ctx, bufs, models, tex, tmodel)
        finally:
            for b in bufs:
                self.screen.resource_destroy(b)
            self.screen.resource_destroy(tex)
            ctx.destroy()

    def _range(self, n: int, limit: int, align: int = 1) -> tuple[int, int]:
        size = int(self.rng.integers(1, min(n, limit) // align + 1)) * align
        off = int(self.rng.integers(0, (n - size) // align + 1)) * align
        return off, size

    def _op(self, ctx, bufs, models, tex, tmodel) -> None:
        rng, soak = self.rng, self.soak
        W_ = pipe.Transfer.WRITE
        i = int(rng.integers(0, 2))
        buf, model = bufs[i], models[i]
        n = model.size
        op = int(rng.integers(0, 9))
        if op in (0, 1):  # buffer_subdata, small (copied into the batch) or large
            off, size = self._range(n, 320 if op == 0 else n // 2)
            data = rng.integers(0, 256, size, dtype=np.uint8)
            ctx.buffer_subdata(buf, W_, off, data)
            model[off : off + size] = data
            soak.count("buffer_writes")
        elif op == 2:  # a map for writing, with or without a range discard
            off, size = self._range(n, n // 2)
            usage = W_ | (pipe.Transfer.DISCARD_RANGE if rng.random() < 0.5 else 0)
            data = rng.integers(0, 256, size, dtype=np.uint8)
            view, xfer = ctx.transfer_map(buf, 0, usage, pipe.Box(off, 0, 0, size, 1, 1))
            view[:] = data
            ctx.transfer_unmap(xfer)
            model[off : off + size] = data
            soak.count("maps")
        elif op == 3:  # the whole buffer, discarding what was there
            data = rng.integers(0, 256, n, dtype=np.uint8)
            usage = W_ | pipe.Transfer.DISCARD_WHOLE_RESOURCE
            view, xfer = ctx.transfer_map(buf, 0, usage, pipe.Box(0, 0, 0, n, 1, 1))
            view[:] = data
            ctx.transfer_unmap(xfer)
            model[:] = data
            soak.count("maps")
        elif op == 4:  # clear_buffer with a 4-byte pattern
            off, size = self._range(n, n // 2, 4)
            pattern = rng.integers(0, 256, 4, dtype=np.uint8)
            ctx.clear_buffer(buf, off, size, pattern)
            model[off : off + size] = np.tile(pattern, size // 4)
            soak.count("buffer_writes")
        elif op == 5:  # copy a range into the other buffer
            j = 1 - i
            src_off, size = self._range(n, n // 2)
            dst_off = int(rng.integers(0, n - size + 1))
            ctx.resource_copy_region(
                bufs[j], 0, dst_off, 0, 0, buf, 0, pipe.Box(src_off, 0, 0, size, 1, 1)
            )
            models[j][dst_off : dst_off + size] = model[src_off : src_off + size]
            soak.count("copies")
        elif op in (6, 7):  # a texture box, by texture_subdata or by a map
            w = int(rng.integers(1, self.TEX_W + 1))
            h = int(rng.integers(1, self.TEX_H + 1))
            x = int(rng.integers(0, self.TEX_W - w + 1))
            y = int(rng.integers(0, self.TEX_H - h + 1))
            data = rng.integers(0, 256, (h, w, 4), dtype=np.uint8)
            box = pipe.Box(x, y, 0, w, h, 1)
            if op == 6:
                ctx.texture_subdata(tex, 0, W_, box, data, w * 4, 0)
            else:
                view, xfer = ctx.transfer_map(tex, 0, W_, box)
                view[0] = data
                ctx.transfer_unmap(xfer)
                soak.count("maps")
            tmodel[y : y + h, x : x + w] = data
            soak.count("texture_writes")
        else:
            ctx.flush(pipe.Flush.DEFERRED if rng.random() < 0.5 else 0)
            soak.count("flushes")

    def _read(self, ctx, res, box, how: str) -> np.ndarray:
        if how == "async":
            return asyncio.run(self._read_async(ctx, res, box))
        usage = pipe.Transfer.READ
        if how == "dontblock":
            data, xfer = ctx.transfer_map(res, 0, usage | pipe.Transfer.DONTBLOCK, box)
            if data is not None:
                out = np.array(data)
                ctx.transfer_unmap(xfer)
                return out
            self.soak.count("dontblock_refused")
        data, xfer = ctx.transfer_map(res, 0, usage, box)
        out = np.array(data)
        ctx.transfer_unmap(xfer)
        return out

    async def _read_async(self, ctx, res, box) -> np.ndarray:
        data, xfer = await ctx.transfer_map_async(res, 0, pipe.Transfer.READ, box)
        out = np.array(data)
        ctx.transfer_unmap(xfer)
        return out

    def _verify(self, ctx, bufs, models, tex, tmodel) -> bool:
        how = str(self.rng.choice(("sync", "dontblock", "async")))
        for k, (b, m) in enumerate(zip(bufs, models, strict=True)):
            got = self._read(ctx, b, pipe.Box(0, 0, 0, m.size, 1, 1), how)
            if not np.array_equal(got, m):
                bad = np.flatnonzero(got != m)
                self.soak.failure(
                    f"transfers: buffer {k} ({how} read): {bad.size} bytes differ from the "
                    f"model, first at {int(bad[0])}: {int(got[bad[0]])} != {int(m[bad[0]])}"
                )
                return False
        full = pipe.Box(0, 0, 0, self.TEX_W, self.TEX_H, 1)
        got = self._read(ctx, tex, full, how)[0]
        self.soak.count("reads", 3)
        self.soak.report.add(frames=1)
        if not np.array_equal(got, tmodel):
            self.soak.failure(
                f"transfers: texture ({how} read) differs from the model: "
                f"{describe_mismatch(got, tmodel)}"
            )
            return False
        return True


# A fragment shader that writes one constant colour: each one made with
# immediates never seen before, drawn over the whole target, checked, destroyed.
UNIQUE_FS = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {{{0!r}, {1!r}, {2!r}, {3!r}}}
  0: MOV OUT[0], IMM[0]
  1: END
"""
UNIQUE_VS = """VERT
DCL IN[0]
DCL OUT[0], POSITION
IMM[0] FLT32 {{0.0, 0.0, 0.0, {0!r}}}
  0: MAD OUT[0], IN[0], IMM[0].wwww, IN[0]
  1: END
"""
COVER = np.array([[-1, -1, 0, 1], [3, -1, 0, 1], [-1, 3, 0, 1]], np.float32)
BAD_TGSI = "FRAG\n  0: NOPE\n"
HUGE_TEMPS = "FRAG\nDCL TEMP[0..4294967295]\n  0: END\n"  # refused before any allocation
TRIS = pipe.Prim.TRIANGLES


class Churn:
    """Objects made and destroyed, bad calls made, on a context of the round."""

    name = "churn"

    def __init__(self, soak, screen, recipes, threaded: bool, seed: int) -> None:
        self.soak, self.screen, self.recipes, self.threaded = soak, screen, recipes, threaded
        self.rng = random.Random(seed)

    def run(self, deadline: Deadline) -> None:
        soak, rng = self.soak, self.rng
        ctx = self.screen.context_create(threaded=self.threaded)
        soak.count("contexts_created")
        resets: list[object] = []
        ctx.set_device_reset_callback(resets.append)
        checker = FrameChecker("churn", soak, self.screen, ctx, self.recipes, targets=1)
        screen_done = False
        try:
            while deadline.running() and soak.running():
                pick = rng.random()
                if not screen_done and pick < 0.1:
                    self._screen_cycle()
                    screen_done = True
                elif pick < 0.3:
                    self._context_cycle()
                elif pick < 0.55:
                    self._objects(ctx)
                elif pick < 0.8:
                    if not self._unique_shader(ctx, checker.targets[0]):
                        return
                else:
                    self._bad_calls(ctx)
                    status = ctx.get_device_reset_status()
                    if status != pipe.ResetStatus.NO_RESET or resets:
                        soak.failure(f"churn: bad calls caused a reset ({status!r}, {resets!r})")
                        return
                    if not self._one_frame(checker):
                        return
        finally:
            checker.close()
            ctx.destroy()

    def _one_frame(self, checker: FrameChecker) -> bool:
        recipe = self.rng.choice(checker.recipes)
        with_queries = self.rng.random() < 0.5
        checker.record(0, recipe, with_queries)
        checker.ctx.flush()
        return checker.check(0, recipe, with_queries, checker.read(0))

    def _context_cycle(self) -> None:
        """A context made for one frame; sometimes destroyed with the frame queued."""
        threaded = self.rng.random() < 0.5
        ctx = self.screen.context_create(threaded=threaded)
        self.soak.count("contexts_created")
        checker = FrameChecker("churn_ctx", self.soak, self.screen, ctx, self.recipes, targets=1)
        try:
            if self.rng.random() < 0.3:
                checker.record(0, self.rng.choice(self.recipes), False)
                ctx.flush()
                self.soak.count("destroyed_with_work_queued")
            else:
                self._one_frame(checker)
        finally:
            checker.close()
            ctx.destroy()

    def _screen_cycle(self) -> None:
        screen = gallium.create_screen(num_threads=self.rng.choice((1, 2)))
        self.soak.count("screens_created")
        try:
            ctx = screen.context_create(threaded=self.rng.random() < 0.5)
            checker = FrameChecker("churn_screen", self.soak, screen, ctx, self.recipes, targets=1)
            try:
                self._one_frame(checker)
            finally:
                checker.close()
                ctx.destroy()
        finally:
            screen.destroy()

    def _objects(self, ctx) -> None:
        """Resources of every target with views and surfaces, CSOs and queries:
        made, written, destroyed."""
        rng, screen, soak = self.rng, self.screen, self.soak
        made: list[tuple[str, object]] = []
        for _ in range(rng.randint(1, 6)):
            templ = self._template()
            res = screen.resource_create(templ)
            soak.count("resources_created")
            if templ.target == pipe.TextureTarget.BUFFER:
                ctx.buffer_subdata(res, pipe.Transfer.WRITE, 0, bytes(range(256))[: res.width0])
            else:
                box = pipe.Box(0, 0, 0, 2, 2, 1)
                ctx.texture_subdata(res, 0, pipe.Transfer.WRITE, box, bytes(16), 8, 16)
                view = ctx.create_sampler_view(res, pipe.SamplerViewTemplate(format=templ.format))
                surf = ctx.create_surface(res, pipe.SurfaceTemplate(format=templ.format))
                made += [("sampler_view_destroy", view), ("surface_destroy", surf)]
            made.append(("resource_destroy", res))
        colormask = rng.randint(0, 15)
        blend = pipe.BlendState(rt=[pipe.RtBlendState(colormask=colormask)])
        depth = pipe.DepthState(enabled=True, func=pipe.CompareFunc(rng.randint(0, 7)))
        made += [
            ("destroy_blend_state", ctx.create_blend_state(blend)),
            (
                "destroy_rasterizer_state",
                ctx.create_rasterizer_state(pipe.RasterizerState(line_width=rng.uniform(1, 4))),
            ),
            (
                "destroy_sampler_state",
                ctx.create_sampler_state(pipe.SamplerState(lod_bias=rng.uniform(-2, 2))),
            ),
            (
                "destroy_depth_stencil_alpha_state",
                ctx.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState(depth=depth)),
            ),
        ]
        soak.count("csos_created", 4)
        for t in (*QUERY_TYPES, pipe.QueryType.TIMESTAMP, pipe.QueryType.TIME_ELAPSED):
            made.append(("destroy_query", ctx.create_query(t)))
        for destroy, obj in reversed(made):
            if destroy == "resource_destroy":
                screen.resource_destroy(obj)
            else:
                getattr(ctx, destroy)(obj)
        if rng.random() < 0.5:
            ctx.flush()

    def _template(self) -> pipe.ResourceTemplate:
        """A buffer, or an RGBA8 2D, 2D array, 3D or cube texture with mipmaps."""
        rng, T = self.rng, pipe.TextureTarget
        kinds = (T.BUFFER, T.TEXTURE_2D, T.TEXTURE_2D_ARRAY, T.TEXTURE_3D, T.TEXTURE_CUBE)
        kind = rng.choice(kinds)
        if kind == T.BUFFER:
            size = rng.randint(16, 1 << 18)
            return pipe.ResourceTemplate(target=kind, width0=size, bind=pipe.Bind.VERTEX_BUFFER)
        side = rng.choice((4, 16, 64, 200))
        layers = {T.TEXTURE_2D_ARRAY: rng.randint(1, 4), T.TEXTURE_CUBE: 6}.get(kind, 1)
        return pipe.ResourceTemplate(
            target=kind,
            format=pipe.Format.R8G8B8A8_UNORM,
            width0=side,
            height0=side,
            depth0=min(side, 16) if kind == T.TEXTURE_3D else 1,
            array_size=layers,
            last_level=rng.randint(0, int(math.log2(side))),
            bind=pipe.Bind.SAMPLER_VIEW | pipe.Bind.RENDER_TARGET,
        )

    def _unique_shader(self, ctx, target: Target) -> bool:
        """Shaders never seen before: a constant colour over the whole target."""
        rng = self.rng
        levels = [rng.randrange(256) for _ in range(4)]
        colour = [(k + 0.25) / 255 for k in levels]
        fs = ctx.create_fs_state(pipe.ShaderState(tokens=UNIQUE_FS.format(*colour)))
        vs = ctx.create_vs_state(pipe.ShaderState(tokens=UNIQUE_VS.format(rng.random() * 1e-9)))
        ve = ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT)]
        )
        blend = ctx.create_blend_state(pipe.BlendState())
        dsa = ctx.create_depth_stencil_alpha_state(pipe.DepthStencilAlphaState())
        rast = ctx.create_rasterizer_state(pipe.RasterizerState())
        self.soak.count("shaders_compiled", 2)
        try:
            target.bind(ctx)
            ctx.bind_vs_state(vs)
            ctx.bind_fs_state(fs)
            ctx.bind_gs_state(None)
            ctx.bind_vertex_elements_state(ve)
            ctx.bind_blend_state(blend)
            ctx.bind_depth_stencil_alpha_state(dsa)
            ctx.bind_rasterizer_state(rast)
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(16, 0, COVER)])
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
            self.soak.count("draws")
            ctx.flush()
            image = target.read(ctx)
        finally:
            ctx.destroy_fs_state(fs)
            ctx.destroy_vs_state(vs)
            ctx.destroy_vertex_elements_state(ve)
            ctx.destroy_blend_state(blend)
            ctx.destroy_depth_stencil_alpha_state(dsa)
            ctx.destroy_rasterizer_state(rast)
        self.soak.report.add(frames=1)
        want = np.array(levels, np.uint8)
        if not (image == want).all():
            wanted = np.broadcast_to(want, image.shape)
            self.soak.failure(
                f"churn: a shader writing {levels} drew {describe_mismatch(image, wanted)}"
            )
            return False
        return True

    def _bad_calls(self, ctx) -> None:
        """Each must raise its named error at the call (and record nothing)."""
        screen, soak = self.screen, self.soak
        buf = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER, width0=64, bind=pipe.Bind.VERTEX_BUFFER
            )
        )
        dead = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.BUFFER, width0=64, bind=pipe.Bind.VERTEX_BUFFER
            )
        )
        screen.resource_destroy(dead)
        query = ctx.create_query(pipe.QueryType.OCCLUSION_COUNTER)
        ctx.destroy_query(query)
        W_, span = pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 32, 1, 1)
        huge_3d = pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_3D,
            format=pipe.Format.R32G32B32A32_FLOAT,
            width0=16384,
            height0=16384,
            depth0=16384,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
        calls = [
            (PipeValueError, lambda: ctx.buffer_subdata(buf, W_, 60, bytes(16))),
            (PipeValueError, lambda: ctx.buffer_subdata(dead, W_, 0, bytes(16))),
            (PipeValueError, lambda: ctx.clear_buffer(buf, 32, 64, np.zeros(4, np.uint8))),
            (PipeValueError, lambda: ctx.transfer_map(dead, 0, W_, span)),
            (PipeValueError, lambda: ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, dead)])),
            (PipeValueError, lambda: ctx.resource_copy_region(buf, 0, 48, 0, 0, buf, 0, span)),
            (PipeTypeError, lambda: ctx.transfer_unmap("xfer")),
            (PipeValueError, lambda: ctx.create_fs_state(pipe.ShaderState(tokens=BAD_TGSI))),
            (PipeValueError, lambda: ctx.create_fs_state(pipe.ShaderState(tokens=HUGE_TEMPS))),
            (PipeError, lambda: ctx.draw_vbo(pipe.DrawInfo(mode=TRIS, start=0, count=2**31))),
            (PipeError, lambda: ctx.get_query_result(query, wait=True)),
            (PipeError, lambda: screen.fence_finish(None, ctx.flush(), float("nan"))),
            (PipeError, lambda: screen.resource_create(huge_3d)),
        ]
        if not screen.get_param(pipe.Cap.DEPTH_BOUNDS_TEST):  # unsupported: refused at once
            bounds = pipe.DepthStencilAlphaState(depth=pipe.DepthState(bounds_test=True))
            calls.append((UnsupportedError, lambda: ctx.create_depth_stencil_alpha_state(bounds)))
        try:
            for want, call in calls:
                try:
                    call()
                except want:
                    soak.count("bad_calls_raised")
                except Exception as exc:
                    soak.failure(f"churn: a bad call raised {type(exc).__name__}: {exc}")
                else:
                    soak.failure(f"churn: a bad call was accepted ({want.__name__} expected)")
        finally:
            screen.resource_destroy(buf)


# -- the run ---------------------------------------------------------------------------


class Soak:
    """One run: the shared objects, the rounds, the checkpoints and the verdict."""

    def __init__(
        self, report: Report, seconds: float, seed: int, bands: bool, judge_memory: bool
    ) -> None:
        self.report, self.seconds, self.bands = report, seconds, bands
        self.judge_memory = judge_memory
        self.rng = random.Random(seed)
        self.stop = threading.Event()
        self.expected: dict[str, Expected] = {}
        self.screen = self.band_screen = None
        self.longs: list[LongLived] = []

    # -- called by the actors' threads
    def count(self, name: str, n: int = 1) -> None:
        self.report.count(name, n)

    def failure(self, message: str) -> None:
        """A wrong result: reported, and the run stops (what follows would only repeat it)."""
        self.report.fail(message)
        self.stop.set()

    def running(self) -> bool:
        return not self.stop.is_set()

    def child_pids(self) -> list[int]:
        return self.band_screen.pool.process_pids() if self.band_screen is not None else []

    # -- the run
    def run(self) -> None:
        rng = self.rng
        round_s, rounds, warmup = plan(self.seconds)
        recipes = make_recipes(rng, W, H)
        band_recipes = [
            SceneRecipe(f"band_{i}", make_spec(rng.getrandbits(32), BAND_W, BAND_H, triangles=n))
            for i, n in enumerate((300, 150))
        ]
        self.expected = references(recipes + band_recipes)
        small, whole = self.expected["small_draws_a"].image, self.expected["scene_a"].image
        if not np.array_equal(small, whole):
            self.failure(
                "the scene drawn a triangle a draw differs from the same scene in a few draws "
                f"on the reference context: {describe_mismatch(small, whole)}"
            )
            return
        before = _memory.checkpoint(0.0)
        t0 = time.monotonic()
        # (worker threads rasterize here; the band screen's scenes all go to processes)
        self.screen = gallium.create_screen(num_threads=2, processes=False)
        if self.bands:
            self.band_screen = gallium.create_screen(num_threads=2, processes=True)
        self.longs = [
            LongLived("long_direct", self, self.screen, recipes, False, rng.getrandbits(32)),
            LongLived("long_tc", self, self.screen, recipes, True, rng.getrandbits(32)),
        ]
        if self.band_screen is not None:
            self.longs.append(
                LongLived("bands", self, self.band_screen, band_recipes, True, rng.getrandbits(32))
            )
        self._fill_kernel_cache()
        sampler = _memory.RssSampler(child_pids=self.child_pids).start()
        checkpoints: list[_memory.Checkpoint] = []
        censuses = _memory.CensusLog()  # from the baseline on
        traced = None
        try:
            for r in range(rounds):
                if not self._round(r, round_s, recipes):
                    break
                cp = _memory.checkpoint(time.monotonic() - t0, self.child_pids())
                checkpoints.append(cp)
                self.report.add(iterations=1)
                if r >= warmup - 1:
                    censuses.add(cp.t, _memory.object_census())
                if r == warmup - 1:
                    traced = _memory.start_tracing()
            self._judge_objects(censuses.censuses())
            if traced is not None:
                self.report.details.extend(_memory.traced_growth(traced))
        finally:
            sampler.stop()
            children = self.child_pids()
            self._teardown()
        after = _memory.settled(before, time.monotonic() - t0, children)
        self._judge(checkpoints, warmup, round_s, sampler, before, after)

    def _fill_kernel_cache(self) -> None:
        """Compile as many never-seen shaders as the compiler keeps recent
        kernels (and some): the churn makes such shaders all the time, and the
        cache they fill must be full at the baseline, as it is a minute into
        any run however slow the machine."""
        ctx = self.screen.context_create(threaded=False)
        try:
            for k in range(RECENT_KERNELS + 16):
                colour = [(k % 256 + 0.5) / 255, self.rng.random(), 0.0, 1.0]
                fs = ctx.create_fs_state(pipe.ShaderState(tokens=UNIQUE_FS.format(*colour)))
                ctx.destroy_fs_state(fs)
        finally:
            ctx.destroy()

    def _round(self, r: int, round_s: float, recipes: list[Recipe]) -> bool:
        """Run round ``r`` to its end; False if it failed (the run stops)."""
        screen, seed = self.screen, self.rng.getrandbits(32)
        deadline = Deadline(round_s)
        threaded = r % 2 == 0
        actors = [
            EventLoopClient(self, screen, recipes, "asyncio" if threaded else "trio", seed + 1),
            TransferChecker(self, screen, not threaded, seed + 2),
            Churn(self, screen, recipes, threaded, seed + 3),
        ]
        bodies = [(x.name, _until(x.run, deadline)) for x in self.longs + actors]
        render = partial(round_renderer, self, screen, recipes, threaded, seed)
        bodies.append(("round", _until(render, deadline)))
        bodies.append(("compute", _until(partial(self._compute, not threaded, seed + 4), deadline)))
        run_threads(self.report, deadline, bodies)
        return not deadline.stop.is_set() and self.running()

    def _compute(self, threaded: bool, seed: int, deadline: Deadline) -> None:
        c = ComputeThread("compute", self.report, deadline, self.screen, seed, threaded)
        c.run()
        self.count("grids", c.grids)

    def _teardown(self) -> None:
        for x in self.longs:
            x.close()
        self.longs = []
        for screen in (self.screen, self.band_screen):
            if screen is not None:
                screen.destroy()
        self.screen = self.band_screen = None

    def _judge(self, cps, warmup, round_s, sampler, before, after) -> None:
        report, lines = self.report, self.report.details
        if len(cps) <= warmup:
            lines.append(f"memory: not judged: the run stopped after {len(cps)} round(s)")
            return
        base, end = cps[warmup - 1], cps[-1]
        points = [(c.t, c.mib) for c in cps[warmup - 1 :]]
        tr = _memory.trend(points)
        lines[:0] = [
            f"rounds: {len(cps)} of {round_s:.1f}s, the first {warmup} warming up; "
            f"baseline at {base.t:.0f}s, end at {end.t:.0f}s",
            f"memory (MiB, after gc and malloc_trim): baseline {base.mib:.1f}, "
            f"end {end.mib:.1f} ({end.mib - base.mib:+.1f}; tolerance {LIMITS.tolerance_mib:g}), "
            f"peak {sampler.peak_mib:.1f} (raw, under load), raw at the end {end.raw_mib:.1f}; "
            f"before the run {before.mib:.1f}, after teardown {after.mib:.1f}",
            f"trend over the last half: {tr.slope:+.2f} MiB/min (Theil-Sen; limit "
            f"{LIMITS.slope_limit:g}), {tr.rise_mib:+.1f} MiB (floor {LIMITS.rise_floor_mib:g}), "
            f"{tr.rising_steps} of {tr.steps} steps rising",
            "checkpoints (MiB): " + " ".join(f"{c.mib:.1f}" for c in cps),
            "end - baseline by kind (MiB): "
            + ", ".join(
                f"{k} {end.kinds.get(k, 0) - base.kinds.get(k, 0):+.1f}"
                for k in sorted(set(base.kinds) | set(end.kinds))
            ),
        ]
        if _memory.tracing():
            lines.append("memory: not judged: tracemalloc's own tables grow with the run")
        elif not self.judge_memory:
            lines.append("memory: not judged (a smoke run of the machinery)")
        else:
            for f in _memory.judge("this process", base.mib, points, end.mib, LIMITS):
                report.fail(f)
        if self.bands and self.judge_memory:
            self._judge_children(cps, warmup, sampler)
        lines.append(
            f"threads before/after the run: {before.threads}/{after.threads}; "
            f"open files {before.fds}/{after.fds}"
        )
        if after.threads > before.threads:
            report.fail(
                f"threads: {before.threads} before the run, {after.threads} "
                f"{_memory.SETTLE_S:g}s after everything was destroyed"
            )
        if after.fds > before.fds:
            report.fail(
                f"open files: {before.fds} before the run, {after.fds} "
                f"{_memory.SETTLE_S:g}s after everything was destroyed"
            )
        if after.children:
            report.fail(f"band processes still running after teardown: {sorted(after.children)}")

    def _judge_objects(self, censuses) -> None:
        """Live objects by type: what grew since the baseline (reported), and
        any type that grew at every checkpoint of the last half (failed)."""
        if len(censuses) < 2:
            return
        grown = Counter(censuses[-1][1]) - Counter(censuses[0][1])
        top = ", ".join(f"{k.rsplit('.', 1)[-1]} +{v}" for k, v in grown.most_common(6))
        self.report.details.append(f"objects grown since the baseline: {top or 'none'}")
        if not self.judge_memory:
            return
        for name, was, now in _memory.steady_growth(censuses, OBJECT_RISE_FLOOR):
            self.report.fail(
                f"objects: {name} rose at every checkpoint of the last half, {was} -> {now}"
            )

    def _judge_children(self, cps, warmup, sampler) -> None:
        report = self.report
        base, end = cps[warmup - 1], cps[-1]
        if not base.children or sorted(base.children) != sorted(end.children):
            report.details.append(
                f"band processes: {sorted(base.children)} at the baseline, "
                f"{sorted(end.children)} at the end: not judged (replaced or not started)"
            )
            return
        b, e = sum(base.children.values()), sum(end.children.values())
        points = [(c.t, sum(c.children.values())) for c in cps[warmup - 1 :] if c.children]
        tr = _memory.trend(points)
        report.details.append(
            f"band processes ({len(base.children)}, MiB raw): baseline {b:.1f}, end {e:.1f} "
            f"({e - b:+.1f}), peak {sampler.children_peak_mib:.1f}, trend {tr.slope:+.2f} MiB/min"
        )
        for f in _memory.judge("band processes", b, points, e, LIMITS):
            report.fail(f)


def _until(fn, deadline: Deadline):
    return lambda: fn(deadline)


def run(seconds: float, seed: int, bands: bool = True, judge_memory: bool = True) -> Report:
    """The soak for ``seconds``; ``bands``: with the band-process screen;
    ``judge_memory``: fail on the memory verdict (else only report it)."""
    report = Report(NAME, seed, seconds)
    # every band-process scene counts as heavy (they are small, to be many)
    min_work, bandproc.MIN_WORK_MS = bandproc.MIN_WORK_MS, 0.0
    try:
        Soak(report, seconds, seed, bands, judge_memory).run()
    finally:
        bandproc.MIN_WORK_MS = min_work
    for name in ("reads", "draws", "grids", "bad_calls_raised"):
        if not report.counters.get(name) and report.ok:
            report.fail(f"no {name.replace('_', ' ')} in {seconds}s")
    return report

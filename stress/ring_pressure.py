"""Suite ring_pressure: a flooded ring and the no-stall buffer paths must equal a direct run.

A seeded *program* (a list of calls) is generated per iteration: thousands of
cheap state calls (blend colour, stencil ref, sample mask, scissors, the same
viewport again), runs of small adjacent ``buffer_subdata`` uploads (copied
into the batch and merged), large ones, ``transfer_map`` writes with
DISCARD_WHOLE_RESOURCE, DISCARD_RANGE, UNSYNCHRONIZED or nothing, on a vertex
buffer, an index buffer and a fragment constant buffer that queued draws are
reading (so the buffers are busy), draws from those buffers and from user
arrays, flushes (some deferred), waits and snapshots.  The generator keeps the
contract an application must keep: an UNSYNCHRONIZED write never touches
bytes a draw has used since the last completed wait, and a discarding map
writes every byte it maps.  Every call then has one defined result.

The program runs on a threaded context of the stressed screen and on a direct
context of a separate one-worker screen; at every snapshot the image and the
bytes of all three buffers must be identical in both runs, and the buffers
must equal the generator's own model of what was written.

Then an asyncio producer runs a second, draw-heavy program that keeps the
ring full, yielding to the loop every few calls, while a heartbeat task
measures the loop's worst lag (reported), the producer times each of its
recording steps, and a sampler thread measures how long the driver thread
takes per batch.  A full ring blocks the recording call until the driver
takes the next batch, so the rule checked is: no recording step holds the
loop for longer than one batch's execution (plus a scheduling allowance).
That program's snapshots are checked against a direct run too.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

import gallium
from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
from ._scene import Pipeline, Target, describe_mismatch

NAME = "ring_pressure"
W = H = 48
VERTS_PER_SLOT = 18  # six triangles
SLOT_BYTES = VERTS_PER_SLOT * 32
VB_SLOTS = 12
VB_SIZE = VB_SLOTS * SLOT_BYTES
CB_VECS = 16
CB_SIZE = CB_VECS * 16
IB_SLOT_BYTES = VERTS_PER_SLOT * 2
IB_SIZE = VB_SLOTS * IB_SLOT_BYTES
SMALL = 320  # threaded/context.py copies buffer_subdata up to this size into the batch
YIELD_EVERY = 16  # the async producer yields to its loop this often (in calls)
HEARTBEAT_S = 0.001
LAG_ALLOWANCE_MS = 100.0  # GIL hand-offs and scheduling on a 2-core machine
T = pipe.Transfer
BUFFERS = ("vb", "cb", "ib")
SIZES = {"vb": VB_SIZE, "cb": CB_SIZE, "ib": IB_SIZE}


# ----------------------------------------------------------------------------
# programs
# ----------------------------------------------------------------------------


@dataclass
class Program:
    ops: list[tuple]
    model: dict[str, np.ndarray]  # buffer bytes the program leaves behind
    snapshots: list[dict[str, np.ndarray]]  # the model at each snapshot


def _slot_vertices(rng: np.random.Generator) -> np.ndarray:
    centre = rng.uniform(-0.8, 0.8, (6, 1, 2))
    xy = (centre + rng.normal(0, 0.35, (6, 3, 2))).reshape(-1, 2)
    v = np.zeros((VERTS_PER_SLOT, 8), np.float32)
    v[:, 0:2] = xy
    v[:, 3] = 1.0
    v[:, 4:8] = rng.uniform(0.0, 1.0, (VERTS_PER_SLOT, 4))
    return v


def _bytes_of(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8).copy()


class _Generator:
    """Builds a program while tracking the buffers' contents and the hazards."""

    def __init__(self, seed: int, never_sync: bool = False) -> None:
        self.never_sync = never_sync
        self.rng = random.Random(seed)
        self.nrng = np.random.default_rng(seed)
        self.ops: list[tuple] = []
        self.model = {b: np.zeros(SIZES[b], np.uint8) for b in BUFFERS}
        self.snapshots: list[dict[str, np.ndarray]] = []
        self.used: dict[str, np.ndarray] = {}  # bytes read by draws since the last wait
        self._reset_used()

    def _reset_used(self) -> None:
        self.used = {b: np.zeros(SIZES[b], bool) for b in BUFFERS}

    # content that keeps every draw meaningful
    def content(self, buf: str, lo: int, hi: int) -> np.ndarray:
        """New bytes for [lo, hi): fresh valid values, cut at arbitrary byte boundaries."""
        if buf == "vb":
            slots = np.concatenate([_bytes_of(_slot_vertices(self.nrng)) for _ in range(VB_SLOTS)])
        elif buf == "cb":
            tint = self.nrng.uniform(0.3, 1.0, (CB_VECS, 4)).astype(np.float32)
            tint[:, 3] = 1.0
            slots = _bytes_of(tint)
        else:
            slots = np.concatenate(
                [
                    _bytes_of(self.nrng.permutation(VERTS_PER_SLOT).astype(np.uint16))
                    for _ in range(VB_SLOTS)
                ]
            )
        return slots[lo:hi].copy()

    def write(self, buf: str, lo: int, data: np.ndarray) -> None:
        self.model[buf][lo : lo + data.size] = data

    def range_for(self, buf: str) -> tuple[int, int]:
        size = SIZES[buf]
        lo = self.rng.randrange(size - 1)
        hi = min(size, lo + self.rng.choice((4, 16, 40, 100, 300, 600, size)))
        return lo, max(hi, lo + 1)

    # ops
    def subdata_run(self) -> None:
        buf = self.rng.choice(BUFFERS)
        lo, hi = self.range_for(buf)
        data = self.content(buf, lo, hi)
        if hi - lo > SMALL and self.rng.random() < 0.3:
            self.ops.append(("subdata", buf, lo, data))
        else:
            pos = 0
            while pos < data.size:  # adjacent small uploads: merge candidates
                n = min(data.size - pos, self.rng.choice((1, 4, 8, 24, 64, 96)))
                self.ops.append(("subdata", buf, lo + pos, data[pos : pos + n].copy()))
                pos += n
        self.write(buf, lo, data)

    def map_write(self) -> None:
        buf = self.rng.choice(BUFFERS)
        if self.never_sync:
            # the kinds whose map never waits for the driver thread (threaded/context.py
            # rule 5): an event loop must only ever block on a full ring
            kind = self.rng.choice(("discard_range", "discard_whole"))
        else:
            kind = self.rng.choice(("plain", "discard_range", "discard_whole", "unsynchronized"))
        if kind == "discard_whole":
            lo, hi = 0, SIZES[buf]
            new = self.model[buf].copy()
            a, b = self.range_for(buf)
            new[a:b] = self.content(buf, a, b)
            data = new
            usage = T.WRITE | T.DISCARD_WHOLE_RESOURCE
        else:
            lo, hi = self.range_for(buf)
            if kind == "unsynchronized":
                if self.used[buf][lo:hi].any():
                    free = np.flatnonzero(~self.used[buf])
                    if free.size == 0:
                        return
                    lo = int(self.rng.choice(free))
                    hi = lo + 1
                    while hi < SIZES[buf] and not self.used[buf][hi] and hi - lo < 200:
                        hi += 1
                usage = T.WRITE | T.UNSYNCHRONIZED
            elif kind == "discard_range":
                usage = T.WRITE | T.DISCARD_RANGE
            else:
                usage = T.WRITE
            data = self.content(buf, lo, hi)
        self.ops.append(("map", buf, int(usage), lo, data))
        self.write(buf, lo, data)

    def draw(self) -> None:
        slot = self.rng.randrange(VB_SLOTS)
        cbi = self.rng.randrange(CB_VECS)
        indexed = self.rng.random() < 0.4
        blend = self.rng.random() < 0.3
        self.ops.append(("draw", slot, cbi, indexed, blend))
        self.used["vb"][slot * SLOT_BYTES : (slot + 1) * SLOT_BYTES] = True
        self.used["cb"][cbi * 16 : cbi * 16 + 16] = True
        if indexed:
            self.used["ib"][slot * IB_SLOT_BYTES : (slot + 1) * IB_SLOT_BYTES] = True

    def user_draw(self) -> None:
        cbi = self.rng.randrange(CB_VECS)
        self.ops.append(("user_draw", _slot_vertices(self.nrng), cbi, self.rng.random() < 0.3))
        self.used["cb"][cbi * 16 : cbi * 16 + 16] = True

    def state(self) -> None:
        r = self.rng
        kind = r.choice(("blend_color", "stencil_ref", "sample_mask", "scissor", "viewport"))
        if kind == "blend_color":
            arg: Any = tuple(r.random() for _ in range(4))
        elif kind == "stencil_ref":
            arg = (r.randrange(256), r.randrange(256))
        elif kind == "scissor":
            arg = (r.randrange(W), r.randrange(H), W, H)
        else:
            arg = None
        self.ops.append(("state", kind, arg))

    def flush(self) -> None:
        self.ops.append(("flush", self.rng.random() < 0.4))

    def finish(self) -> None:
        self.ops.append(("finish",))
        self._reset_used()

    def snapshot(self) -> None:
        self.ops.append(("snapshot",))
        self.snapshots.append({b: m.copy() for b, m in self.model.items()})
        self._reset_used()


def make_program(seed: int, calls: int, heavy: bool = False) -> Program:
    """A program of about ``calls`` calls.

    A ``heavy`` program is mostly user-array draws (each fills a good part of a
    batch), with no map that could sync and no snapshot before the last call,
    so it keeps the ring full.
    """
    g = _Generator(seed, never_sync=heavy)
    for b in BUFFERS:  # every byte starts defined
        data = g.content(b, 0, SIZES[b])
        g.ops.append(("subdata", b, 0, data))
        g.write(b, 0, data)
    g.ops.append(("frame_start",))
    if heavy:
        weights = {"user_draw": 30, "draw": 6, "state": 40, "subdata": 3, "map": 4, "flush": 1}
        weights.update(finish=0.0, snapshot=0.0)  # only the final snapshot: nothing drains
    else:
        weights = {"user_draw": 1, "draw": 4, "state": 60, "subdata": 20, "map": 12, "flush": 2}
        weights.update(finish=0.4, snapshot=0.3)
    names = list(weights)
    w = [weights[n] for n in names]
    while len(g.ops) < calls:
        op = g.rng.choices(names, w)[0]
        if op == "subdata":
            g.subdata_run()
        elif op == "map":
            g.map_write()
        else:
            getattr(g, op)()
    g.snapshot()
    return Program(g.ops, g.model, g.snapshots)


# ----------------------------------------------------------------------------
# running a program
# ----------------------------------------------------------------------------


class Env:
    """The resources and CSOs a program runs with, on one context."""

    def __init__(self, screen, ctx) -> None:
        self.ctx = ctx
        self.p = Pipeline(ctx)
        self.target = Target(screen, ctx, W, H)
        self.buffers = {
            b: screen.resource_create(
                pipe.ResourceTemplate(
                    target=pipe.TextureTarget.BUFFER,
                    format=pipe.Format.NONE,
                    width0=SIZES[b],
                    bind=bind,
                )
            )
            for b, bind in (
                ("vb", pipe.Bind.VERTEX_BUFFER),
                ("cb", pipe.Bind.CONSTANT_BUFFER),
                ("ib", pipe.Bind.INDEX_BUFFER),
            )
        }
        self.viewport = pipe.ViewportState(scale=(W / 2, H / 2, 0.5), translate=(W / 2, H / 2, 0.5))

    def read_buffer(self, name: str) -> np.ndarray:
        res = self.buffers[name]
        data, xfer = self.ctx.transfer_map(
            res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, res.width0, 1, 1)
        )
        out = np.array(data)
        self.ctx.transfer_unmap(xfer)
        return out


def execute(env: Env, ops: list[tuple]) -> Generator[tuple, None, None]:
    """Run ``ops`` on ``env.ctx``; yields ("step",), ("wait", fence) and ("snapshot", ...)."""
    ctx = env.ctx
    p = env.p
    for op in ops:
        kind = op[0]
        if kind == "frame_start":
            env.target.bind(ctx)
            p.bind(ctx)
            ctx.bind_rasterizer_state(p.rast)
            ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTH, color=(0.1, 0.1, 0.2, 1.0))
        elif kind in ("draw", "user_draw"):
            if kind == "draw":
                _, slot, cbi, indexed, blend = op
                vb = pipe.VertexBuffer(32, slot * SLOT_BYTES, env.buffers["vb"])
            else:
                _, verts, cbi, blend = op
                vb = pipe.VertexBuffer(32, 0, verts)
                indexed = False
            ctx.bind_blend_state(p.blend_alpha if blend else p.blend_opaque)
            ctx.set_vertex_buffers(0, [vb])
            ctx.set_constant_buffer(
                pipe.ShaderType.FRAGMENT,
                0,
                pipe.ConstantBuffer(
                    buffer=env.buffers["cb"], buffer_offset=16 * cbi, buffer_size=16
                ),
            )
            if indexed:
                info = pipe.DrawInfo(
                    mode=pipe.Prim.TRIANGLES,
                    start=slot * VERTS_PER_SLOT,
                    count=VERTS_PER_SLOT,
                    index_size=2,
                    index=env.buffers["ib"],
                )
            else:
                info = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=VERTS_PER_SLOT)
            ctx.draw_vbo(info)
        elif kind == "subdata":
            _, buf, off, data = op
            ctx.buffer_subdata(env.buffers[buf], 0, off, data)
        elif kind == "map":
            _, buf, usage, off, data = op
            mapped, xfer = ctx.transfer_map(
                env.buffers[buf], 0, usage, pipe.Box(off, 0, 0, data.size, 1, 1)
            )
            mapped[:] = data
            ctx.transfer_unmap(xfer)
        elif kind == "state":
            _, what, arg = op
            if what == "blend_color":
                ctx.set_blend_color(pipe.BlendColor(arg))
            elif what == "stencil_ref":
                ctx.set_stencil_ref(pipe.StencilRef(arg))
            elif what == "sample_mask":
                ctx.set_sample_mask(0xFFFFFFFF)
            elif what == "scissor":  # the rasterizer state leaves scissoring off
                ctx.set_scissor_states(0, [pipe.ScissorState(*arg)])
            else:
                ctx.set_viewport_states(0, [env.viewport])
        elif kind == "flush":
            ctx.flush(pipe.Flush.DEFERRED if op[1] else 0)
        elif kind == "finish":
            yield ("wait", ctx.flush())
        elif kind == "snapshot":
            yield ("wait", ctx.flush())
            yield (
                "snapshot",
                env.target.read(ctx),
                {b: env.read_buffer(b) for b in BUFFERS},
            )
        yield ("step", kind)


Snapshot = tuple[np.ndarray, dict[str, np.ndarray]]


def run_blocking(env: Env, ops: list[tuple]) -> list[Snapshot]:
    shots = []
    for event in execute(env, ops):
        if event[0] == "wait":
            if not event[1].wait(WAIT_LIMIT_S):
                raise TimeoutError(f"suspected deadlock: a flush did not finish in {WAIT_LIMIT_S}s")
        elif event[0] == "snapshot":
            shots.append((event[1], event[2]))
    return shots


async def run_async(env: Env, ops: list[tuple], blocked_ms: list[float]) -> list[Snapshot]:
    """Run ``ops`` from a task; ``blocked_ms[0]`` becomes the longest any one
    recording step (an op's few calls) held the loop.  Snapshots are left out:
    their read-backs are syncs the program asks for, after awaiting a flush."""
    shots = []
    n = 0
    steps = execute(env, ops)
    while True:
        t0 = time.perf_counter()
        event = next(steps, None)
        if event is None:
            return shots
        if event[0] == "wait":
            async with asyncio.timeout(WAIT_LIMIT_S):
                await event[1]
        elif event[0] == "snapshot":
            shots.append((event[1], event[2]))
        else:
            if event[1] != "snapshot":
                blocked_ms[0] = max(blocked_ms[0], (time.perf_counter() - t0) * 1000)
            n += 1
            if n % YIELD_EVERY == 0:
                await asyncio.sleep(0)


# ----------------------------------------------------------------------------
# the suite
# ----------------------------------------------------------------------------


class _BatchClock:
    """Samples a threaded context's batch counters to time the driver's batches.

    An interval between two completions counts only if another batch was
    already queued when the first completed, so the driver went straight on
    to it: the interval is then one batch's execution (never idle time).
    """

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.max_ms = 0.0
        self.samples = 0
        self.stop = threading.Event()

    def run(self) -> None:
        stats = self.ctx.stats
        last_done = stats.executed_batches
        last_t = time.perf_counter()
        backlog_then = stats.batches - last_done
        while not self.stop.is_set():
            time.sleep(0.0005)
            done = stats.executed_batches
            if done != last_done:
                now = time.perf_counter()
                if backlog_then >= 1 and done == last_done + 1:
                    self.max_ms = max(self.max_ms, (now - last_t) * 1000)
                    self.samples += 1
                last_done, last_t = done, now
                backlog_then = stats.batches - done


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2, 3)))
        self.ref_screen = gallium.create_screen(num_threads=1)
        self.deadline: Deadline | None = None

    def _reference(self, program: Program) -> list[Snapshot]:
        ctx = self.ref_screen.context_create(threaded=False)
        try:
            return run_blocking(Env(self.ref_screen, ctx), program.ops)
        finally:
            ctx.destroy()

    def _compare(self, what: str, program: Program, got: list[Snapshot], want: list[Snapshot]):
        if len(got) != len(want) or len(want) != len(program.snapshots):
            self.report.fail(f"{what}: {len(got)} snapshots, reference {len(want)}")
            return
        for i, ((img, bufs), (rimg, rbufs), model) in enumerate(zip(got, want, program.snapshots)):
            self.report.add(frames=1)
            if not np.array_equal(img, rimg):
                self.report.fail(
                    f"{what}: snapshot {i}: image differs from the direct run: "
                    f"{describe_mismatch(img, rimg)}"
                )
            for b in BUFFERS:
                for label, have in (("threaded", bufs[b]), ("direct", rbufs[b])):
                    if not np.array_equal(have, model[b]):
                        bad = np.flatnonzero(have != model[b])
                        self.report.fail(
                            f"{what}: snapshot {i}: {b} bytes of the {label} run differ from "
                            f"what the program wrote at {bad.size} offsets (first {bad[0]})"
                        )

    def _sync_iteration(self, seed: int) -> None:
        program = make_program(seed, calls=self.rng.choice((2000, 3000, 4000)))
        ctx = self.screen.context_create(threaded=True)
        try:
            got = run_blocking(Env(self.screen, ctx), program.ops)
            self._count_stats(ctx.stats)
        finally:
            ctx.destroy()
        self._compare(f"program {seed}", program, got, self._reference(program))
        self.report.count("calls", len(program.ops))

    def _async_iteration(self, seed: int) -> None:
        program = make_program(seed, calls=1200, heavy=True)
        ctx = self.screen.context_create(threaded=True)
        clock = _BatchClock(ctx)
        sampler = threading.Thread(target=clock.run, name="stress-batch-clock", daemon=True)
        lag = [0.0]
        blocked = [0.0]

        async def heartbeat(stop: asyncio.Event) -> None:
            while not stop.is_set():
                t0 = time.perf_counter()
                await asyncio.sleep(HEARTBEAT_S)
                lag[0] = max(lag[0], (time.perf_counter() - t0 - HEARTBEAT_S) * 1000)

        async def main() -> list[Snapshot]:
            stop = asyncio.Event()
            beat = asyncio.create_task(heartbeat(stop))
            await asyncio.sleep(0)
            try:
                return await run_async(Env(self.screen, ctx), program.ops, blocked)
            finally:
                stop.set()
                await beat

        sampler.start()
        try:
            got = asyncio.run(main())
            self._count_stats(ctx.stats)
            full = ctx.stats.ring_full_waits
        finally:
            clock.stop.set()
            sampler.join()
            ctx.destroy()
        self.report.lag(lag[0])
        self.report.maximum("max_batch_ms", clock.max_ms)
        self.report.maximum("max_blocking_step_ms", blocked[0])
        self.report.count("async_ring_full_waits", full)
        if full and clock.samples and blocked[0] > clock.max_ms + LAG_ALLOWANCE_MS:
            self.report.fail(
                f"async program {seed}: one recording step held the event loop for "
                f"{blocked[0]:.0f} ms, longer than the slowest batch took to execute "
                f"({clock.max_ms:.0f} ms) plus {LAG_ALLOWANCE_MS:.0f} ms"
            )
        self._compare(f"async program {seed}", program, got, self._reference(program))
        self.report.count("calls", len(program.ops))

    def _count_stats(self, stats) -> None:
        for name in (
            "batches",
            "merged_subdata",
            "invalidations",
            "staging_uploads",
            "promoted_unsynchronized",
            "ring_full_waits",
        ):
            self.report.count(name, getattr(stats, name))

    def body(self) -> None:
        assert self.deadline is not None
        while self.deadline.running():
            self._sync_iteration(self.rng.getrandbits(32))
            self._async_iteration(self.rng.getrandbits(32))
            self.report.add(iterations=1)
        if self.report.counters.get("merged_subdata", 0) == 0:
            self.report.fail("no small buffer_subdata was ever merged: the path went untested")
        if self.report.counters.get("async_ring_full_waits", 0) == 0:
            self.report.fail(
                "the async producer never filled the ring, so the lag measurement says nothing "
                "(make the heavy program heavier)"
            )

    def run(self) -> Report:
        try:
            self.deadline = Deadline(self.seconds)
            run_threads(self.report, self.deadline, [("producer", self.body)])
        finally:
            self.screen.destroy()
            self.ref_screen.destroy()
        return self.report


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

"""A threaded and a direct context side by side, driven by random sequences
(issue 21 item 2): buffer and texture writes, clears, copies, maps with every
flag, draws and queries go to both, and every read must give the same bytes
on both -- and, for buffers and textures, the bytes a plain numpy model of
the calls predicts.

The model keeps which buffer bytes are *defined*: bytes nobody wrote, and
bytes copied from them, hold nothing a read may be compared on (a resource's
bytes before their first write are undefined to work queued before it: the
valid-range rule, Mesa's and ours), and a DISCARD_WHOLE_RESOURCE map leaves
only what it writes defined.  A rule holds the threaded context's driver
thread for a few milliseconds now and then, so that later calls find their
resources busy and take the no-stall paths (promotion, storage swaps, staging
copies, waits for pending uploads).
"""

from __future__ import annotations

import os
import time

import numpy as np
from helpers import bind_passthrough, make_target
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import gallium
from gallium import pipe

T = pipe.Transfer
BUF_SIZE = 512
TEX = 16
VB_BYTES = 3 * 32  # one triangle: position and colour, float32
EXAMPLES = int(os.environ.get("STATE_MACHINE_EXAMPLES", "40"))
# STATE_MACHINE_SHRINK=0: report the first failing sequence as found (quicker
# when a timing-dependent failure makes shrinking slow)
PHASES = [
    p for p in Phase if os.environ.get("STATE_MACHINE_SHRINK", "1") != "0" or p != Phase.shrink
]
_SCREEN = None


def _screen():
    global _SCREEN
    if _SCREEN is None:
        _SCREEN = gallium.create_screen(num_threads=2)
    return _SCREEN


def pattern(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8)


def triangle(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.2, 1.2, (3, 2))
    colour = rng.uniform(0, 1, (1, 4)).repeat(3, 0)
    v = np.concatenate([pos, np.zeros((3, 1)), np.ones((3, 1)), colour], 1)
    return v.astype(np.float32).view(np.uint8).reshape(-1)


class Pair:
    """One resource made twice: for the direct context and for the threaded one."""

    def __init__(self, d, t, model, defined):
        self.d, self.t = d, t
        self.model = model  # expected bytes
        self.defined = defined  # where ``model`` may be compared

    def __repr__(self):
        return f"<{'buffer' if self.d.is_buffer else 'texture'} {self.d.id}>"


offsets = st.integers(0, BUF_SIZE - 1)
sizes = st.sampled_from([1, 4, 16, 64, 200, 320, 321, 400, BUF_SIZE])
seeds = st.integers(0, 2**16)
write_flags = st.sampled_from(
    [T.WRITE, T.WRITE | T.DISCARD_RANGE, T.WRITE | T.DISCARD_WHOLE_RESOURCE, T.WRITE | T.DONTBLOCK]
)


class SideBySide(RuleBasedStateMachine):
    buffers = Bundle("buffers")
    textures = Bundle("textures")

    @initialize()
    def setup(self):
        screen = _screen()
        self.screen = screen
        self.d = screen.context_create(threaded=False)
        self.t = screen.context_create(threaded=True)
        self.ctxs = (self.d, self.t)
        self.rts = []
        self.vbs = []
        for ctx in self.ctxs:
            rt, _ = make_target(screen, ctx, 32, 32)
            bind_passthrough(ctx)
            vb = self._resource(pipe.TextureTarget.BUFFER, VB_BYTES, pipe.Bind.VERTEX_BUFFER)
            ctx.buffer_subdata(vb, T.WRITE, 0, triangle(0))
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, vb)])
            ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
            self.rts.append(rt)
            self.vbs.append(vb)
        self.queries: list[tuple] = []  # (direct query, threaded query)
        self.open_query = None

    def teardown(self):
        for ctx in getattr(self, "ctxs", ()):
            ctx.destroy()

    def _resource(self, target, width, bind, height=1):
        return self.screen.resource_create(
            pipe.ResourceTemplate(
                target=target,
                format=pipe.Format.R8G8B8A8_UNORM
                if target != pipe.TextureTarget.BUFFER
                else pipe.Format.NONE,
                width0=width,
                height0=height,
                bind=bind,
            )
        )

    def _both(self, fn):
        for i, ctx in enumerate(self.ctxs):
            fn(i, ctx)

    # -- resources -------------------------------------------------------------------

    @rule(target=buffers)
    def new_buffer(self):
        bind = pipe.Bind.VERTEX_BUFFER | pipe.Bind.SHADER_BUFFER
        d = self._resource(pipe.TextureTarget.BUFFER, BUF_SIZE, bind)
        t = self._resource(pipe.TextureTarget.BUFFER, BUF_SIZE, bind)
        return Pair(d, t, np.zeros(BUF_SIZE, np.uint8), np.zeros(BUF_SIZE, bool))

    @rule(target=textures)
    def new_texture(self):
        bind = pipe.Bind.RENDER_TARGET | pipe.Bind.SAMPLER_VIEW
        d = self._resource(pipe.TextureTarget.TEXTURE_2D, TEX, bind, TEX)
        t = self._resource(pipe.TextureTarget.TEXTURE_2D, TEX, bind, TEX)
        # zero-initialised and never promoted: defined from the start
        return Pair(d, t, np.zeros((TEX, TEX, 4), np.uint8), None)

    # -- buffers ------------------------------------------------------------------------

    @rule(buf=buffers, offset=offsets, size=sizes, seed=seeds)
    def buffer_subdata(self, buf, offset, size, seed):
        size = min(size, BUF_SIZE - offset)
        data = pattern(seed, size)
        self._both(lambda i, c: c.buffer_subdata((buf.d, buf.t)[i], T.WRITE, offset, data))
        buf.model[offset : offset + size] = data
        buf.defined[offset : offset + size] = True

    @rule(
        buf=buffers, offset=st.integers(0, BUF_SIZE // 4 - 1), words=st.integers(1, 64), seed=seeds
    )
    def clear_buffer(self, buf, offset, words, seed):
        offset *= 4
        size = min(words * 4, BUF_SIZE - offset)
        value = pattern(seed, 4)
        self._both(lambda i, c: c.clear_buffer((buf.d, buf.t)[i], offset, size, value))
        buf.model[offset : offset + size] = np.tile(value, size // 4)
        buf.defined[offset : offset + size] = True

    @rule(dst=buffers, src=buffers, dst_off=offsets, src_off=offsets, size=sizes)
    def copy_buffer(self, dst, src, dst_off, src_off, size):
        size = min(size, BUF_SIZE - dst_off, BUF_SIZE - src_off)
        if dst is src and abs(dst_off - src_off) < size:
            return  # overlapping copies within one buffer are undefined (context.rst)
        box = pipe.Box(src_off, 0, 0, size, 1, 1)
        self._both(
            lambda i, c: c.resource_copy_region(
                (dst.d, dst.t)[i], 0, dst_off, 0, 0, (src.d, src.t)[i], 0, box
            )
        )
        dst.model[dst_off : dst_off + size] = src.model[src_off : src_off + size]
        dst.defined[dst_off : dst_off + size] = src.defined[src_off : src_off + size]

    @rule(buf=buffers, offset=offsets, size=sizes, flags=write_flags, seed=seeds)
    def map_write(self, buf, offset, size, flags, seed):
        size = min(size, BUF_SIZE - offset)
        data = pattern(seed, size)
        box = pipe.Box(offset, 0, 0, size, 1, 1)
        for i, ctx in enumerate(self.ctxs):
            res = (buf.d, buf.t)[i]
            mapped, xfer = ctx.transfer_map(res, 0, flags, box)
            if mapped is None:  # DONTBLOCK and busy: then wait, as an application would
                assert flags & T.DONTBLOCK
                mapped, xfer = ctx.transfer_map(res, 0, flags & ~T.DONTBLOCK, box)
            mapped[:] = data
            ctx.transfer_unmap(xfer)
        if flags & T.DISCARD_WHOLE_RESOURCE:
            buf.defined[:] = False
        buf.model[offset : offset + size] = data
        buf.defined[offset : offset + size] = True

    @rule(buf=buffers, dontblock=st.booleans())
    def read_buffer(self, buf, dontblock):
        box = pipe.Box(0, 0, 0, BUF_SIZE, 1, 1)
        usage = T.READ | (T.DONTBLOCK if dontblock else 0)
        for i, ctx in enumerate(self.ctxs):
            res = (buf.d, buf.t)[i]
            data, xfer = ctx.transfer_map(res, 0, usage, box)
            if data is None:
                data, xfer = ctx.transfer_map(res, 0, T.READ, box)
            got = np.array(data)
            ctx.transfer_unmap(xfer)
            d = buf.defined
            assert np.array_equal(got[d], buf.model[d]), (
                f"{'threaded' if i else 'direct'}: bytes {np.flatnonzero(got != buf.model)[:8]}"
            )

    # -- textures -------------------------------------------------------------------------

    @rule(
        tex=textures,
        x=st.integers(0, TEX - 1),
        y=st.integers(0, TEX - 1),
        w=st.integers(1, TEX),
        h=st.integers(1, TEX),
        seed=seeds,
    )
    def texture_subdata(self, tex, x, y, w, h, seed):
        w, h = min(w, TEX - x), min(h, TEX - y)
        data = pattern(seed, w * h * 4)
        box = pipe.Box(x, y, 0, w, h, 1)
        self._both(lambda i, c: c.texture_subdata((tex.d, tex.t)[i], 0, T.WRITE, box, data))
        tex.model[y : y + h, x : x + w] = data.reshape(h, w, 4)

    @rule(tex=textures, x=st.integers(0, TEX - 1), w=st.integers(1, TEX), seed=seeds)
    def texture_map_write(self, tex, x, w, seed):
        w = min(w, TEX - x)
        data = pattern(seed, w * 4 * 2).reshape(2, w, 4)
        box = pipe.Box(x, 3, 0, w, 2, 1)
        for i, ctx in enumerate(self.ctxs):
            mapped, xfer = ctx.transfer_map((tex.d, tex.t)[i], 0, T.WRITE, box)
            mapped[0] = data
            ctx.transfer_unmap(xfer)
        tex.model[3:5, x : x + w] = data

    @rule(tex=textures, colour=st.tuples(*[st.sampled_from([0.0, 0.5, 1.0])] * 4))
    def clear_render_target(self, tex, colour):
        def clear(i, ctx):
            res = (tex.d, tex.t)[i]
            surf = ctx.create_surface(res, pipe.SurfaceTemplate(format=res.format))
            ctx.clear_render_target(surf, colour, 2, 2, 8, 8)
            ctx.surface_destroy(surf)

        self._both(clear)
        tex.model[2:10, 2:10] = np.rint(np.float32(colour) * np.float32(255)).astype(np.uint8)

    @rule(dst=textures, src=textures, x=st.integers(0, 8), y=st.integers(0, 8))
    def copy_texture(self, dst, src, x, y):
        if dst is src:
            return
        box = pipe.Box(0, 0, 0, 8, 8, 1)
        self._both(
            lambda i, c: c.resource_copy_region(
                (dst.d, dst.t)[i], 0, x, y, 0, (src.d, src.t)[i], 0, box
            )
        )
        dst.model[y : y + 8, x : x + 8] = src.model[0:8, 0:8]

    @rule(tex=textures)
    def read_texture(self, tex):
        box = pipe.Box(0, 0, 0, TEX, TEX, 1)
        for i, ctx in enumerate(self.ctxs):
            data, xfer = ctx.transfer_map((tex.d, tex.t)[i], 0, T.READ, box)
            got = np.array(data[0])
            ctx.transfer_unmap(xfer)
            assert np.array_equal(got, tex.model), "threaded" if i else "direct"

    # -- drawing and queries --------------------------------------------------------------------

    @rule(seed=seeds, how=st.sampled_from(["subdata", "discard_whole", "discard_range", "map"]))
    def new_vertices(self, seed, how):
        """Rewrite the vertex buffer the queued draws read (they must not see it)."""
        data = triangle(seed)
        flags = {"discard_whole": T.DISCARD_WHOLE_RESOURCE, "discard_range": T.DISCARD_RANGE}
        for i, ctx in enumerate(self.ctxs):
            vb = self.vbs[i]
            if how == "subdata":
                ctx.buffer_subdata(vb, T.WRITE, 0, data)
                continue
            mapped, xfer = ctx.transfer_map(
                vb, 0, T.WRITE | flags.get(how, 0), pipe.Box(0, 0, 0, VB_BYTES, 1, 1)
            )
            mapped[:] = data
            ctx.transfer_unmap(xfer)

    @rule()
    def draw(self):
        info = pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3)
        self._both(lambda i, c: c.draw_vbo(info))

    @rule(colour=st.sampled_from([(0.0, 0.0, 0.0, 1.0), (0.2, 0.4, 0.6, 0.8)]))
    def clear(self, colour):
        self._both(lambda i, c: c.clear(pipe.Clear.COLOR0, color=colour))

    @precondition(lambda self: self.open_query is None)
    @rule()
    def begin_query(self):
        qs = tuple(c.create_query(pipe.QueryType.OCCLUSION_COUNTER) for c in self.ctxs)
        for c, q in zip(self.ctxs, qs):
            c.begin_query(q)
        self.open_query = qs

    @precondition(lambda self: self.open_query is not None)
    @rule()
    def end_query(self):
        for c, q in zip(self.ctxs, self.open_query):
            c.end_query(q)
        self.queries.append(self.open_query)
        self.open_query = None

    @precondition(lambda self: bool(self.queries))
    @rule(wait=st.booleans())
    def query_result(self, wait):
        qd, qt = self.queries.pop(0)
        rd = self.d.get_query_result(qd, True)
        rt = self.t.get_query_result(qt, wait)
        if not rt[0]:
            rt = self.t.get_query_result(qt, True)
        assert rd == rt

    @rule()
    def read_target(self):
        images = []
        for ctx, rt in zip(self.ctxs, self.rts):
            data, xfer = ctx.transfer_map(rt, 0, T.READ, pipe.Box(0, 0, 0, 32, 32, 1))
            images.append(np.array(data))
            ctx.transfer_unmap(xfer)
        assert np.array_equal(images[0], images[1])

    # -- timing ------------------------------------------------------------------------------------

    @rule(deferred=st.booleans())
    def flush(self, deferred):
        flags = pipe.Flush.DEFERRED if deferred else 0
        for ctx in self.ctxs:
            ctx.flush(flags)

    @rule(ms=st.sampled_from([1, 5, 20]))
    def stall_driver(self, ms):
        """Hold the threaded context's driver thread: what follows finds its work queued."""
        self.t.callback(lambda _: time.sleep(ms / 1000))

    @invariant()
    def no_reset(self):
        if hasattr(self, "ctxs"):
            for ctx in self.ctxs:
                assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET


SideBySide.TestCase.settings = settings(
    max_examples=EXAMPLES,
    stateful_step_count=40,
    phases=PHASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_threaded_and_direct_contexts_read_the_same_bytes = SideBySide.TestCase

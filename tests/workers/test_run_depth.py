"""Depth winners of a whole sparse run (workers.raster._RunDepth).

A run of opaque, depth-tested triangles is cut into batches; the run keeps
every pixel's best depth key from batch to batch instead of reading the
depth buffer again per batch.  Each test renders a scene of overlapping
triangles with few distinct depths (many exact ties between batches) into
a depth buffer holding a per-pixel pattern, with the run-wide resolution,
with per-batch resolution and with the sequential depth test, and requires
the same colour, depth and stencil bytes.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import get_screen
from helpers import PASS_FS, PASS_VS, bind_depth_test, bind_passthrough, draw_and_read, make_target

import workers.raster as raster
from gallium import pipe
from gallium.util.format import depth_layout

FUNCS = [pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GREATER,
         pipe.CompareFunc.GEQUAL]  # fmt: skip
W, H = 160, 128


def triangles(seed: int, n: int, size: float, tie_levels: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    c = rng.uniform(-1.0, 1.0, (n, 1, 2))
    xy = (c + rng.normal(0, size, (n, 3, 2))).reshape(-1, 2)
    z = np.repeat(rng.integers(0, tie_levels, n) / tie_levels * 1.6 - 0.8, 3)
    col = np.repeat(rng.uniform(0, 1, (n, 4)), 3, axis=0)
    return np.concatenate([xy, z[:, None], np.ones((3 * n, 1)), col], 1).astype(np.float32)


def initial_words(zs_format, seed: int, stencil: str) -> np.ndarray:
    """The depth buffer before the draw: depths at a few levels (ties with
    the triangles'), stencil bits one value or a pattern."""
    rng = np.random.default_rng(seed)
    levels = {pipe.Format.Z16_UNORM: 16}.get(zs_format, 24)
    top = (1 << levels) - 1
    z = rng.choice([0, top // 10, top // 2, top - top // 10, top], (H, W)).astype(np.uint32)
    if zs_format == pipe.Format.Z16_UNORM:
        return z.astype(np.uint16)
    if zs_format == pipe.Format.X8Z24_UNORM:
        return z << 8
    s = rng.integers(0, 256, (H, W)) if stencil == "pattern" else np.full((H, W), 0x5A)
    return z | (s.astype(np.uint32) << 24)


def render(verts, func, zs_format, stencil="one", workers=2, depth_clip=True):
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=False)
    try:
        rt, zs = make_target(screen, ctx, W, H, zs_format=zs_format)
        bind_passthrough(ctx, vs=PASS_VS, fs=PASS_FS)
        rast = pipe.RasterizerState(depth_clip=depth_clip)
        ctx.bind_rasterizer_state(ctx.create_rasterizer_state(rast))
        bind_depth_test(ctx, func)
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 1))
        words = initial_words(zs_format, int(func), stencil)
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, W, H, 1))
        data[0] = words.view(np.uint8).reshape(data[0].shape)
        ctx.transfer_unmap(xfer)
        colour, depth = draw_and_read(ctx, verts, rt, zs)
        return colour.tobytes(), depth.tobytes()
    finally:
        ctx.destroy()


@pytest.fixture
def spy(monkeypatch):
    """Counts run-wide resolutions and key loads; batches of ~1500 candidate
    pixels, so every band's run has many."""
    counts = {"resolve": 0, "load": 0, "alone": 0}
    resolve, load = raster._RunDepth.resolve, raster._RunDepth._load
    one_pass = raster._winners_one_pass

    def one_pass_spy(*a):
        counts["alone"] += 1  # a batch resolved against the buffer by itself
        return one_pass(*a)

    def resolve_spy(self, *a):
        counts["resolve"] += 1
        return resolve(self, *a)

    def load_spy(self):
        counts["load"] += 1
        return load(self)

    monkeypatch.setattr(raster._RunDepth, "resolve", resolve_spy)
    monkeypatch.setattr(raster._RunDepth, "_load", load_spy)
    monkeypatch.setattr(raster, "_winners_one_pass", one_pass_spy)
    monkeypatch.setattr(raster, "SPARSE_PLANE_PIXELS", 1500)
    return counts


def three_ways(monkeypatch, spy, verts, func, zs_format, **kw):
    with monkeypatch.context() as m:
        m.setattr(raster, "RUN_DEPTH_MIN_RATIO", 0.0)
        run = render(verts, func, zs_format, **kw)
    counts = dict(spy)
    with monkeypatch.context() as m:
        m.setattr(raster, "RUN_DEPTH_MIN_RATIO", math.inf)
        batches = render(verts, func, zs_format, **kw)
    assert spy["resolve"] == counts["resolve"] and spy["alone"] > counts["alone"]
    with monkeypatch.context() as m:
        m.setattr(raster, "_depth_winners", lambda *a: None)
        sequential = render(verts, func, zs_format, **kw)
    return run, batches, sequential, counts


@pytest.mark.parametrize(
    "zs_format, stencil",
    [
        (pipe.Format.Z24_UNORM_S8_UINT, "one"),
        (pipe.Format.Z24_UNORM_S8_UINT, "pattern"),
        (pipe.Format.Z16_UNORM, "one"),
        (pipe.Format.X8Z24_UNORM, "one"),
    ],
    ids=["z24s8", "z24s8-stencil-pattern", "z16", "x8z24"],
)
@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_run_wide_winners_equal_batches_and_sequential_test(
    monkeypatch, spy, func, zs_format, stencil
):
    verts = triangles(int(func), 500, 0.08, tie_levels=5)
    run, batches, sequential, counts = three_ways(
        monkeypatch, spy, verts, func, zs_format, stencil=stencil
    )
    assert counts["load"] >= 2  # a run per band (64-row bands: two of them)
    assert counts["resolve"] >= 5 * counts["load"]  # keys carried over many batches
    assert counts["alone"] == 0
    assert run == batches == sequential
    colour = np.frombuffer(run[0], np.uint8).reshape(H, W, 4)
    assert (colour[..., :3] != 0).any(axis=-1).sum() > 2500  # a real scene


@pytest.mark.parametrize("limit", [300, 1000], ids=["batches-past-the-limit", "reloads"])
def test_orders_running_out_reload_the_keys(monkeypatch, spy, limit):
    """A run orders at most RUN_ORDER_LIMIT fragments between loads; a batch
    longer than that resolves alone against the buffer, and the run loads
    its keys again after it."""
    monkeypatch.setattr(raster, "RUN_ORDER_LIMIT", limit)
    verts = triangles(7, 500, 0.08, tie_levels=5)
    func = pipe.CompareFunc.LEQUAL
    run, batches, sequential, counts = three_ways(
        monkeypatch, spy, verts, func, pipe.Format.Z24_UNORM_S8_UINT, stencil="pattern"
    )
    assert counts["load"] > 2 + 2  # more loads than one per band's run
    assert run == batches == sequential
    # batches longer than the limit went alone (and the run reloaded after)
    assert (counts["alone"] > 0) == (limit == 300)


def test_a_batch_resolved_alone_makes_the_run_reload(monkeypatch):
    """Batch A by the run, batch B (longer than the order limit) alone
    against the buffer, batch C by the run again: C must see B's depths."""
    monkeypatch.setattr(raster, "RUN_ORDER_LIMIT", 4)
    layout = depth_layout(pipe.Format.Z16_UNORM)
    zs = SimpleNamespace(layout=layout, words=np.full((4, 8), 100, np.uint16))
    scene = SimpleNamespace(zsbuf=zs, band_rows=4)
    state = SimpleNamespace(
        dsa=SimpleNamespace(depth=SimpleNamespace(func=pipe.CompareFunc.LESS)),
        depth_clamp=(0.0, 1.0),
    )
    run = raster._RunDepth(scene, state, 0, 0, 4)

    def batch(cols, depths):
        px = np.array(cols, np.int64)
        z = np.array(depths, np.float32) / np.float32(65535)
        return raster._depth_winners(scene, state, px, np.ones_like(px), z, run).tolist()

    assert batch([0, 1], [50, 60]) == [0, 1]
    assert batch([0, 2, 3, 4, 5], [40, 99, 100, 101, 30]) == [0, 1, 4]
    assert batch([0, 1], [45, 55]) == [1]  # 45 is behind B's 40, 55 beats A's 60
    assert zs.words[1, :6].tolist() == [40, 55, 99, 100, 100, 30]


@pytest.mark.parametrize("spread", [0.6, 1.6], ids=["inside-the-range", "clamped"])
def test_depths_known_in_range_skip_the_clamp_and_nothing_else(monkeypatch, spread):
    """Without depth clipping, fragments beyond the near and far planes have
    depths outside [0, 1] that the depth test clamps; a draw whose depths all
    lie inside skips the clamp (decided from its bounding boxes' corners)."""
    verts = triangles(21, 500, 0.08, tie_levels=5)  # one depth per triangle
    verts[:, 2] *= spread / 0.8
    decided = []
    in_range = raster._depths_in_range
    monkeypatch.setattr(
        raster, "_depths_in_range", lambda *a: decided.append(in_range(*a)) or decided[-1]
    )
    fmt = pipe.Format.Z24_UNORM_S8_UINT
    fast = render(verts, pipe.CompareFunc.LEQUAL, fmt, depth_clip=False)
    with monkeypatch.context() as m:
        m.setattr(raster, "_depth_winners", lambda *a: None)
        sequential = render(verts, pipe.CompareFunc.LEQUAL, fmt, depth_clip=False)
    assert fast == sequential
    assert decided and set(decided) == {spread < 1}

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
from helpers import (
    PASS_FS,
    PASS_VS,
    bind_depth_test,
    bind_passthrough,
    draw_and_read,
    make_target,
    read_rgba8,
    set_vertices,
    tied_triangles,
)

import workers.raster as raster
from gallium import pipe
from gallium.util.format import depth_layout

FUNCS = [pipe.CompareFunc.LESS, pipe.CompareFunc.LEQUAL, pipe.CompareFunc.GREATER,
         pipe.CompareFunc.GEQUAL]  # fmt: skip
W, H = 160, 128


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
    verts = tied_triangles(int(func), 500, 0.08, tie_levels=5)
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
    verts = tied_triangles(7, 500, 0.08, tie_levels=5)
    func = pipe.CompareFunc.LEQUAL
    run, batches, sequential, counts = three_ways(
        monkeypatch, spy, verts, func, pipe.Format.Z24_UNORM_S8_UINT, stencil="pattern"
    )
    assert counts["load"] > 2 + 2  # more loads than one per band's run
    assert run == batches == sequential
    # batches longer than the limit went alone (and the run reloaded after)
    assert (counts["alone"] > 0) == (limit == 300)


def one_band_run(monkeypatch, word=None):
    """A _RunDepth over a 4x8 Z16 band holding 100 everywhere (LESS, order
    limit 4; ``word``: the band's known word) and a function resolving one
    batch of fragments on row 1 (columns, depths in 16-bit units) -> winners."""
    monkeypatch.setattr(raster, "RUN_ORDER_LIMIT", 4)
    layout = depth_layout(pipe.Format.Z16_UNORM)
    zs = SimpleNamespace(layout=layout, words=np.full((4, 8), 100, np.uint16))
    scene = SimpleNamespace(zsbuf=zs, band_rows=4)
    state = SimpleNamespace(
        dsa=SimpleNamespace(depth=SimpleNamespace(func=pipe.CompareFunc.LESS)),
        depth_clamp=(0.0, 1.0),
    )
    run = raster._RunDepth(scene, state, 0, 0, 4, word=word)

    def batch(cols, depths):
        px = np.array(cols, np.int64)
        z = np.array(depths, np.float32) / np.float32(65535)
        return raster._depth_winners(scene, state, px, np.ones_like(px), z, run).tolist()

    return zs, batch


def test_a_batch_resolved_alone_makes_the_run_reload(monkeypatch):
    """Batch A by the run, batch B (longer than the order limit) alone
    against the buffer, batch C by the run again: C must see B's depths."""
    zs, batch = one_band_run(monkeypatch)

    assert batch([0, 1], [50, 60]) == [0, 1]
    assert batch([0, 2, 3, 4, 5], [40, 99, 100, 101, 30]) == [0, 1, 4]
    assert batch([0, 1], [45, 55]) == [1]  # 45 is behind B's 40, 55 beats A's 60
    assert zs.words[1, :6].tolist() == [40, 55, 99, 100, 100, 30]


@pytest.mark.parametrize("spread", [0.6, 1.6], ids=["inside-the-range", "clamped"])
def test_depths_known_in_range_skip_the_clamp_and_nothing_else(monkeypatch, spread):
    """Without depth clipping, fragments beyond the near and far planes have
    depths outside [0, 1] that the depth test clamps; a draw whose depths all
    lie inside skips the clamp (decided from its bounding boxes' corners)."""
    verts = tied_triangles(21, 500, 0.08, tie_levels=5)  # one depth per triangle
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


# -- a band whose depth/stencil words were just cleared ----------------------

DS = pipe.Clear.DEPTHSTENCIL


def tie_depth(verts: np.ndarray, level: int) -> float:
    """The window depth of the triangles at tie level ``level`` (see
    triangles), computed as the viewport transform computes it."""
    z = np.unique(verts[:, 2])[level]
    return float(np.float32(z) * np.float32(0.5) + np.float32(0.5))


def render_steps(steps, func, zs_format, workers=2):
    """Clears and draws recorded into one scene (one flush): ``steps`` holds
    ("clear", buffers, depth, stencil), ("func", depth func) and ("draw", verts)."""
    screen = get_screen(workers)
    ctx = screen.context_create(threaded=False)
    try:
        rt, zs = make_target(screen, ctx, W, H, zs_format=zs_format)
        bind_passthrough(ctx, vs=PASS_VS, fs=PASS_FS)
        bind_depth_test(ctx, func)
        for step in steps:
            if step[0] == "clear":
                _, buffers, depth, stencil = step
                ctx.clear(buffers, color=(0, 0, 0, 1), depth=depth, stencil=stencil)
            elif step[0] == "func":
                bind_depth_test(ctx, step[1])
            else:
                set_vertices(ctx, step[1])
                ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(step[1])))
        ctx.flush()
        return read_rgba8(ctx, rt).tobytes(), read_rgba8(ctx, zs).tobytes()
    finally:
        ctx.destroy()


@pytest.fixture
def known_loads(monkeypatch, spy):
    """(band's first row, whether the load knew the band's one word) per key load."""
    seen = []
    load = raster._RunDepth._load

    def load_spy(self):
        seen.append((self.y0, self.word is not None))
        return load(self)

    monkeypatch.setattr(raster._RunDepth, "_load", load_spy)
    return seen


def three_ways_steps(monkeypatch, steps, func, zs_format):
    with monkeypatch.context() as m:
        m.setattr(raster, "RUN_DEPTH_MIN_RATIO", 0.0)
        run = render_steps(steps, func, zs_format)
    with monkeypatch.context() as m:
        m.setattr(raster, "RUN_DEPTH_MIN_RATIO", math.inf)
        batches = render_steps(steps, func, zs_format)
    with monkeypatch.context() as m:
        m.setattr(raster, "_depth_winners", lambda *a: None)
        sequential = render_steps(steps, func, zs_format)
    return run, batches, sequential


@pytest.mark.parametrize(
    "zs_format",
    [pipe.Format.Z24_UNORM_S8_UINT, pipe.Format.Z16_UNORM, pipe.Format.X8Z24_UNORM],
    ids=["z24s8", "z16", "x8z24"],
)
@pytest.mark.parametrize("func", FUNCS, ids=lambda f: f.name)
def test_a_cleared_band_loads_the_clear_word(monkeypatch, known_loads, func, zs_format):
    """A draw right after a depth/stencil clear in the same scene: the run
    fills its keys with the cleared word's key instead of converting the
    rows' words; fragments at exactly the cleared depth tie with it (LESS
    and GREATER keep the clear, LEQUAL and GEQUAL take the fragment)."""
    verts = tied_triangles(40 + int(func), 500, 0.08, tie_levels=5)
    steps = [("clear", DS | pipe.Clear.COLOR0, tie_depth(verts, 2), 0x5A), ("draw", verts)]
    run, batches, sequential = three_ways_steps(monkeypatch, steps, func, zs_format)
    assert run == batches == sequential
    assert sorted(set(known_loads)) == [(0, True), (64, True)]  # both bands' first loads
    depth = np.frombuffer(run[1], {pipe.Format.Z16_UNORM: np.uint16}.get(zs_format, np.uint32))
    cleared = np.frombuffer(render_steps(steps[:1], func, zs_format)[1], depth.dtype)
    # the tie level drew over the clear (LEQUAL/GEQUAL) or left it (LESS/GREATER),
    # and other levels beat it: the scene tests both sides of the clear
    assert 0 < np.count_nonzero(depth != cleared) < depth.size


def test_only_the_first_draw_after_a_whole_word_clear_knows_the_band(monkeypatch, known_loads):
    """A colour clear keeps what is known; a draw touching the band, or a
    depth-only clear of a format with stencil (the stencil bits are kept),
    leaves the band's words unknown until the next depth-and-stencil clear."""
    a, b, c, d = (tied_triangles(50 + k, 200, 0.08, tie_levels=5) for k in range(4))
    depth = tie_depth(a, 2)
    steps = [
        ("clear", DS, depth, 0x5A),
        ("clear", pipe.Clear.COLOR0, 0.0, 0),
        ("draw", a),
        ("func", pipe.CompareFunc.LESS),  # (b is a draw command of its own)
        ("draw", b),
        ("clear", pipe.Clear.DEPTH, depth, 0),
        ("draw", c),
        ("clear", DS, tie_depth(d, 3), 0x3C),
        ("draw", d),
    ]
    fmt = pipe.Format.Z24_UNORM_S8_UINT
    run, batches, sequential = three_ways_steps(monkeypatch, steps, pipe.CompareFunc.LEQUAL, fmt)
    assert run == batches == sequential
    for y0 in (0, 64):
        assert [k for y, k in known_loads if y == y0] == [True, False, False, True]


def test_a_batch_alone_first_makes_a_cleared_run_read_the_buffer(monkeypatch):
    """A run that knows its band's one word, whose first batch is longer
    than the order limit and resolves alone: the next batch's keys come
    from the words that batch wrote, not from the cleared word."""
    zs, batch = one_band_run(monkeypatch, word=100)

    assert batch([0, 2, 3, 4, 5], [40, 99, 100, 101, 30]) == [0, 1, 4]  # alone
    assert batch([0, 1], [45, 55]) == [1]  # 45 is behind the 40 written alone
    assert zs.words[1, :6].tolist() == [40, 55, 99, 100, 100, 30]


def test_a_run_after_a_dense_triangle_reads_the_buffer(monkeypatch, known_loads):
    """One draw after a clear: small triangles, a big one (rasterized as a
    dense rectangle, which writes depth), small ones again.  Only the first
    run knows the cleared word; the second reads what the big one wrote."""
    monkeypatch.setattr(raster, "DENSE_MIN_PIXELS", 4096)  # a band is 160 x 64 here
    small = tied_triangles(71, 400, 0.08, tie_levels=5)
    big = np.zeros((3, 8), np.float32)
    big[:, :2] = [(-1.0, -1.0), (3.0, -1.0), (-1.0, 3.0)]
    big[:, 2] = -0.5  # in front of some small triangles, behind others
    big[:, 3:] = (1.0, 0.2, 0.4, 0.6, 1.0)
    verts = np.concatenate([small[:600], big, small[600:]])
    steps = [("clear", DS, tie_depth(small, 2), 0x5A), ("draw", verts)]
    fmt = pipe.Format.Z24_UNORM_S8_UINT
    run, batches, sequential = three_ways_steps(monkeypatch, steps, pipe.CompareFunc.LESS, fmt)
    assert run == batches == sequential
    for y0 in (0, 64):
        assert [k for y, k in known_loads if y == y0] == [True, False]

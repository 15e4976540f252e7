"""How the sparse path cuts a run of small triangles into batches
(``workers.raster._sparse_run``): pass-through pixel lists in batches of up to
SPARSE_PLANE_PIXELS candidate pixels, shaded ones of up to 4 * SPARSE_MAX_QUADS;
where the cuts fall never changes a byte of colour or depth."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import FS_MUL_ONE, bind_depth_test, bind_passthrough, make_target, set_vertices

import workers.raster as raster
from gallium import pipe


def small_triangles(n, seed):
    rng = np.random.default_rng(seed)
    centre = rng.uniform(-0.95, 0.95, (n, 1, 2))
    pos = centre + rng.uniform(-0.12, 0.12, (n, 3, 2))
    z = rng.uniform(0.05, 0.95, (n, 3, 1))
    colour = rng.uniform(0.0, 1.0, (n, 3, 4))
    colour[..., 3] = 1.0
    w = np.ones((n, 3, 1))
    return np.concatenate([pos, z, w, colour], axis=2).reshape(-1, 8).astype(np.float32)


def render(screen, verts, fs=None):
    ctx = screen.context_create(threaded=False)
    try:
        rt, zs = make_target(screen, ctx, 160, 128, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        if fs is None:
            bind_passthrough(ctx)
        else:
            bind_passthrough(ctx, fs=fs)
        bind_depth_test(ctx)
        ctx.clear(pipe.Clear.COLOR0 | pipe.Clear.DEPTHSTENCIL, color=(0, 0, 0, 1), depth=1.0)
        set_vertices(ctx, verts)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
        ctx.flush()
        out = []
        for res in (rt, zs):
            data, xfer = ctx.transfer_map(
                res, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 160, 128, 1)
            )
            out.append(np.array(data[0]))
            ctx.transfer_unmap(xfer)
        return out
    finally:
        ctx.destroy()


@pytest.fixture
def batches(monkeypatch):
    """The triangle count of every pixel-list batch rasterized, in order."""
    sizes: list[int] = []
    real = raster._pixel_batch

    def spy(scene, state, ts, ids, *args, **kw):
        sizes.append(ids.size)
        return real(scene, state, ts, ids, *args, **kw)

    monkeypatch.setattr(raster, "_pixel_batch", spy)
    return sizes


@pytest.mark.parametrize("shaded", [False, True], ids=["pass-through", "shaded"])
def test_batch_cuts_change_no_byte(screen, monkeypatch, batches, shaded):
    verts = small_triangles(600, 7)
    fs = FS_MUL_ONE if shaded else None
    whole = render(screen, verts, fs)
    whole_batches = list(batches)
    batches.clear()
    monkeypatch.setattr(raster, "SPARSE_PLANE_PIXELS", 512)
    monkeypatch.setattr(raster, "SPARSE_MAX_QUADS", 128)
    cut = render(screen, verts, fs)
    assert whole[0].tobytes() == cut[0].tobytes()
    assert whole[1].tobytes() == cut[1].tobytes()
    # the default bounds take each band's run in one batch; the small ones cut it
    assert len(whole_batches) == 2 and sum(whole_batches) == sum(batches)
    assert len(batches) > 20
    # not vacuous: most pixels drawn, many depths written
    assert (whole[0][..., :3] != 0).any(axis=-1).mean() > 0.3
    assert len(np.unique(whole[1].view(np.uint32))) > 1000


def test_only_pass_through_pixel_lists_take_the_big_batches(screen, monkeypatch, batches):
    verts = small_triangles(600, 8)
    # a bound between the two: pass-through stays whole, shaded is cut
    monkeypatch.setattr(raster, "SPARSE_MAX_QUADS", 256)
    render(screen, verts)
    assert len(batches) == 2
    batches.clear()
    render(screen, verts, FS_MUL_ONE)
    assert len(batches) > 2

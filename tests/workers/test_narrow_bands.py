"""Narrow bands for scenes of many medium-sized triangles
(Scene.wants_narrow_bands): the rule on the bench scenes' shapes, the bands
re-cut at flush (markers' per-band times with them), and the same bytes,
occlusion count and timestamps as the wide bands."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest
from helpers import make_target, read_rgba8, record_tied_layers

import gallium.numpipe.scene as scene_mod
import workers.band as band_mod
from gallium import pipe


def fake_draw(count, box):
    """A joined draw of ``count`` triangles whose bounding boxes are ``box``."""
    x0, y0, x1, y1 = box
    bbox = np.tile(np.array([[x0, y0, x1, y1]], np.int32), (count, 1))
    return scene_mod.DrawCmd(NS(), [], tris=NS(count=count, bbox=bbox))


@pytest.mark.parametrize(
    "draws, narrow",
    [
        # medium: 10,000 triangles of 25x25 box pixels
        ([fake_draw(10_000, (0, 0, 24, 24))], True),
        # small: 100,000 of 4x4 (their cost is per triangle)
        ([fake_draw(100_000, (0, 0, 3, 3))], False),
        # the fill's two full-screen halves, and 16 blended layers
        ([fake_draw(2, (0, 0, 1023, 1023))], False),
        ([fake_draw(32, (0, 0, 1023, 1023))], False),
        # medium triangles covering the framebuffer less than once
        ([fake_draw(1600, (0, 0, 24, 24))], False),
        # medium triangles over a full-screen background, in two draws
        ([fake_draw(2, (0, 0, 1023, 1023)), fake_draw(10_000, (0, 0, 24, 24))], True),
        # boxes of exactly 64 pixels (8x8) covering the framebuffer twice
        ([fake_draw(32_768, (0, 0, 7, 7))], True),
        ([fake_draw(32_768, (0, 0, 6, 8))], False),  # 63 pixels each
    ],
    ids=["medium", "small", "fill", "blend", "sparse", "background", "64px", "63px"],
)
def test_the_rule_on_scene_shapes(draws, narrow):
    scene = scene_mod.Scene(1024, 1024, [], None)
    scene.commands.extend(draws)
    assert scene.wants_narrow_bands() == narrow


def test_band_heights():
    assert scene_mod.band_height(1024, 1024) == 512
    assert scene_mod.narrow_band_height(1024, 1024) == 128
    assert scene_mod.narrow_band_height(4096, 4096) == 64  # at least one tile row
    assert scene_mod.narrow_band_height(300, 300) == 128  # at most half the height


W, H = 256, 256
SMALL_BANDS = 1 << 14  # 64-row narrow bands at 256 pixels across (the wide ones: 128)


def render(screen, monkeypatch, narrow: bool, threaded: bool):
    """Clear, 2,000 medium triangles under an occlusion query, a timestamp,
    300 blended ones; returns colour and depth bytes, the count, (before,
    the timestamp, after) and the band counts the scenes ran with."""
    monkeypatch.setattr(scene_mod, "NARROW_BAND_PIXELS", SMALL_BANDS)
    if not narrow:
        monkeypatch.setattr(scene_mod.Scene, "wants_narrow_bands", lambda self: False)
    bands = []
    real = band_mod.execute_band

    def spy(scene, band):
        bands.append(scene.nbands)
        return real(scene, band)

    monkeypatch.setattr(band_mod, "execute_band", spy)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, W, H, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        ctx.flush().wait(None)
        before = screen.get_timestamp()
        occ, stamp = record_tied_layers(ctx, (5, 2000, 0.06), (6, 300, 0.08), tie_levels=9)
        ctx.flush().wait(None)
        after = screen.get_timestamp()
        colour, depth = read_rgba8(ctx, rt), read_rgba8(ctx, zs)
        count = ctx.get_query_result(occ)[1]
        ts = ctx.get_query_result(stamp)[1]
    finally:
        ctx.destroy()
    return colour.tobytes(), depth.tobytes(), count, (before, ts, after), bands


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_narrow_bands_give_the_same_results(screen, monkeypatch, threaded):
    *wide, _, wide_bands = render(screen, monkeypatch, False, threaded)
    monkeypatch.undo()
    *narrow, times, bands = render(screen, monkeypatch, True, threaded)
    assert sorted(set(wide_bands)) == [2] and len(wide_bands) == 2  # 128-row bands
    assert sorted(set(bands)) == [4] and len(bands) == 4  # 64-row bands
    assert narrow == wide
    assert narrow[2] > 0  # the query counted fragments
    before, ts, after = times
    assert before <= ts <= after  # every band's marker time was kept


def test_narrow_bands_in_band_processes(screen, monkeypatch):
    """The re-cut bands travel to the band processes: the same results."""
    import gallium
    from workers import bandproc, shared

    if not shared.available():
        pytest.skip("no band processes on this system (memfd_create and /proc)")
    *want, _, _ = render(screen, monkeypatch, False, False)
    monkeypatch.undo()
    procs = gallium.create_screen(num_threads=2, processes=True)
    try:
        monkeypatch.setattr(bandproc, "MIN_WORK_MS", 0.0)
        *got, times, bands = render(procs, monkeypatch, True, False)
        assert bands == []  # not one band on the worker threads
        assert sum(procs.pool.process_units) == 4
    finally:
        procs.destroy()
    assert got == want
    before, ts, after = times
    assert before <= ts <= after


def test_recut_resizes_markers():
    scene = scene_mod.Scene(1024, 1024, [], None)
    marker = scene.add_marker(lambda: 7)
    scene.commands.append(fake_draw(10_000, (0, 0, 24, 24)))
    assert (scene.nbands, marker.band_ns.size) == (2, 2)
    scene.finish_recording()
    assert (scene.band_rows, scene.nbands) == (128, 8)
    assert marker.band_ns.size == 8
    for band in range(8):
        marker.run(band)
    assert marker.time_ns == 7

"""Traces of the fixed-function and layered reference scenes replay bit for bit.

The 119 fixed-function scenes (polygon offset, fill modes, two-sided colour,
stipple, smooth primitives, logic ops, integer and float targets, clamps) and
the layered scenes (LAYER / VIEWPORT_INDEX from vertex, tessellation and
geometry shaders, viewport arrays with scissors and depth ranges) are recorded
on contexts of their own, threaded and direct in turn; each scene's flush ends
a frame, whose colour and depth buffers the replay must reproduce exactly --
every state those scenes set travels through the trace.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from gallium import trace

HERE = Path(__file__).resolve().parent
for p in (HERE, HERE.parent):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import ffrender  # noqa: E402
import layerref  # noqa: E402
from ff_scenes import all_scenes as ff_scenes  # noqa: E402
from recordings import traced_screen  # noqa: E402

FF = ff_scenes()
LAYERS = [s for s in layerref.scenes.scenes() if s.samples == 1]


def _record(path: Path, scenes: list, render) -> list:
    screen = traced_screen(path)
    out = []
    for i, scene in enumerate(scenes):
        ctx = screen.context_create(threaded=i % 2 == 0)
        out.append(render(screen, ctx, scene))
        ctx.flush().wait(None)  # (the frame's end: the layered scenes do not flush)
        ctx.destroy()
    screen.destroy()
    return out


@pytest.fixture(scope="module")
def ff_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "ff.trace"
    return path, _record(path, FF, ffrender.render)


@pytest.fixture(scope="module")
def layer_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "layers.trace"
    return path, _record(path, LAYERS, layerref.render)


def _frames(path: Path, threaded: bool) -> list:
    with trace.Replayer(path, threaded=threaded, targets=True) as r:
        return list(r.frames())


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_fixed_function_scenes_replay_bit_identical(ff_trace, threaded):
    path, recorded = ff_trace
    frames = _frames(path, threaded)
    assert len(frames) == len(FF)
    for scene, (color, depth), frame in zip(FF, recorded, frames):
        raw_depth = frame.targets["zsbuf"][1] if scene.depth else None
        got_color, got_depth = ffrender.decode(scene, frame.targets["cbuf0"][1], raw_depth)
        assert got_color.dtype == color.dtype, scene.name
        # (float targets compared as bits: NaN == NaN, -0 != +0)
        assert np.array_equal(got_color.view(np.uint8), color.view(np.uint8)), scene.name
        if depth is None:
            assert got_depth is None, scene.name
        else:
            assert np.array_equal(got_depth.view(np.uint8), depth.view(np.uint8)), scene.name


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_layered_scenes_replay_bit_identical(layer_trace, threaded):
    path, recorded = layer_trace
    frames = _frames(path, threaded)
    assert len(frames) == len(LAYERS)
    h, w = layerref.H, layerref.W
    for scene, (color, depth), frame in zip(LAYERS, recorded, frames):
        # the frame's outputs are the first layer of each bound surface
        got = frame.targets["cbuf0"][1][:h, :w]
        assert np.array_equal(got, color[0, 0]), scene.name
        if depth is not None:
            got_depth = frame.targets["zsbuf"][1][:h, :w].view(np.float32).reshape(h, w)
            assert np.array_equal(got_depth.view(np.uint32), depth[0].view(np.uint32)), scene.name


def test_the_scenes_differ_from_each_other(ff_trace, layer_trace):
    """(The comparisons above would pass for a replay that drew one scene
    everywhere only if the scenes were alike: they are not.)"""
    for _, recorded in (ff_trace, layer_trace):
        colours = {np.ascontiguousarray(c).tobytes() for c, _ in recorded}
        assert len(colours) > len(recorded) // 2

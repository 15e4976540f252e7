"""numpipe against llvmpipe on fixed-function state: polygon offset, fill
modes, two-sided colour, provoking vertex, clamps, depth clamp.

The goldens under tests/reference/ff/ were rendered by Mesa 22.3's llvmpipe
through a GL compatibility profile (tools/make_ff_reference.py); the scenes
are defined once in tests/reference/ff_scenes.py.  Depth buffers must hold
the same words, colour buffers the same bytes.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from ff_scenes import all_scenes
from ffrender import load, render

SCENES = all_scenes()


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_matches_llvmpipe(scene, threaded):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        color, depth = render(screen, ctx, scene)
    finally:
        ctx.destroy()
    ref_color, ref_depth = load(scene)
    if depth is not None:
        diff = int(np.count_nonzero(depth != ref_depth))
        assert diff == 0, f"{diff} depth words differ"
    if color.dtype != np.float32:
        diff = int(np.count_nonzero((color != ref_color).any(axis=-1)))
        assert diff == 0, f"{diff} pixels differ"
    else:
        # float targets: interpolated colours within 1e-6 (numpipe evaluates
        # attribute planes as (a0 + dadx*x) + dady*y, llvmpipe fuses the
        # multiply-adds: a rounding or two of the terms, ~1e-7 each);
        # clamped values and coverage exactly
        assert np.array_equal(np.isnan(color), np.isnan(ref_color))
        assert float(np.abs(color - ref_color).max()) <= 1e-6
        for edge in (0.0, 1.0):
            assert np.array_equal(color == edge, ref_color == edge)


def test_scenes_draw_something():
    """Every golden has content (guards against a vacuous comparison)."""
    for scene in SCENES:
        color, _ = load(scene)
        clear = np.asarray(scene.clear_color, np.float32)
        if color.dtype == np.uint8:
            clear = np.rint(clear * 255).astype(np.uint8)
        elif color.dtype != np.float32:
            clear = clear.astype(color.dtype)
        changed = int((color != clear).any(axis=-1).sum())
        if scene.logic_op == "noop":  # (the destination kept: the clear colour, exactly)
            assert changed == 0, scene.name
        else:
            assert changed >= 20, scene.name


@pytest.mark.parametrize("scene", SCENES[::3], ids=[s.name for s in SCENES[::3]])
def test_identical_for_one_or_two_workers(scene):
    out = []
    for workers in (1, 2):
        screen = get_screen(workers)
        ctx = screen.context_create(threaded=workers == 2)
        try:
            out.append(render(screen, ctx, scene))
        finally:
            ctx.destroy()
    assert np.array_equal(out[0][0], out[1][0])
    if out[0][1] is not None:
        assert np.array_equal(out[0][1], out[1][1])

"""numpipe against Mesa's llvmpipe: coverage identical, colour within 1.

The PNGs under tests/reference/ were rendered by llvmpipe (tools/make_reference.py,
`make reference`); the scenes are defined once in tests/reference/scenes.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from refrender import load_reference, render
from scenes import all_scenes

SCENES = all_scenes()


def _clear_bytes(scene):
    return np.rint(np.asarray(scene.clear_color, np.float32) * 255).astype(np.uint8)


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_matches_llvmpipe(scene, threaded):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        img = render(screen, ctx, scene)
    finally:
        ctx.destroy()
    ref = load_reference(scene.name)
    assert img.shape == ref.shape == (scene.height, scene.width, 4)
    clear = _clear_bytes(scene)
    covered_np = (img != clear).any(axis=-1)
    covered_lp = (ref != clear).any(axis=-1)
    assert np.array_equal(covered_np, covered_lp), (
        f"{int((covered_np != covered_lp).sum())} pixels differ in coverage"
    )
    diff = np.abs(img.astype(np.int16) - ref.astype(np.int16))
    assert int(diff.max()) <= 1


def test_reference_scenes_cover_pixels():
    # Guard against a vacuous comparison: every reference image has real content.
    for scene in SCENES:
        ref = load_reference(scene.name)
        covered = (ref != _clear_bytes(scene)).any(axis=-1).sum()
        assert covered > scene.width * scene.height // 5, scene.name


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_identical_for_any_worker_count_and_threading(scene):
    images = []
    for workers in (1, 2, 4):
        screen = get_screen(workers)
        for threaded in (False, True):
            ctx = screen.context_create(threaded=threaded)
            try:
                images.append(render(screen, ctx, scene))
            finally:
                ctx.destroy()
    for img in images[1:]:
        assert np.array_equal(img, images[0])


def test_z32_float_depth_gives_same_image_as_z24():
    from scenes import depth_overlap

    from gallium import pipe

    scene = depth_overlap()
    screen = get_screen(2)
    ctx = screen.context_create(threaded=False)
    try:
        a = render(screen, ctx, scene, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        b = render(screen, ctx, scene, zs_format=pipe.Format.Z32_FLOAT)
    finally:
        ctx.destroy()
    # No two triangles of the scene are within one Z24 step of each other, so
    # the depth format must not change which triangle wins anywhere.
    assert np.array_equal(a, b)

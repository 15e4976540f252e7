"""Multisampled scenes against Mesa's llvmpipe, resolved by blit.

tests/reference/msaa_scenes.py describes each scene (4 samples: slivers and
shared edges, depth, per-sample shading with SAMPLEID, alpha-to-coverage,
alpha-to-one, the sample mask, SAMPLEMASK in and out, CENTROID inputs);
tools/make_msaa_reference.py rendered them on llvmpipe and resolved them
with glBlitFramebuffer.  numpipe draws them through its Gallium API and
resolves with ``pipe_context::blit``: coverage must be identical and colour
within 1 (they come out identical).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from msaa_scenes import load, scenes  # type: ignore[import-not-found]
from msaaref import render

SCENES = scenes()


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_resolved_scene_matches_llvmpipe(scene, threaded):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        img = render(screen, ctx, scene)
    finally:
        ctx.destroy()
    ref = load(scene.name)
    assert img.shape == ref.shape == (scene.height, scene.width, 4)
    covered_np = img.any(axis=-1)
    covered_lp = ref.any(axis=-1)
    assert np.array_equal(covered_np, covered_lp)
    assert int(np.abs(img.astype(np.int16) - ref).max()) <= 1


def test_references_have_partial_coverage():
    # every scene has edge pixels whose resolve mixes samples (values that
    # a single-sample render cannot produce): the comparisons test samples
    for scene in SCENES:
        ref = load(scene.name)
        alpha = ref[..., 3]
        assert ((alpha > 0) & (alpha < 255)).sum() > 50, scene.name


@pytest.mark.parametrize(
    "name", ["slivers", "depth", "sample_shading", "alpha_to_coverage", "centroid"]
)
def test_same_samples_for_any_worker_count(name):
    scene = next(s for s in SCENES if s.name == name)
    images = []
    for workers in (0, 1, 2):
        screen = get_screen(workers)
        for threaded in (False, True):
            ctx = screen.context_create(threaded=threaded)
            try:
                ms = render(screen, ctx, scene, resolve=False)
                ctx.flush().wait()
                images.append(
                    np.stack([ms.typed_view(np.uint32, 1, sample=s) for s in range(4)]).copy()
                )
            finally:
                ctx.destroy()
    for img in images[1:]:
        assert np.array_equal(img, images[0])

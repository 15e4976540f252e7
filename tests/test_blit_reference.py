"""Blits, mipmaps and texture clears against Mesa's llvmpipe (glBlitFramebuffer,
glGenerateMipmap, glClearTexSubImage).

The cases live in tests/reference/blit_cases.py; tools/make_blit_reference.py
ran them on llvmpipe and stored the destination textures under
tests/reference/blit/.  Here numpipe makes the same textures, issues the
``pipe_blit_info`` Mesa's state tracker derives from each GL call (unclipped
boxes, the clipped destination as the scissor), ``generate_mipmap`` or
``clear_texture``, and compares the bytes: identical everywhere except sRGB encodes (llvmpipe
approximates the power curve with reciprocal square roots: within 1).
"""

from __future__ import annotations

import numpy as np
import pytest
from blit_cases import FAMILIES, clear_cases, load, mipmap_cases  # type: ignore[import-not-found]
from blitref import run_blit, run_clear, run_mipmap
from conftest import get_screen

CASES = [(family, case) for family, make in FAMILIES.items() for case in make()]
MIPMAPS = mipmap_cases()
CLEARS = clear_cases()


def _tolerance(case) -> int:
    encodes_srgb = case.srgb and case.dst.fmt == "srgb8_a8"
    return 1 if encodes_srgb else 0


@pytest.fixture(scope="module")
def refs():
    return {family: load(family) for family in [*FAMILIES, "mipmap", "clear_texture"]}


@pytest.mark.parametrize("family,case", CASES, ids=[f"{f}-{c.name}" for f, c in CASES])
def test_blit_matches_llvmpipe(refs, family, case):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=True)
    try:
        out = run_blit(screen, ctx, case)
    finally:
        ctx.destroy()
    ref = refs[family][case.name]
    assert out.shape == ref.shape and out.dtype == ref.dtype
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    assert diff.max() <= _tolerance(case), f"{int((diff > 0).sum())} values differ"


@pytest.mark.parametrize("case", MIPMAPS, ids=[c.name for c in MIPMAPS])
def test_generate_mipmap_matches_llvmpipe(refs, case):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=False)
    try:
        levels = run_mipmap(screen, ctx, case)
    finally:
        ctx.destroy()
    assert len(levels) == case.image.levels
    for key, out in levels.items():
        ref = refs["mipmap"][key]
        assert out.shape == ref.shape
        assert np.array_equal(out, ref), key


@pytest.mark.parametrize("case", CLEARS, ids=[c.name for c in CLEARS])
def test_clear_texture_matches_llvmpipe(refs, case):
    screen = get_screen(2)
    ctx = screen.context_create(threaded=True)
    try:
        out = run_clear(screen, ctx, case)
    finally:
        ctx.destroy()
    ref = refs["clear_texture"][case.name]
    assert out.shape == ref.shape
    assert np.array_equal(out, ref)
    assert not np.array_equal(out, case.image.level_data(case.level))


def test_references_are_not_trivial(refs):
    # each blit changed its destination, and every generated level differs
    # from the zeros it started as: the comparisons above are not vacuous
    from blit_cases import gl_blit_to_pipe  # type: ignore[import-not-found]

    blits = changed = 0
    for family, case in CASES:
        before = case.dst.level_data(case.dst_level)
        after = refs[family][case.name]
        if gl_blit_to_pipe(case) is not None:
            blits += 1
            changed += not np.array_equal(before, after)
    assert blits >= 180 and changed == blits
    for case in MIPMAPS:
        for level in range(1, case.image.levels):
            assert np.any(refs["mipmap"][f"{case.name}/{level}"] != 0), (case.name, level)


@pytest.mark.parametrize("workers", [0, 1], ids=["inline", "one-worker"])
def test_same_bytes_for_any_worker_count(workers):
    # the biggest cases, on the other pool sizes and the direct context
    picked = [c for _, c in CASES if c.name in ("down2_linear", "overhang_dst_linear")]
    picked += [c for _, c in CASES if c.name.startswith("3d_to")][:1]
    screen = get_screen(workers)
    for case in picked:
        ref = None
        for threaded in (False, True):
            ctx = screen.context_create(threaded=threaded)
            try:
                out = run_blit(screen, ctx, case)
            finally:
                ctx.destroy()
            if ref is None:
                ref = out
            assert np.array_equal(out, ref)
        ctx = get_screen(2).context_create(threaded=True)
        try:
            assert np.array_equal(run_blit(get_screen(2), ctx, case), ref)
        finally:
            ctx.destroy()

"""The bits of a depth word outside its depth and stencil fields (Z24X8_UNORM's
top byte, X8Z24_UNORM's bottom one) hold whatever an upload or a copy put
there; depth tests compare the depth field only, on every path (dense
constant and sloped depths tested before shading, the sparse path's
closed-form winners, the test after shading that alpha test forces).
Z24_UNORM_S8_UINT with a stencil the test does not use is the control."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices, tied_triangles

from gallium import pipe

W = H = 96
FORMATS = {
    # format: (depth field shift, where the other byte goes)
    pipe.Format.Z24X8_UNORM: (0, 24),
    pipe.Format.X8Z24_UNORM: (8, 0),
    pipe.Format.Z24_UNORM_S8_UINT: (0, 24),
}


def depth_words(fmt, junk: bool) -> np.ndarray:
    """A depth gradient (0.2 .. 0.8 across the target) and, when ``junk``,
    a different non-zero byte in every pixel's other bits."""
    zshift, other = FORMATS[fmt]
    y, x = np.mgrid[0:H, 0:W]
    d = 0.2 + 0.6 * (x + y) / (W + H - 2)
    z = np.rint(d * 0xFFFFFF).astype(np.uint32) << np.uint32(zshift)
    if junk:
        z |= ((x * 7 + y * 13) % 255 + 1).astype(np.uint32) << np.uint32(other)
    return z


def quad(z_left, z_right, colour):
    a, b, c, d = ([x, y, z, 1.0, *colour] for x, y, z in (
        (-1, -1, z_left), (1, -1, z_right), (1, 1, z_right), (-1, 1, z_left)))  # fmt: skip
    return [a, b, c, a, c, d]


DRAWS = {
    "dense constant": quad(0.0, 0.0, (1, 0, 0, 1)),  # window z 0.5
    "dense sloped": quad(-0.6, 0.6, (0, 1, 0, 1)),  # window z 0.2 .. 0.8
    "sparse": tied_triangles(11, 4000, 0.03, tie_levels=64).tolist(),
}


def render(screen, fmt, verts, junk, threaded=False, alpha_test=False):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, W, H, zs_format=fmt)
        bind_passthrough(ctx)
        dsa = pipe.DepthStencilAlphaState(
            depth=pipe.DepthState(enabled=True, writemask=True, func=pipe.CompareFunc.LESS)
        )
        if alpha_test:  # passes every fragment, but takes the general path
            dsa.alpha = pipe.AlphaState(enabled=True, func=pipe.CompareFunc.ALWAYS)
        ctx.bind_depth_stencil_alpha_state(ctx.create_depth_stencil_alpha_state(dsa))
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        data, xfer = ctx.transfer_map(zs, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, W, H, 1))
        data[0] = depth_words(fmt, junk).view(np.uint8).reshape(H, W, 4)
        ctx.transfer_unmap(xfer)
        set_vertices(ctx, verts)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=len(verts)))
        ctx.flush()
        colour = read_rgba8(ctx, rt)
        depth = read_rgba8(ctx, zs).view(np.uint32)[..., 0]
    finally:
        ctx.destroy()
    zshift, _ = FORMATS[fmt]
    return colour, (depth >> np.uint32(zshift)) & np.uint32(0xFFFFFF)


@pytest.mark.parametrize("fmt", list(FORMATS), ids=lambda f: f.name)
@pytest.mark.parametrize("draw", [*DRAWS, "general"])
def test_other_bits_never_change_the_depth_test(screen, fmt, draw):
    verts = DRAWS["dense sloped" if draw == "general" else draw]
    alpha = draw == "general"
    want, want_z = render(screen, fmt, verts, junk=False, alpha_test=alpha)
    got, got_z = render(screen, fmt, verts, junk=True, alpha_test=alpha, threaded=True)
    assert np.array_equal(got, want)
    assert np.array_equal(got_z, want_z)
    # not vacuous: the test passes some of the pixels and fails others
    drawn = (want[..., :3] != 0).any(axis=-1).mean()
    assert 0.1 < drawn < 0.9, drawn

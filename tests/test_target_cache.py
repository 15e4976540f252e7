"""A context makes a surface's colour target (views of its storage) once and
reuses it while the surface and the resource's storage stay the same objects
(the depth/stencil target too, while the framebuffer's size stays the same);
the packed clear colour is kept on the target for the next clear to the same
colour.  Every change shows up in the pixels."""

from __future__ import annotations

import numpy as np
from helpers import make_target, read_rgba8

from gallium import pipe


def frame(ctx, colour):
    ctx.clear(pipe.Clear.COLOR0, color=colour)
    ctx.flush().wait(10)


def test_targets_follow_the_surface_and_its_storage(screen):
    ctx = screen.context_create(threaded=False)
    try:
        rt, _ = make_target(screen, ctx, 16, 8)
        frame(ctx, (1.0, 0.0, 0.0, 1.0))
        (first,) = ctx._targets.values()
        assert (read_rgba8(ctx, rt) == [255, 0, 0, 255]).all()
        frame(ctx, (0.0, 1.0, 0.0, 1.0))  # another colour: packed again
        assert (read_rgba8(ctx, rt) == [0, 255, 0, 255]).all()
        (again,) = ctx._targets.values()
        assert again[2] is first[2]  # the same surface and storage: the same target

        old = rt.storage
        rt.replace_storage(np.zeros_like(old))  # (what a DISCARD map of a busy resource does)
        frame(ctx, (0.0, 0.0, 1.0, 1.0))
        (swapped,) = ctx._targets.values()
        assert swapped[2] is not first[2]
        assert (read_rgba8(ctx, rt) == [0, 0, 255, 255]).all()
        assert (old.reshape(-1, 4)[: 16 * 8 // 2] == [0, 255, 0, 255]).all()  # untouched

        other, _ = make_target(screen, ctx, 16, 8)  # a new surface bound
        frame(ctx, (0.0, 0.0, 1.0, 1.0))
        (fresh,) = ctx._targets.values()
        assert fresh[2] is not swapped[2] and len(ctx._targets) == 1
        assert (read_rgba8(ctx, other) == [0, 0, 255, 255]).all()
    finally:
        ctx.destroy()


def depth_frame(ctx, depth):
    ctx.clear(pipe.Clear.DEPTHSTENCIL, depth=depth, stencil=0x5A)
    ctx.flush().wait(10)


def read_words(ctx, res):
    return read_rgba8(ctx, res).view(np.uint32)[..., 0]


def test_the_depth_target_follows_the_surface_its_storage_and_the_size(screen):
    ctx = screen.context_create(threaded=False)
    try:
        zs_fmt = pipe.Format.Z24_UNORM_S8_UINT
        _, zs = make_target(screen, ctx, 16, 8, zs_format=zs_fmt)
        depth_frame(ctx, 1.0)
        first = ctx._zs_target[3]
        assert (read_words(ctx, zs) == 0x5AFFFFFF).all()
        depth_frame(ctx, 0.0)
        assert ctx._zs_target[3] is first  # the same surface, storage and size
        assert (read_words(ctx, zs) == 0x5A000000).all()

        old = zs.storage
        zs.replace_storage(np.zeros_like(old))
        depth_frame(ctx, 1.0)
        swapped = ctx._zs_target[3]
        assert swapped is not first
        assert (read_words(ctx, zs) == 0x5AFFFFFF).all()
        assert (old.view(np.uint32)[: 16 * 8] == 0x5A000000).all()  # untouched

        # a smaller framebuffer over the same surfaces: a target of its size
        fb = ctx._fb
        ctx.set_framebuffer_state(
            pipe.FramebufferState(width=8, height=4, cbufs=list(fb.cbufs), zsbuf=fb.zsbuf)
        )
        depth_frame(ctx, 0.0)
        small = ctx._zs_target[3]
        assert small is not swapped and small.words.shape == (4, 8)
        words = read_words(ctx, zs)
        assert (words[:4, :8] == 0x5A000000).all() and (words[4:] == 0x5AFFFFFF).all()

        _, other = make_target(screen, ctx, 16, 8, zs_format=zs_fmt)  # a new surface
        depth_frame(ctx, 0.0)
        assert ctx._zs_target[3] is not small
        assert (read_words(ctx, other) == 0x5A000000).all()
    finally:
        ctx.destroy()

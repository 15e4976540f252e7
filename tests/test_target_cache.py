"""A context makes a surface's colour target (views of its storage) once and
reuses it while the surface and the resource's storage stay the same objects;
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

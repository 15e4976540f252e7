"""What a long-lived context must not keep: leaks the stress soak (stress/soak.py) found.

Each test makes and destroys objects on one context, as a long-running
program does, and checks by weak reference that none of them outlives its
destroy call, its draws and a flush.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
from helpers import PASS_VS, bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe

# a constant colour; each test's shaders differ in it (every one a new program)
FS_CONSTANT = """FRAG
DCL OUT[0], COLOR
IMM[0] FLT32 {{{0!r}, 0.0, 1.0, 1.0}}
  0: MOV OUT[0], IMM[0]
  1: END
"""
COVER = [[-1, -1, 0, 1, 0, 0, 0, 1], [3, -1, 0, 1, 0, 0, 0, 1], [-1, 3, 0, 1, 0, 0, 0, 1]]


def test_destroyed_fragment_shaders_are_not_kept_by_the_context(ctx, screen):
    """Before: the direct context memoised each fragment shader's input layout
    in a dict keyed by the CSO and never dropped an entry, so every fragment
    shader ever drawn stayed alive with its compiled kernel (~20-50 KiB each)
    for the context's lifetime (the soak: ~5 MiB a minute).  Two holders kept
    the last frame's objects until the next frame: the binner's per-scene
    fragment templates, and on the threaded context the last batch's calls
    (with their arguments) after the driver thread had run them."""
    rt, _ = make_target(screen, ctx, 8, 8)
    bind_passthrough(ctx, vs=PASS_VS)
    set_vertices(ctx, COVER)
    alive = []
    for k in range(12):
        red = (k + 0.25) / 255
        fs = ctx.create_fs_state(pipe.ShaderState(tokens=FS_CONSTANT.format(red)))
        ctx.bind_fs_state(fs)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush()
        image = read_rgba8(ctx, rt)
        assert (image.reshape(-1, 4) == [k, 0, 255, 255]).all()
        ctx.bind_fs_state(None)
        ctx.destroy_fs_state(fs)
        alive.append(weakref.ref(fs))
        del fs
    ctx.flush().wait(None)
    gc.collect()
    assert [r for r in alive if r() is not None] == []


def test_a_shader_still_bound_keeps_its_layout(ctx, screen):
    """The layout lives with the CSO: a shader drawn in many frames is set up
    once and draws the same pixels each time."""
    rt, _ = make_target(screen, ctx, 8, 8)
    bind_passthrough(ctx, vs=PASS_VS)
    set_vertices(ctx, COVER)
    fs = ctx.create_fs_state(pipe.ShaderState(tokens=FS_CONSTANT.format(7.25 / 255)))
    ctx.bind_fs_state(fs)
    frames = []
    for _ in range(3):
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush()
        frames.append(np.array(read_rgba8(ctx, rt)))
    assert all((f == [7, 0, 255, 255]).all() for f in frames)


def test_buffers_written_once_are_not_kept_by_the_threaded_context(screen):
    """Before: every buffer that took a queued upload (a small buffer_subdata,
    a discarding map of a busy buffer) stayed in the threaded context's
    staging records for the context's life, destroyed or not (the soak: one
    index buffer a textured frame, ~450 over ten minutes)."""
    ctx = screen.context_create(threaded=True)
    try:
        alive = []
        for k in range(40):
            buf = screen.resource_create(
                pipe.ResourceTemplate(
                    target=pipe.TextureTarget.BUFFER, width0=16, bind=pipe.Bind.INDEX_BUFFER
                )
            )
            ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.full(8, k, np.uint16))
            data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 16, 1, 1))
            assert np.array(data).view(np.uint16).tolist() == [k] * 8
            ctx.transfer_unmap(xfer)
            screen.resource_destroy(buf)
            alive.append(weakref.ref(buf))
            del buf, data, xfer
        ctx.sync()  # every batch executed by the driver thread
        ctx.flush()  # a submit forgets the uploads that ran
        gc.collect()
        assert [r for r in alive if r() is not None] == []
    finally:
        ctx.destroy()

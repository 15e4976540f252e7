"""The no-stall rules from one table (threaded/access.py), and maps that wait
only for what they must (issue 21 items 1, 2 and 6)."""

from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe
from threaded.access import CALLS

HOLD = 1.0
TRI = [[-1, -1, 0, 1, 0, 1, 0, 1], [3, -1, 0, 1, 0, 1, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]
SSBO_FILL = """COMP
DCL SV[0], THREAD_ID
DCL BUFFER[0]
DCL TEMP[0]
IMM[0] UINT32 {4, 1515870810, 0, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: STORE BUFFER[0].x, TEMP[0].xxxx, IMM[0].yyyy
  2: END
"""


def hold_driver(ctx, seconds: float = HOLD) -> threading.Event:
    gate = threading.Event()
    ctx.callback(lambda _: gate.wait(10))
    threading.Timer(seconds, gate.set).start()
    return gate


def new_buffer(screen, size=1024, bind=pipe.Bind.VERTEX_BUFFER):
    return screen.resource_create(
        pipe.ResourceTemplate(target=pipe.TextureTarget.BUFFER, width0=size, bind=bind)
    )


def read_buffer(ctx, buf):
    data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, buf.width0, 1, 1))
    out = np.array(data)
    ctx.transfer_unmap(xfer)
    return out


@pytest.mark.parametrize("how", ["buffer_subdata", "transfer_map"])
def test_a_write_after_clear_buffer_on_a_new_buffer_lands_after_the_clear(screen, ctx, how):
    """Issue 21 item 1: clear_buffer did not mark its bytes valid, so the later
    write was promoted past it and the clear's bytes were read back."""
    buf = new_buffer(screen)
    ctx.clear_buffer(buf, 0, 1024, np.full(4, 0xAA, np.uint8))
    if how == "buffer_subdata":
        ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.full(1024, 0x55, np.uint8))
    else:
        data, xfer = ctx.transfer_map(buf, 0, pipe.Transfer.WRITE, pipe.Box(0, 0, 0, 1024, 1, 1))
        data[:] = 0x55
        ctx.transfer_unmap(xfer)
    ctx.flush().wait(10)
    assert (read_buffer(ctx, buf) == 0x55).all()


def _write_by(kind, ctx, screen, buf):
    """Write 0x5A into bytes [0, 256) of ``buf`` with recorded call ``kind``."""
    if kind == "clear_buffer":
        ctx.clear_buffer(buf, 0, 256, np.full(4, 0x5A, np.uint8))
    elif kind == "buffer_subdata":
        ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.full(256, 0x5A, np.uint8))
    elif kind == "resource_copy_region":
        src = new_buffer(screen, 256)
        ctx.buffer_subdata(src, pipe.Transfer.WRITE, 0, np.full(256, 0x5A, np.uint8))
        ctx.resource_copy_region(buf, 0, 0, 0, 0, src, 0, pipe.Box(0, 0, 0, 256, 1, 1))
    elif kind == "launch_grid":
        ctx.bind_compute_state(ctx.create_compute_state(pipe.ComputeState(prog=SSBO_FILL)))
        ctx.set_shader_buffers(pipe.ShaderType.COMPUTE, 0, [pipe.ShaderBuffer(buf, 0, 256)])
        ctx.launch_grid(pipe.GridInfo(block=(64, 1, 1), grid=(1, 1, 1)))
    elif kind == "staging_upload":  # a DISCARD_RANGE map of a busy buffer, applied at unmap
        data, xfer = ctx.transfer_map(
            buf, 0, pipe.Transfer.WRITE | pipe.Transfer.DISCARD_RANGE, pipe.Box(0, 0, 0, 256, 1, 1)
        )
        data[:] = 0x5A
        ctx.transfer_unmap(xfer)
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize(
    "kind", ["clear_buffer", "buffer_subdata", "resource_copy_region", "launch_grid",
             "staging_upload"]
)  # fmt: skip
def test_every_recorded_write_counts_for_the_no_stall_rules(screen, kind):
    """Each write is recorded while the driver thread is held; a large write of
    other bytes over the same range right after must land after it, as on the
    direct context: the table marks the range valid when the write is recorded."""
    images = []
    for threaded in (False, True):
        ctx = screen.context_create(threaded=threaded)
        try:
            buf = new_buffer(screen, 1024, pipe.Bind.VERTEX_BUFFER | pipe.Bind.SHADER_BUFFER)
            ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 512, np.ones(512, np.uint8))
            if threaded:
                gate = hold_driver(ctx, 0.3)
                if kind == "staging_upload":  # (the staging path needs a busy buffer)
                    ctx.clear_buffer(buf, 768, 4, np.ones(4, np.uint8))
                    ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.zeros(256, np.uint8))
            _write_by(kind, ctx, screen, buf)
            before = buf.valid_range[:]
            ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.full(512, 0xC3, np.uint8))
            ctx.flush().wait(10)
            if threaded:
                assert gate.is_set()
                assert before[0] == 0 and before[1] >= 256  # marked when recorded
            images.append(read_buffer(ctx, buf))
        finally:
            ctx.destroy()
    assert (images[0][:512] == 0xC3).all() and (images[0][512:] == 1).all()
    assert np.array_equal(images[0], images[1])


def test_every_recorded_call_goes_through_the_table():
    """A call is recorded only with a driver entry point from access.CALLS, and
    the wrapped context has every one of them."""
    from gallium.numpipe.context import NumpipeContext

    src = (Path(__file__).resolve().parents[2] / "threaded" / "context.py").read_text()
    assert not re.search(r"_record(_locked)?\(\s*self\.pipe\.", src)
    for name, acc in CALLS.items():
        assert callable(getattr(NumpipeContext, acc.driver, None)), (name, acc.driver)
    writers = {n for n, a in CALLS.items() if a.touches_resources}
    assert writers >= {
        "clear_buffer",
        "buffer_subdata",
        "texture_subdata",
        "resource_copy_region",
        "clear_render_target",
        "clear_depth_stencil",
        "draw_vbo",
        "clear",
        "launch_grid",
        "blit",
        "replace_buffer_storage",
    }


# -- DONTBLOCK (issue 21 item 6) ------------------------------------------------------


def test_a_dontblock_map_of_a_busy_resource_returns_at_once_on_the_threaded_context(
    screen, threaded_ctx
):
    ctx = threaded_ctx
    rt, _ = make_target(screen, ctx, 16, 16)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    gate = hold_driver(ctx)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    box = pipe.Box(0, 0, 0, 16, 16, 1)
    t0 = time.perf_counter()
    assert ctx.transfer_map(rt, 0, pipe.Transfer.READ | pipe.Transfer.DONTBLOCK, box) == (
        None,
        None,
    )
    assert time.perf_counter() - t0 < HOLD / 2
    assert not gate.is_set()
    gate.wait(10)
    # it flushed the work it would have waited for: polling succeeds without a flush
    for _ in range(1000):
        data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ | pipe.Transfer.DONTBLOCK, box)
        if data is not None:
            break
        time.sleep(0.01)
    assert (data == [0, 255, 0, 255]).all()
    ctx.transfer_unmap(xfer)


def test_a_dontblock_write_map_of_a_busy_buffer_returns_at_once(screen, threaded_ctx):
    ctx = threaded_ctx
    buf = new_buffer(screen)
    ctx.buffer_subdata(buf, pipe.Transfer.WRITE, 0, np.zeros(1024, np.uint8))  # valid
    hold_driver(ctx)
    ctx.clear_buffer(buf, 0, 1024, np.ones(4, np.uint8))  # busy
    t0 = time.perf_counter()
    usage = pipe.Transfer.WRITE | pipe.Transfer.DONTBLOCK
    assert ctx.transfer_map(buf, 0, usage, pipe.Box(0, 0, 0, 64, 1, 1)) == (None, None)
    assert time.perf_counter() - t0 < HOLD / 2
    ctx.flush().wait(10)
    data, xfer = ctx.transfer_map(buf, 0, usage, pipe.Box(0, 0, 0, 64, 1, 1))
    assert (data == 1).all()
    ctx.transfer_unmap(xfer)


def test_a_dontblock_map_on_the_direct_context_submits_and_returns_none(screen, direct_ctx):
    ctx = direct_ctx
    rt, _ = make_target(screen, ctx, 16, 16)
    ctx.clear(pipe.Clear.COLOR0, color=(1, 0, 0, 1))  # the scene uses rt, unflushed
    box = pipe.Box(0, 0, 0, 16, 16, 1)
    assert ctx.transfer_map(rt, 0, pipe.Transfer.READ | pipe.Transfer.DONTBLOCK, box) == (
        None,
        None,
    )
    assert ctx._scene is None  # submitted: the next try succeeds once it is done
    for f in rt.pending_fences():
        f.wait(10)
    data, xfer = ctx.transfer_map(rt, 0, pipe.Transfer.READ | pipe.Transfer.DONTBLOCK, box)
    assert (data == [255, 0, 0, 255]).all()
    ctx.transfer_unmap(xfer)


def test_a_map_waits_only_for_the_work_that_uses_its_resource(screen, threaded_ctx):
    ctx = threaded_ctx
    rt, _ = make_target(screen, ctx, 8, 8)
    other = new_buffer(screen, 64)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 1, 1))
    ctx.flush().wait(10)
    hold_driver(ctx)
    ctx.clear_buffer(other, 0, 64, np.ones(4, np.uint8))  # queued, unrelated to rt
    syncs = ctx.stats.syncs
    t0 = time.perf_counter()
    assert (read_rgba8(ctx, rt) == [0, 0, 255, 255]).all()
    assert time.perf_counter() - t0 < HOLD / 2  # the unrelated work is not waited for
    assert ctx.stats.syncs == syncs
    t0 = time.perf_counter()
    assert (read_buffer(ctx, other) == 1).all()  # this one waits for its clear
    assert ctx.stats.sync_reasons["transfer_map"] == 1

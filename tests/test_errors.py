"""Bad input raises a clear error naming the argument, and loses nothing."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PASS_VS, bind_passthrough, make_target, read_rgba8, set_vertices

from gallium import pipe
from gallium.pipe.errors import PipeError, PipeValueError
from gallium.tgsi import TgsiSyntaxError

TRI = [[-1, -1, 0, 1, 0, 1, 0, 1], [3, -1, 0, 1, 0, 1, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]


def test_unknown_format_names_the_argument(screen):
    templ = pipe.ResourceTemplate(
        target=pipe.TextureTarget.TEXTURE_2D, format=99999, width0=4, height0=4
    )
    with pytest.raises(ValueError, match=r"templ\.format"):
        screen.resource_create(templ)


def test_box_outside_resource(screen, ctx):
    rt, _ = make_target(screen, ctx, 16, 16)
    with pytest.raises(ValueError, match=r"box must lie inside level 0 \(16x16x1\)"):
        ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(8, 0, 0, 16, 16, 1))


def test_malformed_tgsi_reports_line_and_column(ctx):
    text = "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IMM[0].xyz\n"
    with pytest.raises(TgsiSyntaxError) as info:
        ctx.create_fs_state(pipe.ShaderState(tokens=text))
    assert info.value.line == 3
    assert info.value.column == 28  # where the fourth swizzle component should be
    assert "swizzle" in str(info.value)


def test_draw_without_shader(screen, ctx):
    make_target(screen, ctx, 8, 8)
    with pytest.raises(ValueError, match="fragment shader must be bound"):
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens="VERT\nEND\n")))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))


def test_context_usable_after_errors(screen, ctx):
    rt, _ = make_target(screen, ctx, 16, 16)
    with pytest.raises(ValueError):
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    with pytest.raises(TgsiSyntaxError):
        ctx.create_vs_state(pipe.ShaderState(tokens="VERT\nMOV\n"))
    with pytest.raises(ValueError):
        ctx.transfer_map(rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 17, 1, 1))
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    ctx.flush()
    img = read_rgba8(ctx, rt)
    assert (img == [0, 255, 0, 255]).all()


VS_NEEDS_3 = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: ADD OUT[1], IN[1], IN[2]
  2: END
"""


def _fail(_data) -> None:
    raise RuntimeError("failed on the driver thread")


def test_bad_cso_binds_are_rejected_at_the_call_on_a_threaded_context(threaded_ctx):
    for bind, what in (
        (threaded_ctx.bind_blend_state, "a blend CSO from create_blend_state"),
        (threaded_ctx.bind_rasterizer_state, "a CSO from create_rasterizer_state"),
        (threaded_ctx.bind_depth_stencil_alpha_state, "create_depth_stencil_alpha_state"),
        (threaded_ctx.bind_vertex_elements_state, "create_vertex_elements_state"),
    ):
        with pytest.raises(TypeError, match=what):
            bind(object())
    threaded_ctx.flush().wait(10)  # nothing bad was queued
    assert threaded_ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET


def test_driver_thread_fault_surfaces_at_next_sync_and_queue_survives(screen, threaded_ctx):
    ctx = threaded_ctx
    rt, _ = make_target(screen, ctx, 8, 8)
    bind_passthrough(ctx)
    set_vertices(ctx, TRI)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    # A fault on the driver thread (no argument makes one: a recorded
    # callback raises), queued between good calls.
    ctx.callback(_fail)
    ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
    fence = ctx.flush()
    with pytest.raises(RuntimeError, match="failed on the driver thread") as info:
        fence.wait(10)
    assert any("the driver thread of context" in n for n in info.value.__notes__)
    assert ctx.get_device_reset_status() == pipe.ResetStatus.GUILTY_CONTEXT_RESET
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
    img = read_rgba8(ctx, rt)
    assert (img == [0, 255, 0, 255]).all()  # the draw after the fault still ran


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_draw_reading_inputs_the_vertex_elements_lack_raises_at_the_call(screen, threaded):
    """Issue 21: a bad draw was accepted by the threaded context and reported
    at the next flush as a device reset.  Now both contexts refuse it at the
    call, with one message, and report no reset."""
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 8, 8)
        bind_passthrough(ctx)
        set_vertices(ctx, TRI)
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
        good_vs = ctx.create_vs_state(pipe.ShaderState(tokens=PASS_VS))
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS_NEEDS_3)))
        with pytest.raises(PipeError) as info:
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        assert type(info.value) is PipeValueError
        assert str(info.value) == (
            "vertex elements must provide IN[2] of the vertex shader (2 bound)"
        )
        ctx.bind_vs_state(good_vs)
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush().wait(10)
        assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        assert (read_rgba8(ctx, rt) == [0, 255, 0, 255]).all()
    finally:
        ctx.destroy()


def test_reset_callback_fires_once_per_reset(screen, threaded_ctx):
    """Errors reported before the application reads the reset status belong to
    one reset: one callback.  After the status is read, the next error is a new
    reset and fires again."""
    ctx = threaded_ctx
    seen = []
    ctx.set_device_reset_callback(seen.append)
    ctx.callback(_fail)  # raises on the driver thread
    ctx.flush()  # a second batch ...
    ctx.callback(_fail)  # ... with a second error
    raised = 0
    for _ in range(4):
        try:
            ctx.flush().wait(10)
        except RuntimeError as exc:
            assert "failed on the driver thread" in str(exc)
            raised += 1
    assert raised == 2  # every error is reported, in order ...
    assert seen == [pipe.ResetStatus.GUILTY_CONTEXT_RESET]  # ... as one reset
    assert ctx.get_device_reset_status() == pipe.ResetStatus.GUILTY_CONTEXT_RESET
    assert ctx.get_device_reset_status() == pipe.ResetStatus.NO_RESET  # read once
    ctx.callback(_fail)
    with pytest.raises(RuntimeError, match="failed on the driver thread"):
        ctx.flush().wait(10)
    assert seen == [pipe.ResetStatus.GUILTY_CONTEXT_RESET] * 2  # a new reset


def test_bad_vertex_format(ctx):
    with pytest.raises(ValueError, match=r"elements\[0\]\.src_format"):
        ctx.create_vertex_elements_state(
            [pipe.VertexElement(0, 0, 0, pipe.Format.Z24_UNORM_S8_UINT)]
        )


def test_errors_do_not_leak_into_another_context(screen):
    a = screen.context_create(threaded=True)
    b = screen.context_create(threaded=True)
    try:
        rt, _ = make_target(screen, b, 8, 8)
        bind_passthrough(b)
        set_vertices(b, TRI)
        a.callback(_fail)  # fails on a's driver thread
        b.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
        b.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        b.flush().wait(10)
        assert (read_rgba8(b, rt) == [0, 255, 0, 255]).all()
        assert b.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        with pytest.raises(RuntimeError, match="failed on the driver thread"):
            a.flush().wait(10)
    finally:
        a.destroy()
        b.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_bad_vertex_buffer_is_refused_at_the_call_and_binds_nothing(screen, threaded):
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 16, 16)
        bind_passthrough(ctx)
        set_vertices(ctx, TRI)  # slot 0: a good green triangle
        big = np.zeros(100_000, np.float32)
        red = np.array(TRI, np.float32)
        red[:, 4:] = (1, 0, 0, 1)
        with pytest.raises(ValueError) as info:
            ctx.set_vertex_buffers(
                0, [pipe.VertexBuffer(32, 0, red), pipe.VertexBuffer(-32, 0, big)]
            )
        msg = str(info.value)
        assert msg.startswith("buffers[1].stride must be an integer >= 0; got -32")
        with pytest.raises(ValueError, match=r"buffers\[0\]\.buffer_offset must be an integer"):
            ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, -4, big)])
        with pytest.raises(ValueError, match="start_slot plus the count must fit"):
            ctx.set_vertex_buffers(31, [pipe.VertexBuffer(32, 0, red)] * 2)
        # nothing of the refused calls was bound: slot 0 still holds the green triangle
        ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
        ctx.flush().wait(10)
        assert (read_rgba8(ctx, rt) == [0, 255, 0, 255]).all()
    finally:
        ctx.destroy()


def test_error_messages_quote_a_big_value_briefly():
    from gallium.pipe.errors import bad_value

    arr = np.arange(1_000_000, dtype=np.float32)
    assert str(bad_value("data", "must be small", arr)) == (
        "data must be small; got ndarray of shape (1000000,) and dtype float32"
    )
    vb = pipe.VertexBuffer(-1, 0, arr)
    msg = str(bad_value("buffers[0]", "is bad", vb))
    assert msg.startswith("buffers[0] is bad; got VertexBuffer(stride=-1")
    assert msg.endswith(f"... ({len(repr(vb))} characters)")
    assert len(msg) < 250
    assert str(bad_value("x", "must be 1", 2)) == "x must be 1; got 2"


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_worker_error_loses_only_its_band_and_stays_with_its_context(
    screen, threaded, monkeypatch
):
    """A rasterizer worker that raises (injected: no valid input makes one) fails
    only its own band of that scene: the other bands are drawn, the error is
    raised once at the context's next sync point with a note naming the band,
    it is one reset, another context drawing at the same time is untouched,
    and the next frame is whole again."""
    import workers.band as band_mod
    from gallium.numpipe.scene import band_height

    assert band_height(64, 320) == 128
    real = band_mod.execute_band
    armed = {}  # target resource -> band to fail once

    def execute_band(scene, unit):
        res = scene.cbufs[0].resource
        if armed.get(res) == unit:
            del armed[res]
            raise MemoryError("injected worker failure")
        return real(scene, unit)

    monkeypatch.setattr(band_mod, "execute_band", execute_band)
    bad = screen.context_create(threaded=threaded)
    good = screen.context_create(threaded=threaded)
    try:
        seen = []
        bad.set_device_reset_callback(seen.append)
        rts = {}
        for ctx in (bad, good):
            rts[ctx] = make_target(screen, ctx, 64, 320)[0]  # bands: rows 0-127, 128-255, 256-319
            bind_passthrough(ctx)
            set_vertices(ctx, TRI)
            ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 1, 1))  # blue before the frames
            ctx.flush().wait(10)

        def frame(ctx):
            ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
            return ctx.flush()

        armed[rts[bad]] = 1
        fences = [frame(bad), frame(good)]
        with pytest.raises(MemoryError, match="injected worker failure") as info:
            fences[0].wait(10)  # or the flush itself, when the scene failed first
            bad.flush().wait(10)
        assert "a rasterizer worker (band 1)" in " ".join(info.value.__notes__)
        fences[1].wait(10)
        bad.flush().wait(10)  # reported once: nothing more to raise
        img = read_rgba8(bad, rts[bad])
        assert (img[:128] == [0, 255, 0, 255]).all() and (img[256:] == [0, 255, 0, 255]).all()
        assert (img[128:256] == [0, 0, 255, 255]).all()  # band 1: neither clear nor draw
        assert (read_rgba8(good, rts[good]) == [0, 255, 0, 255]).all()
        assert good.get_device_reset_status() == pipe.ResetStatus.NO_RESET
        assert bad.get_device_reset_status() == pipe.ResetStatus.GUILTY_CONTEXT_RESET
        assert seen == [pipe.ResetStatus.GUILTY_CONTEXT_RESET]
        frame(bad).wait(10)  # the next frame is whole
        assert (read_rgba8(bad, rts[bad]) == [0, 255, 0, 255]).all()
        assert not armed
    finally:
        bad.destroy()
        good.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_wrongly_typed_fields_are_named_at_the_call(screen, threaded):
    ctx = screen.context_create(threaded=threaded)
    try:
        make_target(screen, ctx, 8, 8)
        bind_passthrough(ctx)
        cases = [
            (
                lambda: ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=None, count=3)),
                "info.start must be an integer; got NoneType",
            ),
            (
                lambda: ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, count=2**33)),
                "info.count must be in [0, 4294967295]; got 8589934592",
            ),
            (
                lambda: ctx.create_blend_state(
                    pipe.BlendState(rt=[pipe.RtBlendState(blend_enable=7)])
                ),
                "state.rt[0].blend_enable must be a bool (or 0 or 1); got 7",
            ),
            (
                lambda: ctx.create_depth_stencil_alpha_state(
                    pipe.DepthStencilAlphaState(depth=pipe.DepthState(func=2.0))
                ),
                "state.depth.func must be a pipe.CompareFunc; got 2.0",
            ),
            (
                lambda: ctx.set_scissor_states(0, [pipe.ScissorState(0, 0, "8", 8)]),
                "scissors[0].maxx must be an integer; got str",
            ),
            (lambda: ctx.clear(pipe.Clear.COLOR0, color=None), "color is required"),
            (
                lambda: ctx.clear(pipe.Clear.COLOR0, color=(0, 0, "1", 0)),
                "color[2] must be a number; got str",
            ),
            (lambda: ctx.flush(1.5), "flags must be an integer; got float"),
            (
                lambda: ctx.set_framebuffer_state(pipe.FramebufferState(width=8, height=None)),
                "state.height must be an integer; got NoneType",
            ),
        ]
        for call, message in cases:
            with pytest.raises(PipeError) as info:
                call()
            assert str(info.value).startswith(message), (str(info.value), message)
        ctx.flush().wait(10)  # nothing of it was queued: no deferred error either
    finally:
        ctx.destroy()


@pytest.mark.parametrize("reported", [True, False], ids=["reported", "unreported"])
def test_destroy_raises_only_a_fault_not_yet_reported(screen, reported):
    """Issue 21 item 6: destroy() must not raise an error its sync points have
    reported already; one they have not is raised by destroy(), once."""
    ctx = screen.context_create(threaded=True)
    ctx.callback(_fail)
    if reported:
        with pytest.raises(RuntimeError, match="failed on the driver thread"):
            ctx.flush().wait(10)
        ctx.destroy()
    else:
        with pytest.raises(RuntimeError, match="failed on the driver thread"):
            ctx.destroy()
    assert ctx.destroyed
    ctx.destroy()  # a second destroy has nothing to say


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_worker_fault_is_reported_once_and_not_again_by_destroy(screen, threaded, monkeypatch):
    import workers.band as band_mod

    real = band_mod.execute_band
    armed = [True]

    def execute_band(scene, unit):
        if armed and armed.pop():
            raise MemoryError("injected worker failure")
        return real(scene, unit)

    monkeypatch.setattr(band_mod, "execute_band", execute_band)
    ctx = screen.context_create(threaded=threaded)
    make_target(screen, ctx, 8, 8)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    raised = 0
    for _ in range(3):
        try:
            ctx.flush().wait(10)
        except MemoryError:
            raised += 1
    assert raised == 1
    ctx.destroy()  # reported already: nothing to raise


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_a_scene_failing_in_every_band_is_one_fault_reported_once(screen, threaded, monkeypatch):
    """A fault that fails several bands of one scene (a band process dying, say)
    is one error at one sync point, naming the others; later sync points and
    destroy() do not raise an old error of it again."""
    import workers.band as band_mod

    def execute_band(scene, unit):
        raise MemoryError(f"injected failure in band {unit}")

    ctx = screen.context_create(threaded=threaded)
    make_target(screen, ctx, 64, 256)  # two bands
    ctx.flush().wait(10)
    monkeypatch.setattr(band_mod, "execute_band", execute_band)
    ctx.clear(pipe.Clear.COLOR0, color=(0, 0, 0, 0))
    fence = ctx.flush()
    with pytest.raises(MemoryError, match="injected failure in band") as info:
        fence.wait(10)
    assert any("1 more unit(s) of the same work failed" in n for n in info.value.__notes__)
    monkeypatch.undo()
    ctx.flush().wait(10)  # nothing more to raise
    assert ctx.get_device_reset_status() == pipe.ResetStatus.GUILTY_CONTEXT_RESET
    ctx.destroy()  # nor here

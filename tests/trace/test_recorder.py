"""The recorder's hot path: records reused for repeated arguments, and what they hold."""

from __future__ import annotations

import gc

import gallium
from gallium import pipe, trace


def test_repeated_state_calls_are_recorded_call_by_call(tmp_path):
    path = tmp_path / "hot.trace"
    screen = trace.record(gallium.create_screen(num_threads=1, trace=False), path)
    ctx = screen.context_create(threaded=True)
    a = ctx.create_blend_state(pipe.BlendState())
    b = ctx.create_blend_state(pipe.BlendState(independent_blend_enable=True))
    color = pipe.BlendColor(color=(0.25, 0.5, 0.75, 1.0))
    ref = pipe.StencilRef(ref_value=(3, 5))
    for i in range(3):
        ctx.bind_blend_state(a if i != 1 else b)
        ctx.set_blend_color(color)
        ctx.set_stencil_ref(ref)
        ctx.set_sample_mask(0xF if i else 0x3)
        color.color = (0.25, 0.5, 0.75, float(i))  # a new tuple in the same template
        ref.ref_value = [i, i]  # a list: copied, never reused
        ctx.bind_blend_state(None)
    pend = screen._tr.pend
    gc.collect()
    assert not any(gc.is_tracked(r) for r in pend[-15:])  # the 15 records: plain values only
    ctx.delete_blend_state(b)  # Mesa's name of destroy_blend_state: recorded as that
    ctx.destroy()
    screen.destroy()
    calls = [c for c in trace.TraceReader(path).all_calls() if c.name != "@release"]
    assert [c.name for c in calls[-3:]] == ["destroy_blend_state", "destroy", "screen_destroy"]
    got = [(c.name, c.args) for c in calls if c.name.startswith(("bind_blend", "set_"))]
    tid_a = next(c.result.tid for c in calls if c.name == "create_blend_state")
    expected = []
    for blend, col, sref, mask in [
        ("a", 1.0, (3, 5), 0x3),
        ("b", 0.0, (0, 0), 0xF),
        ("a", 1.0, (1, 1), 0xF),
    ]:
        expected += [
            ("bind_blend_state", (trace.format.Ref(tid_a + (blend == "b")),)),
            ("set_blend_color", (pipe.BlendColor(color=(0.25, 0.5, 0.75, col)),)),
            ("set_stencil_ref", (pipe.StencilRef(ref_value=sref),)),
            ("set_sample_mask", (mask,)),
            ("bind_blend_state", (None,)),
        ]
    assert got == expected

"""Transform feedback (stream output) scenes: GLSL programs, their calls, and what
Mesa wrote.

Each :class:`Scene` is a little GL program run as a list of steps (see
``STEPS`` below).  ``tools/make_xfb_reference.py`` runs it twice with Mesa:

* on softpipe with ``SOFTPIPE_DEBUG=use_tgsi`` under Gallium's trace driver
  (``GALLIUM_TRACE``), which records the ``pipe_shader_state`` Mesa's state
  tracker made of each program: its TGSI (``<name>.p<k>.vs.tgsi``,
  ``.gs.tgsi``) and its ``pipe_stream_output_info`` (in ``<name>.json``);
* on llvmpipe, which writes the transform feedback buffers (kept in
  ``<name>.json`` as hex, every byte: the buffers start filled with
  ``FILL``) and answers the queries.

``tests/test_stream_output.py`` replays the steps on numpipe through the
Gallium calls Mesa's state tracker makes for them (``glBeginTransformFeedback``:
targets for the bound ranges, ``set_stream_output_targets`` with offsets 0;
pause: no targets; resume: offsets -1; ``glDrawTransformFeedback``: a draw with
``count_from_stream_output``) and compares every byte and every query value.

Steps:

``("program", k)``
    use program k, reading vertex attributes 0 (and 1) from ``vertices``
``("program", k, ("xfb", b), stride)``
    use program k, reading attribute 0 from transform feedback buffer b
    (``stride`` bytes a vertex)
``("begin", mode, ((binding, buffer, offset, size), ...))``
    bind buffer ranges (size 0: the whole buffer) and begin transform
    feedback of primitive type ``mode`` (on transform feedback object 0 --
    or object ``tfo`` when the step is ``("begin", mode, ranges, tfo)``)
``("pause",)``, ``("resume",)``, ``("end",)``
``("draw", mode, first, count, instances)``
``("draw_indexed", mode, first, count, instances)``
    from ``indices`` (uint32; 0xFFFFFFFF restarts)
``("draw_auto", mode, tfo, stream)``
    ``glDrawTransformFeedbackStream`` from object ``tfo``
``("query", kind, index)`` / ``("end_query", kind, index)``
    kind: generated, written, overflow (any stream), stream_overflow
``("discard", on)``
    GL_RASTERIZER_DISCARD
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FILL = 0xAB  # every byte of a transform feedback buffer before the scene


@dataclass(frozen=True)
class Program:
    vs: str
    gs: str | None = None
    varyings: tuple[str, ...] = ()
    separate: bool = False


@dataclass(frozen=True)
class Scene:
    name: str
    programs: tuple[Program, ...]
    steps: tuple[tuple, ...]
    buffers: tuple[int, ...]  # bytes of each transform feedback buffer
    vertices: np.ndarray = field(repr=False)  # (N, 8) float32: attributes 0 and 1
    indices: tuple[int, ...] = ()
    flatshade_first: bool = False


def _grid(n: int, seed: int) -> np.ndarray:
    """``n`` vertices: a position in clip space and a second attribute.  Every
    value is a small multiple of a power of two, so the shaders' arithmetic
    is exact whatever instructions a compiler picks (softpipe's TGSI and
    llvmpipe's code agree bit for bit), and every output word differs."""
    rng = np.random.default_rng(seed)
    pos = (rng.integers(-28, 29, (n, 4)) / 32).astype(np.float32)
    pos[:, 3] = 1.0
    attr = (np.arange(n * 4, dtype=np.float32).reshape(n, 4) * np.float32(0.25)) + np.float32(1)
    return np.concatenate([pos, attr], 1).astype(np.float32)


VS_BASIC = """#version 330
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_attr;
out vec4 v_color;
out float v_id;
out vec3 v_mix;
void main() {
    gl_Position = in_pos;
    v_color = in_attr * 0.5 + in_pos;
    v_id = float(gl_VertexID) + 100.0 * float(gl_InstanceID);
    v_mix = in_pos.xyz * in_attr.w - in_attr.xyz;
}
"""

VS_FROM_XFB = """#version 330
layout(location = 0) in vec4 in_data;
out vec4 w_out;
void main() {
    gl_Position = vec4(in_data.xy, 0.0, 1.0);
    w_out = in_data.wzyx + vec4(float(gl_VertexID));
}
"""

GS_STRIP = """#version 330
layout(triangles) in;
layout(triangle_strip, max_vertices = 5) out;
in vec4 v_color[];
in float v_id[];
in vec3 v_mix[];
out vec4 g_color;
out float g_prim;
void main() {
    for (int i = 0; i < 3; i++) {
        gl_Position = gl_in[i].gl_Position;
        g_color = v_color[i];
        g_prim = float(gl_PrimitiveIDIn) * 10.0 + float(i);
        EmitVertex();
    }
    gl_Position = gl_in[0].gl_Position + vec4(0.125, 0.25, 0.0, 0.0);
    g_color = v_color[0] * 2.0;
    g_prim = -1.0;
    EmitVertex();
    EndPrimitive();
    gl_Position = gl_in[1].gl_Position;
    g_color = vec4(v_id[1], v_mix[1]);
    g_prim = -2.0;
    EmitVertex();
    EndPrimitive();
}
"""

GS_STREAMS = """#version 330
#extension GL_ARB_gpu_shader5 : require
layout(points) in;
layout(points, max_vertices = 4) out;
in vec4 v_color[];
in float v_id[];
layout(stream = 0) out vec4 s0_a;
layout(stream = 0) out float s0_b;
layout(stream = 1) out vec2 s1_a;
void main() {
    s0_a = v_color[0];
    s0_b = v_id[0];
    gl_Position = gl_in[0].gl_Position;
    EmitStreamVertex(0);
    EndStreamPrimitive(0);
    if (int(v_id[0]) % 2 == 0) {
        s1_a = vec2(v_id[0], -v_id[0]);
        EmitStreamVertex(1);
        s1_a = vec2(v_id[0] + 0.5, 7.0);
        EmitStreamVertex(1);
        EndStreamPrimitive(1);
    }
}
"""

VARYINGS_BASIC = ("v_color", "v_id", "v_mix")

SCENES: tuple[Scene, ...] = (
    # Points, interleaved, with a query pair and a draw of two instances.
    Scene(
        name="points_interleaved",
        programs=(Program(VS_BASIC, varyings=VARYINGS_BASIC),),
        steps=(
            ("program", 0),
            ("discard", True),
            ("query", "generated", 0),
            ("query", "written", 0),
            ("begin", "POINTS", ((0, 0, 0, 0),)),
            ("draw", "POINTS", 2, 5, 2),
            ("end",),
            ("end_query", "written", 0),
            ("end_query", "generated", 0),
        ),
        buffers=(512,),
        vertices=_grid(8, 1),
    ),
    # Strips and fans decomposed into triangles, separate buffers, gl_Position
    # captured, indexed with restarts.
    Scene(
        name="strips_separate",
        programs=(Program(VS_BASIC, varyings=("gl_Position", "v_id", "v_mix"), separate=True),),
        steps=(
            ("program", 0),
            ("discard", True),
            ("begin", "TRIANGLES", ((0, 0, 0, 0), (1, 1, 16, 0), (2, 2, 0, 0))),
            ("draw_indexed", "TRIANGLE_STRIP", 0, 9, 1),
            ("draw", "TRIANGLE_FAN", 1, 6, 1),
            ("end",),
        ),
        buffers=(1024, 512, 1024),
        vertices=_grid(10, 2),
        indices=(0, 1, 2, 3, 4, 0xFFFFFFFF, 5, 6, 7),
    ),
    # A buffer too small: whole primitives only, the overflow queries.
    Scene(
        name="overflow",
        programs=(Program(VS_BASIC, varyings=("v_color", "v_id")),),
        steps=(
            ("program", 0),
            ("query", "written", 0),
            ("query", "generated", 0),
            ("query", "overflow", 0),
            ("query", "stream_overflow", 0),
            ("begin", "TRIANGLES", ((0, 0, 20, 200),)),
            ("draw", "TRIANGLES", 0, 15, 1),
            ("end",),
            ("end_query", "stream_overflow", 0),
            ("end_query", "overflow", 0),
            ("end_query", "generated", 0),
            ("end_query", "written", 0),
        ),
        buffers=(256,),
        vertices=_grid(15, 3),
    ),
    # Lines (a loop, a strip), paused between draws and resumed (append),
    # then drawn again from the buffer: draw_auto, captured by a second object.
    Scene(
        name="append_draw_auto",
        programs=(
            Program(VS_BASIC, varyings=("v_color",)),
            Program(VS_FROM_XFB, varyings=("w_out",)),
        ),
        steps=(
            ("program", 0),
            ("discard", True),
            ("begin", "LINES", ((0, 0, 0, 0),)),
            ("draw", "LINE_LOOP", 0, 4, 1),
            ("pause",),
            ("draw", "LINES", 0, 4, 1),
            ("resume",),
            ("draw", "LINE_STRIP", 4, 3, 1),
            ("end",),
            ("program", 1, ("xfb", 0), 16),
            ("query", "generated", 0),
            ("begin", "POINTS", ((0, 1, 0, 0),), 1),
            ("draw_auto", "POINTS", 0, 0),
            ("end",),
            ("end_query", "generated", 0),
        ),
        buffers=(1024, 512),
        vertices=_grid(8, 4),
    ),
    # A geometry shader's triangle strips (with EndPrimitive) as triangles,
    # first-vertex convention.
    Scene(
        name="gs_strips",
        programs=(Program(VS_BASIC, gs=GS_STRIP, varyings=("g_color", "g_prim")),),
        steps=(
            ("program", 0),
            ("discard", True),
            ("query", "generated", 0),
            ("begin", "TRIANGLES", ((0, 0, 0, 0),)),
            ("draw", "TRIANGLES", 0, 6, 1),
            ("end",),
            ("end_query", "generated", 0),
        ),
        buffers=(1024,),
        vertices=_grid(6, 5),
        flatshade_first=True,
    ),
    # Two vertex streams from a geometry shader, each to its own buffer; the
    # per-stream queries.
    Scene(
        name="gs_streams",
        programs=(
            Program(
                VS_BASIC,
                gs=GS_STREAMS,
                varyings=("s0_a", "s0_b", "gl_NextBuffer", "s1_a"),
            ),
        ),
        steps=(
            ("program", 0),
            ("discard", True),
            ("query", "generated", 1),
            ("query", "written", 1),
            ("query", "written", 0),
            ("begin", "POINTS", ((0, 0, 0, 0), (1, 1, 0, 40))),
            ("draw", "POINTS", 0, 7, 1),
            ("end",),
            ("end_query", "written", 0),
            ("end_query", "written", 1),
            ("end_query", "generated", 1),
        ),
        buffers=(512, 256),
        vertices=_grid(7, 6),
    ),
)


def scene_by_name(name: str) -> Scene:
    for s in SCENES:
        if s.name == name:
            return s
    raise KeyError(name)

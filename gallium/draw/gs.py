"""The geometry shader stage: one kernel call over a pass's primitives.

Theory of operation
-------------------
After the vertex shader, a draw's primitives of the geometry shader's input
type (POINTS, LINES, TRIANGLES or their adjacency forms, assembled from the
draw mode as the draw module assembles them: strips and fans decomposed,
restarts honoured) become
the lanes of one geometry kernel call, ``GS_INVOCATIONS`` lanes per
primitive (lane = primitive * invocations + invocation; PRIM_ID and
INVOCATIONID as system values).  ``IN[v][i]`` is the vertex shader's output
of the same semantic at the primitive's vertex ``v``.

The kernel reports every EMIT and ENDPRIM as an event over the lanes that
executed it (gallium/tgsi/compiler.py).  The vertices emitted to stream 0,
in lane order and, within a lane, in emission order, are the output; an
ENDPRIM of that stream (and the end of the program) ends the lane's current
strip.  The other vertex streams are collected the same way when stream
output writes them (gallium/draw/so.py); only stream 0 is rasterized.  The
strips are then assembled as the shader's output type (TRIANGLE_STRIP,
LINE_STRIP or POINTS) and clipped and set up like a draw of that type.  The
output's primitive id is the input primitive's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..pipe.enums import Prim
from ..pipe.errors import bad_value
from ..tgsi.compiler import ExecEnv
from . import assemble
from . import lines as ln

F32 = np.float32
_INPUTS = {"POINTS": 1, "LINES": 2, "TRIANGLES": 3, "LINES_ADJACENCY": 4, "TRIANGLES_ADJACENCY": 6}
_OUTPUTS = ("POINTS", "LINE_STRIP", "TRIANGLE_STRIP")
_LINE_MODES = (Prim.LINES, Prim.LINE_STRIP, Prim.LINE_LOOP)
_LINE_ADJ = (Prim.LINES_ADJACENCY, Prim.LINE_STRIP_ADJACENCY)
_TRI_ADJ = (Prim.TRIANGLES_ADJACENCY, Prim.TRIANGLE_STRIP_ADJACENCY)
MAX_OUTPUT_VERTICES = 1024  # PIPE_CAP_MAX_GEOMETRY_OUTPUT_VERTICES
MAX_INVOCATIONS = 32  # GS_INVOCATIONS (a kernel call runs primitives x invocations lanes)


def check_geometry_shader(shader: Any) -> None:
    """What numpipe runs: point, line or triangle input (with adjacency or not);
    point, line-strip or triangle-strip output; GS_MAX_OUTPUT_VERTICES declared."""
    inp = shader.get_property("GS_INPUT_PRIMITIVE")
    out = shader.get_property("GS_OUTPUT_PRIMITIVE")
    if inp not in _INPUTS:
        raise bad_value(
            "state.tokens",
            "must declare PROPERTY GS_INPUT_PRIMITIVE POINTS, LINES, TRIANGLES, "
            "LINES_ADJACENCY or TRIANGLES_ADJACENCY",
            inp,
        )
    if out not in _OUTPUTS:
        raise bad_value(
            "state.tokens",
            "must declare PROPERTY GS_OUTPUT_PRIMITIVE POINTS, LINE_STRIP or TRIANGLE_STRIP",
            out,
        )
    maxv = shader.get_property("GS_MAX_OUTPUT_VERTICES")
    if not isinstance(maxv, int) or not 0 < maxv <= MAX_OUTPUT_VERTICES:
        raise bad_value(
            "state.tokens",
            f"must declare PROPERTY GS_MAX_OUTPUT_VERTICES between 1 and {MAX_OUTPUT_VERTICES}",
            maxv,
        )
    invocations = shader.get_property("GS_INVOCATIONS", 1)
    if not isinstance(invocations, int) or not 0 <= invocations <= MAX_INVOCATIONS:
        raise bad_value(
            "state.tokens",
            f"may declare PROPERTY GS_INVOCATIONS up to {MAX_INVOCATIONS} (llvmpipe's "
            "PIPE_CAP_MAX_GS_INVOCATIONS)",
            invocations,
        )


def check_input_mode(shader: Any, mode: Prim) -> None:
    """A draw's mode must give the primitives the geometry shader takes."""
    inp = shader.get_property("GS_INPUT_PRIMITIVE")
    mode = Prim(mode)
    if not (
        (inp == "POINTS" and mode == Prim.POINTS)
        or (inp == "LINES" and mode in _LINE_MODES)
        or (inp == "TRIANGLES" and mode in assemble.TRIANGLE_MODES)
        or (inp == "LINES_ADJACENCY" and mode in _LINE_ADJ)
        or (inp == "TRIANGLES_ADJACENCY" and mode in _TRI_ADJ)
    ):
        raise bad_value(
            "info.mode", f"must draw {inp} for the bound geometry shader ({inp} input)", mode.name
        )


def input_primitives(shader: Any, mode: Prim, n: int, cuts: np.ndarray, flatshade_first: bool):
    """The draw's primitives as (P, vertices) stream positions."""
    inp = shader.get_property("GS_INPUT_PRIMITIVE")
    mode = Prim(mode)
    if inp == "POINTS" and mode == Prim.POINTS:
        return np.arange(n, dtype=np.int64)[:, None]
    if inp == "LINES" and mode in _LINE_MODES:
        return ln.segments(mode, n, cuts)[0]
    if inp == "TRIANGLES" and mode in assemble.TRIANGLE_MODES:
        return assemble.triangles(mode, n, cuts, flatshade_first)[0]
    if (inp == "LINES_ADJACENCY" and mode in _LINE_ADJ) or (
        inp == "TRIANGLES_ADJACENCY" and mode in _TRI_ADJ
    ):
        return assemble.adjacency_primitives(mode, n, cuts, flatshade_first)
    raise bad_value(
        "info.mode", f"must draw {inp} for the bound geometry shader ({inp} input)", mode.name
    )


def invocations(shader: Any) -> int:
    """GS_INVOCATIONS: kernel lanes per input primitive."""
    return int(shader.get_property("GS_INVOCATIONS", 1) or 1)


@dataclass
class GeometryOutput:
    pos: np.ndarray  # (N, 4) float32 clip coordinates of the stream-0 vertices
    outputs: dict[int, np.ndarray]  # OUT register -> (N, 4) float32 (bits)
    cuts: np.ndarray  # where a new strip starts (indices into the N vertices)
    prim: np.ndarray  # (N,) the input primitive each vertex came from
    draw: np.ndarray  # (N,) the draw (of the pass) each vertex came from
    primitives: int  # output primitives (for queries)
    primitives_by_draw: np.ndarray  # the same, per draw of the pass
    invocations: int  # kernel lanes
    streams: dict = field(default_factory=dict)  # other vertex streams' output, by stream


def _lanes(values: Any, count: int) -> np.ndarray:
    a = np.asarray(values)
    if a.dtype != F32:
        a = a.view(F32) if a.dtype.itemsize == 4 and a.dtype.kind in "iu" else a.astype(F32)
    return np.broadcast_to(a, (count,))


def run_geometry(
    gs, vs, vres, vpos, verts, prim_ids, draws, consts, textures, other_streams=(), memory=None
):
    """Run the geometry kernel over the primitives ``verts`` (P, k) (indices
    into the vertex shader's results ``vres`` / positions ``vpos``), primitive
    ids ``prim_ids`` and the draws ``draws`` they belong to (of a pass), with
    the constant buffers ``consts`` (see gallium/draw/vs.py pass_constants:
    per lane where the draws differ) and texture bindings ``textures``.
    The result is vertex stream 0's output; ``other_streams`` names the
    other streams whose output is wanted too (in ``.streams``, for stream
    output)."""
    shader = gs.shader
    ninv = invocations(shader)
    ndraws = int(draws.max()) + 1 if draws.size else 1
    p, k = verts.shape
    lanes = p * ninv
    nv = vpos.shape[0]
    vs_out = {(d.semantic, d.semantic_index): reg for reg, d in vs.kernel.output_decls.items()}
    pid = np.repeat(prim_ids, ninv).astype(np.int32)
    inv = np.tile(np.arange(ninv, dtype=np.int32), p)
    pid_bits = [pid.view(F32)] * 4
    vertices = []
    flat_inputs: list[Any] = []  # IN[i] read without a vertex index: PRIM_ID
    for v in range(k):
        idx = np.repeat(verts[:, v], ninv)
        regs: list[Any] = []
        for reg, d in sorted(gs.kernel.input_decls.items()):
            while len(regs) <= reg:
                regs.append(None)
            if d.semantic == "PRIM_ID":  # gl_PrimitiveIDIn: the input primitive's id
                regs[reg] = pid_bits
                while len(flat_inputs) <= reg:
                    flat_inputs.append(None)
                flat_inputs[reg] = pid_bits
                continue
            src = vs_out.get((d.semantic, d.semantic_index))
            if src is None or src not in vres.outputs:
                continue
            regs[reg] = [_lanes(c, nv)[idx] for c in vres.outputs[src]]
        vertices.append(regs)
    res = gs.kernel(
        ExecEnv(
            n=lanes,
            inputs=flat_inputs,
            consts=consts,
            system_values={"PRIM_ID": [pid] * 4, "INVOCATIONID": [inv] * 4},
            textures=textures,
            vertices=vertices,
            memory=memory,
        )
    )
    out = _collect(gs, res, 0, lanes, ninv, prim_ids, draws, ndraws)
    for stream in other_streams:
        out.streams[stream] = _collect(gs, res, stream, lanes, ninv, prim_ids, draws, ndraws)
    return out


def _collect(gs, res, stream, lanes, ninv, prim_ids, draws, ndraws) -> GeometryOutput:
    """The vertices a geometry kernel run emitted to vertex stream ``stream``,
    lane by lane, in emission order, with their strips."""
    shader = gs.shader
    pos_reg = gs.kernel.output_index("POSITION")
    lane_parts, event_parts, strip_parts, out_parts = [], [], [], []
    strip = np.zeros(lanes, np.int64)
    events = res.emitted or []
    for e, ev in enumerate(events):
        mask = np.broadcast_to(np.asarray(ev.mask, bool), (lanes,))
        ev_stream = np.broadcast_to(np.asarray(ev.stream).astype(np.int64), (lanes,))
        if ev.kind == "end":
            # (the program's own end, the last event, closes every stream's strip)
            strip += mask & ((ev_stream == stream) | (e == len(events) - 1))
            continue
        sel = np.flatnonzero(mask & (ev_stream == stream))
        if sel.size == 0:
            continue
        lane_parts.append(sel)
        event_parts.append(np.full(sel.size, e, np.int64))
        strip_parts.append(strip[sel])
        out_parts.append(
            {
                reg: np.stack([_lanes(c, lanes)[sel] for c in chans], 1)
                for reg, chans in (ev.outputs or {}).items()
            }
        )
    if not lane_parts:
        empty = np.zeros((0, 4), F32)
        none = np.zeros(0, np.int64)
        return GeometryOutput(empty, {}, none, none, none, 0, np.zeros(ndraws, np.int64), lanes)
    lane = np.concatenate(lane_parts)
    event = np.concatenate(event_parts)
    strips = np.concatenate(strip_parts)
    order = np.lexsort((event, lane))  # lane by lane, each in emission order
    outputs = {
        reg: np.concatenate([part[reg] for part in out_parts])[order] for reg in out_parts[0]
    }
    lane, strips = lane[order], strips[order]
    start = np.ones(lane.size, bool)
    start[1:] = (lane[1:] != lane[:-1]) | (strips[1:] != strips[:-1])
    first = np.flatnonzero(start)
    lengths = np.diff(np.append(first, lane.size))
    kind = shader.get_property("GS_OUTPUT_PRIMITIVE")
    per = {"POINTS": 0, "LINE_STRIP": 1, "TRIANGLE_STRIP": 2}[kind]
    made = np.maximum(lengths - per, 0)
    vertex_draw = draws[lane // ninv]
    pos = outputs[pos_reg] if pos_reg in outputs else np.zeros((lane.size, 4), F32)
    return GeometryOutput(
        pos=np.ascontiguousarray(pos, F32),
        outputs=outputs,
        cuts=first[1:],
        prim=prim_ids[lane // ninv],
        draw=vertex_draw,
        primitives=int(made.sum()),
        primitives_by_draw=np.bincount(vertex_draw[first], weights=made, minlength=ndraws).astype(
            np.int64
        ),
        invocations=lanes,
    )

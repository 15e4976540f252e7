"""Stream output (transform feedback): the last vertex stage's primitives
written to buffers (Mesa's draw_pt_so_emit.c).

Theory of operation
-------------------
A shader CSO of the last vertex stage (vertex, tessellation evaluation or
geometry shader) may carry a ``pipe_stream_output_info``; :func:`check_info`
validates it once, at the CSO's creation, into a :class:`StreamOutputInfo`.
A draw that runs with such a program and with stream output targets bound
holds a :class:`Binding`: the targets and, for each, the buffer storage it
writes (a snapshot, as a draw's vertex buffers are).

After the vertex stage, each vertex stream's primitives are decomposed as the
draw module decomposes them for stream output (strips and fans into
independent primitives with the provoking-vertex order of
gallium/draw/assemble.py; quads into two triangles), and written, in draw
order, primitive after primitive, whole or not at all:

* every target has an *internal offset*, the bytes written so far, set by
  ``set_stream_output_targets`` (-1 keeps it: append) and advanced by each
  primitive written, by ``stride`` dwords per vertex, for each buffer the
  stream writes;
* a primitive is written only if every vertex's every output of the stream
  fits in its buffer (``offset + (dst_offset + components) * 4 <=
  buffer_size``, the offset advanced by the stride for each earlier vertex of
  the primitive); a primitive that does not fit is not written and the
  offsets stay: since all of a stream's primitives have the same size, it
  and all later ones of the draw overflow;
* a missing target for a buffer the stream writes is an overflow.

The values written are the shader's output registers as they are (the
position before clipping), 32-bit words.  A pass of many draws writes once:
the offsets each draw starts from follow from the counts of the draws before
it (a few integer operations per draw), then one scatter stores every
written vertex's words of the pass.  The counts per draw and stream
(primitives generated, primitives written) feed the PRIMITIVES_GENERATED,
PRIMITIVES_EMITTED, SO_STATISTICS and SO_OVERFLOW queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..pipe.enums import PIPE_MAX_SO_BUFFERS, PIPE_MAX_SO_OUTPUTS
from ..pipe.errors import bad_type, bad_value, check_int

MAX_VERTEX_STREAMS = 4
# dwords of one vertex in one buffer (llvmpipe's MAX_STREAM_OUTPUT_*_COMPONENTS)
MAX_COMPONENTS = 64


@dataclass(frozen=True)
class Output:
    """One ``pipe_stream_output``, checked."""

    register: int
    start: int
    count: int
    buffer: int
    dst_offset: int  # dwords
    stream: int


@dataclass(frozen=True)
class StreamOutputInfo:
    """A checked ``pipe_stream_output_info`` (at least one output)."""

    outputs: tuple[Output, ...]
    stride: tuple[int, int, int, int]  # dwords per vertex, per buffer

    def streams(self) -> list[int]:
        """The vertex streams that have outputs, ascending."""
        return sorted({o.stream for o in self.outputs})

    def buffers(self, stream: int) -> list[int]:
        """The buffers stream ``stream`` writes, ascending."""
        return sorted({o.buffer for o in self.outputs if o.stream == stream})


def check_info(info: Any, shader: Any, stage: str, arg: str = "state.stream_output"):
    """Validate a ``pipe.StreamOutputInfo`` against the shader it belongs to.

    Returns a :class:`StreamOutputInfo`, or None when it has no outputs.
    ``stage`` is "vertex", "tess_eval" or "geometry" (only a geometry shader
    emits to streams other than 0).
    """
    from ..pipe.state import StreamOutput
    from ..pipe.state import StreamOutputInfo as PipeInfo

    if info is None:
        return None
    if not isinstance(info, PipeInfo):
        raise bad_type(arg, "a pipe.StreamOutputInfo", info)
    num = check_int(f"{arg}.num_outputs", info.num_outputs, 0, PIPE_MAX_SO_OUTPUTS)
    if num == 0:
        return None
    outputs = list(info.output)
    if len(outputs) < num:
        raise bad_value(f"{arg}.output", f"must hold num_outputs ({num}) entries", len(outputs))
    strides = list(info.stride)
    if len(strides) != PIPE_MAX_SO_BUFFERS:
        raise bad_value(f"{arg}.stride", f"must hold {PIPE_MAX_SO_BUFFERS} strides", strides)
    stride = tuple(
        check_int(f"{arg}.stride[{b}]", s, 0, MAX_COMPONENTS) for b, s in enumerate(strides)
    )
    declared = {
        i for d in shader.declarations if d.file == "OUT" for i in range(d.first, d.last + 1)
    }
    out = []
    buffer_stream: dict[int, int] = {}
    for k, o in enumerate(outputs[:num]):
        name = f"{arg}.output[{k}]"
        if isinstance(o, dict):
            try:
                o = StreamOutput(**o)
            except TypeError as exc:
                raise bad_value(name, f"has unknown fields ({exc})", o) from None
        if not isinstance(o, StreamOutput):
            raise bad_type(name, "a pipe.StreamOutput or a dict of its fields", o)
        reg = check_int(f"{name}.register_index", o.register_index, 0)
        if reg not in declared:
            raise bad_value(
                f"{name}.register_index", "must name an OUT register the shader declares", reg
            )
        start = check_int(f"{name}.start_component", o.start_component, 0, 3)
        count = check_int(f"{name}.num_components", o.num_components, 1, 4)
        if start + count > 4:
            raise bad_value(
                f"{name}.num_components", f"must fit in the register after component {start}", count
            )
        buf = check_int(f"{name}.output_buffer", o.output_buffer, 0, PIPE_MAX_SO_BUFFERS - 1)
        dst = check_int(f"{name}.dst_offset", o.dst_offset, 0, MAX_COMPONENTS)
        if dst + count > stride[buf]:
            raise bad_value(
                f"{name}.dst_offset",
                f"plus num_components must fit in stride[{buf}] ({stride[buf]} dwords)",
                dst,
            )
        stream = check_int(f"{name}.stream", o.stream, 0, MAX_VERTEX_STREAMS - 1)
        if stream and stage != "geometry":
            raise bad_value(f"{name}.stream", "must be 0 outside a geometry shader", stream)
        if buffer_stream.setdefault(buf, stream) != stream:
            raise bad_value(
                f"{name}.stream",
                f"must be the stream of the other outputs to buffer {buf} ({buffer_stream[buf]})",
                stream,
            )
        out.append(Output(reg, start, count, buf, dst, stream))
    return StreamOutputInfo(tuple(out), stride)  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False)
class Binding:
    """The stream output targets a draw writes (``targets[b]`` for buffer b,
    or None) and the storage each one writes (uint8 arrays, snapshots)."""

    targets: tuple
    storages: tuple

    def resources(self) -> list:
        return [t.resource for t in self.targets if t is not None]


@dataclass
class StreamPrimitives:
    """One vertex stream's decomposed primitives in a pass: ``verts`` (P, k)
    indices into ``outputs`` (register -> four channels of float32-viewed
    words, arrays over the vertices or scalars), ``draw`` (P,) each one's
    draw in the pass, in draw order."""

    verts: np.ndarray
    draw: np.ndarray
    outputs: dict
    nverts: int


def emit(
    info: StreamOutputInfo,
    bindings: list,
    streams: dict[int, StreamPrimitives],
    ndraws: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Write a pass's primitives to its draws' targets, in draw order.

    ``bindings[d]`` is draw d's :class:`Binding` (None: the draw writes
    nothing).  Returns ``(generated, written)``, each (ndraws, 4): the
    primitives each draw made and wrote on each vertex stream.
    """
    generated = np.zeros((ndraws, MAX_VERTEX_STREAMS), np.int64)
    written = np.zeros((ndraws, MAX_VERTEX_STREAMS), np.int64)
    for stream, prims in sorted(streams.items()):
        if prims.verts.shape[0]:
            generated[:, stream] = np.bincount(prims.draw, minlength=ndraws)
    for stream, prims in sorted(streams.items()):
        outs = [o for o in info.outputs if o.stream == stream]
        if not outs or prims.verts.shape[0] == 0:
            continue
        k = prims.verts.shape[1]
        bufs = sorted({o.buffer for o in outs})
        # bytes past a vertex's start that its outputs reach, per buffer
        reach = {b: 4 * max(o.dst_offset + o.count for o in outs if o.buffer == b) for b in bufs}
        # each draw's first vertex offset per buffer, and how many primitives it writes
        starts = np.zeros((ndraws, PIPE_MAX_SO_BUFFERS), np.int64)
        nwrite = np.zeros(ndraws, np.int64)
        for d in range(ndraws):
            made = int(generated[d, stream])
            b_d = bindings[d]
            if made == 0 or b_d is None:
                continue
            fit = made
            for b in bufs:
                t = b_d.targets[b] if b < len(b_d.targets) else None
                if t is None:
                    fit = 0
                    break
                step = 4 * info.stride[b]
                # the last vertex of primitive i ends at off + (k*i + k-1)*step + reach
                room = t.buffer_size - t.internal_offset - (k - 1) * step - reach[b]
                fit = min(fit, 0 if room < 0 else room // (k * step) + 1)
            nwrite[d] = fit
            written[d, stream] = fit
            if fit:
                for b in bufs:
                    t = b_d.targets[b]
                    starts[d, b] = t.buffer_offset + t.internal_offset
                    t.internal_offset += fit * k * 4 * info.stride[b]
        if not nwrite.any():
            continue
        # draw d's written primitives are its first nwrite[d] (the pass holds
        # each draw's primitives together, in order), and their vertices fill
        # a contiguous run of each buffer, a row of stride dwords a vertex
        first = np.zeros(ndraws + 1, np.int64)
        np.cumsum(generated[:, stream], out=first[1:])
        words = {
            o: _words(prims.outputs.get(o.register), prims.nverts, o.start, o.count) for o in outs
        }
        for d in np.flatnonzero(nwrite):
            verts = prims.verts[first[d] : first[d] + nwrite[d]].reshape(-1)
            for b in bufs:
                stride = info.stride[b]
                at = int(starts[d, b])
                run = bindings[d].storages[b][at : at + 4 * stride * verts.size]
                rows = run.view(np.uint32).reshape(verts.size, stride)
                for o in outs:
                    if o.buffer == b:
                        rows[:, o.dst_offset : o.dst_offset + o.count] = words[o][verts]
    return generated, written


def _words(chans: Any, n: int, start: int, count: int) -> np.ndarray:
    """Components ``start..start+count`` of an output register as (n, count)
    uint32 words (zeros for a register never written)."""
    out = np.zeros((n, count), np.uint32)
    if chans is None:
        return out
    for c in range(count):
        v = np.asarray(chans[start + c])
        if v.dtype.itemsize == 4:
            v = v.view(np.uint32)
        else:
            v = v.astype(np.float32).view(np.uint32)
        out[:, c] = v
    return out

"""The vertex shader stage: one kernel call over every vertex of a pass.

A pass (gallium/draw/pipeline.py) hands this stage the fetched inputs of all
its draws' vertices at once, with each vertex's draw.  What the draws share
reaches the kernel as it would for one draw: a constant buffer bound alike
for every draw is one buffer, read as scalars.  What differs is read per
lane: a constant buffer that is not the same for every draw becomes a
:class:`~gallium.tgsi.runtime.LaneConstants` (one row per draw, gathered by
each lane's draw), and the system values (VERTEXID, INSTANCEID, BASEVERTEX,
BASEINSTANCE, DRAWID, ...) are per-lane arrays anyway.  Since every TGSI
instruction works lane by lane, each vertex gets exactly the bits a kernel
call over its own draw would give it.

Also here: the linkage of the last vertex stage's outputs to the fragment
shader's inputs (which output feeds which attribute slot, interpolated how),
which the context computes when state changes and the pass carries.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tgsi.compiler import ExecEnv
from ..tgsi.runtime import lane_constant_buffers

F32 = np.float32


def link(out_decls: dict, fs_kernel: Any, flatshade: bool) -> tuple[list, list]:
    """Match fragment shader inputs to a vertex stage's outputs by semantic.

    Returns ``(fs_inputs, link)``: ``fs_inputs`` is the fragment state's input
    list ``(IN register, kind, attribute slot)``; ``link[slot] = (output
    register or None, interpolation)`` for each attribute slot.
    """
    outs = {(d.semantic, d.semantic_index): reg for reg, d in out_decls.items()}
    fs_inputs = []
    slots = []
    for reg, d in sorted(fs_kernel.input_decls.items()):
        sem = d.semantic
        if sem == "POSITION":
            fs_inputs.append((reg, "pos", 0))
            continue
        if sem == "FACE":
            fs_inputs.append((reg, "face", 0))
            continue
        if sem == "PRIM_ID":  # the primitive's index in its draw (an integer)
            fs_inputs.append((reg, "primid", 0))
            continue
        mode = d.interpolate
        if mode is None:
            mode = "COLOR" if sem in ("COLOR", "BCOLOR") else "PERSPECTIVE"
        if mode == "COLOR":
            mode = "CONSTANT" if flatshade else "PERSPECTIVE"
        fs_inputs.append((reg, "attr", len(slots)))
        slots.append((outs.get((sem, d.semantic_index)), mode.lower()))
    return fs_inputs, slots


def sprite_slots(fs_kernel: Any, rast: Any) -> tuple[int, ...]:
    """Attribute slots (see :func:`link`) that take point sprite coordinates:
    PCOORD, and with ``point_quad_rasterization`` the GENERICs that
    ``sprite_coord_enable`` names."""
    slots = []
    attr = 0
    for _, d in sorted(fs_kernel.input_decls.items()):
        if d.semantic in ("POSITION", "FACE", "PRIM_ID"):
            continue
        if d.semantic == "PCOORD" or (
            rast.point_quad_rasterization
            and d.semantic == "GENERIC"
            and d.semantic_index < 32
            and rast.sprite_coord_enable >> d.semantic_index & 1
        ):
            slots.append(attr)
        attr += 1
    return tuple(slots)


def pass_constants(per_draw: list, lane_draw: np.ndarray | None) -> list:
    """The constant buffers of a kernel call over several draws' lanes
    (``per_draw[d]``: draw d's buffers; ``lane_draw``: each lane's draw):
    see gallium.tgsi.runtime.lane_constant_buffers."""
    return lane_constant_buffers(per_draw, lane_draw)


def system_values(kernel: Any, vids: np.ndarray, iids: np.ndarray, per_draw: Any) -> dict:
    """The system values the vertex shader declares, one entry per lane.

    ``per_draw`` gives each lane's draw parameters as arrays (or scalars for
    a pass of one draw): ``bias`` (index bias of indexed draws, else 0),
    ``base`` (BASEVERTEX: the bias of indexed draws, else start),
    ``start_instance`` and ``drawid``.
    """
    n = vids.size
    out = {}
    for name in set(kernel.system_value_decls.values()):
        if name == "VERTEXID":
            v = vids
        elif name == "VERTEXID_NOBASE":
            v = vids - per_draw.bias
        elif name == "INSTANCEID":
            v = iids
        elif name == "BASEVERTEX":
            v = np.broadcast_to(per_draw.base, (n,))
        elif name == "BASEINSTANCE":
            v = np.broadcast_to(per_draw.start_instance, (n,))
        elif name == "DRAWID":
            v = np.broadcast_to(per_draw.drawid, (n,))
        else:
            continue
        v = np.asarray(v).astype(np.int32)
        out[name] = [v, v, v, v]
    return out


def run_vertex_shader(
    vs: Any, inputs: list, n: int, consts: list, sysvals: dict, textures: Any, memory: Any = None
) -> Any:
    """One vertex kernel call over ``n`` lanes (``memory``: its shader
    buffers and images, or None)."""
    env = ExecEnv(
        n=n, inputs=inputs, consts=consts, system_values=sysvals, textures=textures, memory=memory
    )
    return vs.kernel(env)


def positions(kernel: Any, res: Any, n: int) -> np.ndarray:
    """The POSITION output as an (n, 4) float32 array (zeros when not written)."""
    reg = kernel.output_index("POSITION")
    if reg is None:
        return np.zeros((n, 4), F32)
    # (np.stack costs ~5x more on a few vertices)
    return np.array([_bcast(c, n) for c in res.outputs[reg]], F32).T.copy()


def attributes(res: Any, n: int, slots: tuple) -> np.ndarray:
    """The linked outputs as (n, K, 4) float32 attribute rows (zeros where a
    fragment input has no matching output)."""
    attrs = np.zeros((n, len(slots), 4), F32)
    for slot, (reg, _) in enumerate(slots):
        if reg is not None and reg in res.outputs:
            attrs[:, slot] = np.array([_bcast(c, n, F32) for c in res.outputs[reg]]).T
    return attrs


def _bcast(v: Any, n: int, dtype: Any = None) -> np.ndarray:
    a = np.asarray(v)
    if dtype is not None and a.dtype != dtype:
        a = a.view(dtype) if a.dtype.itemsize == 4 and a.dtype.kind in "iu" else a.astype(dtype)
    if a.ndim == 0:
        return np.full(n, a, dtype=a.dtype)
    return a


def clamp_unit(v: Any) -> Any:
    """A vertex colour clamped to [0, 1] as llvmpipe's draw module clamps it
    (a max with 0, then a min with 1: NaN becomes 0)."""
    a = np.asarray(v)
    if a.dtype != F32:
        a = a.view(F32) if a.dtype.itemsize == 4 and a.dtype.kind in "iu" else a.astype(F32)
    return np.where(a > 0, np.where(a < 1, a, F32(1.0)), F32(0.0)).astype(F32)


def color_registers(kernel: Any) -> list[int]:
    """The stage's COLOR and BCOLOR output registers (clamp_vertex_color)."""
    return [r for r, d in kernel.output_decls.items() if d.semantic in ("COLOR", "BCOLOR")]


def clamp_colors(kernel: Any, res: Any) -> None:
    """clamp_vertex_color on a vertex kernel's results, in place."""
    for r in color_registers(kernel):
        if r in res.outputs:
            res.outputs[r] = [clamp_unit(c) for c in res.outputs[r]]

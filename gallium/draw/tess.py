"""Tessellation: the control and evaluation stages over a pass's patches
(Mesa's draw_tess.c).

Theory of operation
-------------------
A PATCHES draw's vertices, after the vertex shader, are taken
``vertices_per_patch`` at a time as patches (instance after instance, draw
after draw in a pass, as gallium/draw/pipeline.py orders primitives).  Then:

1. The tessellation control shader (TCS) runs once over every patch of the
   pass: ``TCS_VERTICES_OUT`` lanes a patch (lane = patch * vertices +
   invocation; INVOCATIONID, PRIMID -- the patch's index in its instance --
   and VERTICESIN as system values).  ``IN[v][i]`` is the vertex shader's
   output of the same semantic at the patch's vertex v.  Its outputs are
   shared by the patch's invocations (gallium/tgsi/runtime.py TcsOutputs):
   per-vertex ``OUT[v][i]`` and per-patch ``OUT[i]`` (semantics PATCH,
   TESSOUTER, TESSINNER).  The kernel runs every instruction on all lanes
   before the next, so BARRIER needs nothing.  Without a TCS, the patch's
   input vertices are the control points and the levels are the defaults.
2. Each patch's levels (TESSOUTER, TESSINNER, else ``set_tess_state``'s
   defaults) go to the tessellator (gallium/draw/tessellator.py), once per
   distinct set of levels; a culled patch makes nothing.
3. The tessellation evaluation shader (TES) runs once over every domain
   point of every patch of the pass: ``IN[v][i]`` are the control points
   (by semantic), ``IN[i]`` the per-patch outputs, TESSCOORD the domain
   point, TESSOUTER/TESSINNER the patch's levels as the TCS wrote them,
   PRIMID the patch's index.
4. The tessellator's primitives (triangles, isolines as lines, or points),
   patch after patch, go on as a draw of that type would: stream output,
   geometry shader, clipping and setup.  Their primitive id is the patch's.

Constants that differ between the pass's draws are read per lane (as in
gallium/draw/vs.py), so every draw gets the bits a pass of its own gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..pipe.errors import bad_value
from ..tgsi.compiler import ExecEnv
from ..tgsi.runtime import TcsOutputs
from . import tessellator as tt
from . import vs as vstage

F32 = np.float32
MAX_PATCH_VERTICES = 32  # PIPE_MAX... (GL_MAX_PATCH_VERTICES)
_PATCH_SEMANTICS = frozenset({"PATCH", "TESSOUTER", "TESSINNER"})
_DOMAINS = {tt.TRIANGLES: "triangles", tt.QUADS: "quads", tt.LINES: "isolines"}


def check_tcs(shader: Any) -> None:
    """A tessellation control program declares its output vertex count."""
    n = shader.get_property("TCS_VERTICES_OUT")
    if not isinstance(n, int) or not 0 < n <= MAX_PATCH_VERTICES:
        raise bad_value(
            "state.tokens",
            f"must declare PROPERTY TCS_VERTICES_OUT between 1 and {MAX_PATCH_VERTICES}",
            n,
        )


def check_tes(shader: Any) -> None:
    """A tessellation evaluation program declares its domain (TES_PRIM_MODE
    1 isolines, 4 triangles, 7 quads); spacing (0 fractional odd, 1
    fractional even, 2 equal), winding and point mode default to 0."""
    mode = shader.get_property("TES_PRIM_MODE")
    if mode not in _DOMAINS:
        raise bad_value(
            "state.tokens",
            "must declare PROPERTY TES_PRIM_MODE 1 (isolines), 4 (triangles) or 7 (quads)",
            mode,
        )
    spacing = shader.get_property("TES_SPACING", 0)
    if spacing not in (tt.FRACTIONAL_ODD, tt.FRACTIONAL_EVEN, tt.EQUAL):
        raise bad_value("state.tokens", "must declare TES_SPACING 0, 1 or 2", spacing)
    for prop in ("TES_VERTEX_ORDER_CW", "TES_POINT_MODE"):
        if shader.get_property(prop, 0) not in (0, 1):
            raise bad_value("state.tokens", f"must declare {prop} 0 or 1", prop)


@dataclass(frozen=True, eq=False)
class TessState:
    """The tessellation side of a vertex program."""

    tcs: Any  # the control shader CSO, or None
    tes: Any  # the evaluation shader CSO
    default_outer: tuple  # four float32 levels (set_tess_state)
    default_inner: tuple  # two
    tcs_textures: Any = None
    tes_textures: Any = None
    tcs_memory: Any = None  # the stages' shader buffers and images (ExecEnv.memory)
    tes_memory: Any = None

    @property
    def domain(self) -> int:
        return self.tes.shader.get_property("TES_PRIM_MODE")

    @property
    def point_mode(self) -> bool:
        return bool(self.tes.shader.get_property("TES_POINT_MODE", 0))

    def output(self) -> str:
        """The primitives the tessellator makes: points, lines or triangles."""
        if self.point_mode:
            return "points"
        return "lines" if self.domain == tt.LINES else "triangles"


@dataclass
class TessOutput:
    """What tessellating a pass's patches made."""

    outputs: dict  # TES OUT register -> four channels over the domain points
    n: int  # domain points
    prims: np.ndarray  # (P, k) indices into the domain points
    prim_ids: np.ndarray  # (P,) each primitive's patch index (in its instance)
    tags: np.ndarray  # (P,) each primitive's draw (of the pass)
    patches_by_draw: np.ndarray  # control shader invocations counted per patch
    points_by_draw: np.ndarray  # evaluation shader invocations
    point_patch: np.ndarray | None = None  # (n,) each domain point's patch (ascending)


def run(
    state: TessState,
    vs: Any,
    vres: Any,
    nverts: int,
    patches: np.ndarray,
    patch_ids: np.ndarray,
    patch_draw: np.ndarray,
    consts: tuple,
    ndraws: int,
) -> TessOutput:
    """Tessellate ``patches`` (Q, vertices_per_patch) -- indices into the
    vertex shader's results ``vres`` over ``nverts`` vertices -- with their
    ids and draws; ``consts`` the (control, evaluation) constant buffers
    per draw."""
    q, vpp = patches.shape
    vs_out = {(d.semantic, d.semantic_index): reg for reg, d in vs.kernel.output_decls.items()}
    tcs, tes = state.tcs, state.tes
    multi = ndraws > 1
    if tcs is not None:
        nv = tcs.shader.get_property("TCS_VERTICES_OUT")
        lanes = q * nv
        lane_patch = np.repeat(np.arange(q, dtype=np.int64), nv)
        vertices = []
        for v in range(vpp):
            idx = patches[lane_patch, v]
            vertices.append(_gather_inputs(tcs.kernel, vs_out, vres.outputs, nverts, idx))
        inv = np.tile(np.arange(nv, dtype=np.int32), q)
        pid = patch_ids[lane_patch].astype(np.int32)
        lane_draw = patch_draw[lane_patch] if multi else None
        nregs = max(tcs.kernel.output_decls, default=-1) + 1
        store = TcsOutputs(q, nv, max(nregs, 1))
        tcs.kernel(
            ExecEnv(
                n=lanes,
                consts=vstage.pass_constants(consts[0], lane_draw),
                system_values={
                    "INVOCATIONID": [inv] * 4,
                    "PRIM_ID": [pid] * 4,
                    "VERTICESIN": [np.full(lanes, vpp, np.int32)] * 4,
                },
                textures=state.tcs_textures,
                vertices=vertices,
                tcs=store,
                memory=state.tcs_memory,
            )
        )
        ctrl_out = {
            (d.semantic, d.semantic_index): reg for reg, d in tcs.kernel.output_decls.items()
        }
        outer = _levels(store, ctrl_out.get(("TESSOUTER", 0)), state.default_outer, q, 4)
        inner = _levels(store, ctrl_out.get(("TESSINNER", 0)), state.default_inner, q, 2)

        def control_point(reg: int, v: int, lp: np.ndarray) -> list:
            cols = lp * nv + v
            return [store.vertex[reg, c][cols] for c in range(4)]

        def patch_value(reg: int, lp: np.ndarray) -> list:
            return [store.patch[reg, c][lp] for c in range(4)]

    else:  # the patch's own vertices are the control points
        nv = vpp
        ctrl_out = vs_out
        outer = np.tile(np.asarray(state.default_outer, F32), (q, 1))
        inner = np.tile(np.asarray(state.default_inner, F32), (q, 1))

        def control_point(reg: int, v: int, lp: np.ndarray) -> list:
            idx = patches[lp, v]
            return [vstage._bcast(c, nverts, F32)[idx] for c in vres.outputs[reg]]

        def patch_value(reg: int, lp: np.ndarray) -> list:
            return [np.zeros(lp.size, F32)] * 4

    # tessellate each distinct set of levels once
    shader = tes.shader
    domain = shader.get_property("TES_PRIM_MODE")
    spacing = shader.get_property("TES_SPACING", 0)
    cw = bool(shader.get_property("TES_VERTEX_ORDER_CW", 0))
    point_mode = state.point_mode
    levels = np.concatenate([outer, inner], 1)
    uniq, which = np.unique(levels.view(np.uint32), axis=0, return_inverse=True)
    which = which.reshape(-1)
    tessellated = [
        tt.tessellate(domain, spacing, cw, point_mode, row.view(F32)[:4], row.view(F32)[4:])
        for row in uniq
    ]
    npoints = np.array([tessellated[w][0].size for w in which], np.int64)
    nindex = np.array([tessellated[w][2].size for w in which], np.int64)
    total = int(npoints.sum())
    base = np.zeros(q, np.int64)
    np.cumsum(npoints[:-1], out=base[1:])
    lane_patch = np.repeat(np.arange(q, dtype=np.int64), npoints)
    u = np.concatenate([tessellated[w][0] for w in which]) if total else np.zeros(0, F32)
    v = np.concatenate([tessellated[w][1] for w in which]) if total else np.zeros(0, F32)
    per = {"points": 1, "lines": 2, "triangles": 3}[state.output()]
    if int(nindex.sum()):
        idx = np.concatenate(
            [tessellated[w][2] + base[p] for p, w in enumerate(which) if nindex[p]]
        )
    else:
        idx = np.zeros(0, np.int64)
    prims = idx.reshape(-1, per)
    prim_patch = np.repeat(np.arange(q, dtype=np.int64), nindex // per)
    # the evaluation shader over every domain point
    w = np.zeros(total, F32) if domain != tt.TRIANGLES else (F32(1) - u) - v
    tcoord = [u, v, w, np.zeros(total, F32)]
    vertices = []
    for cv in range(nv):
        regs: list = []
        for reg, d in sorted(tes.kernel.input_decls.items()):
            while len(regs) <= reg:
                regs.append(None)
            src = ctrl_out.get((d.semantic, d.semantic_index))
            if src is not None and d.semantic not in _PATCH_SEMANTICS:
                regs[reg] = control_point(src, cv, lane_patch)
        vertices.append(regs)
    flat: list = []
    for reg, d in sorted(tes.kernel.input_decls.items()):
        while len(flat) <= reg:
            flat.append(None)
        src = ctrl_out.get((d.semantic, d.semantic_index))
        if src is not None and d.semantic in _PATCH_SEMANTICS:
            flat[reg] = patch_value(src, lane_patch)
    lane_draw = patch_draw[lane_patch] if multi else None
    res = tes.kernel(
        ExecEnv(
            n=total,
            inputs=flat,
            consts=vstage.pass_constants(consts[1], lane_draw),
            system_values={
                "TESSCOORD": tcoord,
                "TESSOUTER": [outer[lane_patch, c] for c in range(4)],
                "TESSINNER": [inner[lane_patch, c] for c in range(2)] + [np.zeros(total, F32)] * 2,
                "PRIM_ID": [patch_ids[lane_patch].astype(np.int32)] * 4,
                "VERTICESIN": [np.full(total, nv, np.int32)] * 4,
            },
            textures=state.tes_textures,
            vertices=vertices,
            memory=state.tes_memory,
        )
    )
    return TessOutput(
        outputs=res.outputs,
        n=total,
        prims=prims,
        prim_ids=patch_ids[prim_patch],
        tags=patch_draw[prim_patch],
        patches_by_draw=np.bincount(patch_draw, minlength=ndraws),
        points_by_draw=np.bincount(patch_draw, weights=npoints, minlength=ndraws).astype(np.int64),
        point_patch=lane_patch,
    )


def _gather_inputs(kernel: Any, src_out: dict, outputs: dict, n: int, idx: np.ndarray) -> list:
    """IN[v][*] of a kernel's lanes: the earlier stage's outputs of the same
    semantic at vertices ``idx``."""
    regs: list = []
    for reg, d in sorted(kernel.input_decls.items()):
        while len(regs) <= reg:
            regs.append(None)
        src = src_out.get((d.semantic, d.semantic_index))
        if src is None or src not in outputs:
            continue
        regs[reg] = [vstage._bcast(c, n, F32)[idx] for c in outputs[src]]
    return regs


def _levels(store: TcsOutputs, reg: int | None, default: tuple, q: int, k: int) -> np.ndarray:
    """Each patch's levels: the control shader's output, else the defaults."""
    if reg is None:
        return np.tile(np.asarray(default, F32), (q, 1))
    return np.ascontiguousarray(store.patch[reg, :k].T)

"""Rasterize one band of a scene: coverage, interpolation, shading, fragment ops.

A band is one row of 64x64 tiles.  ``execute_band`` walks the scene's commands
in order and applies each to the band.  For a draw it takes the triangles
binned to the band and chooses, run by run in submission order, between two
ways of turning them into shaded fragments:

* **dense** — one big triangle at a time over the rectangle where its bounding
  box meets the band.  Attribute planes are evaluated by broadcasting a row
  vector against a column vector (one numpy operation per channel), and an
  edge whose plane is positive on all four corners of the rectangle is not
  evaluated at all (a fully covered rectangle needs no coverage mask).
* **sparse** — many small triangles at once.  Every 2x2 quad of every
  triangle's bounding box becomes a candidate; the three edge functions are
  evaluated for all candidate lanes in a few vectorized operations; empty
  quads are dropped; the survivors are shaded in one kernel call.  Pixels hit
  by several triangles of the batch are resolved in submission order by
  splitting the fragments into *layers* (the k-th hit of each pixel), applied
  one after another.

Lanes are grouped in 2x2 quads aligned to even pixel coordinates so that
DDX/DDY work, and helper lanes (uncovered pixels of a partly covered quad) are
shaded but never written.  Everything here runs on a worker thread and only
touches its own band of the framebuffer.
"""

from __future__ import annotations

import numpy as np

from gallium.numpipe.scene import TILE, ClearCmd, DrawCmd, MarkerCmd, Scene
from gallium.numpipe.setup import F32, fma32
from gallium.tgsi.compiler import ExecEnv

from .fragment import FragmentState, compare, depth_stencil, write_color

# A triangle whose box covers at least this many pixels of a band goes dense.
DENSE_MIN_PIXELS = 1024
# Sparse batches are cut so a batch never has more candidate quads than this.
SPARSE_MAX_QUADS = 1 << 17

_OX = np.array([0, 1, 0, 1], np.int64)
_OY = np.array([0, 0, 1, 1], np.int64)


def execute_band(scene: Scene, band: int) -> None:
    y0 = band * TILE
    y1 = min(scene.height, y0 + TILE)
    for cmd in scene.commands:
        if isinstance(cmd, ClearCmd):
            _clear(scene, cmd, y0, y1)
        elif isinstance(cmd, DrawCmd):
            ids = cmd.triangles_in_band(band)
            if ids.size:
                _draw(scene, cmd, ids, y0, y1, band)
        elif isinstance(cmd, MarkerCmd):
            cmd.run(band)


# ----------------------------------------------------------------------------
# clears
# ----------------------------------------------------------------------------


def _clear(scene: Scene, cmd: ClearCmd, y0: int, y1: int) -> None:
    for index, packed in cmd.colors:
        target = scene.cbufs[index]
        if target is None:
            continue
        target.raw[y0:y1] = packed
    zs = scene.zsbuf
    if zs is None or (cmd.depth_word is None and cmd.stencil is None):
        return
    layout = zs.layout
    if layout.split:
        if cmd.depth_word is not None:
            zs.words[y0:y1] = cmd.depth_word
        if cmd.stencil is not None and zs.stencil is not None:
            zs.stencil[y0:y1] = cmd.stencil & 0xFF
        return
    value = 0
    if cmd.depth_word is not None:
        value |= int(cmd.depth_word)
    if cmd.stencil is not None and layout.s_bits:
        value |= (cmd.stencil & ((1 << layout.s_bits) - 1)) << layout.s_shift
    view = zs.words[y0:y1]
    if layout.z_float:
        view[...] = np.float32(cmd.depth_word) if cmd.depth_word is not None else view
        return
    if cmd.zs_mask_keep:
        keep = np.asarray(cmd.zs_mask_keep, view.dtype)
        view[...] = (view & keep) | np.asarray(value, view.dtype)
    else:
        view[...] = value


# ----------------------------------------------------------------------------
# draws
# ----------------------------------------------------------------------------


def _draw(scene: Scene, cmd: DrawCmd, ids: np.ndarray, y0: int, y1: int, band: int) -> None:
    state: FragmentState = cmd.state
    ts = cmd.tris
    bb = ts.bbox[ids]
    rows = np.minimum(bb[:, 3], y1 - 1) - np.maximum(bb[:, 1], y0) + 1
    area = (bb[:, 2] - bb[:, 0] + 1) * rows
    dense = area >= DENSE_MIN_PIXELS
    # Walk runs of equal kind in submission order.
    n = ids.size
    start = 0
    while start < n:
        kind = dense[start]
        end = start + 1
        while end < n and dense[end] == kind:
            end += 1
        if kind:
            for t in ids[start:end]:
                _dense_triangle(scene, state, ts, int(t), y0, y1, band)
        else:
            _sparse_run(scene, state, ts, ids[start:end], y0, y1, band)
        start = end


def _dense_triangle(scene: Scene, state: FragmentState, ts, t: int, y0: int, y1: int, band: int):
    bx0, by0, bx1, by1 = (int(v) for v in ts.bbox[t])
    wy0 = max(by0, y0)
    wy1 = min(by1, y1 - 1)
    if wy0 > wy1:
        return
    # Lane rectangle aligned to whole quads; the write region is the box in the band.
    lx0, ly0 = bx0 & ~1, wy0 & ~1
    lx1, ly1 = bx1 | 1, wy1 | 1
    px = np.arange(lx0, lx1 + 1, dtype=np.int64)
    py = np.arange(ly0, ly1 + 1, dtype=np.int64)
    h, w = py.size, px.size
    cover = None
    for i in range(3):
        c = int(ts.c[t, i])
        dx = int(ts.dcdx[t, i]) << 8
        dy = int(ts.dcdy[t, i]) << 8
        corners = [c - dx * x + dy * y for x in (bx0, bx1) for y in (wy0, wy1)]
        if min(corners) > 0:
            continue  # the whole write region is inside this edge
        e = (c - dx * px)[None, :] + (dy * py)[:, None]
        inside = e > 0
        cover = inside if cover is None else (cover & inside)
    sub = (slice(wy0 - ly0, wy1 - ly0 + 1), slice(bx0 - lx0, bx1 - lx0 + 1))
    if cover is not None and not cover[sub].any():
        return
    n = h * w
    geom = _DenseGeom(px, py, t)
    outputs, kill, z = _shade(state, ts, geom, n, (h // 2, w // 2), np.bool_(ts.facing[t]))
    alive = None if cover is None else cover
    if kill is not None:
        k2 = kill.reshape(h, w)
        alive = ~k2 if alive is None else (alive & ~k2)
    idx = (slice(wy0, wy1 + 1), slice(bx0, bx1 + 1))
    alive_sub = None if alive is None else alive[sub]
    _fragment_ops(
        scene,
        state,
        idx,
        True,
        alive_sub,
        {k: [_sub2(v, h, w, sub) for v in chans] for k, chans in outputs.items()},
        _sub2(z, h, w, sub),
        bool(ts.facing[t]),
        band,
    )


def _sub2(v, h: int, w: int, sub: tuple[slice, slice]):
    if v is None or np.ndim(v) == 0:
        return v
    return np.asarray(v).reshape(h, w)[sub]


class _DenseGeom:
    """Lane geometry of a dense rectangle: lanes are row-major pixels."""

    dense = True

    def __init__(self, px: np.ndarray, py: np.ndarray, t: int) -> None:
        self.px, self.py, self.t = px, py, t

    def plane(self, coef: np.ndarray) -> np.ndarray:
        """coef (3,) [a0, dadx, dady] -> values (h*w,) in float32."""
        a0, dadx, dady = F32(coef[0]), F32(coef[1]), F32(coef[2])
        row = (a0 + dadx * self.px.astype(F32)).astype(F32)
        col = (dady * self.py.astype(F32)).astype(F32)
        return (row[None, :] + col[:, None]).reshape(-1)

    def plane_exact(self, coef: np.ndarray) -> np.ndarray:
        """fma(dady, py, fma(dadx, px, a0)), llvmpipe's exact evaluation order."""
        inner = fma32(F32(coef[1]), self.px, F32(coef[0]))
        return fma32(F32(coef[2]), self.py[:, None], inner[None, :]).reshape(-1)

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        h, w = self.py.size, self.px.size
        return (
            np.broadcast_to(self.px[None, :], (h, w)).reshape(-1),
            np.broadcast_to(self.py[:, None], (h, w)).reshape(-1),
        )


class _SparseGeom:
    """Lane geometry of a quad list: lane 4*q + 2*dy + dx."""

    dense = False

    def __init__(self, qx: np.ndarray, qy: np.ndarray, tq: np.ndarray) -> None:
        self.qx, self.qy, self.tq = qx, qy, tq

    def plane(self, coef: np.ndarray) -> np.ndarray:
        """coef (nq, 3) per quad -> values (4*nq,)."""
        a0, dadx, dady = coef[:, 0], coef[:, 1], coef[:, 2]
        base = (a0 + dadx * self.qx.astype(F32) + dady * self.qy.astype(F32)).astype(F32)
        step = dadx[:, None] * _OX.astype(F32) + dady[:, None] * _OY.astype(F32)
        return (base[:, None] + step).astype(F32).reshape(-1)

    def plane_exact(self, coef: np.ndarray) -> np.ndarray:
        px = self.qx[:, None] + _OX
        py = self.qy[:, None] + _OY
        inner = fma32(coef[:, 1:2], px, coef[:, 0:1])
        return fma32(coef[:, 2:3], py, inner).reshape(-1)

    def coords(self) -> tuple[np.ndarray, np.ndarray]:
        return (
            (self.qx[:, None] + _OX).reshape(-1),
            (self.qy[:, None] + _OY).reshape(-1),
        )


def _coef(ts, geom, arr: np.ndarray) -> np.ndarray:
    """Pick a triangle's coefficients: (3,...) for dense, (nq, 3, ...) for sparse."""
    if geom.dense:
        return arr[geom.t]
    return arr[geom.tq]


def _shade(state: FragmentState, ts, geom, n: int, quad_shape, facing):
    """Interpolate the FS inputs, run the fragment shader; return outputs, kill, z."""
    z = geom.plane_exact(_coef(ts, geom, ts.z))
    need_persp = bool(ts.perspective.any())
    rcp_w = None
    if need_persp:
        w_one = ts.w_is_one[geom.t] if geom.dense else bool(ts.w_is_one[geom.tq].all())
        if not w_one:
            oow = geom.plane(_coef(ts, geom, ts.oow))
            with np.errstate(divide="ignore", invalid="ignore"):
                rcp_w = (F32(1.0) / oow).astype(F32)
    inputs: list = []
    for reg, kind, slot in state.fs_inputs:
        while len(inputs) <= reg:
            inputs.append(None)
        if kind == "attr":
            coef = _coef(ts, geom, ts.inputs)[..., slot, :, :]  # (3, 4) or (nq, 3, 4)
            chans = []
            for c in range(4):
                v = geom.plane(coef[..., c])
                if rcp_w is not None and ts.perspective[slot]:
                    v = (v * rcp_w).astype(F32)
                chans.append(v)
            inputs[reg] = chans
        elif kind == "pos":
            px, py = geom.coords()
            off = F32(0.0) if state.coord_integer_center else F32(0.5)
            fx = px.astype(F32) + off
            fy = py.astype(F32) + off
            if state.coord_lower_left:
                fy = F32(state.fb_height) - fy
            wv = geom.plane(_coef(ts, geom, ts.oow))
            inputs[reg] = [fx, fy, z, wv]
        elif kind == "face":
            if geom.dense:
                f = F32(1.0) if facing else F32(-1.0)
            else:
                f = np.where(ts.facing[geom.tq], F32(1.0), F32(-1.0)).repeat(4)
            inputs[reg] = [f, F32(0.0), F32(0.0), F32(1.0)]
        else:
            inputs[reg] = None
    env = ExecEnv(
        n=n,
        inputs=inputs,
        consts=state.consts,
        quad_shape=quad_shape,
        textures=state.textures,
    )
    res = state.kernel(env)
    outputs = {}
    for reg, chans in res.outputs.items():
        outputs[reg] = [_lanes(c, n) for c in chans]
    kill = None if res.kill is None else np.broadcast_to(res.kill, (n,))
    return outputs, kill, z


def _lanes(v, n: int):
    if np.ndim(v) == 0:
        return v
    return np.asarray(v).reshape(-1) if np.asarray(v).size == n else np.broadcast_to(v, (n,))


def _sparse_run(scene: Scene, state: FragmentState, ts, ids: np.ndarray, y0, y1, band) -> None:
    bb = ts.bbox[ids].astype(np.int64)
    x0, x1 = bb[:, 0], bb[:, 2]
    ya = np.maximum(bb[:, 1], y0)
    yb = np.minimum(bb[:, 3], y1 - 1)
    qx0 = x0 & ~1
    qy0 = ya & ~1
    nqx = (x1 - qx0) // 2 + 1
    nqy = (yb - qy0) // 2 + 1
    counts = nqx * nqy
    # Cut into batches of bounded size (in order).
    cum = np.cumsum(counts)
    start = 0
    total_tris = ids.size
    while start < total_tris:
        base = cum[start - 1] if start else 0
        end = int(np.searchsorted(cum, base + SPARSE_MAX_QUADS, side="right"))
        end = max(end, start + 1)
        sl = slice(start, end)
        _sparse_batch(
            scene,
            state,
            ts,
            ids[sl],
            x0[sl],
            x1[sl],
            ya[sl],
            yb[sl],
            qx0[sl],
            qy0[sl],
            nqx[sl],
            counts[sl],
            band,
        )
        start = end


def _sparse_batch(scene, state, ts, ids, x0, x1, ya, yb, qx0, qy0, nqx, counts, band) -> None:
    total = int(counts.sum())
    if total == 0:
        return
    k = ids.size
    tq = np.repeat(np.arange(k), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    local = np.arange(total) - first
    nx = nqx[tq]
    qx = qx0[tq] + 2 * (local % nx)
    qy = qy0[tq] + 2 * (local // nx)
    tri = ids[tq]
    px = qx[:, None] + _OX
    py = qy[:, None] + _OY
    cover = (px >= x0[tq][:, None]) & (px <= x1[tq][:, None])
    cover &= (py >= ya[tq][:, None]) & (py <= yb[tq][:, None])
    for i in range(3):
        c = ts.c[tri, i]
        dx = ts.dcdx[tri, i] << 8
        dy = ts.dcdy[tri, i] << 8
        eq = c - dx * qx + dy * qy
        e = eq[:, None] - dx[:, None] * _OX + dy[:, None] * _OY
        cover &= e > 0
    keep = cover.any(axis=1)
    if not keep.any():
        return
    qx, qy, tri, cover = qx[keep], qy[keep], tri[keep], cover[keep]
    nq = qx.size
    n = 4 * nq
    geom = _SparseGeom(qx, qy, tri)
    outputs, kill, z = _shade(state, ts, geom, n, (nq, 1), None)
    alive = cover.reshape(-1)
    if kill is not None:
        alive = alive & ~kill
    sel = np.nonzero(alive)[0]
    if sel.size == 0:
        return
    lx, ly = geom.coords()
    lx, ly = lx[sel], ly[sel]
    facing = np.repeat(ts.facing[tri], 4)[sel]
    outs = {r: [c[sel] if np.ndim(c) else c for c in chans] for r, chans in outputs.items()}
    zs = z[sel]
    # Resolve pixels hit more than once in submission order, layer by layer.
    key = ly * scene.width + lx
    order = np.argsort(key, kind="stable")
    skey = key[order]
    new_group = np.empty(skey.size, bool)
    new_group[0] = True
    new_group[1:] = skey[1:] != skey[:-1]
    if new_group.all():
        _fragment_ops(scene, state, (ly, lx), False, None, outs, zs, facing, band)
        return
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(skey.size), 0))
    rank = np.empty(skey.size, np.int64)
    rank[order] = np.arange(skey.size) - group_start
    for layer in range(int(rank.max()) + 1):
        m = np.nonzero(rank == layer)[0]
        _fragment_ops(
            scene,
            state,
            (ly[m], lx[m]),
            False,
            None,
            {r: [c[m] if np.ndim(c) else c for c in chans] for r, chans in outs.items()},
            zs[m],
            facing[m],
            band,
        )


# ----------------------------------------------------------------------------
# fragment operations
# ----------------------------------------------------------------------------


def _fragment_ops(scene, state: FragmentState, idx, dense: bool, alive, outputs, z, facing, band):
    """Alpha test, depth/stencil, count, colour writes for one set of distinct pixels."""
    if state.depth_output is not None and state.depth_output in outputs:
        z = np.asarray(outputs[state.depth_output][2], F32)
    alpha = state.dsa.alpha
    if alpha.enabled and state.color_outputs and state.color_outputs[0] is not None:
        a = outputs[state.color_outputs[0]][3]
        ok = compare(alpha.func, np.asarray(a, F32), F32(alpha.ref_value))
        ok = np.broadcast_to(ok, _shape_of(idx, dense))
        alive = ok if alive is None else (alive & ok)
    if scene.zsbuf is not None:
        stencil_value = None
        if state.stencil_output is not None and state.stencil_output in outputs:
            stencil_value = outputs[state.stencil_output][1]
            stencil_value = (
                np.asarray(stencil_value).view(np.uint32)
                if np.asarray(stencil_value).dtype == F32
                else stencil_value
            )
        alive = depth_stencil(state, scene.zsbuf, idx, dense, alive, z, facing, stencil_value)
    if alive is not None and not dense:
        if not alive.all():
            keep = np.nonzero(alive)[0]
            idx = (idx[0][keep], idx[1][keep])
            outputs = {
                r: [c[keep] if np.ndim(c) else c for c in chans] for r, chans in outputs.items()
            }
            alive = None
    count = _count(idx, dense, alive)
    scene.stats_fragments[band] += count
    for counter in state.counters:
        counter.add(count)
    if count == 0:
        return
    for i, target in enumerate(scene.cbufs):
        if target is None or i >= len(state.color_outputs):
            continue
        reg = state.color_outputs[i]
        if reg is None or reg not in outputs:
            continue
        rt = state.blend[i]
        src1 = None
        if state.blend_enabled and len(state.color_outputs) > 0:
            src1_reg = getattr(state, "src1_output", None)
            if src1_reg is not None and src1_reg in outputs:
                src1 = outputs[src1_reg]
        write_color(target, idx, dense, alive, outputs[reg], rt, state, src1)


def _shape_of(idx, dense: bool) -> tuple[int, ...]:
    if dense:
        return (idx[0].stop - idx[0].start, idx[1].stop - idx[1].start)
    return (idx[0].shape[0],)


def _count(idx, dense: bool, alive) -> int:
    if alive is not None:
        return int(np.count_nonzero(alive))
    shape = _shape_of(idx, dense)
    return int(np.prod(shape))

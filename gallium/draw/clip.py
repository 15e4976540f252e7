"""Clipping in homogeneous clip space, as Mesa's draw module does it for llvmpipe.

Each vertex gets a clip mask: bit i is set when it lies outside plane i, the
planes being, in order, right ``w - x``, left ``x + w``, top ``w - y``, bottom
``y + w`` (when ``clip_xy``), near ``z + w`` (``z`` with ``clip_halfz``) and far
``w - z`` (when depth clipping is on), then the enabled user clip planes.
A triangle whose vertices' masks are all zero passes untouched; one whose
masks share a bit is dropped; the rest are clipped plane by plane
(Sutherland-Hodgman), in plane order, and the polygon is emitted as a fan
around its first vertex, which becomes every fan triangle's provoking vertex
(flat-shaded inputs are copied to it from the original provoking vertex).

Arithmetic matches draw_pipe_clip.c so that llvmpipe's coverage is
reproduced: distances are float32 dot products; a new vertex is interpolated
from the endpoint nearer the plane with ``t = d / (d - d_other)``;
``out + t*(in - out)`` per component; its window position is
``x * (1/w) * scale + translate`` in plain float32 (unlike unclipped vertices,
whose viewport transform is fused).  Triangles with NaN or infinite
distances are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32

FRUSTUM = np.array(
    [
        [-1, 0, 0, 1],  # right
        [1, 0, 0, 1],  # left
        [0, -1, 0, 1],  # top
        [0, 1, 0, 1],  # bottom
        [0, 0, 1, 1],  # near
        [0, 0, -1, 1],  # far
    ],
    dtype=F32,
)


@dataclass
class ClippedGeometry:
    """Vertices and triangles after clipping (new vertices appended)."""

    pos: np.ndarray  # (V', 4) clip coordinates
    win: np.ndarray  # (V', 3) window coordinates
    oow: np.ndarray  # (V',) 1 / w
    attrs: np.ndarray  # (V', K, 4)
    tris: np.ndarray  # (M', 3)
    prim_ids: np.ndarray  # (M',)


def plane_table(
    clip_xy: bool, clip_z: bool, clip_halfz: bool, user: list
) -> tuple[np.ndarray, list[int]]:
    """(planes (P, 4) float32, active plane indices) in draw's bit order."""
    planes = FRUSTUM.copy()
    if clip_halfz:
        planes[4] = (0, 0, 1, 0)
    table = np.concatenate([planes, np.asarray(user, F32).reshape(-1, 4)]) if user else planes
    active = []
    if clip_xy:
        active += [0, 1, 2, 3]
    if clip_z:
        active += [4, 5]
    active += list(range(6, 6 + len(user)))
    return table, active


def _dot4(v: np.ndarray, p: np.ndarray) -> np.ndarray:
    """float32 ``v.x*p.x + v.y*p.y + v.z*p.z + v.w*p.w``, summed left to right."""
    v = v.astype(F32)
    s = (v[..., 0] * p[0]).astype(F32)
    s = (s + (v[..., 1] * p[1]).astype(F32)).astype(F32)
    s = (s + (v[..., 2] * p[2]).astype(F32)).astype(F32)
    return (s + (v[..., 3] * p[3]).astype(F32)).astype(F32)


def clip_triangles(
    pos: np.ndarray,
    win: np.ndarray,
    oow: np.ndarray,
    attrs: np.ndarray,
    tris: np.ndarray,
    prim_ids: np.ndarray,
    *,
    planes: np.ndarray,
    active: list[int],
    interp: list[str],
    flatshade_first: bool,
    scale: tuple[float, float, float],
    translate: tuple[float, float, float],
) -> ClippedGeometry:
    """Clip ``tris`` (indices into the vertex arrays) against the active planes."""
    m = tris.shape[0]
    if m == 0 or not active:
        return ClippedGeometry(pos, win, oow, attrs, tris, prim_ids)
    pos = pos.astype(F32)
    dist = np.stack([_dot4(pos, planes[i]) for i in active], axis=1)  # (V, A)
    outside = dist < 0
    bits = np.zeros(pos.shape[0], np.int64)
    for j in range(len(active)):
        bits |= outside[:, j].astype(np.int64) << j
    tb = bits[tris]
    or_mask = tb[:, 0] | tb[:, 1] | tb[:, 2]
    and_mask = tb[:, 0] & tb[:, 1] & tb[:, 2]
    finite = np.isfinite(pos[tris]).all(axis=(1, 2))
    plain = (or_mask == 0) & finite
    needs = (or_mask != 0) & (and_mask == 0) & finite
    if not needs.any():
        keep = plain
        return ClippedGeometry(pos, win, oow, attrs, tris[keep], prim_ids[keep])

    clipper = _PolygonClipper(
        pos, win, oow, attrs, planes, active, interp, flatshade_first, scale, translate
    )
    fans: list[tuple[int, np.ndarray]] = []
    for t in np.nonzero(needs)[0]:
        fan = clipper.clip(tris[t], int(or_mask[t]))
        if fan is not None:
            fans.append((int(t), fan))
    plain_idx = np.nonzero(plain)[0]
    parts_t = [tris[plain_idx]]
    parts_i = [prim_ids[plain_idx]]
    keys = [plain_idx]
    for t, fan in fans:
        parts_t.append(fan)
        parts_i.append(np.full(fan.shape[0], prim_ids[t]))
        keys.append(np.full(fan.shape[0], t))
    order = np.argsort(np.concatenate(keys), kind="stable")
    new_pos, new_win, new_oow, new_attr = clipper.new_vertices()
    return ClippedGeometry(
        np.concatenate([pos, new_pos]),
        np.concatenate([win, new_win]),
        np.concatenate([oow, new_oow]),
        np.concatenate([attrs, new_attr]),
        np.concatenate(parts_t)[order],
        np.concatenate(parts_i)[order],
    )


class _PolygonClipper:
    """Clips one triangle at a time; new vertices accumulate in lists."""

    def __init__(
        self, pos, win, oow, attrs, planes, active, interp, flatshade_first, scale, translate
    ):
        self.pos, self.win, self.oow, self.attrs = pos, win, oow, attrs
        self.planes = planes
        self.active = active
        self.flat = [i for i, m in enumerate(interp) if m == "constant"]
        self.linear = [i for i, m in enumerate(interp) if m == "linear"]
        self.persp = [i for i, m in enumerate(interp) if m == "perspective"]
        self.flatshade_first = flatshade_first
        self.scale = np.asarray(scale, F32)
        self.translate = np.asarray(translate, F32)
        self.base = pos.shape[0]
        self.vpos: list[np.ndarray] = []
        self.vwin: list[np.ndarray] = []
        self.voow: list[F32] = []
        self.vattr: list[np.ndarray] = []

    # A polygon vertex is ("old", index) or ("new", record) while clipping.

    def _get(self, v):
        if v[0] == "old":
            i = v[1]
            return self.pos[i], self.attrs[i]
        return v[1]["pos"], v[1]["attr"]

    def _interp(self, t: F32, out_v, in_v):
        """LINTERP(t, out, in) = out + t*(in - out) for position and attributes."""
        t = F32(t)
        p_out, a_out = self._get(out_v)
        p_in, a_in = self._get(in_v)
        pos = (p_out + t * (p_in - p_out).astype(F32)).astype(F32)
        w_oow = F32(F32(1.0) / pos[3])
        win = ((pos[:3] * w_oow).astype(F32) * self.scale).astype(F32) + self.translate
        attr = a_out.copy()
        if self.persp:
            p = self.persp
            attr[p] = (a_out[p] + t * (a_in[p] - a_out[p]).astype(F32)).astype(F32)
        if self.linear:
            t_np = t
            for k in range(2):
                if p_in[k] != p_out[k]:
                    in_c = F32(p_in[k] / p_in[3])
                    out_c = F32(p_out[k] / p_out[3])
                    dst_c = F32(pos[k] / pos[3])
                    t_np = F32((dst_c - out_c) / (in_c - out_c))
                    break
            lin = self.linear
            attr[lin] = (a_out[lin] + t_np * (a_in[lin] - a_out[lin]).astype(F32)).astype(F32)
        return ("new", {"pos": pos, "win": win.astype(F32), "oow": w_oow, "attr": attr.astype(F32)})

    def _dist(self, v, plane: int) -> F32:
        p, _ = self._get(v)
        return _dot4(p[None, :], self.planes[plane])[0]

    def clip(self, tri: np.ndarray, mask: int) -> np.ndarray | None:
        inlist = [("old", int(i)) for i in tri]
        remaining = mask
        while remaining and len(inlist) >= 3:
            j = (remaining & -remaining).bit_length() - 1
            remaining &= remaining - 1
            plane = self.active[j]
            n = len(inlist)
            ring = [*inlist, inlist[0]]
            prev = ring[0]
            dp_prev = self._dist(prev, plane)
            if not np.isfinite(dp_prev):
                return None
            out = []
            for i in range(1, n + 1):
                v = ring[i]
                dp = self._dist(v, plane)
                if not np.isfinite(dp):
                    return None
                if dp_prev >= 0:
                    out.append(prev)
                    different = dp < 0
                else:
                    different = not (dp < 0)
                if different:
                    denom = F32(dp - dp_prev)
                    if dp < 0:  # going out
                        if -dp < dp_prev:
                            out.append(self._interp(F32(dp / denom), v, prev))
                        else:
                            out.append(self._interp(F32(-dp_prev / denom), prev, v))
                    else:  # coming back in
                        if -dp_prev < dp:
                            out.append(self._interp(F32(-dp_prev / denom), prev, v))
                        else:
                            out.append(self._interp(F32(dp / denom), v, prev))
                prev, dp_prev = v, dp
            inlist = out
        if len(inlist) < 3:
            return None
        provoking = int(tri[0] if self.flatshade_first else tri[2])
        if self.flat and inlist[0] != ("old", provoking):
            p, a = self._get(inlist[0])
            if inlist[0][0] == "old":
                idx = inlist[0][1]
                rec = {"pos": p, "win": self.win[idx], "oow": self.oow[idx], "attr": a.copy()}
            else:
                rec = dict(inlist[0][1])
                rec["attr"] = rec["attr"].copy()
            rec["attr"][self.flat] = self.attrs[provoking][self.flat]
            inlist[0] = ("new", rec)
        ids = [self._index(v) for v in inlist]
        k = len(ids)
        fan = []
        for i in range(2, k):
            if self.flatshade_first:
                fan.append((ids[0], ids[i - 1], ids[i]))
            else:
                fan.append((ids[i - 1], ids[i], ids[0]))
        return np.asarray(fan, np.int64)

    def _index(self, v) -> int:
        if v[0] == "old":
            return v[1]
        rec = v[1]
        if "index" not in rec:
            rec["index"] = self.base + len(self.vpos)
            self.vpos.append(rec["pos"])
            self.vwin.append(rec["win"])
            self.voow.append(rec["oow"])
            self.vattr.append(rec["attr"])
        return rec["index"]

    def new_vertices(self):
        k = self.attrs.shape[1]
        if not self.vpos:
            return (
                np.zeros((0, 4), F32),
                np.zeros((0, 3), F32),
                np.zeros(0, F32),
                np.zeros((0, k, 4), F32),
            )
        return (
            np.stack(self.vpos).astype(F32),
            np.stack(self.vwin).astype(F32),
            np.asarray(self.voow, F32),
            np.stack(self.vattr).astype(F32),
        )

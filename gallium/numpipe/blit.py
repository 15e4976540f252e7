"""Blits: ``pipe_context::blit`` computed as llvmpipe computes it.

llvmpipe answers ``blit`` with Mesa's u_blitter (lp_surface.c ``lp_blit``):
a same-format, unscaled, unmasked blit of boxes inside both resources is a
``resource_copy_region``; anything else draws a rectangle over the
destination box with a fragment shader that samples the source.  The pixels
that rectangle gives are what this module computes, directly on the
resources, without the draw path:

* *Geometry*: the rectangle's four corners are ``x / width * 2 - 1`` in clip
  space (float32), a triangle fan (0, 1, 2), (0, 2, 3) through the viewport
  that maps the destination level onto itself; corners outside the level
  go through the draw module's clipper (:mod:`gallium.draw.clip`).  The
  blitter's rasterizer state: half-pixel centres, the *bottom* edge rule,
  no culling; its scissor when the blit has one.
* *Coordinates*: each corner carries the source box corner
  (``x / level_width``, normalized unless the texel-fetch path or a RECT
  source applies) and the source layer; the triangles are set up as
  llvmpipe sets up linear inputs (:func:`gallium.draw.setup.setup_triangles`)
  and evaluated at each pixel as llvmpipe's fragment shader does it,
  ``fma(dady, y, fma(dadx, x, a0))`` with single roundings.
* *Sampling*: the blitter's ``TEX_LZ`` (clamp to edge, the blit's filter for
  scaled colour and depth blits, nearest otherwise) or, for unscaled nearest
  blits whose source box lies inside the level, ``FLR`` + ``TXF_LZ`` --
  both through :mod:`gallium.numpipe.sampler`, which reproduces llvmpipe's
  filtering bits.  Cube maps are sampled as 2D arrays (llvmpipe reports
  PIPE_CAP_SAMPLER_VIEW_TARGET).  Layers: one draw for a 1D/2D/RECT source,
  else one per destination layer, its source layer ``z + i * step`` (plus a
  half step for 3D sources, so that a minified 3D level averages its
  slices).
* *Writing*: the destination format's conversion (UNORM ``rint(x * max)``),
  the colour mask, ``alpha_blend`` (SRC_ALPHA / INV_SRC_ALPHA on colour and
  alpha) through :mod:`workers.fragment`, depth through the format's depth
  conversion, stencil as the fetched value; the window rectangles.

The checks (``check_blit_info``, ``check_clear_texture``, ``mipmap_blits``)
are the contract's, in :mod:`gallium.pipe.blit`: both contexts run them at
the call; this module runs the checked work.

Ordering (theory of operation)
------------------------------
A blit is recorded like a draw that writes ``dst`` and reads ``src``: the
context runs its queued draws if they use either resource, and submits its
current scene if that scene references either resource, then submits a
:class:`BlitJob` to the screen's worker pool, to start once the context's
previous work and every fence pending on either resource (any context's) are
signalled.  The job's fence becomes the context's last fence and is added to
both resources' pending fences, so later scenes, maps and blits wait for it.
Nothing blocks the caller.  A job's units are row bands
of the destination layers, each written by one worker; when source and
destination are the same level of one resource, the job runs as one unit
that reads a copy of the source, so overlapping boxes give the same bytes
for any number of workers.
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..draw import clip
from ..draw.setup import setup_triangles
from ..draw.viewport import viewport_transform
from ..pipe.blit import (  # noqa: F401  (the checks are the contract's; kept importable here)
    _FLAT,
    _LAYERED,
    _STENCIL_ONLY,
    COORD_LIMIT,
    Blit,
    TextureClear,
    _box_inside,
    _samples,
    _scaled,
    blit_writable,
    check_blit_info,
    check_clear_texture,
    clear_texel,
    formats_compatible,
    mipmap_blits,
)
from ..pipe.enums import (
    BlendFactor,
    BlendFunc,
    Mask,
    MipFilter,
    TexFilter,
    TextureTarget,
    TexWrap,
)
from ..pipe.errors import add_origin_note
from ..pipe.fence import Fence
from ..pipe.state import RtBlendState, SamplerState
from ..tgsi.texture_api import TexRequest
from ..util.format import FormatDesc, depth_layout, depth_to_word, try_describe
from ..util.fp32 import fma32
from .resource import Resource
from .sampler import BoundView, TextureBindings

F32 = np.float32

# A unit of a blit job covers about this many destination pixels.
UNIT_PIXELS = 1 << 17

_TGSI_TARGET = {
    TextureTarget.TEXTURE_1D: "1D",
    TextureTarget.TEXTURE_2D: "2D",
    TextureTarget.TEXTURE_RECT: "RECT",
    TextureTarget.TEXTURE_3D: "3D",
    TextureTarget.TEXTURE_1D_ARRAY: "1D_ARRAY",
    TextureTarget.TEXTURE_2D_ARRAY: "2D_ARRAY",
}
_BLEND_OVER = RtBlendState(
    blend_enable=True,
    rgb_func=BlendFunc.ADD,
    rgb_src_factor=BlendFactor.SRC_ALPHA,
    rgb_dst_factor=BlendFactor.INV_SRC_ALPHA,
    alpha_func=BlendFunc.ADD,
    alpha_src_factor=BlendFactor.SRC_ALPHA,
    alpha_dst_factor=BlendFactor.INV_SRC_ALPHA,
)


# ----------------------------------------------------------------------------
# The blitter's rectangle
# ----------------------------------------------------------------------------


@dataclass
class _Layer:
    """What one destination layer of a blit draws: its set-up triangles and
    the texture request's constant parts."""

    dst_layer: int
    tris: Any  # setup.TriangleSet of the rectangle (texcoord plane in inputs[:, 0])
    layer_coord: float | None  # the source layer (array) or r (3D), a constant


@dataclass
class _Plan:
    """Everything a blit job's units share (built once, read by every worker)."""

    blit: Blit
    layers: list[_Layer]
    region: tuple[int, int, int, int]  # inclusive x0, y0, x1, y1 of the draw region
    view: BoundView | None  # the source as sampled
    stencil_view: BoundView | None
    sampler: SamplerState
    target: str  # TGSI target of the request
    use_txf: bool
    normalized: bool
    src_storage: np.ndarray
    dst_storage: np.ndarray
    fast_resolve: bool = False  # UNORM8 words averaged directly (see _resolve_rows)


def _f32div(a: float, b: float) -> F32:
    return F32(F32(a) / F32(b))


def _texcoords(b: Blit, use_txf: bool) -> tuple[F32, F32, F32, F32]:
    """get_texcoords' x1, y1, x2, y2 of the source box (normalized unless the
    texel-fetch path or a RECT source)."""
    s = b.src_box
    x1, y1, x2, y2 = s.x, s.y, s.x + s.width, s.y + s.height
    normalized = not use_txf and b.src.target != TextureTarget.TEXTURE_RECT and _samples(b.src) == 1
    if not normalized:
        return F32(x1), F32(y1), F32(x2), F32(y2)
    lay = b.src.levels[b.src_level]
    w, h = lay.width, lay.height
    return _f32div(x1, w), _f32div(y1, h), _f32div(x2, w), _f32div(y2, h)


def _use_txf(b: Blit, filt: TexFilter) -> bool:
    """u_blitter's choice of FLR + TXF: unscaled, nearest, the box inside the level."""
    if _scaled(b.src_box, b.dst_box) or filt != TexFilter.NEAREST:
        return False
    box = b.src_box
    x, y, z, w, h, d = box.x, box.y, box.z, box.width, box.height, box.depth
    if w < 0:
        x, w = x + w, -w
    if h < 0:
        y, h = y + h, -h
    if d < 0:
        z, d = z + d, -d
    lay = b.src.levels[b.src_level]
    depth = lay.layers
    return (
        0 <= x < lay.width
        and 0 <= y < lay.height
        and 0 <= z < depth
        and 0 < x + w <= lay.width
        and 0 < y + h <= lay.height
        and 0 < z + d <= depth
    )


def _rectangle(b: Blit, coords: tuple, layer: int, region: tuple, zw: tuple[F32, F32]) -> Any:
    """Set up the blitter's rectangle over ``b.dst_box`` on destination layer
    ``layer`` with texture coordinates ``coords`` (x1, y1, x2, y2) and the
    constant ``zw``: blitter_set_rectangle, the fan's two triangles, the
    draw module's clipper and llvmpipe's triangle setup."""
    lay = b.dst.levels[b.dst_level]
    W, H = lay.width, lay.height
    d = b.dst_box
    x1, y1, x2, y2 = d.x, d.y, d.x + d.width, d.y + d.height
    fw, fh = F32(W), F32(H)
    two, one = F32(2.0), F32(1.0)

    def ndc(v: int, size: F32) -> F32:
        return F32(F32(F32(v) / size) * two - one)

    nx1, nx2, ny1, ny2 = ndc(x1, fw), ndc(x2, fw), ndc(y1, fh), ndc(y2, fh)
    pos = np.array([[nx1, ny1, 0, 1], [nx2, ny1, 0, 1], [nx2, ny2, 0, 1], [nx1, ny2, 0, 1]], F32)
    s1, t1, s2, t2 = coords
    z, w = zw
    attrs = np.array([[[s1, t1, z, w]], [[s2, t1, z, w]], [[s2, t2, z, w]], [[s1, t2, z, w]]], F32)
    half = F32(0.5)
    scale = (F32(half * fw), F32(half * fh), F32(1.0))
    translate = (F32(half * fw), F32(half * fh), F32(0.0))
    win, oow = viewport_transform(pos, scale, translate)
    tris = np.array([[0, 1, 2], [0, 2, 3]], np.int64)
    prims = np.zeros(2, np.int64)
    if (np.abs(pos[:, :2]) > 1).any():
        planes, active = clip.plane_table(True, True, False, [])
        geo = clip.clip_triangles(
            pos, win, oow, attrs, tris, prims, planes=planes, active=active,
            interp=["linear"], flatshade_first=False, scale=scale, translate=translate,
        )  # fmt: skip
        win, oow, attrs, tris = geo.win, geo.oow, geo.attrs, geo.tris
    return setup_triangles(
        win, oow, tris, attrs, ["linear"], region=region,
        half_pixel_center=True, bottom_edge_rule=True,
    )  # fmt: skip


def _region(b: Blit) -> tuple[int, int, int, int] | None:
    lay = b.dst.levels[b.dst_level]
    x0, y0, x1, y1 = 0, 0, lay.width - 1, lay.height - 1
    if b.scissor is not None:
        mx, my, Mx, My = b.scissor
        x0, y0, x1, y1 = max(x0, mx), max(y0, my), min(x1, Mx - 1), min(y1, My - 1)
    if x0 > x1 or y0 > y1:
        return None
    return x0, y0, x1, y1


def _view(res: Resource, storage: np.ndarray, desc: FormatDesc, level: int) -> BoundView:
    """util_blitter_default_src_texture: one level, every layer, cubes as 2D arrays."""
    target = res.target
    if target in (TextureTarget.TEXTURE_CUBE, TextureTarget.TEXTURE_CUBE_ARRAY):
        target = TextureTarget.TEXTURE_2D_ARRAY
    layers = res.levels[level].layers
    return BoundView(
        resource=res,
        storage=storage,
        desc=desc,
        target=target,
        swizzle=(0, 1, 2, 3),
        first_level=level,
        last_level=level,
        first_layer=0,
        last_layer=layers - 1,
        buf_offset=0,
        buf_size=0,
    )


def plan_blit(b: Blit) -> _Plan | None:
    """Build what the job's units share (driver thread); None: nothing to draw."""
    region = _region(b)
    if region is None:
        return None
    src, sdesc = b.src, b.src_desc
    filt = b.filter
    if b.src_desc.is_stencil or not _scaled(b.src_box, b.dst_box):
        filt = TexFilter.NEAREST
    use_txf = _use_txf(b, filt) and _samples(src) == 1
    view_target = _view(src, src.storage, sdesc, b.src_level).target
    coords = _texcoords(b, use_txf)
    layers: list[_Layer] = []
    dbox, sbox = b.dst_box, b.src_box
    zero = F32(0.0)
    if src.target in _FLAT:
        layers.append(_Layer(dbox.z, _rectangle(b, coords, dbox.z, region, (zero, zero)), None))
    else:
        src_depth = abs(sbox.depth)
        step = F32(F32(src_depth) / F32(dbox.depth))
        center = (
            F32(0.5 / dbox.depth * src_depth) if src.target == TextureTarget.TEXTURE_3D else zero
        )
        if sbox.depth < 0:
            step, center = -step, -center
        for i in range(dbox.depth):
            src_z = F32(F32(F32(i) * step) + center)
            layer = F32(F32(sbox.z) + src_z)
            if view_target == TextureTarget.TEXTURE_3D:
                lcoord = layer if use_txf else F32(layer / F32(src.levels[b.src_level].layers))
                zw = (lcoord, zero)
            elif view_target == TextureTarget.TEXTURE_1D_ARRAY:
                lcoord = layer
                zw = (zero, zero)
            else:  # 2D arrays (and cube maps as 2D arrays)
                lcoord = layer
                zw = (layer, zero)
            c = coords
            if view_target == TextureTarget.TEXTURE_1D_ARRAY:
                c = (coords[0], layer, coords[2], layer)
            layers.append(_Layer(dbox.z + i, _rectangle(b, c, dbox.z + i, region, zw), lcoord))
    normalized = not use_txf and src.target != TextureTarget.TEXTURE_RECT and _samples(src) == 1
    sampler = SamplerState(
        wrap_s=TexWrap.CLAMP_TO_EDGE,
        wrap_t=TexWrap.CLAMP_TO_EDGE,
        wrap_r=TexWrap.CLAMP_TO_EDGE,
        min_img_filter=filt,
        mag_img_filter=filt,
        min_mip_filter=MipFilter.NONE,
        normalized_coords=normalized,
    )
    src_storage = src.storage
    dst_storage = b.dst.storage
    stencil_view = None
    view = None
    if b.kind == "color" or b.write_depth:
        view = _view(src, src_storage, sdesc, b.src_level)
    if b.write_stencil:
        sd = try_describe(_STENCIL_ONLY[sdesc.format])
        stencil_view = _view(src, src_storage, sd, b.src_level)  # type: ignore[arg-type]
    return _Plan(
        fast_resolve=_fast_resolve(b),
        blit=b,
        layers=[ly for ly in layers if ly.tris.count],
        region=region,
        view=view,
        stencil_view=stencil_view,
        sampler=sampler,
        target=_TGSI_TARGET[view_target],
        use_txf=use_txf,
        normalized=normalized,
        src_storage=src_storage,
        dst_storage=dst_storage,
    )


# ----------------------------------------------------------------------------
# Rasterizing the rectangle (a few triangles) over a band of rows
# ----------------------------------------------------------------------------


def cover_rows(ts: Any, ya: int, yb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The pixels of rows [ya, yb) that the triangles cover, over their
    bounding box: (row numbers, column numbers, the covering triangle of each
    pixel or -1)."""
    b = ts.bbox
    y0 = max(int(b[:, 1].min()), ya)
    y1 = min(int(b[:, 3].max()), yb - 1)
    x0 = int(b[:, 0].min())
    x1 = int(b[:, 2].max())
    if y0 > y1 or x0 > x1:
        return None
    ys = np.arange(y0, y1 + 1, dtype=np.int64)
    xs = np.arange(x0, x1 + 1, dtype=np.int64)
    owner = np.full((ys.size, xs.size), -1, np.int8)
    for t in range(ts.count):
        covered = None
        for e in range(3):
            dx = int(ts.dcdx[t, e]) << 8
            dy = int(ts.dcdy[t, e]) << 8
            edge = (int(ts.c[t, e]) + dy * ys)[:, None] - (dx * xs)[None, :]
            inside = edge > 0
            covered = inside if covered is None else covered & inside
        owner[covered] = t
    return ys, xs, owner


def interpolate(
    ts: Any, slot: int, chans: list[int], ys: np.ndarray, xs: np.ndarray, owner: np.ndarray
) -> list[np.ndarray]:
    """Each channel's value at every covered pixel, as llvmpipe's fragment
    shader interpolates a linear input: ``fma(dady, y, fma(dadx, x, a0))``
    (float32 with single roundings; x, y the integer pixel coordinates)."""
    fx = xs.astype(np.float64)[None, :]
    fy = ys.astype(np.float64)[:, None]
    out = []
    for ch in chans:
        v = np.zeros(owner.shape, F32)
        for t in range(ts.count):
            sel = owner == t
            if not sel.any():
                continue
            a0, dadx, dady = (ts.inputs[t, slot, k, ch] for k in range(3))
            row = fma32(F32(dadx), fx, F32(a0))  # (1, w)
            val = fma32(F32(dady), fy, row)  # (h, w)
            np.copyto(v, val, where=sel)
        out.append(v)
    return out


# ----------------------------------------------------------------------------
# The job
# ----------------------------------------------------------------------------


class BlitJob:
    """A blit on the worker pool: units are row bands of destination layers
    (see the module docstring for the ordering)."""

    def __init__(self, plan: _Plan, label: str = "blit") -> None:
        self.plan = plan
        self.fence = Fence(label=label)
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self.on_complete: list[Any] = []
        b = plan.blit
        x0, y0, x1, y1 = plan.region
        width = x1 - x0 + 1
        rows = max(1, UNIT_PIXELS // max(1, width))
        self.units: list[tuple[int, int, int]] = []  # (layer index, row a, row b)
        self.snapshot = b.src is b.dst and b.src_level == b.dst_level
        for li, _ in enumerate(plan.layers):
            for ya in range(y0, y1 + 1, rows):
                self.units.append((li, ya, min(ya + rows, y1 + 1)))
        self._src_copy: np.ndarray | None = None

    def unit_count(self) -> int:
        if not self.units:
            return 0
        return 1 if self.snapshot else len(self.units)

    def run_unit(self, unit: int, worker: int) -> None:
        if self.snapshot:
            # source and destination share a level: read a copy, one unit
            plan = dataclasses.replace(self.plan)
            store = plan.src_storage.copy()
            plan.src_storage = store
            if plan.view is not None:
                plan.view = dataclasses.replace(plan.view, storage=store)
            if plan.stencil_view is not None:
                plan.stencil_view = dataclasses.replace(plan.stencil_view, storage=store)
            for li, ya, yb in self.units:
                _run_band(plan, li, ya, yb)
            return
        li, ya, yb = self.units[unit]
        _run_band(self.plan, li, ya, yb)

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        add_origin_note(exc, f"a blit worker (unit {unit})")
        with self._lock:
            self.errors.append(exc)

    def complete(self) -> None:
        for cb in self.on_complete:
            try:
                cb(self)
            except BaseException as exc:  # pragma: no cover - defensive
                self.unit_failed(-1, exc)
        self.fence.signal()


class CopyJob(BlitJob):
    """A blit that is a resource_copy_region (one unit: a byte copy)."""

    def __init__(self, blit: Blit, label: str = "blit copy") -> None:
        self.blit = blit
        self.fence = Fence(label=label)
        self.errors = []
        self._lock = threading.Lock()
        self.on_complete = []
        self.src_storage = blit.src.storage
        self.dst_storage = blit.dst.storage

    def unit_count(self) -> int:
        return 1

    def run_unit(self, unit: int, worker: int) -> None:
        b = self.blit
        s, d = b.src_box, b.dst_box
        for k in range(_samples(b.src)):  # (lp_resource_copy_ms: every sample)
            sv = b.src.level_view(b.src_level, s.z, s.depth, storage=self.src_storage, sample=k)
            sv = sv[:, s.y : s.y + s.height, s.x : s.x + s.width].copy()
            dv = b.dst.level_view(b.dst_level, d.z, d.depth, storage=self.dst_storage, sample=k)
            dv[:, d.y : d.y + d.height, d.x : d.x + d.width] = sv


def _fast_resolve(b: Blit) -> bool:
    """An unscaled, unflipped resolve between the same 4 x 8-bit UNORM format,
    inside both levels, with nothing masked, scissored or blended: every
    pixel is the average of its source samples, computed on words."""
    from .scene import make_color_target

    d, s = b.dst_box, b.src_box
    return (
        b.samples_mode == "resolve"
        and b.kind == "color"
        and b.src_desc.format == b.dst_desc.format
        and make_color_target(b.src, b.src_level, 0, b.src.storage, b.src_desc).kind == "unorm8"
        and (s.width, s.height, s.depth) == (d.width, d.height, d.depth)
        and _box_inside(b.src, b.src_level, s)
        and _box_inside(b.dst, b.dst_level, d)
        and b.mask & 0xF == 0xF
        and b.scissor is None
        and not b.window_rects
        and not b.window_include
        and not b.alpha_blend
    )


# fl32(k / 255) for every byte: the UNORM8 texel as TXF returns it
_UNORM8 = (np.arange(256, dtype=F32) * F32(1.0 / 255)).astype(F32)


def _resolve_rows(plan: _Plan, li: int, ya: int, yb: int) -> None:
    """The blitter's resolve (util_make_fs_msaa_resolve: the samples summed
    in float, times 1/N, stored as UNORM8) on whole words: a pixel whose
    samples are one word keeps it (the float arithmetic gives the same bytes
    back for every byte value), the others go through the float sums."""
    b = plan.blit
    d, s = b.dst_box, b.src_box
    dz = plan.layers[li].dst_layer
    sz = s.z + (dz - d.z)
    rows = slice(ya - d.y + s.y, yb - d.y + s.y)
    cols = slice(s.x, s.x + s.width)
    n = _samples(b.src)
    words = [
        b.src.typed_view(np.uint32, 1, b.src_level, sz, storage=plan.src_storage, sample=k)[
            rows, cols
        ]
        for k in range(n)
    ]
    out = b.dst.typed_view(np.uint32, 1, b.dst_level, dz, storage=plan.dst_storage)[
        ya:yb, d.x : d.x + d.width
    ]
    same = words[0] == words[1]
    for w in words[2:]:
        same &= words[0] == w
    np.copyto(out, words[0], where=same)
    if same.all():
        return
    ys, xs = np.nonzero(~same)
    total = None
    for w in words:
        v = np.take(_UNORM8, w[ys, xs][:, None].view(np.uint8))  # (m, 4) floats
        total = v if total is None else (total + v).astype(F32)
    mean = (total * F32(1.0 / n)).astype(F32)
    from ..util.format import float_to_unorm

    out[ys, xs] = float_to_unorm(mean, 8).view(np.uint32)[:, 0]


def _window_mask(b: Blit, ys: np.ndarray, xs: np.ndarray) -> np.ndarray | None:
    """Pixels the window rectangles let through (None: all)."""
    if not b.window_rects and not b.window_include:
        return None
    inside = np.zeros((ys.size, xs.size), bool)
    for mx, my, Mx, My in b.window_rects:
        inside |= ((ys >= my) & (ys < My))[:, None] & ((xs >= mx) & (xs < Mx))[None, :]
    return inside if b.window_include else ~inside


def _run_band(plan: _Plan, li: int, ya: int, yb: int) -> None:
    b = plan.blit
    if plan.fast_resolve:
        _resolve_rows(plan, li, ya, yb)
        return
    layer = plan.layers[li]
    ts = layer.tris
    cov = cover_rows(ts, ya, yb)
    if cov is None:
        return
    ys, xs, owner = cov
    alive = owner >= 0
    win = _window_mask(b, ys, xs)
    if win is not None:
        alive &= win
    if not alive.any():
        return
    lanes = np.nonzero(alive.reshape(-1))[0]
    n = int(lanes.size)
    chans = [0, 1]
    s, t = (v.reshape(-1)[lanes] for v in interpolate(ts, 0, chans, ys, xs, owner))
    py = np.broadcast_to(ys[:, None], alive.shape).reshape(-1)[lanes]
    px = np.broadcast_to(xs[None, :], alive.shape).reshape(-1)[lanes]
    mode = b.samples_mode
    ns, nd = _samples(b.src), _samples(b.dst)

    def fetch(sample: int | None) -> tuple[Any, Any]:
        values = stencil = None
        if plan.view is not None:
            values = _sample(plan, plan.view, layer, s, t, n, sample)
        if plan.stencil_view is not None:
            stencil = _sample(plan, plan.stencil_view, layer, s, t, n, sample)[0]
        return values, stencil

    if mode == "resolve":  # util_make_fs_msaa_resolve: sum the samples, times 1/N
        values = None
        for k in range(ns):
            v, _ = fetch(k)
            values = v if values is None else [np.add(a, c, dtype=F32) for a, c in zip(values, v)]
        values = [(v * F32(1.0 / ns)).astype(F32) for v in values]
        writes = [(0, values, None)]
    elif mode == "per_sample":
        writes = [(k, *fetch(k)) for k in range(nd)]
    else:
        values, stencil = fetch(0 if mode == "sample0" else None)
        writes = [(k, values, stencil) for k in range(nd)]  # (replicate: every sample)
    for sample, values, stencil in writes:
        if b.kind == "color":
            _write_color(plan, layer.dst_layer, py, px, values, sample)
        else:
            z = values[0] if values else None
            _write_zs(plan, layer.dst_layer, py, px, z, stencil, sample)


def _sample(
    plan: _Plan, view: BoundView, layer: _Layer, s, t, n: int, sample: int | None = None
) -> list[np.ndarray]:
    """The blitter's texture instruction for ``n`` pixels (``sample``: the
    texel fetch of that sample of a multisample source)."""
    target = plan.target
    units = TextureBindings([view], [plan.sampler])
    fields: dict[str, Any] = {}
    lc = layer.layer_coord
    if sample is not None:
        # util_make_fs_blit_msaa_* / _msaa_resolve: FLR, F2I, clamp to the
        # level, TXF of the sample
        lay = view.resource.levels[view.first_level]
        fields["s"] = np.clip(np.floor(s), 0, lay.width - 1).astype(np.int32)
        fields["t"] = np.clip(np.floor(t), 0, lay.height - 1).astype(np.int32)
        if target == "2D_ARRAY":
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        req = TexRequest(
            op="fetch", unit=0, sampler=0, target=target + "_MSAA", n=n,
            sample=np.full(n, sample, np.int32), **fields,
        )  # fmt: skip
        return [np.asarray(c) for c in units.execute(req)]
    if plan.use_txf:
        # FLR of the coordinates the shader's write mask covers, F2I of all
        xi = np.floor(s).astype(np.int32)
        fields["s"] = xi
        if target in ("1D_ARRAY",):
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        elif target != "1D":
            fields["t"] = np.floor(t).astype(np.int32)
        if target == "3D":
            fields["r"] = np.full(n, int(np.floor(F32(lc))), np.int32)
        elif target == "2D_ARRAY":
            fields["layer"] = np.full(n, int(F32(lc)), np.int32)
        fields["lod"] = np.zeros(n, np.int32)
        req = TexRequest(op="fetch", unit=0, sampler=0, target=target, n=n, **fields)
    else:
        fields["s"] = s
        if target == "1D_ARRAY":
            fields["layer"] = np.full(n, F32(lc), F32)
        elif target != "1D":
            fields["t"] = t
        if target == "3D":
            fields["r"] = np.full(n, F32(lc), F32)
        elif target == "2D_ARRAY":
            fields["layer"] = np.full(n, F32(lc), F32)
        req = TexRequest(op="sample", unit=0, sampler=0, target=target, n=n, lod=F32(0.0), **fields)
    return [np.asarray(c) for c in units.execute(req)]


class _WriteState:
    """What workers.fragment.write_color reads of a fragment state."""

    blend_color = (0.0, 0.0, 0.0, 0.0)


def _write_color(
    plan: _Plan, layer: int, py, px, values: list[np.ndarray], sample: int = 0
) -> None:
    from workers.fragment import write_color

    from .scene import make_color_target

    b = plan.blit
    target = make_color_target(
        b.dst, b.dst_level, layer, plan.dst_storage, desc=b.dst_desc, sample=sample
    )
    colormask = b.mask & int(Mask.RGBA)
    rt = _BLEND_OVER if b.alpha_blend else RtBlendState()
    rt = dataclasses.replace(rt, colormask=colormask)
    n = py.size
    if b.src_desc.is_integer:
        ints = np.stack([np.broadcast_to(v, (n,)) for v in values]).astype(np.int64)
        if b.src_desc.is_signed_integer and not b.dst_desc.is_signed_integer:
            ints = np.maximum(ints, 0)  # the blitter's IMAX(x, 0)
        elif b.dst_desc.is_signed_integer and not b.src_desc.is_signed_integer:
            ints = np.minimum(ints & 0xFFFFFFFF, 0x7FFFFFFF)  # UMIN(x, 2**31 - 1)
        color = (ints & 0xFFFFFFFF).astype(np.uint32).view(F32)
    else:
        color = np.stack([np.broadcast_to(np.asarray(v, F32), (n,)) for v in values])
    write_color(target, (py, px), False, None, color, rt, _WriteState())


def _write_zs(plan: _Plan, layer: int, py, px, z, stencil, sample: int = 0) -> None:
    b = plan.blit
    res = b.dst
    layout = depth_layout(b.dst_desc.format)
    raw = res.level_view(b.dst_level, layer, 1, storage=plan.dst_storage, sample=sample)[0]
    if layout.split:
        if b.write_depth:
            zview = raw[..., 0:4].view(np.float32)[..., 0]
            zview[py, px] = np.asarray(z, np.float32)
        if b.write_stencil:
            raw[py, px, 4] = np.asarray(stencil).astype(np.uint8)
        return
    words = res.typed_view(
        layout.word, 1, b.dst_level, layer, storage=plan.dst_storage, sample=sample
    )
    old = words[py, px].astype(np.uint64)
    keep = (1 << (8 * layout.word.itemsize)) - 1
    new = np.zeros(py.size, np.uint64)
    if layout.z_float:
        if b.write_depth:
            words[py, px] = np.asarray(z, np.float32)
        return
    if b.write_depth and layout.z_bits:
        keep &= ~layout.z_mask
        new |= np.asarray(depth_to_word(layout, np.asarray(z, np.float32))).astype(np.uint64)
    if b.write_stencil and layout.s_bits:
        keep &= ~layout.s_mask
        sv = np.asarray(stencil).astype(np.uint64) & np.uint64((1 << layout.s_bits) - 1)
        new |= sv << np.uint64(layout.s_shift)
    words[py, px] = ((old & np.uint64(keep)) | new).astype(layout.word)


# ----------------------------------------------------------------------------
# clear_texture: util_clear_texture's texel, filled like a blit's job
# ----------------------------------------------------------------------------


class ClearTextureJob(BlitJob):
    """clear_texture on the worker pool (one unit: a fill of the box)."""

    def __init__(self, clear: TextureClear, label: str = "clear_texture") -> None:
        self.clear = clear
        self.fence = Fence(label=label)
        self.errors = []
        self._lock = threading.Lock()
        self.on_complete = []
        self.storage = clear.resource.storage

    def unit_count(self) -> int:
        return 1

    def run_unit(self, unit: int, worker: int) -> None:
        c = self.clear
        b = c.box
        for sample in range(_samples(c.resource)):
            view = c.resource.level_view(c.level, b.z, b.depth, storage=self.storage, sample=sample)
            view[:, b.y : b.y + b.height, b.x : b.x + b.width] = c.texel

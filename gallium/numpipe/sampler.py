"""Texture sampling: the driver's side of :mod:`gallium.tgsi.texture_api`.

``TextureBindings.capture(views, samplers)`` snapshots a shader stage's
sampler views and sampler states when a draw is recorded (the storage arrays
of the resources, the view's format, swizzle, level and layer ranges, the
sampler state), so the worker that later shades the draw sees exactly what
was bound, whatever the context does meanwhile.  ``execute(request)``
answers a kernel's texture request.

Theory of operation
-------------------
Sampling reproduces llvmpipe (Mesa 22.3, ``gallivm/lp_bld_sample*.c``): fed
the coordinates llvmpipe interpolates, every reference scene of
tests/reference/tex_scenes.py comes out byte for byte identical.  Everything
is vectorized over the request's lanes; nothing loops per lane or per pixel.

*Two filtering paths*, chosen per request as llvmpipe chooses them:

* the **8-bit path** (llvmpipe's AoS sampler) for formats whose channels all
  fit in 8 UNORM bits (narrower channels widened by bit replication), plain
  sampling (no gather, no shadow compare), REPEAT / CLAMP_TO_EDGE wrapping,
  not seamless linear cube filtering, and one lod per quad unless the min
  and mag filters agree.  Coordinates become 24.8 fixed point
  (``rint(s * size * 256) - 128``), the weights are the 8 fraction bits, and
  texels are blended per byte as ``v0 + floor((w * (v1 - v0) + 128) / 256)``
  (pmulhrsw), rounding after each of the two horizontal and one vertical
  lerps; the mip blend weight is ``trunc(lod_fraction * 256)``.  Texels
  travel as packed RGBA8 ``uint32`` words and are blended two channels per
  word (red/blue and green/alpha in 16-bit lanes).
* the **float path** (llvmpipe's SoA sampler) for everything else: texels
  are decoded to float32 (UNORM as ``float(x) * fl32(1 / (2**bits - 1))``)
  and blended with ``fma(w, v1 - v0, v0)``; every wrap mode, border colour
  (clamped to the format's range, only on channels the format has), shadow
  comparison (bilinear PCF for linear filters), gather and seamless cube
  filtering (neighbour faces at edges, the missing corner texel's weight
  shared by the other three) live here.

*Level of detail*: implicit derivatives are coarse per 2x2 quad (top-right
and bottom-left minus top-left lane, ``req.quad_shape``).  With llvmpipe's
defaults (no rho approximation, no brilinear) the squared scale factor is
``max((dsdx*w)^2 + (dtdx*h)^2 [+ (drdx*d)^2], same for y)`` in float32 and
``lod = 0.5 * fast_log2(rho^2)``, ``fast_log2`` being the piecewise-linear
exponent-plus-mantissa approximation (LODQ too); without biases or lod
clamps and with mip filter NONE/NEAREST the level comes from the exponent
alone.  The lod is one per quad, except per lane for explicit lods, biases,
derivatives, LODQ and mipmapped cube maps, whose direction derivatives are
the *fine* ones (per quad row / column) and are carried through the face
projection.  min_lod / max_lod / lod_bias and the view's level range apply
as in ``lp_build_lod_selector``; stages without quads sample level 0.

*Anisotropic filtering* (``max_anisotropy`` > 1, plain sampling of float
and normalised formats) is llvmpipe's: the lod from the footprint's minor
axis (lp_build_pmin) truncated to one level, and at that level an
elliptical weighted average (Heckbert) of nearest-filtered texels over the
footprint ellipse's bounding box, weighted by exp(-2 r^2) from a 1024-entry
table, bilinear where no texel weighs anything (``_SampleOp._aniso``).

Results are four channels of ``n`` lanes: float32 for float and normalised
formats, raw int32/uint32 for pure integer formats; the view swizzle is
applied last (not for buffers, as llvmpipe).  ``fetch`` (TXF) is robust:
out-of-range coordinates, layers or levels give a zero texel.  Filtering
runs over lane chunks of ``_CHUNK`` so temporaries stay in cache; level of
detail is computed once per quad and expanded.

Thread safety: ``execute`` only reads captured arrays and builds new ones
(the per-view addressing tables are built once under a lock), so one
bindings object serves every worker of a draw at once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from ..pipe.enums import CompareFunc, MipFilter, Swizzle, TexFilter, TextureTarget, TexWrap
from ..pipe.errors import PipeValueError, UnsupportedError
from ..tgsi.runtime import unbound_view_result
from ..tgsi.texture_api import RECT_TARGETS, TexRequest
from ..util.format import FormatDesc, channel_values

F32, F64, I32, U32 = np.float32, np.float64, np.int32, np.uint32

_HALF = F32(0.5)
_ONE = F32(1.0)
_ZERO = F32(0.0)
_MAX_FRACT = F32(0.99999994)  # largest float32 below 1 (lp_build_fract_safe)
_SQRT2 = F32(np.sqrt(2.0))
_ONE_THIRD = F32(1.0 / 3.0)
_RB_MASK = U32(0x00FF00FF)
_ROUND_RB = U32(0x00800080)
_PIPE_MAX_TEXTURE_LEVELS = 16
_CHUNK = 32768  # lanes filtered per pass: small enough for the temporaries to stay in L2

_LAYERED = {
    TextureTarget.TEXTURE_1D_ARRAY,
    TextureTarget.TEXTURE_2D_ARRAY,
    TextureTarget.TEXTURE_CUBE,
    TextureTarget.TEXTURE_CUBE_ARRAY,
}
_CUBES = {TextureTarget.TEXTURE_CUBE, TextureTarget.TEXTURE_CUBE_ARRAY}
_SIMPLE_WRAPS = {TexWrap.REPEAT, TexWrap.CLAMP_TO_EDGE}


@dataclass(frozen=True)
class BoundView:
    """A sampler view as captured for one draw."""

    resource: Any
    storage: np.ndarray
    desc: Any  # FormatDesc of the view format
    target: Any  # pipe.TextureTarget of the view
    swizzle: tuple[int, int, int, int]
    first_level: int
    last_level: int
    first_layer: int
    last_layer: int
    buf_offset: int
    buf_size: int


class TextureBindings:
    """The sampler views and samplers of one shader stage for one draw."""

    def __init__(
        self,
        views: list[BoundView | None],
        samplers: list[Any],
        handles: dict[int, int] | None = None,
        slots: int | None = None,
    ) -> None:
        self.views = views
        self.samplers = samplers  # SamplerState or None per slot
        # bindless: resident handle -> its unit (after the ``slots`` bound ones)
        self.handles = handles or {}
        self.slots = len(views) if slots is None else slots
        self._images: dict[int, _Image] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        # (pickled for band processes: the decoded-image cache and its lock
        # are each process's own)
        return {
            "views": self.views,
            "samplers": self.samplers,
            "handles": self.handles,
            "slots": self.slots,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["views"], state["samplers"], state["handles"], state["slots"])

    @classmethod
    def capture(
        cls, views: list[Any], samplers: list[Any], bindless: Any = ()
    ) -> TextureBindings | None:
        """The bound ``views`` and ``samplers`` (CSOs) of a stage and the
        context's resident texture handles ``bindless`` ((handle, (view,
        SamplerState)) pairs): each handle's view and sampler get one more
        unit after the bound slots."""
        bindless = list(bindless)
        if not views and not samplers and not bindless:
            return None
        bound = [None if v is None else _bound_view(v) for v in views]
        states = [s.state if s is not None else None for s in samplers]
        slots = max(len(bound), len(states))
        handles = {}
        if bindless:
            bound += [None] * (slots - len(bound))
            states += [None] * (slots - len(states))
            for handle, (view, state) in bindless:
                handles[handle] = len(bound)
                bound.append(_bound_view(view))
                states.append(state)
        return cls(bound, states, handles, slots)

    def bindless_unit(self, lo: Any, hi: Any) -> Any:
        """The units of bindless texture handles (words per lane or uniform):
        a resident handle's, a bound slot's for SAMP2HND's, else -1."""
        h = (np.asarray(hi, np.uint32).astype(np.uint64) << np.uint64(32)) | np.asarray(
            lo, np.uint32
        ).astype(np.uint64)
        if h.ndim == 0:
            return np.int64(self._handle_unit(int(h)))
        uniq, inverse = np.unique(h, return_inverse=True)
        units = np.array([self._handle_unit(int(x)) for x in uniq], np.int64)
        return units[inverse]

    def _handle_unit(self, handle: int) -> int:
        from ..tgsi.ops_tex import TEX_SLOT_TAG

        if handle >> 32 == TEX_SLOT_TAG:
            slot = handle & 0xFFFFFFFF
            return slot if slot < self.slots else -1
        return self.handles.get(handle, -1)

    def resources(self) -> list[Any]:
        return [v.resource for v in self.views if v is not None]

    def same_as(self, other: TextureBindings) -> bool:
        """Whether both capture the same views of the same storage and equal samplers."""
        if len(self.views) != len(other.views) or self.samplers != other.samplers:
            return False
        if self.handles != other.handles:
            return False
        for a, b in zip(self.views, other.views):
            if (a is None) != (b is None):
                return False
            if a is not None and (
                a.resource is not b.resource
                or a.storage is not b.storage
                or (a.desc, a.target, a.swizzle, a.first_level, a.last_level)
                != (b.desc, b.target, b.swizzle, b.first_level, b.last_level)
                or (a.first_layer, a.last_layer, a.buf_offset, a.buf_size)
                != (b.first_layer, b.last_layer, b.buf_offset, b.buf_size)
            ):
                return False
        return True

    # -- requests ------------------------------------------------------------------

    def execute(self, req: TexRequest) -> list[Any]:
        """Answer one texture request with four channels of ``req.n`` lanes."""
        op = req.op
        n = int(req.n)
        if not 0 <= req.unit < len(self.views) or self.views[req.unit] is None:
            # no view bound: every operation reads zero, as llvmpipe's (D3D10's rule)
            return unbound_view_result(n)
        if op == "samples":  # TXQS
            count = self._image(req.unit, op).samples
            return [np.full(n, count, I32), np.zeros(n, I32), np.zeros(n, I32), np.zeros(n, I32)]
        if op == "sample_pos":  # SAMPLE_POS of a view: its resource's sample positions
            from workers.msaa import sample_position

            count = self._image(req.unit, op).samples
            idx = np.clip(_i32(req.sample, n), 0, count - 1)
            table = np.array([sample_position(count, k) for k in range(count)], F32)
            return [table[idx, 0], table[idx, 1], np.zeros(n, F32), np.zeros(n, F32)]
        img = self._image(req.unit, op)
        if op == "size":
            return _size_query(img, req, n)
        if op == "fetch":
            return _fetch_op(img, req, n)
        if op not in ("sample", "gather", "lod"):
            raise UnsupportedError(f"texture operation {op!r} is not implemented by numpipe")
        state = self._sampler(req.sampler, op)
        return _SampleOp(img, state, req, n).run()

    def _image(self, unit: int, op: str) -> _Image:
        if not 0 <= unit < len(self.views) or self.views[unit] is None:
            raise PipeValueError(
                f"sampler view {unit} is not bound but the shader uses it ({op}); "
                "bind one with set_sampler_views"
            )
        with self._lock:
            img = self._images.get(unit)
            if img is None:
                view = self.views[unit]
                assert view is not None
                img = _Image(view)
                self._images[unit] = img
        return img

    def _sampler(self, unit: int, op: str) -> Any:
        if not 0 <= unit < len(self.samplers) or self.samplers[unit] is None:
            raise PipeValueError(
                f"sampler state {unit} is not bound but the shader samples with it ({op}); "
                "bind one with bind_sampler_states"
            )
        return self.samplers[unit]


def _bound_view(v: Any) -> BoundView:
    """A sampler view as a draw captures it (its resource's storage now)."""
    res = v.texture
    return BoundView(
        resource=res,
        storage=res.storage,
        desc=v.desc,
        target=v.target,
        swizzle=tuple(int(s) for s in v.swizzle),  # type: ignore[arg-type]
        first_level=v.first_level,
        last_level=v.last_level,
        first_layer=v.first_layer,
        last_layer=v.last_layer,
        buf_offset=v.buf_offset,
        buf_size=v.buf_size,
    )


# ----------------------------------------------------------------------------
# Formats as the sampler sees them
# ----------------------------------------------------------------------------


def sampleable(desc: FormatDesc | None) -> bool:
    """Whether texels of this format can be sampled: every format
    :mod:`gallium.util.format` describes except packed small floats
    (R11G11B10_FLOAT) and the odd layouts other than Z32_FLOAT_S8X24_UINT."""
    if desc is None:
        return False
    if desc.layout == "other":
        return desc.name.startswith("Z32_FLOAT_S8X24")
    return not any(c.type == "FLOAT" and c.bits not in (16, 32, 64) for c in desc.channels)


@dataclass(frozen=True)
class _FormatInfo:
    desc: FormatDesc
    kind: str  # "float", "sint" or "uint": the texel type
    fits_8unorm: bool  # llvmpipe's util_format_fits_8unorm
    rgba8_bytes: tuple[int, ...] | None  # rgba8 variants: byte of R,G,B,A or -1 (0) / -2 (1)
    present: tuple[bool, bool, bool, bool]  # RGBA channel comes from a real channel
    depth_float: bool  # the first RGBA channel is a float (no clamp of the shadow reference)
    border_min: Any  # clamp of the border colour (None: none)
    border_max: Any


@cache
def _format_info(desc: FormatDesc) -> _FormatInfo:
    chans = desc.channels
    stencil_only = desc.is_stencil and not desc.is_depth
    if desc.is_integer or stencil_only:
        signed = desc.is_signed_integer
        kind = "sint" if signed else "uint"
    else:
        kind = "float"
    colour = [c for c in chans if c.type != "VOID"]
    fits = (
        desc.layout in ("array", "packed")
        and not (desc.is_depth or desc.is_stencil)
        and bool(colour)
        and all(c.type == "UNORM" and c.bits <= 8 for c in colour)
    )
    rgba8 = None
    if fits and desc.block_bytes == 4 and len(chans) == 4 and all(c.bits == 8 for c in chans):
        # llvmpipe loads these words as they are and swizzles at the end.
        rgba8 = tuple(
            (chans[src].shift // 8 if chans[src].type != "VOID" else -2) if src >= 0 else src
            for src in desc.swizzle
        )
    if stencil_only:
        swz = desc.swizzle
    elif desc.is_depth:
        z = next(i for i, c in enumerate(chans) if c.name == "Z")
        swz = (z, -1, -1, -2)
    else:
        swz = desc.swizzle
    present = tuple(s >= 0 for s in swz)
    first = chans[swz[0]] if swz[0] >= 0 else (colour[0] if colour else chans[0])
    if desc.is_depth:
        first = next(c for c in chans if c.name == "Z")
    bmin = bmax = None
    if first.type in ("UNORM", "SRGB"):
        bmin, bmax = _ZERO, _ONE
    elif first.type == "SNORM":
        bmin, bmax = F32(-1.0), _ONE
    elif first.type == "UINT" and kind == "uint" and first.bits < 32:
        bmax = (1 << first.bits) - 1
    elif first.type == "SINT" and kind == "sint" and first.bits < 32:
        bmin, bmax = -(1 << (first.bits - 1)), (1 << (first.bits - 1)) - 1
    return _FormatInfo(
        desc=desc,
        kind=kind,
        fits_8unorm=fits,
        rgba8_bytes=rgba8,
        present=present,  # type: ignore[arg-type]
        depth_float=first.type == "FLOAT",
        border_min=bmin,
        border_max=bmax,
    )


def _unorm_to_float(raw: np.ndarray, bits: int) -> np.ndarray:
    """lp_build_unsigned_norm_to_float: ``float(x) * fl32(1 / max)`` up to 24 bits."""
    if bits <= 24:
        return raw.astype(F32, copy=False) * F32(1.0 / ((1 << bits) - 1))
    # Wider: keep the top 23 bits as a mantissa, as gallivm does.
    shift = bits - 23
    m = (raw.astype(np.uint64) >> np.uint64(shift)).astype(U32) | U32(0x3F800000)
    scale = F32((1 << 23) / ((1 << 23) - 1))
    return (m.view(F32) - _ONE) * scale


# lp_build_srgb_to_linear's polynomial (float literals, as the C computes them)
_SRGB_POLY = (
    F32(0.0023),
    F32(F32(0.0030) / F32(255.0)),
    F32(F32(0.6935) / F32(F32(255.0) * F32(255.0))),
    F32(F32(0.3012) / F32(F32(F32(255.0) * F32(255.0)) * F32(255.0))),
)
_SRGB_LIN = F32(F32(1.0) / F32(F32(12.6) * F32(255.0)))


def _srgb_to_linear(raw: np.ndarray, bits: int) -> np.ndarray:
    """llvmpipe's sRGB decode (lp_build_srgb_to_linear): ``x / (12.6 * 255)``
    up to 15, above it ``0.3012 x^3 + 0.6935 x^2 + 0.0030 x + 0.0023`` (x in
    0..255, coefficients pre-scaled), evaluated as lp_build_polynomial does,
    even and odd terms by fused multiply-adds."""
    x = raw.astype(F32, copy=False)
    if bits != 8:
        x = (x * F32(255.0 / ((1 << bits) - 1))).astype(F32, copy=False)
    c0, c1, c2, c3 = _SRGB_POLY
    x2 = (x * x).astype(F32, copy=False)
    odd = _fma(x2, c3, c1)
    even = _fma(x2, c2, c0)
    poly = _fma(odd, x, even)
    lin = (x * _SRGB_LIN).astype(F32, copy=False)
    return np.where(x <= F32(15.0), lin, poly).astype(F32, copy=False)


def _channel_float(c: Any, raw: np.ndarray) -> np.ndarray:
    t = c.type
    if t == "UNORM":
        return _unorm_to_float(raw, c.bits)
    if t == "SRGB":
        return _srgb_to_linear(raw, c.bits)
    if t == "SNORM":
        v = raw.astype(F32, copy=False) * F32(1.0 / ((1 << (c.bits - 1)) - 1))
        return np.maximum(v, F32(-1.0))
    if t == "FIXED":
        return raw.astype(F32, copy=False) * F32(1.0 / 65536.0)
    return raw.astype(F32, copy=False)  # FLOAT, USCALED, SSCALED


def _decode(fi: _FormatInfo, raw: np.ndarray) -> list[Any]:
    """Raw texels ``(n, block_bytes)`` -> four channels in RGBA order (format swizzle
    applied, missing channels 0 or 1) of the format's texel type."""
    desc = fi.desc
    raws = channel_values(desc, raw)
    n = raw.shape[0]
    if fi.kind == "float":
        vals = []
        for c, r in zip(desc.channels, raws):
            vals.append(_channel_float(c, np.asarray(r)) if c.type != "VOID" else None)
        zero, one = _ZERO, _ONE
        dt: Any = F32
    else:
        dt = I32 if fi.kind == "sint" else U32
        vals = [np.asarray(r).astype(dt) for r in raws]
        zero, one = dt(0), dt(1)
    if desc.is_depth:
        z = next(i for i, c in enumerate(desc.channels) if c.name == "Z")
        swz: tuple[int, ...] = (z, -1, -1, -2)
    else:
        swz = desc.swizzle
    out = []
    for src in swz:
        if src >= 0 and vals[src] is not None:
            out.append(vals[src])
        else:
            out.append(np.full(n, one if src == -2 else zero, dt))
    return out


def _widen_to_8(x: np.ndarray, bits: int) -> np.ndarray:
    """n-bit UNORM -> 8 bits by bit replication, as llvmpipe's AoS fetch does
    (31 -> 255, 16 -> 132 for 5 bits)."""
    if bits >= 8:
        return x
    out = np.zeros_like(x)
    shift = 8 - bits
    while shift > -bits:
        out |= (x << U32(shift)) if shift >= 0 else (x >> U32(-shift))
        shift -= bits
    return out & U32(255)


def _to_words(fi: _FormatInfo, raw: np.ndarray) -> np.ndarray:
    """Texels of an 8-bit-fitting format -> packed RGBA8 words (R in the low byte)."""
    desc = fi.desc
    raws = channel_values(desc, raw)
    n = raw.shape[0]
    word = np.zeros(n, U32)
    for comp, src in enumerate(desc.swizzle):
        if src == -2:
            byte: Any = U32(255)
        elif src < 0:
            continue
        else:
            c = desc.channels[src]
            r = np.asarray(raws[src])
            byte = _widen_to_8(r.astype(U32), c.bits)
        word |= byte << U32(8 * comp)
    return word


# ----------------------------------------------------------------------------
# Images: where the texels of a captured view live
# ----------------------------------------------------------------------------


class _Image:
    """Addressing tables for one captured sampler view (indexed by absolute level)."""

    def __init__(self, view: BoundView) -> None:
        res = view.resource
        # A multisample resource's samples follow one another (Resource.sample_stride):
        # TXF reads any sample; filtered lookups (which GL does not allow on
        # multisample textures) see sample 0, as llvmpipe's sampler does.
        self.samples = max(1, int(getattr(res, "nr_samples", 0) or 0))
        self.sample_stride = int(getattr(res, "sample_stride", 0))
        if not sampleable(view.desc):
            raise UnsupportedError(
                f"sampling {view.desc.name if view.desc else 'this format'} is not supported "
                "by numpipe (packed small floats and odd layouts)"
            )
        self.view = view
        self.target = TextureTarget(view.target)
        self.desc: FormatDesc = view.desc
        self.fi = _format_info(view.desc)
        self.bb = bb = self.desc.block_bytes
        self.first_level = int(view.first_level)
        self.last_level = int(view.last_level)
        self.is_buffer = self.target == TextureTarget.BUFFER
        t = self.target
        if t in (TextureTarget.BUFFER, TextureTarget.TEXTURE_1D, TextureTarget.TEXTURE_1D_ARRAY):
            self.dims = 1
        elif t == TextureTarget.TEXTURE_3D:
            self.dims = 3
        else:
            self.dims = 2
        store = view.storage
        self.u8 = store
        widths, heights, depths, rows, lstrides, offsets = [], [], [], [], [], []
        if self.is_buffer:
            size = view.buf_size if view.buf_size else max(0, res.width0 - view.buf_offset)
            widths.append(size // bb)
            heights.append(1)
            depths.append(1)
            rows.append(0)
            lstrides.append(0)
            offsets.append(int(view.buf_offset))
            self.aligned = view.buf_offset % bb == 0
        else:
            nlayers = int(view.last_layer) - int(view.first_layer) + 1
            for lay in res.levels:
                widths.append(lay.width)
                heights.append(lay.height)
                if t == TextureTarget.TEXTURE_3D:
                    depths.append(lay.layers)
                    offsets.append(lay.offset)
                else:
                    depths.append(nlayers if t in _LAYERED else 1)
                    offsets.append(lay.offset + int(view.first_layer) * lay.layer_stride)
                rows.append(lay.row_stride)
                lstrides.append(lay.layer_stride)
            self.aligned = True
        self.widths = np.array(widths, np.int64)
        self.heights = np.array(heights, np.int64)
        self.depths = np.array(depths, np.int64)
        self.rows = np.array(rows, np.int64)
        self.lstrides = np.array(lstrides, np.int64)
        self.offsets = np.array(offsets, np.int64)
        self.num_layers = int(depths[0]) if t in _LAYERED else 1
        # Per-level parameters of the fast 8-bit path, gathered per lane by level.
        self.size_f32 = (self.widths.astype(F32, copy=False), self.heights.astype(F32, copy=False))
        self.size256_f32 = (
            (self.widths * 256).astype(F32, copy=False),
            (self.heights * 256).astype(F32, copy=False),
        )
        self.max_i32 = ((self.widths - 1).astype(I32), (self.heights - 1).astype(I32))
        self.row_words = (self.rows // 4).astype(np.intp)
        self.layer_words = (self.lstrides // 4).astype(np.intp)
        self.base_words = (self.offsets // 4).astype(np.intp)
        self.pot = (
            _is_pot(res.width0),
            _is_pot(res.height0),
            _is_pot(res.depth0),
        )
        self._typed: dict[int, np.ndarray] = {}
        if bb in (1, 2, 4, 8, 16) and self.aligned:
            usable = store.size // bb * bb
            if bb == 16:
                self._typed[bb] = store[:usable].reshape(-1, 16)
            else:
                dt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[bb]
                self._typed[bb] = store[:usable].view(dt)

    # -- addressing --------------------------------------------------------------

    def byte_offsets(self, level: Any, x: Any, y: Any = None, z: Any = None) -> np.ndarray:
        """Byte offsets of texels (x, y, z) of ``level`` (scalar or per lane)."""
        off = np.asarray(x, np.int64) * self.bb + self.offsets[level]
        if y is not None:
            off = off + np.asarray(y, np.int64) * self.rows[level]
        if z is not None:
            off = off + np.asarray(z, np.int64) * self.lstrides[level]
        return off

    def raw(self, off: np.ndarray) -> np.ndarray:
        """Gather whole texels: ``(n, block_bytes)`` uint8."""
        bb = self.bb
        typed = self._typed.get(bb)
        if typed is not None:
            if bb == 16:
                return np.take(typed, off >> 4, axis=0)
            return np.take(typed, off // bb).view(np.uint8).reshape(-1, bb)
        idx = off[:, None] + np.arange(bb)
        return np.take(self.u8, idx)

    def words(self, off: np.ndarray) -> np.ndarray:
        """Gather 4-byte texels as uint32 words."""
        return np.take(self._typed[4], off >> 2)

    def texels(self, off: np.ndarray) -> list[Any]:
        """Gather and decode: four RGBA channels (format swizzle applied)."""
        return _decode(self.fi, self.raw(off))

    def aos_texels(self, off: np.ndarray) -> np.ndarray:
        """Gather as packed 8-bit words for the 8-bit filtering path."""
        if self.fi.rgba8_bytes is not None:
            return self.words(off)
        return _to_words(self.fi, self.raw(off))


def _is_pot(v: int) -> bool:
    return v > 0 and (v & (v - 1)) == 0


# ----------------------------------------------------------------------------
# Small numeric helpers with llvmpipe's float32 semantics
# ----------------------------------------------------------------------------


def _f32(x: Any, n: int) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype != F32:
        a = a.astype(F32, copy=False)
    if a.ndim == 0:
        return np.full(n, a, F32)
    return a


def _i32(x: Any, n: int) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype != I32:
        a = a.view(I32) if a.dtype == U32 else a.astype(I32)
    if a.ndim == 0:
        return np.full(n, a, I32)
    return a


def _fma(a: Any, b: Any, c: Any) -> np.ndarray:
    """float32 fused multiply-add (lp_build_fmuladd on an FMA CPU): the product of
    two floats is exact in float64, so one rounding of the float64 sum remains."""
    p = np.multiply(a, b, dtype=F64)
    p += c
    return p.astype(F32, copy=False)


def _lerp(w: Any, v0: Any, v1: Any) -> np.ndarray:
    """lp_build_lerp for floats: fma(w, v1 - v0, v0)."""
    return _fma(w, (v1 - v0).astype(F32, copy=False), v0)


def _itrunc(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return x.astype(I32)


def _ifloor(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.floor(x).astype(I32)


def _ifloor_fract(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    fl = np.floor(x)
    with np.errstate(invalid="ignore"):
        return fl.astype(I32), (x - fl).astype(F32, copy=False)


def _iround(x: np.ndarray) -> np.ndarray:
    """cvtps2dq: round half to even."""
    with np.errstate(invalid="ignore"):
        return np.rint(x).astype(I32)


def _mirror(coord: np.ndarray, pos_only: bool) -> np.ndarray:
    """lp_build_coord_mirror: 2 * (x/2 - round(x/2)), optionally |.| with NaN -> 0."""
    c = coord * _HALF
    c = c - np.rint(c)
    c = c + c
    if pos_only:
        c = np.fmax(np.abs(c), _ZERO)
    return c.astype(F32, copy=False)


def _exponent(x: np.ndarray, bias: int) -> np.ndarray:
    """lp_build_extract_exponent: floor(log2(x)) + bias from the float's bits."""
    bits = x.view(I32)
    return ((bits >> 23) & 255) - (127 - bias)


def _fast_log2(x: np.ndarray) -> np.ndarray:
    """lp_build_fast_log2: (exponent - 1) + mantissa in [1, 2), piecewise linear."""
    bits = x.view(I32)
    e = (((bits >> 23) & 255) - 128).astype(F32, copy=False)
    m = ((bits & 0x007FFFFF) | 0x3F800000).view(F32)
    return (e + m).astype(F32, copy=False)


def _swizzle(chans: list[Any], swz: tuple[int, ...], n: int) -> list[Any]:
    dt = chans[0].dtype if isinstance(chans[0], np.ndarray) else F32
    out = []
    for s in swz:
        if s <= Swizzle.W:
            out.append(chans[s])
        elif s == Swizzle.ONE:
            out.append(np.ones(n, dt))
        else:
            out.append(np.zeros(n, dt))
    return out


def _quad_diffs(x: np.ndarray, quad_shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Coarse derivatives, one per quad: (top-right - top-left, bottom-left - top-left)."""
    a, b = quad_shape
    q = x.reshape(a, 2, b, 2)
    dx = (q[:, 0, :, 1] - q[:, 0, :, 0]).astype(F32, copy=False).reshape(-1)
    dy = (q[:, 1, :, 0] - q[:, 0, :, 0]).astype(F32, copy=False).reshape(-1)
    return dx, dy


def _expand(v: np.ndarray, quad_shape: tuple[int, int]) -> np.ndarray:
    """One value per quad -> the quad's four lanes.  Lanes (A, 2, B, 2) are the
    rows of a (2A, 2B) image, so two repeats along contiguous axes do it."""
    a, b = quad_shape
    return np.repeat(np.repeat(v.reshape(a, b), 2, axis=1), 2, axis=0).reshape(-1)


def _fine_derivs(x: np.ndarray, quad_shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Fine derivatives per lane: x differences within each quad row, y
    differences within each quad column."""
    a, b = quad_shape
    q = x.reshape(a, 2, b, 2)
    dx = (q[:, :, :, 1] - q[:, :, :, 0]).astype(F32, copy=False)
    dy = (q[:, 1, :, :] - q[:, 0, :, :]).astype(F32, copy=False)
    dx = np.broadcast_to(dx[:, :, :, None], q.shape).reshape(-1)
    dy = np.broadcast_to(dy[:, None, :, :], q.shape).reshape(-1)
    return dx, dy


def _compare(func: CompareFunc, ref: np.ndarray, texel: np.ndarray) -> np.ndarray:
    """``ref FUNC texel``; ordered (NaN false) except NOTEQUAL, as llvmpipe."""
    with np.errstate(invalid="ignore"):
        if func == CompareFunc.NEVER:
            return np.zeros(ref.shape, bool)
        if func == CompareFunc.ALWAYS:
            return np.ones(ref.shape, bool)
        if func == CompareFunc.LESS:
            return ref < texel
        if func == CompareFunc.EQUAL:
            return ref == texel
        if func == CompareFunc.LEQUAL:
            return ref <= texel
        if func == CompareFunc.GREATER:
            return ref > texel
        if func == CompareFunc.NOTEQUAL:
            return ~(ref == texel)
        return ref >= texel


def _masklerp(w: np.ndarray, m0: np.ndarray, m1: np.ndarray) -> np.ndarray:
    w2 = (_ONE - w).astype(F32, copy=False)
    return (np.where(m1, w, _ZERO) + np.where(m0, w2, _ZERO)).astype(F32, copy=False)


# ----------------------------------------------------------------------------
# Wrapping (lp_build_sample_wrap_nearest / _linear, float path)
# ----------------------------------------------------------------------------


def _uses_border(wrap: int, min_f: int, mag_f: int) -> bool:
    if wrap in (TexWrap.CLAMP_TO_BORDER, TexWrap.MIRROR_CLAMP_TO_BORDER):
        return True
    if wrap in (TexWrap.CLAMP, TexWrap.MIRROR_CLAMP):
        return not (min_f == TexFilter.NEAREST and mag_f == TexFilter.NEAREST)
    return False


def _wrap_nearest(
    coord: np.ndarray,
    length: Any,
    offset: Any,
    is_pot: bool,
    wrap: int,
    normalized: bool,
) -> np.ndarray:
    length_f = np.asarray(length).astype(F32, copy=False)
    lm1 = np.asarray(length) - 1
    if wrap == TexWrap.REPEAT:
        if is_pot:
            i = _ifloor((coord * length_f).astype(F32, copy=False))
            if offset is not None:
                i = i + offset
            return i & lm1.astype(I32)
        if offset is not None:
            coord = (
                coord
                + (np.asarray(offset).astype(F32, copy=False) / length_f).astype(F32, copy=False)
            ).astype(F32, copy=False)
        c = np.fmin(coord - np.floor(coord), _MAX_FRACT).astype(F32, copy=False)
        return _itrunc((c * length_f).astype(F32, copy=False))
    if wrap in (TexWrap.CLAMP, TexWrap.CLAMP_TO_EDGE):
        c = (coord * length_f).astype(F32, copy=False) if normalized else coord
        if offset is not None:
            c = (c + np.asarray(offset).astype(F32, copy=False)).astype(F32, copy=False)
        return np.clip(_itrunc(c), 0, lm1).astype(I32)
    if wrap == TexWrap.CLAMP_TO_BORDER:
        c = (coord * length_f).astype(F32, copy=False) if normalized else coord
        i = _ifloor(c)
        return i + offset if offset is not None else i
    if wrap == TexWrap.MIRROR_REPEAT:
        if offset is not None:
            coord = (
                coord
                + (np.asarray(offset).astype(F32, copy=False) / length_f).astype(F32, copy=False)
            ).astype(F32, copy=False)
        c = _mirror(coord, True)
        i = _itrunc((c * length_f).astype(F32, copy=False))
        return np.minimum(i, lm1).astype(I32)
    c = (coord * length_f).astype(F32, copy=False) if normalized else coord
    if offset is not None:
        c = (c + np.asarray(offset).astype(F32, copy=False)).astype(F32, copy=False)
    i = _itrunc(np.abs(c))
    if wrap == TexWrap.MIRROR_CLAMP_TO_BORDER:
        return i
    # MIRROR_CLAMP / MIRROR_CLAMP_TO_EDGE: unsigned min (garbage negatives -> max)
    return np.minimum(i.view(U32), np.asarray(lm1).astype(U32)).view(I32)


def _wrap_linear(
    coord: np.ndarray,
    length: Any,
    offset: Any,
    is_pot: bool,
    wrap: int,
    normalized: bool,
    gather: bool,
) -> tuple[np.ndarray, np.ndarray, Any]:
    length_f = np.asarray(length).astype(F32, copy=False)
    lm1 = (np.asarray(length) - 1).astype(I32)
    off_f = None if offset is None else np.asarray(offset).astype(F32, copy=False)
    w: Any = None
    if wrap == TexWrap.REPEAT:
        if is_pot:
            c = ((coord * length_f).astype(F32, copy=False) - _HALF).astype(F32, copy=False)
            if off_f is not None:
                c = (c + off_f).astype(F32, copy=False)
            i0, w = _ifloor_fract(c)
            return i0 & lm1, (i0 + 1) & lm1, w
        if off_f is not None:
            coord = (coord + (off_f / length_f).astype(F32, copy=False)).astype(F32, copy=False)
        c = (coord - np.floor(coord)).astype(F32, copy=False)
        c = ((c * length_f).astype(F32, copy=False) - _HALF).astype(F32, copy=False)
        neg = c < _ZERO
        i0, w = _ifloor_fract(c)
        i0 = np.where(neg, lm1, i0).astype(I32)
        i1 = np.where(i0 != lm1, i0 + 1, 0).astype(I32)
        return i0, i1, w
    if wrap == TexWrap.MIRROR_REPEAT:
        if off_f is not None:
            coord = (coord + (off_f / length_f).astype(F32, copy=False)).astype(F32, copy=False)
        if not gather:
            c = _mirror(coord, True)
            c = ((c * length_f).astype(F32, copy=False) - _HALF).astype(F32, copy=False)
            i0, w = _ifloor_fract(c)
            return np.maximum(i0, 0), np.minimum(i0 + 1, lm1), w
        c = (_mirror(coord, False) * length_f).astype(F32, copy=False)
        i0 = _ifloor((c - _HALF).astype(F32, copy=False))
        i1 = i0 + 1
        i0 = np.minimum(np.where(i0 < 0, ~i0, i0), lm1)
        i1 = np.minimum(np.where(i1 < 0, ~i1, i1), lm1)
        return i0.astype(I32), i1.astype(I32), None
    c = (coord * length_f).astype(F32, copy=False) if normalized else coord
    if off_f is not None:
        c = (c + off_f).astype(F32, copy=False)
    if wrap == TexWrap.CLAMP:
        c = np.maximum(np.minimum(c, length_f), _ZERO)
        i0, w = _ifloor_fract((c - _HALF).astype(F32, copy=False))
        return i0, i0 + 1, w
    if wrap == TexWrap.CLAMP_TO_EDGE:
        c = np.fmin(c, length_f)
        if not gather:
            c = np.maximum((c - _HALF).astype(F32, copy=False), _ZERO)
            i0, w = _ifloor_fract(c)
            return i0, np.minimum(i0 + 1, lm1), w
        c = np.maximum(c, _ZERO)
        i0 = _itrunc((c - _HALF).astype(F32, copy=False))
        i1 = _itrunc((c + _HALF).astype(F32, copy=False))
        return i0, np.minimum(i1, lm1), None
    if wrap == TexWrap.CLAMP_TO_BORDER:
        i0, w = _ifloor_fract((c - _HALF).astype(F32, copy=False))
        return i0, i0 + 1, w
    if wrap == TexWrap.MIRROR_CLAMP:
        c = np.fmin(np.abs(c), length_f)
        i0, w = _ifloor_fract((c - _HALF).astype(F32, copy=False))
        return i0, i0 + 1, w
    if wrap == TexWrap.MIRROR_CLAMP_TO_EDGE:
        if not gather:
            c = np.fmin(np.abs(c), length_f)
            c = np.maximum((c - _HALF).astype(F32, copy=False), _ZERO)
            i0, w = _ifloor_fract(c)
            return i0, np.minimum(i0 + 1, lm1), w
        i0 = _ifloor((c - _HALF).astype(F32, copy=False))
        i1 = i0 + 1
        i0 = np.minimum(np.where(i0 < 0, ~i0, i0), lm1)
        i1 = np.minimum(np.where(i1 < 0, ~i1, i1), lm1)
        return i0.astype(I32), i1.astype(I32), None
    # MIRROR_CLAMP_TO_BORDER
    i0, w = _ifloor_fract((np.abs(c) - _HALF).astype(F32, copy=False))
    return i0, i0 + 1, w


# ----------------------------------------------------------------------------
# Cube maps
# ----------------------------------------------------------------------------


def _cube_lookup(
    s: np.ndarray,
    t: np.ndarray,
    r: np.ndarray,
    derivs: tuple[list[np.ndarray], list[np.ndarray]] | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any]:
    """lp_build_cube_lookup: face, face-relative s/t in [0, 1], and (optionally)
    the derivatives of s/t on the face from the derivatives of the direction."""
    as_, at, ar = np.abs(s), np.abs(t), np.abs(r)
    # z wins ties with both, y wins ties with x (dx10's rule, as llvmpipe)
    major = np.where(ar >= np.maximum(as_, at), 2, np.where(as_ > at, 0, 1)).astype(np.intp)

    def pick(vx: Any, vy: Any, vz: Any) -> Any:
        return np.choose(major, (vx, vy, vz))

    ma = pick(s, t, r).astype(F32, copy=False)
    neg = np.signbit(ma)
    face = pick(I32(0), I32(2), I32(4)).astype(I32) + neg.astype(I32)
    ns, nt, nr = np.negative(s), np.negative(t), np.negative(r)
    face_s = pick(np.where(neg, r, nr), s, np.where(neg, ns, s)).astype(F32, copy=False)
    face_t = pick(nt, np.where(neg, nr, r), nt).astype(F32, copy=False)
    out_derivs = None
    if derivs is not None:
        ddx, ddy = derivs
        with np.errstate(divide="ignore", invalid="ignore"):
            ima = (_ONE / ma).astype(F32, copy=False)
        imahalf = (_HALF * ima).astype(F32, copy=False)
        imahalfpos = np.abs(imahalf)
        madx = pick(ddx[0], ddx[1], ddx[2]).astype(F32, copy=False)
        mady = pick(ddy[0], ddy[1], ddy[2]).astype(F32, copy=False)

        def face_deriv(d: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            ds = pick(np.where(neg, d[2], -d[2]), d[0], np.where(neg, -d[0], d[0]))
            dt = pick(-d[1], np.where(neg, -d[2], d[2]), -d[1])
            return ds.astype(F32, copy=False), dt.astype(F32, copy=False)

        sdx, tdx = face_deriv(ddx)
        sdy, tdy = face_deriv(ddy)
        with np.errstate(invalid="ignore", over="ignore"):
            mx = (madx * ima).astype(F32, copy=False)
            my = (mady * ima).astype(F32, copy=False)
            dsdx = (
                (sdx - (mx * face_s).astype(F32, copy=False)).astype(F32, copy=False) * imahalf
            ).astype(F32, copy=False)
            dtdx = (
                (tdx - (mx * face_t).astype(F32, copy=False)).astype(F32, copy=False) * imahalf
            ).astype(F32, copy=False)
            dsdy = (
                (sdy - (my * face_s).astype(F32, copy=False)).astype(F32, copy=False) * imahalf
            ).astype(F32, copy=False)
            dtdy = (
                (tdy - (my * face_t).astype(F32, copy=False)).astype(F32, copy=False) * imahalf
            ).astype(F32, copy=False)
        out_derivs = ([dsdx, dtdx], [dsdy, dtdy])
    else:
        am = np.abs(ma)
        with np.errstate(divide="ignore"):
            imahalfpos = np.where(am > _ZERO, (_HALF / am).astype(F32, copy=False), _ZERO).astype(
                F32, copy=False
            )
    with np.errstate(invalid="ignore", over="ignore"):
        cs = ((face_s * imahalfpos).astype(F32, copy=False) + _HALF).astype(F32, copy=False)
        ct = ((face_t * imahalfpos).astype(F32, copy=False) + _HALF).astype(F32, copy=False)
    return cs, ct, face, out_derivs


def _cube_new_coords(f, x0, x1, y0, y1, m):  # type: ignore[no-untyped-def]
    """lp_build_cube_new_coords: faces and texel coords for texels falling off a face
    (index 0: x < 0, 1: x > max, 2: y < 0, 3: y > max; [k][0/1] for the two texels)."""
    sel_f2345 = f > 1
    faceand1 = f & 1
    nf0 = np.where(sel_f2345, np.where(f == 5, 0, 1), faceand1 + 4)
    sel_f23 = (f & ~4) > 1
    nf3 = np.where(sel_f23, f + 2, 3)
    faces = [nf0, nf0 ^ 1, nf3 ^ 1, nf3]
    sel_f2 = f == 2
    sel_fand1 = faceand1 == 1
    nx = [[None, None], [None, None], [None, None], [None, None]]
    ny = [[None, None], [None, None], [None, None], [None, None]]
    for k, (yy, xx) in enumerate(((y0, x0), (y1, x1))):
        tmp = np.where(sel_f2, m - yy, yy)
        nx[1][k] = np.where(sel_f23, tmp, 0)
        nx[0][k] = m - nx[1][k]
        tmp = np.where(sel_fand1, m - xx, xx)
        nx[3][k] = np.where(sel_f2345, tmp, np.where(sel_fand1, 0, m))
        nx[2][k] = np.where(sel_f23, m - nx[3][k], nx[3][k])
        tmp = np.where(sel_f2, 0, m)
        ny[0][k] = np.where(sel_f23, tmp, yy)
        ny[1][k] = ny[0][k]
        tmpsel = np.where(sel_fand1, m - xx, xx)
        ny[3][k] = np.where(sel_f2345, np.where(sel_fand1, m, 0), tmpsel)
        ny[2][k] = np.where(sel_f23, ny[3][k], m - ny[3][k])
    return faces, nx, ny


# ----------------------------------------------------------------------------
# One sample / gather / lod request
# ----------------------------------------------------------------------------


class _SampleOp:
    """State of one sample, gather or LODQ request (lp_build_sample_soa_code)."""

    def __init__(self, img: _Image, state: Any, req: TexRequest, n: int) -> None:
        self.img = img
        self.req = req
        self.n = n
        self.op = req.op
        fi = img.fi
        self.fi = fi
        self.wrap = [TexWrap(state.wrap_s), TexWrap(state.wrap_t), TexWrap(state.wrap_r)]
        self.min_f = TexFilter(state.min_img_filter)
        self.mag_f = TexFilter(state.mag_img_filter)
        self.mip_f = MipFilter(state.min_mip_filter)
        self.filtered = self.mip_f == MipFilter.LINEAR or TexFilter.LINEAR in (
            self.min_f,
            self.mag_f,
        )
        self.compare = bool(state.compare_mode)
        self.func = CompareFunc(state.compare_func) if self.compare else CompareFunc.NEVER
        self.normalized = bool(state.normalized_coords) and req.target not in RECT_TARGETS
        self.seamless = bool(state.seamless_cube_map)
        self.min_lod = F32(state.min_lod)
        self.max_lod = F32(state.max_lod)
        self.lod_bias = F32(state.lod_bias)
        self.border = tuple(state.border_color)
        self.is_cube = img.target in _CUBES
        # anisotropic filtering (llvmpipe's: lp_build_sample_aniso), for plain
        # sampling of float and normalised formats
        self.aniso = state.max_anisotropy > 1 and req.op == "sample" and fi.kind == "float"
        if img.is_buffer:
            raise UnsupportedError(
                f"{req.op} on a buffer sampler view: buffers support texel fetch (TXF) only"
            )
        # derived sampler state (lp_build_sample_soa_code / lp_sampler_static_sampler_state)
        if self.mip_f != MipFilter.NONE or self.min_f != self.mag_f:
            self.min_max_lod_equal = bool(self.min_lod == self.max_lod)
            self.apply_min_lod = not self.min_max_lod_equal and self.min_lod > 0
            self.apply_max_lod = (
                not self.min_max_lod_equal and self.max_lod < _PIPE_MAX_TEXTURE_LEVELS - 1
            )
        else:
            self.min_max_lod_equal = self.apply_min_lod = self.apply_max_lod = False
        level_zero_only = img.view.last_level == 0
        if level_zero_only and self.max_lod > 0 and self.op != "lod":
            self.mip_f = MipFilter.NONE
        if self.op == "gather":
            self.mip_f = MipFilter.NONE
            self.min_f = self.mag_f = TexFilter.LINEAR
        if self.is_cube:
            self.wrap[0] = self.wrap[1] = TexWrap.CLAMP_TO_EDGE
        dims = img.dims
        self.dims = dims
        # llvmpipe keeps one lod per pixel (instead of per quad) for explicit
        # lods, biases and derivatives and for mipmapped cube maps; its 8-bit
        # path then only serves equal min/mag filters.
        per_pixel_lod = (
            (req.lod is not None or req.bias is not None or req.ddx is not None)
            and (self.mip_f != MipFilter.NONE or self.min_f != self.mag_f)
        ) or (self.is_cube and self.mip_f != MipFilter.NONE)
        self.aos = (
            fi.fits_8unorm
            and not self.aniso
            and self.op == "sample"
            and (not per_pixel_lod or self.min_f == self.mag_f)
            and not self.compare
            and all(self.wrap[i] in _SIMPLE_WRAPS for i in range(dims))
            and not (
                self.is_cube and self.seamless and TexFilter.LINEAR in (self.min_f, self.mag_f)
            )
        )
        if self.compare and req.ref is None and self.op != "lod":
            raise UnsupportedError(
                "the sampler has compare_mode set but the instruction's texture target "
                f"{req.target} carries no shadow reference value"
            )

    # -- entry -----------------------------------------------------------------------

    def run(self) -> list[Any]:
        req, n, img = self.req, self.n, self.img
        if self.fi.kind != "float" and self.op == "sample" and self.filtered:
            # llvmpipe returns zero (unswizzled) for filtered pure-integer sampling.
            return [np.zeros(n, I32 if self.fi.kind == "sint" else U32) for _ in range(4)]
        s = _f32(req.s, n)
        t = _f32(req.t, n) if req.t is not None else None
        r = _f32(req.r, n) if req.r is not None else None
        if self.dims >= 2 and t is None:
            t = np.zeros(n, F32)
        if (self.dims >= 3 or self.is_cube) and r is None:
            r = np.zeros(n, F32)
        offsets = self._offsets()
        derivs = self._explicit_derivs()
        face = None
        implicit_from_face = False
        if self.is_cube:
            assert t is not None and r is not None
            need = (
                (self.min_f != self.mag_f or self.mip_f != MipFilter.NONE)
                and not self.min_max_lod_equal
                and req.lod is None
            )
            if need and derivs is None and req.quad_shape is not None:
                # lp_build_ddx/ddy: fine derivatives (per quad row / column),
                # unlike the coarse ones lp_build_rho uses for other targets.
                dsx, dsy = _fine_derivs(s, req.quad_shape)
                dtx, dty = _fine_derivs(t, req.quad_shape)
                drx, dry = _fine_derivs(r, req.quad_shape)
                derivs = ([dsx, dtx, drx], [dsy, dty, dry])
            s, t, face, cderivs = _cube_lookup(s, t, r, derivs if need else None)
            derivs = cderivs if need else None
            implicit_from_face = not need
            r = None
        layer = None
        if img.target in (TextureTarget.TEXTURE_1D_ARRAY, TextureTarget.TEXTURE_2D_ARRAY):
            if self.op != "lod":
                layer = np.clip(_iround(_f32(req.layer, n)), 0, img.num_layers - 1)
        elif img.target == TextureTarget.TEXTURE_CUBE_ARRAY and self.op != "lod":
            lay = _iround(_f32(req.layer, n)) * 6
            layer = np.clip(lay, 0, img.num_layers - 6).astype(I32)
        ref = None
        if self.compare and req.ref is not None:
            ref = _f32(req.ref, n)
            if not self.fi.depth_float:
                ref = np.clip(ref, _ZERO, _ONE)
        coords = [s, t, r]
        lod_res = self._lod(coords, derivs, implicit_from_face)
        if self.op == "lod":
            return lod_res
        level0, level1, fpart, positive = lod_res
        comp = req.component
        if np.ndim(comp):
            comp = np.broadcast_to(np.asarray(comp), (n,))
        ctx = _Taps(self, coords, face, layer, ref, offsets, comp)
        if self.aniso:
            return _swizzle(self._aniso(ctx, level0), img.view.swizzle, n)
        if n <= _CHUNK:
            chans = self._filter(ctx, level0, level1, fpart, positive)
        else:
            # Lanes in cache-sized chunks: every temporary stays in L2.
            chans = []
            block = np.empty((4, n), F32) if self.aos else None
            for start in range(0, n, _CHUNK):
                sl = slice(start, min(n, start + _CHUNK))
                part = self._filter(
                    ctx.subset(sl),
                    _pick(level0, sl),
                    _pick(level1, sl),
                    _pick(fpart, sl),
                    _pick(positive, sl),
                    None if block is None else block[:, sl],
                )
                if not chans:
                    chans = [np.empty(n, p.dtype) for p in part]
                    if block is not None:
                        # unpacked byte channels land in block's rows directly
                        order = _byte_order(self.fi)
                        chans = [block[b] if b >= 0 else chans[i] for i, b in enumerate(order)]
                for dst, src in zip(chans, part):
                    if block is None or not np.may_share_memory(src, block):
                        dst[sl] = src
        if self.op == "gather":
            return [np.ascontiguousarray(c) for c in chans]
        return _swizzle(chans, img.view.swizzle, n)

    # -- inputs ----------------------------------------------------------------------

    def _offsets(self) -> list[Any] | None:
        off = self.req.offset
        if off is None:
            return None
        vals = []
        for i in range(3):
            v = off[i] if i < len(off) else 0
            vals.append(_i32(v, self.n) if np.ndim(v) else I32(int(v)))
        if all(np.ndim(v) == 0 and int(v) == 0 for v in vals):
            return None
        return vals

    def _explicit_derivs(self) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
        req = self.req
        if req.ddx is None or req.ddy is None:
            return None
        n = self.n
        ddx = [_f32(req.ddx[i], n) if i < len(req.ddx) else np.zeros(n, F32) for i in range(3)]
        ddy = [_f32(req.ddy[i], n) if i < len(req.ddy) else np.zeros(n, F32) for i in range(3)]
        return ddx, ddy

    # -- level of detail ---------------------------------------------------------------

    def _lod(self, coords: list[Any], derivs: Any, implicit_from_face: bool) -> Any:
        """lp_build_sample_common's LOD part: returns (level0, level1, lod_fpart,
        lod_positive) per lane (or as scalars when uniform), or the LODQ answer.

        Implicit LODs are computed once per quad and expanded at the end."""
        req, n, img = self.req, self.n, self.img
        first, last = img.first_level, img.last_level
        is_lodq = self.op == "lod"
        need_lod = self.min_f != self.mag_f or self.mip_f != MipFilter.NONE or is_lodq
        if not need_lod:
            return first, None, None, None
        explicit = req.lod is not None
        bias = req.bias
        if req.quad_shape is None and not explicit and derivs is None:
            explicit, lod_in = True, np.zeros(n, F32)  # no quads: level 0
        else:
            lod_in = _f32(req.lod, n) if explicit else None
        quads = None  # quad_shape when the values below are one per quad
        if self.min_max_lod_equal and not is_lodq:
            lod = np.full(1, self.min_lod, F32)
            quads = "uniform"
        else:
            if explicit:
                lod = lod_in
            elif self.aniso:
                rho = self._aniso_rho(coords, derivs)  # (one per quad, squared)
                if bias is not None:
                    rho = _expand(rho, req.quad_shape)
                    quads = None
                else:
                    quads = req.quad_shape
                lod = (_fast_log2(rho) * _HALF).astype(F32, copy=False)
                if bias is not None:
                    lod = (lod + _f32(bias, n)).astype(F32, copy=False)
            else:
                rho, squared, per_quad = self._rho(coords, derivs, implicit_from_face)
                if per_quad and (bias is not None or is_lodq):
                    rho = _expand(rho, req.quad_shape)
                    per_quad = False
                quads = req.quad_shape if per_quad else None
                special = (
                    bias is None
                    and not is_lodq
                    and self.lod_bias == 0
                    and not self.apply_max_lod
                    and not self.apply_min_lod
                    and self.mip_f in (MipFilter.NONE, MipFilter.NEAREST)
                )
                if special:
                    if squared:
                        lod_ipart = (_exponent(rho, 1) >> 1).astype(I32)
                    else:
                        lod_ipart = _exponent((rho * _SQRT2).astype(F32, copy=False), 0).astype(I32)
                    return self._levels(lod_ipart, None, rho > _ONE, quads)
                if not squared:
                    rho = (rho * rho).astype(F32, copy=False)
                # Mesa 22.3 uses the piecewise-linear log2 for LODQ as well.
                lg = _fast_log2(rho)
                lod = (lg * _HALF).astype(F32, copy=False)
                if bias is not None:
                    lod = (lod + _f32(bias, n)).astype(F32, copy=False)
            if self.lod_bias != 0:
                lod = (lod + self.lod_bias).astype(F32, copy=False)
            unclamped = lod
            if self.apply_max_lod:
                lod = np.minimum(lod, self.max_lod)
            if self.apply_min_lod:
                lod = np.maximum(lod, self.min_lod)
            if is_lodq:
                top = F32(last - first)
                if self.mip_f == MipFilter.NONE:
                    clamped = np.zeros(n, F32)
                else:
                    clamped = np.rint(lod) if self.mip_f == MipFilter.NEAREST else lod
                    clamped = np.maximum(np.minimum(clamped, top), _ZERO).astype(F32, copy=False)
                zero = np.zeros(n, F32)
                return [
                    clamped.astype(F32, copy=False),
                    unclamped.astype(F32, copy=False),
                    zero,
                    zero.copy(),
                ]
        positive = lod > _ZERO
        if self.aniso:  # the nearest level to the truncated lod, whatever the mip filter
            first, last = self.img.first_level, self.img.last_level
            level = np.clip(_itrunc(lod).astype(I32) + I32(first), first, last)
            return self._lanes(_uniform(level), quads), None, None, self._lanes(positive, quads)
        if self.mip_f == MipFilter.LINEAR:
            ipart, fpart = _ifloor_fract(lod)
            return self._levels(ipart, fpart, positive, quads)
        return self._levels(_iround(lod), None, positive, quads)

    # -- anisotropic filtering ---------------------------------------------------------

    def _quad_derivs(self, coords: list[Any], derivs: Any) -> tuple:
        """(dsdx, dsdy, dtdx, dtdy) per quad, the coarse differences
        (lp_build_packed_ddx_ddy_twocoord: llvmpipe's anisotropic filter
        reads the coordinates' own, even under explicit derivatives); zeros
        without quads."""
        req = self.req
        t = coords[1] if coords[1] is not None else np.zeros(self.n, F32)
        if req.quad_shape is not None:
            dsx, dsy = _quad_diffs(coords[0], req.quad_shape)
            dtx, dty = _quad_diffs(t, req.quad_shape)
            return dsx, dsy, dtx, dty
        z = np.zeros(self.n, F32)
        return z, z, z, z

    def _aniso_rho(self, coords: list[Any], derivs: Any) -> np.ndarray:
        """lp_build_pmin: the smaller squared footprint axis per quad, in the
        first level's texels.  (Its limit by max_anisotropy compares pmin
        against itself times max_anisotropy^2 and never applies; so here.)"""
        img = self.img
        first = img.first_level
        w, h = F32(img.widths[first]), F32(img.heights[first])
        if not self.normalized:
            w = h = _ONE
        dsx, dsy, dtx, dty = self._quad_derivs(coords, derivs)
        with np.errstate(over="ignore", invalid="ignore"):
            ax, ay = (dsx * w).astype(F32), (dsy * w).astype(F32)
            bx, by = (dtx * h).astype(F32), (dty * h).astype(F32)
            px2 = ((ax * ax).astype(F32) + (bx * bx).astype(F32)).astype(F32)
            py2 = ((ay * ay).astype(F32) + (by * by).astype(F32)).astype(F32)
        return np.minimum(px2, py2).astype(F32, copy=False)

    def _aniso(self, ctx: _Taps, level: Any) -> list[Any]:
        """lp_build_sample_aniso: an elliptical weighted average (Heckbert)
        over the texels of ``level`` inside the pixel's footprint ellipse,
        each taken with the nearest filter and weighted by
        exp(-2 r^2) (ANISO_WEIGHTS, indexed by the ellipse's quadratic form
        scaled to 1023); bilinear at ``level`` where no texel weighs
        anything.  Every step in llvmpipe's float32 order."""
        img, n = self.img, self.n
        coords = ctx.coords
        s = coords[0]
        t = coords[1] if coords[1] is not None else np.zeros(n, F32)
        lvl = np.broadcast_to(np.asarray(level, np.int64), (n,))
        dsx, dsy, dtx, dty = self._quad_derivs(coords, None)
        if self.req.quad_shape is not None:
            dsx, dsy, dtx, dty = (_expand(v, self.req.quad_shape) for v in (dsx, dsy, dtx, dty))
        w0 = F32(img.widths[0]) if self.normalized else _ONE
        h0 = F32(img.heights[0]) if self.normalized else _ONE
        scaling = (_ONE / (np.left_shift(1, lvl)).astype(F32)).astype(F32)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            sx = ((dsx * w0).astype(F32) * scaling).astype(F32)
            sy = ((dsy * w0).astype(F32) * scaling).astype(F32)
            tx = ((dtx * h0).astype(F32) * scaling).astype(F32)
            ty = ((dty * h0).astype(F32) * scaling).astype(F32)
            A = (((tx * tx).astype(F32) + (ty * ty).astype(F32)).astype(F32) + _ONE).astype(F32)
            B = (((sx * tx).astype(F32) + (sy * ty).astype(F32)).astype(F32) * F32(-2)).astype(F32)
            C = (((sx * sx).astype(F32) + (sy * sy).astype(F32)).astype(F32) + _ONE).astype(F32)
            BB = (B * B).astype(F32)
            AC = (A * C).astype(F32)
            F = (AC - (BB / F32(4.0)).astype(F32)).astype(F32)
            d = ((_ZERO - BB).astype(F32) + (AC * F32(4)).astype(F32)).astype(F32)
            two_d = (F32(2.0) / d).astype(F32)
            box_u = (two_d * np.sqrt(((d * C).astype(F32) * F).astype(F32))).astype(F32)
            box_v = (two_d * np.sqrt(((A * d).astype(F32) * F).astype(F32))).astype(F32)
            form = (F32(ANISO_LUT_SIZE - 1) / F).astype(F32)
            A = (A * form).astype(F32)
            B = (B * form).astype(F32)
            C = (C * form).astype(F32)
            ddq = (A * F32(2)).astype(F32)
            wl = F32(w0) * scaling
            hl = F32(h0) * scaling
            tex_u = ((s * wl.astype(F32)).astype(F32) + F32(-0.5)).astype(F32)
            tex_v = ((t * hl.astype(F32)).astype(F32) + F32(-0.5)).astype(F32)
            u0 = _cvtt(np.floor((tex_u - box_u).astype(F32)))
            u1 = _cvtt(np.ceil((tex_u + box_u).astype(F32)))
            v0 = _cvtt(np.floor((tex_v - box_v).astype(F32)))
            v1 = _cvtt(np.ceil((tex_v + box_v).astype(F32)))
            U = (u0.astype(F32) - tex_u).astype(F32)
            dq_base = (((U * F32(2)).astype(F32) + _ONE).astype(F32) * A).astype(F32)
            q_base = ((U * U).astype(F32) * A).astype(F32)
        width_dim = img.widths[lvl].astype(F32) if self.normalized else _ONE
        height_dim = img.heights[lvl].astype(F32) if self.normalized else _ONE
        colors = [np.zeros(n, F32) for _ in range(4)]
        den = np.zeros(n, F32)
        table = aniso_weights()
        # (do-while loops: at least one step, then until every lane is past its end)
        nv = max(1, int((v1.astype(np.int64) - v0).max(initial=0)) + 1)
        nu = max(1, int((u1.astype(np.int64) - u0).max(initial=0)) + 1)
        if nu * nv > ANISO_MAX_TAPS:
            raise UnsupportedError(
                f"an anisotropic footprint of {nu}x{nv} texels (numpipe filters at most "
                f"{ANISO_MAX_TAPS} texels a pixel)"
            )
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for j in range(nv):
                v = (v0.astype(np.int64) + j).astype(I32)
                vmask = v <= v1
                V = (v.astype(F32) - tex_v).astype(F32)
                dq = ((V * B).astype(F32) + dq_base).astype(F32)
                q = (((C * V).astype(F32) + (B * U).astype(F32)).astype(F32) * V).astype(F32)
                q = (q + q_base).astype(F32)
                tv = (v.astype(F32) / height_dim).astype(F32)
                for i in range(nu):
                    u = (u0.astype(np.int64) + i).astype(I32)
                    qi = _cvtt(q)
                    live = vmask & (u <= u1) & (qi <= 1023)
                    wt = np.where(live, table[np.maximum(qi, 0) & 1023], _ZERO).astype(F32)
                    sel = np.flatnonzero(wt != 0)
                    if sel.size:
                        tu = (u[sel].astype(F32) / _pick(width_dim, sel)).astype(F32)
                        taps = ctx.subset(sel)
                        taps.coords = [tu, tv[sel], *taps.coords[2:]]
                        texel = taps._soa_nearest(lvl[sel])
                        ws = wt[sel]
                        for c in range(4):
                            tc = np.broadcast_to(np.asarray(texel[c], F32), sel.shape)
                            colors[c][sel] = (colors[c][sel] + (tc * ws).astype(F32)).astype(F32)
                        den[sel] = (den[sel] + ws).astype(F32)
                    q = (q + dq).astype(F32)
                    dq = (dq + ddq).astype(F32)
            out = [(c / den).astype(F32) for c in colors]
        empty = np.flatnonzero(den == 0)
        if empty.size:
            lin = ctx.subset(empty)._soa_linear(lvl[empty])
            for c in range(4):
                out[c][empty] = np.broadcast_to(np.asarray(lin[c], F32), empty.shape)
        return out

    def _rho(
        self, coords: list[Any], derivs: Any, from_face: bool
    ) -> tuple[np.ndarray, bool, bool]:
        """lp_build_rho with no_rho_approx: (rho^2 for dims > 1 else rho, squared,
        one value per quad)."""
        req, img, dims = self.req, self.img, self.dims
        first = img.first_level
        size = [F32(img.widths[first]), F32(img.heights[first]), F32(img.depths[first])]
        if not self.normalized:
            size = [_ONE, _ONE, _ONE]
        squared = dims > 1
        if derivs is not None:
            ddx, ddy = derivs
            if squared:
                xs = [((size[i] * ddx[i]).astype(F32, copy=False)) for i in range(dims)]
                ys = [((size[i] * ddy[i]).astype(F32, copy=False)) for i in range(dims)]
                rx = (
                    (xs[0] * xs[0]).astype(F32, copy=False)
                    + (xs[1] * xs[1]).astype(F32, copy=False)
                ).astype(F32, copy=False)
                ry = (
                    (ys[0] * ys[0]).astype(F32, copy=False)
                    + (ys[1] * ys[1]).astype(F32, copy=False)
                ).astype(F32, copy=False)
                if dims > 2:
                    rx = (rx + (xs[2] * xs[2]).astype(F32, copy=False)).astype(F32, copy=False)
                    ry = (ry + (ys[2] * ys[2]).astype(F32, copy=False)).astype(F32, copy=False)
                rho = np.maximum(rx, ry)
            else:
                rho = (np.maximum(np.abs(ddx[0]), np.abs(ddy[0])) * size[0]).astype(F32, copy=False)
            rho = np.where(np.isfinite(rho), rho, _ZERO).astype(F32, copy=False)
            per_pixel = (
                self.is_cube and self.mip_f != MipFilter.NONE and self.op == "sample"
            ) or self.op == "lod"
            if (
                not per_pixel
                and req.ddx is None
                and req.lod is None
                and req.bias is None
                and req.quad_shape is not None
            ):
                a, b = req.quad_shape
                return (
                    np.ascontiguousarray(rho.reshape(a, 2, b, 2)[:, 0, :, 0]).reshape(-1),
                    squared,
                    True,
                )
            return rho, squared, False
        assert req.quad_shape is not None
        qs = req.quad_shape
        dsx, dsy = _quad_diffs(coords[0], qs)
        if dims == 1:
            rho = (np.maximum(np.abs(dsx), np.abs(dsy)) * size[0]).astype(F32, copy=False)
            return rho, False, True
        dtx, dty = _quad_diffs(coords[1], qs)
        a = (dsx * size[0]).astype(F32, copy=False)
        b = (dsy * size[0]).astype(F32, copy=False)
        c = (dtx * size[1]).astype(F32, copy=False)
        d = (dty * size[1]).astype(F32, copy=False)
        rx = ((a * a).astype(F32, copy=False) + (c * c).astype(F32, copy=False)).astype(
            F32, copy=False
        )
        ry = ((b * b).astype(F32, copy=False) + (d * d).astype(F32, copy=False)).astype(
            F32, copy=False
        )
        if dims > 2:
            drx, dry = _quad_diffs(coords[2], qs)
            e = (drx * size[2]).astype(F32, copy=False)
            f = (dry * size[2]).astype(F32, copy=False)
            rx = (rx + (e * e).astype(F32, copy=False)).astype(F32, copy=False)
            ry = (ry + (f * f).astype(F32, copy=False)).astype(F32, copy=False)
        return np.maximum(rx, ry).astype(F32, copy=False), True, True

    def _levels(
        self, ipart: np.ndarray, fpart: Any, positive: Any, quads: Any
    ) -> tuple[Any, Any, Any, Any]:
        """Mip levels from the integer lod (lp_build_nearest_mip_level /
        lp_build_linear_mip_levels); expands per-quad values to lanes."""
        first, last = self.img.first_level, self.img.last_level
        if self.mip_f == MipFilter.NONE:
            return first, None, None, self._lanes(positive, quads)
        level = ipart.astype(I32) + I32(first)
        if self.mip_f == MipFilter.NEAREST:
            l0 = _uniform(np.clip(level, first, last))
            return self._lanes(l0, quads), None, None, self._lanes(positive, quads)
        low = level < first
        high = level >= last
        l0 = np.clip(level, first, last)
        l1 = np.minimum(l0 + 1, last)
        l1[low] = first
        f = np.where(low | high, _ZERO, fpart).astype(F32, copy=False)
        return (
            self._lanes(_uniform(l0), quads),
            self._lanes(_uniform(l1), quads),
            self._lanes(f, quads),
            self._lanes(positive, quads),
        )

    def _lanes(self, v: Any, quads: Any) -> Any:
        """Per-quad (or single uniform) values -> per-lane values; scalars stay."""
        if quads is None or np.ndim(v) == 0:
            return v
        if quads == "uniform":
            return np.full(self.n, v[0], v.dtype) if v.size == 1 else v
        return _expand(v, quads)

    # -- filtering -------------------------------------------------------------------

    def _filter(
        self,
        ctx: _Taps,
        level0: Any,
        level1: Any,
        fpart: Any,
        positive: Any,
        out: np.ndarray | None = None,
    ) -> Any:
        if self.min_f == self.mag_f:
            return self._mipmap(ctx, self.min_f, self.mip_f, level0, level1, fpart, None, out)
        return self._min_mag(ctx, level0, level1, fpart, positive)

    def _min_mag(self, ctx: _Taps, level0: Any, level1: Any, fpart: Any, positive: Any) -> Any:
        n = ctx.n
        pos = np.broadcast_to(np.asarray(positive, bool), (n,))
        if pos.all():
            return self._mipmap(ctx, self.min_f, self.mip_f, level0, level1, fpart, None)
        if not pos.any():
            return self._mipmap(ctx, self.mag_f, MipFilter.NONE, level0, None, None, None)
        idx_min = np.flatnonzero(pos)
        idx_mag = np.flatnonzero(~pos)
        a = self._mipmap(ctx, self.min_f, self.mip_f, level0, level1, fpart, idx_min)
        b = self._mipmap(ctx, self.mag_f, MipFilter.NONE, level0, None, None, idx_mag)
        out = []
        for ca, cb in zip(a, b):
            o = np.empty(n, ca.dtype)
            o[idx_min] = ca
            o[idx_mag] = cb
            out.append(o)
        return out

    def _mipmap(
        self,
        ctx: _Taps,
        img_f: int,
        mip_f: int,
        level0: Any,
        level1: Any,
        fpart: Any,
        lanes: np.ndarray | None,
        out: np.ndarray | None = None,
    ) -> list[Any]:
        """Sample one or two levels (lp_build_sample_mipmap) for ``lanes`` (None: all);
        8-bit results are unpacked into ``out`` (4, lanes) when given."""
        sub = ctx.subset(lanes)
        l0 = _pick(level0, lanes)
        c0 = sub.image(img_f, l0)
        if mip_f == MipFilter.LINEAR:
            f = _pick(fpart, lanes)
            if ctx.aos:
                w = np.maximum(_itrunc((f * F32(256.0)).astype(F32, copy=False)), 0)
                need = w > 0
                if need.any():
                    l1 = _pick(level1, lanes)
                    idx = None if need.all() else np.flatnonzero(need)
                    sub1 = sub.subset(idx)
                    c1 = sub1.image(img_f, _pick(l1, idx))
                    if idx is None:
                        c0 = _lerp8(w.astype(U32), c0, c1)
                    else:
                        c0 = c0.copy()
                        c0[idx] = _lerp8(w[idx].astype(U32), c0[idx], c1)
            else:
                need = f > _ZERO
                if need.any():
                    l1 = _pick(level1, lanes)
                    idx = None if need.all() else np.flatnonzero(need)
                    sub1 = sub.subset(idx)
                    c1 = sub1.image(img_f, _pick(l1, idx))
                    fw = np.maximum(f, _ZERO) if idx is None else f[idx]
                    if idx is None:
                        c0 = [_lerp(fw, a, b) for a, b in zip(c0, c1)]
                    else:
                        c0 = [np.array(a, copy=True) for a in c0]
                        for a, b in zip(c0, c1):
                            a[idx] = _lerp(fw, a[idx], b)
        if ctx.aos:
            return _unpack8(c0, self.fi, out)
        return c0


# llvmpipe's anisotropic filter weights (lp_bld_sample.c aniso_filter_table):
# exp(-2 r^2) for r^2 = i / 1023 in float32, kept to six decimals
ANISO_LUT_SIZE = 1024
# texels one pixel's anisotropic filter may visit (the ellipse's bounding box)
ANISO_MAX_TAPS = 1 << 14


@cache
def aniso_weights() -> np.ndarray:
    import math

    r2 = (np.arange(ANISO_LUT_SIZE).astype(F32) / F32(ANISO_LUT_SIZE - 1)).astype(F32)
    x = (F32(-2.0) * r2).astype(F32)
    return np.array([float(f"{float(F32(math.exp(float(v)))):f}") for v in x], F32)


def _cvtt(x: np.ndarray) -> np.ndarray:
    """cvttps2dq: float32 truncated to int32, NaN and out-of-range values
    becoming INT32_MIN (as the CPU llvmpipe runs on converts them)."""
    x = np.asarray(x, F32)
    ok = np.isfinite(x) & (x > -2147483648.0) & (x < 2147483648.0)
    return np.where(ok, np.trunc(np.where(ok, x, 0)), -2147483648).astype(I32)


def _uniform(x: np.ndarray) -> Any:
    """A per-lane level array whose lanes all agree becomes a scalar."""
    x = np.asarray(x)
    if x.ndim == 0:
        return int(x)
    if x.size and (x == x.flat[0]).all():
        return int(x.flat[0])
    return x


def _pick(v: Any, lanes: Any) -> Any:
    if lanes is None or v is None or np.ndim(v) == 0:
        return v
    return v[lanes]


# ----------------------------------------------------------------------------
# 8-bit arithmetic (llvmpipe's AoS sampler)
# ----------------------------------------------------------------------------


def _linear_axis(c: np.ndarray, scale256: Any, lm1: Any, wrap: int) -> tuple[Any, Any, Any]:
    """One axis of the 8-bit bilinear footprint: (first texel, step to the
    second, weight of the second in 1/256) for normalized coordinates ``c``
    on a level ``scale256 / 256`` texels long (``lm1``: its last index)."""
    f = c * scale256
    f -= F32(128.0)  # rint(x) - 128 == rint(x - 128) below 2**23
    np.rint(f, out=f)
    with np.errstate(invalid="ignore"):
        fi = f.astype(I32)
    i0 = fi >> 8
    w = (fi & 255).view(U32)
    if wrap == TexWrap.REPEAT:
        i0 &= lm1
        step = np.where(i0 == lm1, -lm1, 1)
    else:
        # 0 <= i0 < length - 1 in one unsigned compare
        step = i0.view(U32) < (U32(lm1) if np.ndim(lm1) == 0 else lm1.view(U32))
        np.clip(i0, 0, lm1, out=i0)
    return i0, step, w


def _nearest_axis(c: np.ndarray, scale: Any, lm1: Any, wrap: int) -> Any:
    """One axis of a nearest tap (see :func:`_linear_axis`; ``scale``: the length)."""
    i0 = _ifloor(c * scale)
    if wrap == TexWrap.REPEAT:
        i0 &= lm1
    else:
        np.clip(i0, 0, lm1, out=i0)
    return i0


def _lerp8_planes(a: np.ndarray, b: np.ndarray, w: Any, iw: Any) -> tuple[Any, Any]:
    """One rounded 8-bit lerp of packed words, as its red/blue and green/alpha
    16-bit-lane planes (both in the low bytes of their lanes): the first
    stage of :func:`_bilerp8`."""
    out = []
    for shift in (0, 8):
        x = (a >> U32(8)) & _RB_MASK if shift else a & _RB_MASK
        y = (b >> U32(8)) & _RB_MASK if shift else b & _RB_MASK
        x *= iw
        y *= w
        x += y
        x += _ROUND_RB
        x >>= U32(8)
        x &= _RB_MASK
        out.append(x)
    return out[0], out[1]


def separable_texels(
    bindings: TextureBindings, unit: int, sampler: int, s_cols: np.ndarray, t_rows: np.ndarray
) -> tuple[np.ndarray, tuple[int, int, int, int]] | None:
    """TEX of a 2D texture at (s_cols[x], t_rows[y]) for a whole (h, w) grid of
    lanes, when the 8-bit path with one level applies (equal min/mag filters,
    no mipmapping or a single-level view, CLAMP_TO_EDGE or power-of-two
    REPEAT, an RGBA8-like format), else None.

    Returns the packed words (h, w) uint32 and, per RGBA channel, the byte of
    the word holding it (-1: 0, -2: 1).  Each lane gets exactly the bytes the
    per-lane path computes -- the same texel indices, weights and rounded
    lerps -- but the horizontal lerps are done once per texel row needed
    instead of once per lane: an axis-aligned textured rectangle (a blit, a
    full-screen pass) costs one vertical lerp per pixel (llvmpipe's linear
    rasterizer has a path for such rectangles too)."""
    img = bindings._image(unit, "sample")
    state = bindings._sampler(sampler, "sample")
    if img.target != TextureTarget.TEXTURE_2D:
        return None
    op = _SampleOp(img, state, TexRequest("sample", unit, sampler, "2D", 1), 1)
    if not (
        op.aos
        and op.normalized
        and op.min_f == op.mag_f
        # one level either way: no mipmapping, or a view of a single level
        # (the per-lane path then clamps every LOD to it, and a lerp between
        # it and itself gives its own bytes)
        and (op.mip_f == MipFilter.NONE or img.first_level == img.last_level)
        and img.fi.rgba8_bytes is not None
        and all(
            op.wrap[a] == TexWrap.CLAMP_TO_EDGE or (op.wrap[a] == TexWrap.REPEAT and img.pot[a])
            for a in range(2)
        )
    ):
        return None
    level = img.first_level
    width, height = int(img.widths[level]), int(img.heights[level])
    rw = int(img.rows[level]) // 4
    base = int(img.offsets[level]) // 4
    words = img._typed[4]
    s_cols = np.asarray(s_cols, F32)
    t_rows = np.asarray(t_rows, F32)
    if op.min_f == TexFilter.NEAREST:
        ix = _nearest_axis(s_cols, F32(width), width - 1, op.wrap[0])
        iy = _nearest_axis(t_rows, F32(height), height - 1, op.wrap[1])
        idx = np.multiply(iy, rw, dtype=np.intp)[:, None] + (ix.astype(np.intp) + base)[None, :]
        out = np.take(words, idx)
    else:
        ix, sx, ws = _linear_axis(s_cols, F32(width * 256), width - 1, op.wrap[0])
        iy, sy, wt = _linear_axis(t_rows, F32(height * 256), height - 1, op.wrap[1])
        iy1 = iy + sy
        needed = np.unique(np.concatenate([iy, iy1]))
        row0 = (np.multiply(needed, rw, dtype=np.intp) + base)[:, None]
        left = np.take(words, row0 + ix[None, :])
        right = np.take(words, row0 + (ix + sx)[None, :])
        h_rb, h_ga = _lerp8_planes(left, right, ws, U32(256) - ws)
        p0 = np.searchsorted(needed, iy)
        p1 = np.searchsorted(needed, iy1)
        top = (np.take(h_rb, p0, axis=0), np.take(h_ga, p0, axis=0))
        bottom = (np.take(h_rb, p1, axis=0), np.take(h_ga, p1, axis=0))
        out = _join8_planes(top, bottom, wt[:, None], (U32(256) - wt)[:, None])
    order = _byte_order(img.fi)
    source = []
    for sw in img.view.swizzle:
        if sw <= Swizzle.W:
            source.append(order[sw])
        else:
            source.append(-2 if sw == Swizzle.ONE else -1)
    return out, (source[0], source[1], source[2], source[3])


def _lerp8(w: Any, v0: np.ndarray, v1: np.ndarray) -> np.ndarray:
    """Per byte of packed RGBA8 words: v0 + floor((w * (v1 - v0) + 128) / 256),
    computed as (v0 * (256 - w) + v1 * w + 128) >> 8 on two channels at a time."""
    iw = U32(256) - w if np.ndim(w) == 0 else (U32(256) - w).astype(U32)
    rb0 = v0 & _RB_MASK
    rb1 = v1 & _RB_MASK
    ga0 = (v0 >> U32(8)) & _RB_MASK
    ga1 = (v1 >> U32(8)) & _RB_MASK
    rb = ((rb0 * iw + rb1 * w + _ROUND_RB) >> U32(8)) & _RB_MASK
    ga = (ga0 * iw + ga1 * w + _ROUND_RB) & ~_RB_MASK
    return rb | ga


def _bilerp8(ws: Any, wt: Any, t00: Any, t01: Any, t10: Any, t11: Any) -> np.ndarray:
    """Bilinear blend of packed RGBA8 words: two horizontal lerps, then one
    vertical, each rounded to 8 bits as llvmpipe does.  The red/blue and
    green/alpha byte pairs are blended as separate 16-bit-lane planes."""
    iws = U32(256) - ws
    top = _lerp8_planes(t00, t01, ws, iws)
    bottom = _lerp8_planes(t10, t11, ws, iws)
    return _join8_planes(top, bottom, wt, U32(256) - wt)


def _join8_planes(top: tuple[Any, Any], bottom: tuple[Any, Any], w: Any, iw: Any) -> np.ndarray:
    """The vertical stage of :func:`_bilerp8`: lerp two rows' red/blue and
    green/alpha planes (from :func:`_lerp8_planes`; overwritten) and join the
    results into packed words."""
    out = []
    for shift, a, b in ((0, top[0], bottom[0]), (8, top[1], bottom[1])):
        a *= iw
        b *= w
        a += b
        a += _ROUND_RB
        if shift:
            a &= ~_RB_MASK
        else:
            a >>= U32(8)
            a &= _RB_MASK
        out.append(a)
    out[0] |= out[1]
    return out[0]


def _offset_coord(c: Any, off: Any, lf: Any) -> Any:
    """Normalized coordinate ``c`` moved by ``off`` texels of a level ``lf`` wide
    (float32 throughout), as the non-power-of-two REPEAT path needs it."""
    if off is None:
        return c
    return (c + (np.asarray(off).astype(F32, copy=False) / lf).astype(F32, copy=False)).astype(
        F32, copy=False
    )


def _byte_order(fi: _FormatInfo) -> tuple[int, ...]:
    """Byte of the packed word feeding R, G, B, A (-1: zero, -2: one)."""
    return fi.rgba8_bytes if fi.rgba8_bytes is not None else (0, 1, 2, 3)


def _unpack8(words: np.ndarray, fi: _FormatInfo, out: np.ndarray | None = None) -> list[Any]:
    """Packed words -> four float32 channels, ``float(byte) * fl32(1/255)``
    (written to ``out``, shape (4, n), when given)."""
    order = _byte_order(fi)
    n = words.shape[0]
    if out is None:
        out = np.empty((4, n), F32)
    np.multiply(words.view(np.uint8).reshape(n, 4).T, F32(1.0 / 255.0), out=out)
    chans = []
    for b in order:
        if b == -1:
            chans.append(np.zeros(n, F32))
        elif b == -2:
            chans.append(np.ones(n, F32))
        else:
            chans.append(out[b])
    return chans


# ----------------------------------------------------------------------------
# Texel taps of one image level (nearest / linear, both paths)
# ----------------------------------------------------------------------------


class _Taps:
    """The per-lane inputs of a filter: coordinates, face/layer, shadow reference."""

    def __init__(
        self,
        op: _SampleOp,
        coords: list[Any],
        face: Any,
        layer: Any,
        ref: Any,
        offsets: Any,
        component: Any = 0,
    ) -> None:
        self.op = op
        self.coords = coords
        self.face = face
        self.layer = layer
        self.ref = ref
        self.offsets = offsets
        self.component = component
        self.aos = op.aos
        self.n = coords[0].shape[0]

    def subset(self, lanes: Any) -> _Taps:
        if lanes is None:
            return self
        o = self.offsets
        return _Taps(
            self.op,
            [c[lanes] if c is not None else None for c in self.coords],
            _pick(self.face, lanes),
            _pick(self.layer, lanes),
            _pick(self.ref, lanes),
            None if o is None else [_pick(v, lanes) for v in o],
            _pick(self.component, lanes),
        )

    def _off(self, axis: int) -> Any:
        return None if self.offsets is None else self.offsets[axis]

    def _z(self) -> Any:
        """Layer index for layered targets (face + cube layer for cubes)."""
        if self.face is not None:
            return self.face if self.layer is None else self.face + self.layer
        return self.layer

    def image(self, img_f: int, level: Any) -> Any:
        if self.aos:
            if img_f == TexFilter.NEAREST:
                return self._aos_nearest(level)
            return self._aos_linear(level)
        if img_f == TexFilter.NEAREST:
            return self._soa_nearest(level)
        if self.face is not None and self.op.seamless:
            return self._soa_seamless(level)
        return self._soa_linear(level)

    # -- 8-bit path --------------------------------------------------------------------

    def _sizes(self, level: Any) -> tuple[Any, Any, Any]:
        img = self.op.img
        return img.widths[level], img.heights[level], img.depths[level]

    def _aos_nearest(self, level: Any) -> np.ndarray:
        op, img = self.op, self.op.img
        if self._fast_2d(level):
            return np.take(img._typed[4], self._fast_index(level, False))
        dims = op.dims
        size = self._sizes(level)
        idx = []
        for axis in range(dims):
            length = size[axis]
            c = self.coords[axis]
            cf = (
                (c * np.asarray(length).astype(F32, copy=False)).astype(F32, copy=False)
                if op.normalized
                else c
            )
            i = _ifloor(cf)
            off = self._off(axis)
            if off is not None:
                i = i + off
            wrap = op.wrap[axis]
            lm1 = np.asarray(length - 1).astype(I32)
            if wrap == TexWrap.REPEAT:
                if img.pot[axis]:
                    i = i & lm1
                else:
                    lf = np.asarray(length).astype(F32, copy=False)
                    cc = _offset_coord(c, off, lf)
                    fr = np.fmin(cc - np.floor(cc), _MAX_FRACT).astype(F32, copy=False)
                    i = _itrunc((fr * lf).astype(F32, copy=False))
            else:
                i = np.clip(i, 0, lm1)
            idx.append(i)
        y = idx[1] if dims >= 2 else None
        z = idx[2] if dims >= 3 else self._z()
        return img.aos_texels(img.byte_offsets(level, idx[0], y, z))

    def _fast_2d(self, level: Any) -> bool:
        """Whether the lean 2D path applies: no offsets, wraps that need no float
        fallback (CLAMP_TO_EDGE, power-of-two REPEAT), an RGBA8-like format."""
        op = self.op
        if op.dims != 2 or self.offsets is not None or not op.normalized:
            return False
        for axis in range(2):
            w = op.wrap[axis]
            if w == TexWrap.REPEAT and not op.img.pot[axis]:
                return False
        return op.img.fi.rgba8_bytes is not None

    def _fast_index(self, level: Any, linear: bool) -> Any:
        """Word indices (and weights) of 2D taps, in as few array passes as
        possible; ``level`` is one level or one per lane.  Returns (i00, dx, dy,
        ws, wt) for linear (dx/dy the word steps to the right/lower neighbours)
        or i00 for nearest."""
        op, img = self.op, self.op.img
        uniform = np.ndim(level) == 0
        if uniform:
            size = (int(img.widths[level]), int(img.heights[level]))
            rw: Any = int(img.rows[level]) // 4
            base: Any = int(img.offsets[level]) // 4
        else:
            size = (None, None)
            rw = np.take(img.row_words, level)
            base = np.take(img.base_words, level)
        z = self._z()
        parts = []
        for axis in range(2):
            length = size[axis]
            c = self.coords[axis]
            wrap = op.wrap[axis]
            lm1 = length - 1 if uniform else np.take(img.max_i32[axis], level)
            if linear:
                scale = F32(length * 256) if uniform else np.take(img.size256_f32[axis], level)
                parts.append(_linear_axis(c, scale, lm1, wrap))
            else:
                scale = F32(length) if uniform else np.take(img.size_f32[axis], level)
                parts.append((_nearest_axis(c, scale, lm1, wrap), None, None))
        idx = np.multiply(parts[1][0], rw, dtype=np.intp)
        idx += parts[0][0]
        idx += base
        if z is not None:
            ls = int(img.lstrides[level]) // 4 if uniform else np.take(img.layer_words, level)
            idx += np.multiply(z, ls, dtype=np.intp)
        if not linear:
            return idx
        dy = np.multiply(parts[1][1], rw, dtype=np.intp)
        return idx, parts[0][1], dy, parts[0][2], parts[1][2]

    def _aos_linear(self, level: Any) -> np.ndarray:
        op, img = self.op, self.op.img
        if self._fast_2d(level):
            idx, dx, dy, ws, wt = self._fast_index(level, True)
            words = img._typed[4]
            t00 = np.take(words, idx)
            idx += dx
            t01 = np.take(words, idx)
            idx += dy
            t11 = np.take(words, idx)
            idx -= dx
            t10 = np.take(words, idx)
            return _bilerp8(ws, wt, t00, t01, t10, t11)
        dims = op.dims
        size = self._sizes(level)
        pos0: list[Any] = []
        pos1: list[Any] = []
        weights: list[Any] = []
        for axis in range(dims):
            length = size[axis]
            c = self.coords[axis]
            if op.normalized:
                scaled = (c * np.asarray(length * 256).astype(F32, copy=False)).astype(
                    F32, copy=False
                )
            else:
                scaled = (c * F32(256.0)).astype(F32, copy=False)
            fixed = _iround(scaled) - 128
            i0 = fixed >> 8
            w = fixed & 255
            off = self._off(axis)
            if off is not None:
                i0 = i0 + off
            lm1 = np.asarray(length - 1).astype(I32)
            wrap = op.wrap[axis]
            if wrap == TexWrap.REPEAT:
                if img.pot[axis]:
                    i0 = i0 & lm1
                else:
                    lf = np.asarray(length).astype(F32, copy=False)
                    cc = _offset_coord(c, off, lf)
                    fr = (cc - np.floor(cc)).astype(F32, copy=False)
                    fx = (
                        _iround(
                            ((fr * lf).astype(F32, copy=False) * F32(256.0)).astype(F32, copy=False)
                        )
                        - 128
                    )
                    w = fx & 255
                    i0 = fx >> 8
                    i0 = np.minimum(np.where(i0 < 0, lm1, i0), lm1)
                i1 = np.where(i0 != lm1, i0 + 1, 0)
            else:
                inside = (i0 >= 0) & (i0 < lm1)
                i0 = np.clip(i0, 0, lm1)
                i1 = np.where(inside, i0 + 1, i0)
            pos0.append(i0)
            pos1.append(i1)
            weights.append(w.astype(U32))
        zl = self._z()

        def tap(ix: Any, iy: Any, iz: Any) -> np.ndarray:
            return img.aos_texels(img.byte_offsets(level, ix, iy, iz))

        if dims == 1:
            return _lerp8(weights[0], tap(pos0[0], None, zl), tap(pos1[0], None, zl))
        zs = [zl, zl] if dims == 2 else [pos0[2], pos1[2]]
        planes = []
        for zi in range(2 if dims == 3 else 1):
            z = zs[zi]
            a = _lerp8(weights[0], tap(pos0[0], pos0[1], z), tap(pos1[0], pos0[1], z))
            b = _lerp8(weights[0], tap(pos0[0], pos1[1], z), tap(pos1[0], pos1[1], z))
            planes.append(_lerp8(weights[1], a, b))
        if dims == 3:
            return _lerp8(weights[2], planes[0], planes[1])
        return planes[0]

    # -- float path ----------------------------------------------------------------------

    def _fetch(self, level: Any, x: Any, y: Any, z: Any, border: Any) -> list[Any]:
        """lp_build_sample_texel_soa: decode texels, border colour where ``border``."""
        op, img = self.op, self.op.img
        if border is not None and border.any():
            x = np.where(border, 0, x)
            if y is not None:
                y = np.where(border, 0, y)
            if z is not None:
                z = np.where(border, 0, z)
        chans = img.texels(img.byte_offsets(level, x, y, z))
        if border is not None and border.any():
            bc = self._border_color()
            for c in range(4):
                if op.fi.present[c]:
                    chans[c] = np.where(border, bc[c], chans[c])
        return chans

    def _border_color(self) -> list[Any]:
        fi = self.op.fi
        b = self.op.border
        if fi.kind == "float":
            vals = [F32(v) for v in b]
            dt: Any = F32
        else:
            dt = I32 if fi.kind == "sint" else U32
            vals = [int(v) for v in b]
        out = []
        for v in vals:
            if fi.border_min is not None:
                v = max(v, fi.border_min)
            if fi.border_max is not None:
                v = min(v, fi.border_max)
            out.append(dt(v))
        return out

    def _border_mask(self, axis: int, i: np.ndarray, length: Any, mask: Any) -> Any:
        op = self.op
        if not _uses_border(op.wrap[axis], op.min_f, op.mag_f):
            return mask
        out = (i < 0) | (i >= length)
        return out if mask is None else (mask | out)

    def _soa_nearest(self, level: Any) -> list[Any]:
        op, img = self.op, self.op.img
        dims = op.dims
        size = self._sizes(level)
        idx = []
        border = None
        for axis in range(dims):
            i = _wrap_nearest(
                self.coords[axis],
                size[axis],
                self._off(axis),
                img.pot[axis],
                op.wrap[axis],
                op.normalized,
            )
            border = self._border_mask(axis, i, size[axis], border)
            idx.append(i)
        y = idx[1] if dims >= 2 else None
        z = idx[2] if dims >= 3 else self._z()
        chans = self._fetch(level, idx[0], y, z, border)
        if self.ref is not None:
            hit = _compare(op.func, self.ref, chans[0])
            v = np.where(hit, _ONE, _ZERO).astype(F32, copy=False)
            return [v, v, v, v]
        return chans

    def _soa_linear(self, level: Any) -> list[Any]:
        op, img = self.op, self.op.img
        dims = op.dims
        gather = op.op == "gather"
        size = self._sizes(level)
        p0, p1, w, b0, b1 = [], [], [], [], []
        for axis in range(dims):
            i0, i1, wt = _wrap_linear(
                self.coords[axis],
                size[axis],
                self._off(axis),
                img.pot[axis],
                op.wrap[axis],
                op.normalized,
                gather,
            )
            p0.append(i0)
            p1.append(i1)
            w.append(wt)
            b0.append(self._border_mask(axis, i0, size[axis], None))
            b1.append(self._border_mask(axis, i1, size[axis], None))
        zl = self._z()

        def tap(ix: int, iy: int, iz: int) -> list[Any]:
            xs = (p0, p1)[ix][0]
            bm = (b0, b1)[ix][0]
            ys = zs = None
            if dims >= 2:
                ys = (p0, p1)[iy][1]
                bm = _or(bm, (b0, b1)[iy][1])
            if dims >= 3:
                zs = (p0, p1)[iz][2]
                bm = _or(bm, (b0, b1)[iz][2])
            else:
                zs = zl
            return self._fetch(level, xs, ys, zs, bm)

        if dims == 1:
            n0, n1 = tap(0, 0, 0), tap(1, 0, 0)
            if self.ref is not None:
                v = _masklerp(w[0], self._cmp(n0), self._cmp(n1))
                return [v, v, v, v]
            return [_lerp(w[0], a, b) for a, b in zip(n0, n1)]
        n00, n01, n10, n11 = tap(0, 0, 0), tap(1, 0, 0), tap(0, 1, 0), tap(1, 1, 0)
        if gather:
            return self._gather_out(n00, n01, n10, n11)
        c0 = self._bilerp(w[0], w[1], n00, n01, n10, n11)
        if dims == 3:
            m00, m01, m10, m11 = tap(0, 0, 1), tap(1, 0, 1), tap(0, 1, 1), tap(1, 1, 1)
            if self.ref is not None:
                # llvmpipe compares the first slice's texels again here.
                c1 = self._bilerp(w[0], w[1], n00, n01, n10, n11)
            else:
                c1 = self._bilerp(w[0], w[1], m00, m01, m10, m11)
            return [_lerp(w[2], a, b) for a, b in zip(c0, c1)]
        return c0

    def _cmp(self, texel: list[Any]) -> np.ndarray:
        return _compare(self.op.func, self.ref, texel[0])

    def _bilerp(self, ws: Any, wt: Any, n00: Any, n01: Any, n10: Any, n11: Any) -> list[Any]:
        if self.ref is not None:
            v0 = _masklerp(ws, self._cmp(n00), self._cmp(n01))
            v1 = _masklerp(ws, self._cmp(n10), self._cmp(n11))
            v = _lerp(wt, v0, v1)
            return [v, v, v, v]
        out = []
        for a, b, c, d in zip(n00, n01, n10, n11):
            out.append(_lerp(wt, _lerp(ws, a, b), _lerp(ws, c, d)))
        return out

    def _gather_out(self, n00: Any, n01: Any, n10: Any, n11: Any) -> list[Any]:
        """TG4 order: (i0,j1), (i1,j1), (i1,j0), (i0,j0) of the requested component."""
        return self._per_component(lambda swz: self._gather_one(swz, n00, n01, n10, n11))

    def _per_component(self, one: Any) -> list[Any]:
        """Evaluate ``one(view swizzle of the component)`` for the gathered component,
        which may differ per lane."""
        swizzle = self.op.img.view.swizzle
        comp = self.component
        if np.ndim(comp) == 0:
            return one(swizzle[int(comp) & 3])
        comp = np.asarray(comp).astype(np.int64) & 3
        out: list[Any] | None = None
        for c in np.unique(comp):
            part = one(swizzle[int(c)])
            if out is None:
                out = part
            else:
                sel = comp == c
                out = [np.where(sel, a, b) for a, b in zip(part, out)]
        assert out is not None
        return out

    def _gather_one(self, swz: int, n00: Any, n01: Any, n10: Any, n11: Any) -> list[Any]:
        n = self.coords[0].shape[0]
        if self.ref is not None:
            vals = [
                np.where(self._cmp(t), _ONE, _ZERO).astype(F32, copy=False)
                for t in (n10, n11, n01, n00)
            ]
        elif swz <= Swizzle.W:
            vals = [t[swz] for t in (n10, n11, n01, n00)]
        else:
            vals = [n10[0]] * 4
        if swz == Swizzle.ONE:
            return [np.ones(n, vals[0].dtype) for _ in range(4)]
        if swz > Swizzle.W:
            return [np.zeros(n, vals[0].dtype) for _ in range(4)]
        return vals

    def _soa_seamless(self, level: Any) -> list[Any]:
        """Seamless cube filtering (lp_build_sample_image_linear's cube branch)."""
        op, img = self.op, self.op.img
        gather = op.op == "gather"
        size = img.widths[level]
        lf = np.asarray(size).astype(F32, copy=False)
        m = (np.asarray(size) - 1).astype(I32)
        c0 = (np.fmax(self.coords[0], _ZERO) * lf).astype(F32, copy=False)
        x0, sw = _ifloor_fract((c0 - _HALF).astype(F32, copy=False))
        x1 = x0 + 1
        c1 = (np.fmax(self.coords[1], _ZERO) * lf).astype(F32, copy=False)
        y0, tw = _ifloor_fract((c1 - _HALF).astype(F32, copy=False))
        y1 = y0 + 1
        fo = [x0 < 0, x1 > m, y0 < 0, y1 > m]
        edge = fo[0] | fo[1] | fo[2] | fo[3]
        face = self.face
        if not edge.any():
            z = face if self.layer is None else face + self.layer
            n00 = self._fetch(level, x0, y0, z, None)
            n01 = self._fetch(level, x1, y0, z, None)
            n10 = self._fetch(level, x0, y1, z, None)
            n11 = self._fetch(level, x1, y1, z, None)
            if gather:
                return self._gather_out(n00, n01, n10, n11)
            return self._bilerp(sw, tw, n00, n01, n10, n11)
        # Lanes inside the face keep (x0|x1, y0|y1, face); the others take
        # their texels from the neighbouring faces (computed on those lanes only).
        idx = np.flatnonzero(edge)
        xs = [x0.copy(), x1.copy(), x0.copy(), x1.copy()]  # taps 00, 01, 10, 11
        ys = [y0.copy(), y0.copy(), y1.copy(), y1.copy()]
        zs = [np.array(face, I32) for _ in range(4)]
        f = [v[idx] for v in fo]
        e0, e1 = x0[idx], x1[idx]
        mm = m if np.ndim(m) == 0 else m[idx]
        c0, c1 = np.maximum(y0[idx], 0), np.minimum(y1[idx], mm)
        nf, nx, ny = _cube_new_coords(face[idx], e0, e1, c0, c1, mm)
        ex = [np.where(f[0], nx[0][0], e0), np.where(f[1], nx[1][0], e1)]
        ex += [np.where(f[0], nx[0][1], e0), np.where(f[1], nx[1][1], e1)]
        ey = [np.where(f[0], ny[0][0], c0), np.where(f[1], ny[1][0], c0)]
        ey += [np.where(f[0], ny[0][1], c1), np.where(f[1], ny[1][1], c1)]
        fz = face[idx]
        ez = [np.where(f[0], nf[0], fz), np.where(f[1], nf[1], fz)]
        ez += [ez[0].copy(), ez[1].copy()]
        # a texel falls off in y only if it does not fall off in x (cheap corners)
        ymask = [f[2] & ~f[0], f[2] & ~f[1], f[3] & ~f[0], f[3] & ~f[1]]
        for k, side in enumerate((2, 2, 3, 3)):
            j = k & 1
            ex[k] = np.where(ymask[k], nx[side][j], ex[k])
            ey[k] = np.where(ymask[k], ny[side][j], ey[k])
            ez[k] = np.where(ymask[k], nf[side], ez[k])
            xs[k][idx] = ex[k]
            ys[k][idx] = ey[k]
            zs[k][idx] = ez[k]
        x00, x01, x10, x11 = xs
        y00, y01, y10, y11 = ys
        z00, z01, z10, z11 = zs
        if self.layer is not None:
            z00, z01, z10, z11 = (z + self.layer for z in (z00, z01, z10, z11))
        n00 = self._fetch(level, x00, y00, z00, None)
        n01 = self._fetch(level, x01, y01, z01, None)
        n10 = self._fetch(level, x10, y10, z10, None)
        n11 = self._fetch(level, x11, y11, z11, None)
        corner = [fo[0] & fo[2], fo[1] & fo[2], fo[0] & fo[3], fo[1] & fo[3]]
        has_corner = corner[0] | corner[1] | corner[2] | corner[3]
        accurate = op.fi.kind == "float"
        if gather:
            if accurate and has_corner.any():
                return self._gather_corners(n00, n01, n10, n11, corner)
            return self._gather_out(n00, n01, n10, n11)
        out = self._bilerp(sw, tw, n00, n01, n10, n11)
        if accurate and has_corner.any():
            alt = self._corner_filter(sw, tw, n00, n01, n10, n11, corner)
            out = [np.where(has_corner, a, o).astype(F32, copy=False) for a, o in zip(alt, out)]
        return out

    def _corner_filter(self, sw, tw, n00, n01, n10, n11, corner):  # type: ignore[no-untyped-def]
        wx0 = (_ONE - sw).astype(F32, copy=False)
        wy0 = (_ONE - tw).astype(F32, copy=False)
        w00 = (wx0 * wy0).astype(F32, copy=False)
        w01 = (sw * wy0).astype(F32, copy=False)
        w10 = (wx0 * tw).astype(F32, copy=False)
        w11 = (sw * tw).astype(F32, copy=False)
        cw = np.where(corner[0], w00, _ZERO)
        cw = np.where(corner[1], w01, cw)
        cw = np.where(corner[2], w10, cw)
        cw = (np.where(corner[3], w11, cw) * _ONE_THIRD).astype(F32, copy=False)
        ws = []
        for wgt, c in zip((w00, w01, w10, w11), corner):
            ws.append(
                np.where(c, _ZERO, (wgt + cw).astype(F32, copy=False)).astype(F32, copy=False)
            )
        if self.ref is not None:
            masks = [self._cmp(t) for t in (n00, n01, n10, n11)]
            v = np.where(masks[0], ws[0], _ZERO).astype(F32, copy=False)
            for wgt, mk in zip(ws[1:], masks[1:]):
                v = (np.where(mk, wgt, _ZERO) + v).astype(F32, copy=False)
            return [v, v, v, v]
        out = []
        for ch in range(4):
            v = (ws[0] * n00[ch]).astype(F32, copy=False)
            for wgt, t in zip(ws[1:], (n01, n10, n11)):
                v = ((wgt * t[ch]).astype(F32, copy=False) + v).astype(F32, copy=False)
            out.append(v)
        return out

    def _gather_corners(self, n00, n01, n10, n11, corner):  # type: ignore[no-untyped-def]
        return self._per_component(
            lambda swz: self._gather_corners_one(swz, n00, n01, n10, n11, corner)
        )

    def _gather_corners_one(self, swz, n00, n01, n10, n11, corner):  # type: ignore[no-untyped-def]
        """Seamless gather at a cube corner: the missing texel is the mean of the
        other three (lp_build_sample_image_linear)."""
        n = self.coords[0].shape[0]
        if swz == Swizzle.ONE:
            return [np.ones(n, F32) for _ in range(4)]
        if swz > Swizzle.W:
            return [np.zeros(n, F32) for _ in range(4)]
        if self.ref is not None:
            cols = [
                np.where(self._cmp(t), _ONE, _ZERO).astype(F32, copy=False)
                for t in (n00, n01, n10, n11)
            ]
        else:
            cols = [t[swz] for t in (n00, n01, n10, n11)]
        cols = [np.where(c, _ZERO, v).astype(F32, copy=False) for v, c in zip(cols, corner)]
        colc = (
            (
                (cols[0] + cols[1]).astype(F32, copy=False)
                + (cols[2] + cols[3]).astype(F32, copy=False)
            )
            * _ONE_THIRD
        ).astype(F32, copy=False)
        cols = [np.where(c, colc, v).astype(F32, copy=False) for v, c in zip(cols, corner)]
        c00, c01, c10, c11 = cols
        return [c10, c11, c01, c00]


def _or(a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None:
        return a
    return a | b


# ----------------------------------------------------------------------------
# Texel fetch and size queries
# ----------------------------------------------------------------------------


def _fetch_op(img: _Image, req: TexRequest, n: int) -> list[Any]:
    """TXF (lp_build_fetch_texel): integer coordinates, robust out-of-range zeros."""
    x = _i32(req.s, n).astype(np.int64)
    y = _i32(req.t, n).astype(np.int64) if req.t is not None and img.dims >= 2 else None
    z = _i32(req.r, n).astype(np.int64) if req.r is not None and img.dims >= 3 else None
    oob = np.zeros(n, bool)
    sample = getattr(req, "sample", None)
    sample_off: Any = 0
    if sample is not None:
        # sample indices beyond the view's samples read out of range (a
        # single-sample view holds sample 0 only)
        si = _i32(sample, n).astype(np.int64)
        oob |= (si < 0) | (si >= img.samples)
        if img.samples > 1:
            sample_off = np.clip(si, 0, img.samples - 1) * img.sample_stride
    if img.is_buffer:
        level: Any = 0
    else:
        lod = _i32(req.lod, n).astype(np.int64) if req.lod is not None else np.zeros(n, np.int64)
        lv = lod + img.first_level
        oob |= (lv < img.first_level) | (lv > img.last_level)
        level = _uniform(np.where(oob, img.first_level, lv))
    if img.target in (TextureTarget.TEXTURE_1D_ARRAY, TextureTarget.TEXTURE_2D_ARRAY):
        layer = _i32(req.layer, n).astype(np.int64) if req.layer is not None else np.zeros(n)
        layer = np.asarray(layer, np.int64)
        oob |= (layer < 0) | (layer >= img.num_layers)
        z = layer
    elif img.target in _CUBES:
        raise UnsupportedError("texel fetch (TXF) from a cube map view is not allowed")
    off = req.offset
    if off is not None:
        x = x + np.asarray(off[0], np.int64)
        if y is not None and len(off) > 1:
            y = y + np.asarray(off[1], np.int64)
        if img.dims >= 3 and len(off) > 2:
            z = z + np.asarray(off[2], np.int64)
    w = img.widths[level]
    oob |= (x < 0) | (x >= w)
    if y is not None:
        oob |= (y < 0) | (y >= img.heights[level])
    if img.dims >= 3 and z is not None:
        oob |= (z < 0) | (z >= img.depths[level])
    any_oob = oob.any()
    if any_oob:
        x = np.where(oob, 0, x)
        if y is not None:
            y = np.where(oob, 0, y)
        if z is not None:
            z = np.where(oob, 0, z)
        if np.ndim(level):
            level = np.where(oob, img.first_level, level)
    chans = img.texels(img.byte_offsets(level, x, y, z) + sample_off)
    if any_oob:
        # A zero texel after the format swizzle: missing channels keep their 0 / 1.
        zero = _decode(img.fi, np.zeros((1, img.bb), np.uint8))
        for c in range(4):
            chans[c] = np.where(oob, zero[c][0], chans[c])
    if img.is_buffer:
        return chans
    return _swizzle(chans, img.view.swizzle, n)


def _size_query(img: _Image, req: TexRequest, n: int) -> list[Any]:
    """TXQ: (width, height, depth or layers, levels) of level ``lod`` as int32."""
    if img.is_buffer:
        w = min(int(img.widths[0]), 1 << 27)
        return [np.full(n, w, I32), np.zeros(n, I32), np.zeros(n, I32), np.zeros(n, I32)]
    lod = _i32(req.lod, n).astype(np.int64) if req.lod is not None else np.zeros(n, np.int64)
    level = lod + img.first_level
    out_of_range = (level < img.first_level) | (level > img.last_level)
    lvl = np.clip(level, 0, len(img.widths) - 1)
    dims = img.dims
    vals = [img.widths[lvl], img.heights[lvl], img.depths[lvl]]
    out = [np.zeros(n, I32) for _ in range(4)]
    for i in range(dims):
        out[i] = np.where(out_of_range, 0, vals[i]).astype(I32)
    t = img.target
    if t in _LAYERED:
        layers = img.num_layers // 6 if t == TextureTarget.TEXTURE_CUBE_ARRAY else img.num_layers
        if t != TextureTarget.TEXTURE_CUBE:
            out[dims] = np.where(out_of_range, 0, layers).astype(I32)
    out[3] = np.full(n, img.last_level - img.first_level + 1, I32)
    return out

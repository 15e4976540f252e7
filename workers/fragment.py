"""Per-fragment operations: alpha test, stencil, depth, occlusion count, blend, write.

The functions here take fragments that the rasterizer has shaded and apply
them to the framebuffer, in GL/Gallium order: alpha test, stencil test,
depth test, stencil update, depth write, occlusion count, blend, colour mask,
write.  They work on two shapes of fragment set, chosen by ``idx``:

* *dense*: ``idx`` is ``(slice_y, slice_x)``, a rectangle of the framebuffer;
  lane arrays are 2-D ``(h, w)``;
* *sparse*: ``idx`` is ``(py, px)``, integer pixel coordinates with no pixel
  repeated; lane arrays are 1-D.

Numbers follow llvmpipe so that images match it: UNORM8 colour is
``rint(fl32(clamp(x) * 255))`` and UNORM8 blending multiplies 8-bit values
with ``t = a*b; (t + (t >> 8) + 128) >> 8``, adds with saturation.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gallium.pipe.enums import BlendFactor, BlendFunc, CompareFunc, StencilOp
from gallium.pipe.state import DepthStencilAlphaState, RtBlendState
from gallium.util.format import (
    depth_to_word,
    logic_op_applies,
    pack_rgba,
    store_logic_op,
    store_rgba,
    unpack_rgba,
    word_to_depth,
)

F32 = np.float32
U8MAX = np.uint16(255)


@dataclass
class FragmentState:
    """Everything a worker needs to shade and write one draw's fragments.

    Captured on the driver thread when the draw is recorded; immutable after.
    """

    kernel: Any
    # (IN register, "attr"|"pos"|"face"|"primid"|"zero", slot)
    fs_inputs: list[tuple[int, str, int]]
    consts: list[Any]
    textures: Any
    color_outputs: list[int | None]  # per cbuf: FS OUT register (None: not written)
    depth_output: int | None
    stencil_output: int | None
    blend: list[RtBlendState]  # per cbuf
    blend_enabled: bool
    blend_color: tuple[float, float, float, float]
    dsa: DepthStencilAlphaState
    stencil_ref: tuple[int, int]
    coord_lower_left: bool
    coord_integer_center: bool
    fb_height: int
    counters: tuple[Any, ...] = ()
    depth_clamp: tuple[float, float] = (0.0, 1.0)
    sample_mask_zero: bool = False
    logicop: Any = None
    # clamp_fragment_color: colour outputs clamped to [0, 1] before the
    # fragment operations
    clamp_color: bool = False
    # the polygon stipple's 32 rows (uint32, bit 31 the leftmost column) for
    # triangles drawn with it, else None: fragments off the pattern are
    # killed, anchored to the window as the fragment shader sees it
    stipple: Any = None
    # smooth points or lines (gallium/draw/smooth.py): ("point" | "line", the
    # IN register of their coverage coordinate), else None
    smooth: Any = None
    stats: dict[str, int] = field(default_factory=dict)
    # The shader takes derivatives (DDX/DDY, or sampling with an implicit LOD):
    # its lanes must come in 2x2 quads.  Otherwise one lane per covered pixel.
    needs_quads: bool = True
    # Depth can be tested before shading: the shader writes no depth or
    # stencil and never kills, and neither alpha test nor stencil is on.
    early_z: bool = False
    # The shader only copies interpolated inputs to colour outputs: OUT
    # register -> attribute slot (see passthrough_slots), else None.
    passthrough: dict[int, int] | None = None
    # The shader is one TEX of an interpolated input (see texpass_info), else None.
    texpass: Any = None
    # Multisampling (workers/msaa.py): a SampleState, or None for the defaults
    # (one sample, no alpha-to-coverage / alpha-to-one); the pass's sample.
    msaa: Any = None
    sample: int = 0
    # Shader buffers and images (gallium/numpipe/memory.py StageMemory), or None.
    # With ``side_effects`` (the shader stores or runs atomics) every covered,
    # non-helper fragment runs the shader once, in primitive order per pixel:
    # no dense rectangles, no resolved depth, no skipped hidden tiles.
    memory: Any = None
    side_effects: bool = False
    # FS_EARLY_DEPTH_STENCIL: depth/stencil tested and written before shading
    # (``early_z``), whatever the shader does; KILL then drops colour only.
    early_tests: bool = False

    @property
    def reads_primid(self) -> bool:
        """The shader reads PRIM_ID: triangles of different primitives are
        never shaded as one rectangle."""
        return any(kind == "primid" for _, kind, _ in self.fs_inputs)

    @property
    def depth_enabled(self) -> bool:
        return bool(self.dsa.depth.enabled)

    def shades_like(self, other: FragmentState) -> bool:
        """Whether draws with this state and ``other`` may be rasterized as one
        command (the scene asks when it appends a draw): same_raster_state."""
        return same_raster_state(self, other)

    @property
    def stencil_enabled(self) -> bool:
        return bool(self.dsa.stencil[0].enabled)


_CONST_FACTORS = {
    BlendFactor.CONST_COLOR,
    BlendFactor.CONST_ALPHA,
    BlendFactor.INV_CONST_COLOR,
    BlendFactor.INV_CONST_ALPHA,
}


def _uses_blend_color(state: FragmentState) -> bool:
    return any(
        rt.blend_enable
        and _CONST_FACTORS
        & {
            int(rt.rgb_src_factor),
            int(rt.rgb_dst_factor),
            int(rt.alpha_src_factor),
            int(rt.alpha_dst_factor),
        }
        for rt in state.blend
    )


def same_raster_state(a: FragmentState, b: FragmentState) -> bool:
    """Whether fragments shaded with ``a`` and with ``b`` come out the same, so
    consecutive draws with these states can be rasterized as one command.

    State the fragments cannot observe is ignored: the blend colour unless a
    constant blend factor is used, the stencil reference unless stencil is on.
    """
    if a is b:
        return True
    if not _alike(a, b) or len(a.counters) != len(b.counters):
        return False
    if any(x is not y for x, y in zip(a.counters, b.counters)):
        return False
    if len(a.consts) != len(b.consts):
        return False
    for x, y in zip(a.consts, b.consts):
        if x is y:
            continue
        if x is None or y is None or x.shape != y.shape or not np.array_equal(x, y):
            return False
    return True


def same_but_constants(a: FragmentState, b: FragmentState) -> bool:
    """Whether ``a`` and ``b`` are alike but for their constant buffers and
    occlusion counters: a fragment of either shades and writes as the other
    would with its constants.  (workers/multistate.py shades such states with
    one kernel call that reads the constants per lane, and counts each
    state's fragments on their own.)"""
    return a is b or _alike(a, b)


def _alike(a: FragmentState, b: FragmentState) -> bool:
    if (
        a.kernel is not b.kernel
        or a.fs_inputs != b.fs_inputs
        or a.color_outputs != b.color_outputs
        or a.depth_output != b.depth_output
        or a.stencil_output != b.stencil_output
        or a.blend != b.blend
        or a.dsa != b.dsa
        or (a.coord_lower_left, a.coord_integer_center, a.fb_height)
        != (b.coord_lower_left, b.coord_integer_center, b.fb_height)
        or (a.depth_clamp, a.sample_mask_zero, a.logicop, a.clamp_color)
        != (b.depth_clamp, b.sample_mask_zero, b.logicop, b.clamp_color)
        or a.smooth != b.smooth
        or (a.stipple is None) != (b.stipple is None)
        or (a.stipple is not None and not np.array_equal(a.stipple, b.stipple))
        or (a.needs_quads, a.early_z, a.passthrough) != (b.needs_quads, b.early_z, b.passthrough)
        or (a.msaa, a.sample) != (b.msaa, b.sample)
        or getattr(a, "src1_output", None) != getattr(b, "src1_output", None)
        or a.memory is not b.memory
        or a.early_tests != b.early_tests
    ):
        return False
    if _uses_blend_color(a) and a.blend_color != b.blend_color:
        return False
    if a.stencil_enabled and a.stencil_ref != b.stencil_ref:
        return False
    if (a.textures is None) != (b.textures is None):
        return False
    return a.textures is None or a.textures.same_as(b.textures)


@dataclass(frozen=True)
class TexPass:
    """A fragment shader that is one ``TEX OUT[out], IN[j].<s t ..>, SAMP[unit], 2D``."""

    out: int  # COLOR output register
    slot: int  # attribute slot of IN[j]
    s: int  # component of IN[j] giving s
    t: int  # component giving t
    unit: int  # sampler view and sampler state


def texpass_info(kernel: Any, fs_inputs: list[tuple[int, str, int]]) -> TexPass | None:
    """The TexPass a fragment shader is, or None.  Such a shader's colour is
    its texture sample: the rasterizer can sample a whole rectangle at once
    when the coordinates are axis-aligned (see sampler.separable_texels)."""
    cache = kernel.__dict__.setdefault("_texpass_cache", {})
    key = tuple(fs_inputs)
    if key not in cache:
        cache[key] = _texpass(kernel, fs_inputs)
    return cache[key]


def _texpass(kernel: Any, fs_inputs: list[tuple[int, str, int]]) -> TexPass | None:
    insts = [i for i in kernel.shader.instructions if i.opcode != "END"]
    if len(insts) != 1:
        return None
    inst = insts[0]
    if (
        inst.opcode != "TEX"
        or inst.saturate
        or inst.texture != "2D"
        or inst.tex_offsets
        or len(inst.dst) != 1
        or len(inst.src) != 2
    ):
        return None
    d, src, samp = inst.dst[0], inst.src[0], inst.src[1]
    decl = kernel.output_decls.get(d.reg.index)
    slots = {reg: slot for reg, kind, slot in fs_inputs if kind == "attr"}
    if not (
        d.reg.file == "OUT"
        and d.writemask == 0xF
        and d.reg.indirect is None
        and d.reg.dimension is None
        and decl is not None
        and decl.semantic == "COLOR"
        and src.reg.file == "IN"
        and src.reg.indirect is None
        and src.reg.dimension is None
        and not src.negate
        and not src.absolute
        and src.reg.index in slots
        and samp.reg.file == "SAMP"
        and samp.reg.indirect is None
    ):
        return None
    slot = slots[src.reg.index]
    return TexPass(d.reg.index, slot, src.swizzle[0], src.swizzle[1], samp.reg.index)


def passthrough_slots(kernel: Any, fs_inputs: list[tuple[int, str, int]]) -> dict[int, int] | None:
    """OUT register -> attribute slot when the fragment shader does nothing but
    ``MOV OUT[k], IN[j]`` of whole registers into COLOR outputs; else None.

    Such a shader's outputs are its input planes: the rasterizer can skip the
    kernel and write the planes straight into UNORM8 targets (PlaneColour).
    """
    cache = kernel.__dict__.setdefault("_passthrough_cache", {})
    key = tuple(fs_inputs)
    if key in cache:
        return cache[key]
    slots = {reg: slot for reg, kind, slot in fs_inputs if kind == "attr"}
    out: dict[int, int] | None = {}
    for inst in kernel.shader.instructions:
        if inst.opcode == "END":
            continue
        if inst.opcode != "MOV" or inst.saturate or len(inst.dst) != 1 or len(inst.src) != 1:
            out = None
            break
        d, src = inst.dst[0], inst.src[0]
        decl = kernel.output_decls.get(d.reg.index)
        plain_dst = (
            d.reg.file == "OUT"
            and d.writemask == 0xF
            and d.reg.indirect is None
            and d.reg.dimension is None
            and decl is not None
            and decl.semantic == "COLOR"
            and d.reg.index not in out
        )
        plain_src = (
            src.reg.file == "IN"
            and src.reg.indirect is None
            and src.reg.dimension is None
            and src.swizzle == (0, 1, 2, 3)
            and not src.negate
            and not src.absolute
            and src.reg.index in slots
        )
        if not (plain_dst and plain_src):
            out = None
            break
        out[d.reg.index] = slots[src.reg.index]
    cache[key] = out
    return out


def unorm8_prescale(coef: np.ndarray) -> np.ndarray:
    """Plane coefficients (..., 3, C) [a0, dadx, dady] scaled for UNORM8 stores:
    ``fl32(a0*255 + 0.5)``, ``fl32(dadx*255)``, ``fl32(dady*255)`` (each
    computed exactly in float64 and rounded once)."""
    out = coef.astype(np.float64) * 255.0
    out[..., 0, :] += 0.5
    return out.astype(F32)


class PlaneColour:
    """A colour output that is an interpolated input passed through unchanged,
    kept as its planes over a dense rectangle (pixels ``px`` x ``py``) until a
    writer asks for values.

    ``stack()`` gives the float32 values the general path computes,
    ``(a0 + dadx*x) + dady*y``.  For UNORM8 targets ``unorm8_scaled(c)`` folds
    the conversion into the planes: ``(a0' + dadx'*x) + dady'*y`` with the
    coefficients of :func:`unorm8_prescale`, clamped to [0, 255.99] and
    truncated by the store: one add (dense) or three operations (pixel
    lists), at most one clamp and one cast per channel, instead of the plane,
    two clamps, a multiply and a rounding.  It can differ from the exact
    conversion of the float32 plane by one where the product lies within
    about 1e-5 of a half (within llvmpipe's own tolerance of 1); both the
    dense and the pixel-list forms evaluate exactly the same float32
    operations, so a pixel's value never depends on the path.
    """

    __slots__ = ("_float_lines", "_lines", "_stack", "coef", "px", "py", "scaled")

    def __init__(
        self, coef: np.ndarray, px: np.ndarray, py: np.ndarray, scaled: np.ndarray | None = None
    ) -> None:
        self.coef = coef  # (3, 4) float32: a0, dadx, dady per channel
        # (3, 4) float32: unorm8_prescale(coef), which callers may have cached
        self.scaled = unorm8_prescale(coef) if scaled is None else scaled
        self.px = px  # (w,) int64 pixel columns
        self.py = py  # (h,) int64 pixel rows
        self._stack: np.ndarray | None = None
        self._lines: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._float_lines: tuple[np.ndarray, np.ndarray] | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        return (4, self.py.size, self.px.size)

    def float_lines(self) -> tuple[np.ndarray, np.ndarray]:
        """The planes' row terms ``a0 + dadx*x`` (4, w) and column terms
        ``dady*y`` (4, h): every value is ``row + col`` (one float32 add)."""
        if self._float_lines is None:
            coef = self.coef
            row = coef[1][:, None] * self.px.astype(F32)[None, :]
            row += coef[0][:, None]
            col = coef[2][:, None] * self.py.astype(F32)[None, :]
            self._float_lines = (row, col)
        return self._float_lines

    def stack(self) -> np.ndarray:
        if self._stack is None:
            row, col = self.float_lines()
            self._stack = np.add(row[:, None, :], col[:, :, None])
        return self._stack

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.stack()[key]

    def _scaled_lines(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The scaled planes' row terms ``a0' + dadx'*x`` (4, w), column terms
        ``dady'*y`` (4, h), and per channel whether every sum lies in
        [0, 255.99] (each rounding step is monotonic in x and in y, so the
        extremes are at the corners) -- for all channels in a few calls."""
        if self._lines is None:
            s = self.scaled
            rows = s[1][:, None] * self.px.astype(F32)[None, :]
            rows += s[0][:, None]
            cols = s[2][:, None] * self.py.astype(F32)[None, :]
            self._lines = _lines(rows, cols)
        return self._lines

    def col_slice(self, x0: int, x1: int) -> PlaneColour:
        """The same planes over columns ``x0:x1`` of the rectangle (its own
        clamp test and uniform channels: the slice may need neither)."""
        part = PlaneColour(self.coef, self.px[x0:x1], self.py, self.scaled)
        if self._lines is not None:  # (else the slice computes its own: the same values)
            rows, cols, _, _ = self._lines
            part._lines = _lines(rows[:, x0:x1], cols)
        if self._float_lines is not None:
            row, col = self._float_lines
            part._float_lines = (row[:, x0:x1], col)
        return part

    def uniform8(self) -> tuple[int | None, ...]:
        """Per channel, the one UNORM8 value every pixel of the rectangle
        stores, or None where they differ."""
        return self._scaled_lines()[3]

    def unorm8_scaled(self, c: int) -> np.ndarray:
        """Channel ``c`` as float32 in [0, 255.99]: truncating it gives the UNORM8 value."""
        rows, cols, inside, _ = self._scaled_lines()
        u = np.add(rows[c][None, :], cols[c][:, None])
        if not inside[c]:
            np.clip(u, F32(0.0), _U8_TOP, out=u)
        return u

    def store_unorm8(self, c: int, out: np.ndarray) -> None:
        """Store channel ``c``'s UNORM8 values into ``out``, an (h, w) uint8 or uint16 view.

        Where no clamp is needed the add casts straight into ``out`` (one
        call, no float32 temporary: ~1.7x faster than add, then cast); the
        values are the same float32 sums truncated the same way.  A uniform
        channel (see :meth:`uniform8`) is filled with its value."""
        rows, cols, inside, uniform = self._scaled_lines()
        if uniform[c] is not None:
            out[...] = uniform[c]
        elif inside[c]:
            np.add(rows[c][None, :], cols[c][:, None], out=out, casting="unsafe")
        else:
            np.copyto(out, self.unorm8_scaled(c), casting="unsafe")

    def unorm8_stack(self) -> np.ndarray:
        """All four channels as UNORM8 values in a (4, h, w) uint16 stack."""
        out = np.empty(self.shape, np.uint16)
        for c in range(4):
            self.store_unorm8(c, out[c])
        return out

    def unorm8_source(self) -> Src8:
        """The UNORM8 values as a blend source: uniform channels stay constants."""
        return Src8(self, self.uniform8())


class MixedPlaneColour:
    """Two triangles' PlaneColours over one rectangle: ``a``'s values where
    ``sel`` (an (h, w) bool mask) is set, ``b``'s elsewhere.  Each pixel gets
    exactly the value its own triangle's PlaneColour gives it (the values do
    not depend on the rectangle), so two triangles either side of a shared
    edge blend and store once instead of twice with coverage masks."""

    __slots__ = ("_counts", "_inv", "_pieces", "a", "a_left", "b", "parts", "sel")

    def __init__(
        self,
        a: PlaneColour,
        b: PlaneColour,
        sel: np.ndarray,
        parts: list | None = None,
        a_left: bool | None = None,
        counts: dict | None = None,
    ) -> None:
        self.a, self.b, self.sel = a, b, sel
        # runs of columns (x0, x1, kind): kind 0 all a's, 1 all b's, 2 mixed
        self.parts = [(0, sel.shape[1], 2)] if parts is None else parts
        # when known (a half-plane's sel): in the mixed columns, each row's
        # pixels of a are a run at the left end of the run (True) or at the
        # right end (False); the stores then take each row's own columns
        self.a_left = a_left
        # (x0, x1) of a mixed run -> each row's count of a's pixels in it, when known
        self._counts = {} if counts is None else counts
        self._inv: np.ndarray | None = None
        self._pieces: list | None = None

    def a_counts(self, x0: int, x1: int) -> np.ndarray:
        """Each row's count of a's pixels in columns x0:x1 (a mixed run)."""
        got = self._counts.get((x0, x1))
        if got is None:
            got = np.count_nonzero(self.sel[:, x0:x1], axis=1)
        return got

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.a.shape

    def stack(self) -> np.ndarray:
        return np.where(self.sel, self.a.stack(), self.b.stack())

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.stack()[key]

    def unorm8_scaled(self, c: int) -> np.ndarray:
        return np.where(self.sel, self.a.unorm8_scaled(c), self.b.unorm8_scaled(c))

    def store_unorm8(self, c: int, out: np.ndarray) -> None:
        """Columns of one triangle store its planes alone; mixed columns
        store both and keep b's where ``sel`` is not set."""
        if self.parts == [(0, self.sel.shape[1], 2)]:
            self._store_mixed(c, out, self.a, self.b, self._not_sel())
            return
        if self._pieces is None:
            self._pieces = []
            for x0, x1, kind in self.parts:
                if kind == 2:
                    piece = (
                        self.a.col_slice(x0, x1),
                        self.b.col_slice(x0, x1),
                        ~self.sel[:, x0:x1],
                    )
                else:
                    piece = ((self.a, self.b)[kind].col_slice(x0, x1),)
                self._pieces.append((x0, x1, piece))
        for x0, x1, piece in self._pieces:
            if len(piece) == 1:
                piece[0].store_unorm8(c, out[:, x0:x1])
            else:
                self._store_mixed(c, out[:, x0:x1], *piece)

    @staticmethod
    def _store_mixed(c: int, out: np.ndarray, a: PlaneColour, b: PlaneColour, not_sel) -> None:
        a.store_unorm8(c, out)
        if a.uniform8()[c] is not None and a.uniform8()[c] == b.uniform8()[c]:
            return
        other = np.empty(out.shape, out.dtype)
        b.store_unorm8(c, other)
        np.copyto(out, other, where=not_sel)

    def _not_sel(self) -> np.ndarray:
        if self._inv is None:
            self._inv = ~self.sel
        return self._inv

    def unorm8_stack(self) -> np.ndarray:
        out = np.empty(self.shape, np.uint16)
        for c in range(4):
            self.store_unorm8(c, out[c])
        return out

    def uniform8(self) -> tuple[int | None, ...]:
        return tuple(u if u == v else None for u, v in zip(self.a.uniform8(), self.b.uniform8()))

    def unorm8_source(self) -> Src8:
        return Src8(self, self.uniform8())


class TexelWords:
    """A colour output that is a texture sample still in the 8-bit sampler's
    packed form: (h, w) uint32 words and, per RGBA channel, the byte of the
    word holding it (-1: 0, -2: 1).  UNORM8 targets take the bytes as they
    are (the same values the float round trip ``byte * fl32(1/255)`` and the
    store's conversion give back); anything else reads ``stack()``, exactly
    the floats the sampler would have returned."""

    __slots__ = ("source", "words")

    def __init__(self, words: np.ndarray, source: tuple[int, int, int, int]) -> None:
        self.words = words
        self.source = source

    @property
    def shape(self) -> tuple[int, int, int]:
        return (4, *self.words.shape)

    def _byte(self, b: int) -> np.ndarray:
        return self.words.view(np.uint8).reshape(*self.words.shape, 4)[..., b]

    def stack(self) -> np.ndarray:
        out = np.empty(self.shape, F32)
        for c, b in enumerate(self.source):
            if b >= 0:
                np.multiply(self._byte(b), F32(1.0 / 255.0), out=out[c])
            else:
                out[c] = F32(1.0) if b == -2 else F32(0.0)
        return out

    def __getitem__(self, key: Any) -> np.ndarray:
        return self.stack()[key]

    def unorm8_stack(self) -> np.ndarray:
        out = np.empty(self.shape, np.uint16)
        for c, b in enumerate(self.source):
            if b >= 0:
                out[c] = self._byte(b)
            else:
                out[c] = 255 if b == -2 else 0
        return out

    def same_layout(self, perm: tuple[int, ...]) -> bool:
        """Whether the words are already the target's pixels: every RGBA
        channel sits in the byte the target keeps it in, no padding byte."""
        return all(p >= 0 and b == p for b, p in zip(self.source, perm))


class PixelPlaneColour:
    """:class:`PlaneColour` for a list of pixels, each with its own triangle.

    ``planes`` is (M, 3, 4) float32, every triangle's planes; ``scaled`` the
    same through :func:`unorm8_prescale`, channel-major (4, 3, M); ``tq``
    the triangle of each pixel and ``fx``/``fy`` the pixels' float32
    coordinates.  Coefficients are gathered per pixel only when asked for,
    one channel's coefficient at a time for UNORM8 stores.  ``flat``: per
    channel, the UNORM8 value when every triangle's scaled plane is the same
    constant (see :func:`flat_unorm8`), stored without gathering anything.
    """

    __slots__ = ("_stack", "flat", "fx", "fy", "planes", "scaled", "tq")

    def __init__(
        self,
        planes: np.ndarray,
        scaled: np.ndarray,
        tq: np.ndarray,
        fx: np.ndarray,
        fy: np.ndarray,
        flat: tuple[int | None, ...] = (None,) * 4,
    ) -> None:
        self.planes, self.scaled, self.tq, self.fx, self.fy = planes, scaled, tq, fx, fy
        self.flat = flat
        self._stack: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return (4, self.fx.size)

    def stack(self) -> np.ndarray:
        if self._stack is None:
            c = np.moveaxis(self.planes[self.tq], 2, 0)  # (4, n, 3)
            row = c[:, :, 1] * self.fx[None]
            row += c[:, :, 0]
            row += c[:, :, 2] * self.fy[None]
            self._stack = row
        return self._stack

    def __getitem__(self, key: Any) -> Any:
        """``[:, sel]`` selects pixels (a new PixelPlaneColour); anything else
        indexes the float32 stack (``[3]`` is the alpha channel)."""
        if isinstance(key, tuple) and len(key) == 2 and key[0] == slice(None):
            sel = key[1]
            return PixelPlaneColour(
                self.planes, self.scaled, self.tq[sel], self.fx[sel], self.fy[sel], self.flat
            )
        return self.stack()[key]

    def store_unorm8(self, c: int, out: np.ndarray) -> None:
        """Channel ``c``'s UNORM8 values into ``out`` (a flat channel as a fill)."""
        if self.flat[c] is not None:
            out[...] = self.flat[c]
        else:
            np.copyto(out, self.unorm8_scaled(c), casting="unsafe")

    def unorm8_scaled(self, c: int) -> np.ndarray:
        k = self.scaled[c]  # (3, M): a0', dadx', dady'
        u = np.take(k[1], self.tq)
        u *= self.fx
        u += np.take(k[0], self.tq)
        v = np.take(k[2], self.tq)
        v *= self.fy
        u += v
        np.clip(u, F32(0.0), _U8_TOP, out=u)
        return u

    def unorm8_stack(self) -> np.ndarray:
        out = np.empty(self.shape, np.uint16)
        for c in range(4):
            self.store_unorm8(c, out[c])
        return out


def flat_unorm8(scaled: np.ndarray) -> tuple[int | None, ...]:
    """Per channel of (4, 3, M) channel-major scaled planes: the UNORM8 value
    every pixel of every triangle gets when all M planes are one constant
    (gradients 0 or -0, one finite a0': ``dadx'*x + a0' + dady'*y`` is then
    a0' exactly at every finite pixel position), else None."""
    out = []
    for k in scaled:
        a0 = k[0]
        if a0.size and not (k[1].any() or k[2].any()) and (a0 == a0[0]).all():
            v = float(a0[0])
            if math.isfinite(v):
                out.append(int(min(max(v, 0.0), _U8_TOP_F)))
                continue
        out.append(None)
    return tuple(out)


_U8_TOP = F32(255.99)


def _lines(rows: np.ndarray, cols: np.ndarray) -> tuple:
    """(rows, cols, inside, uniform) for PlaneColour._scaled_lines: per
    channel whether every sum ``rows[c][x] + cols[c][y]`` lies in [0, 255.99]
    (each rounding step is monotonic in x and in y, so the extremes are among
    the four corner sums) and the uniform UNORM8 value (see :func:`_uniform8`).

    The corner sums are the only float32 work (one add); the rest compares
    their exact values as Python floats: a few microseconds a rectangle
    (or column run), all of it holding the GIL, where a dozen small numpy
    calls took ~50."""
    ends = (rows[:, (0, -1)][:, None, :] + cols[:, (0, -1)][:, :, None]).reshape(-1, 4).tolist()
    inside, uniform = [], []
    for e in ends:
        if not all(map(math.isfinite, e)):  # (min and max skip a NaN)
            inside.append(False)
            uniform.append(None)
            continue
        lo, hi = min(e), max(e)
        inside.append(lo >= 0.0 and hi <= _U8_TOP_F)
        uniform.append(_uniform8(lo, hi))
    return rows, cols, inside, tuple(uniform)


_U8_TOP_F = float(_U8_TOP)


def _uniform8(lo: float, hi: float) -> int | None:
    """For one channel's finite scaled-plane corner sums' minimum ``lo`` and
    maximum ``hi``: the UNORM8 value every pixel stores when the clamped
    extremes truncate to the same integer (each pixel's sum lies between
    them, and clamping and truncating are monotonic), else None.  (Corners
    that are not finite never count as uniform.)"""
    a = int(min(max(lo, 0.0), _U8_TOP_F))
    return a if a == int(min(max(hi, 0.0), _U8_TOP_F)) else None


class Src8:
    """A blend source of UNORM8 values, (4, ...) like a uint16 stack:
    ``src[ch]`` is the channels' (k, ...) uint16 values, or, when every one of
    them is uniform over the rectangle, a (k, 1, ...) array of the constants
    (the blend then multiplies by a broadcast constant, and the channel is
    never evaluated per pixel).  Channels are evaluated on first use."""

    __slots__ = ("_done", "_stack", "color", "shape", "uniform")

    def __init__(self, color: Any, uniform: tuple[int | None, ...]) -> None:
        self.color = color
        self.uniform = uniform
        self.shape = color.shape
        self._stack = np.empty(self.shape, np.uint16)
        self._done = [False] * 4

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __getitem__(self, ch: slice) -> np.ndarray:
        chans = range(*ch.indices(4))
        values = [self.uniform[c] for c in chans]
        if None not in values:
            return np.array(values, np.uint16).reshape((len(values),) + (1,) * (self.ndim - 1))
        for c in chans:
            if not self._done[c]:
                if self.uniform[c] is None:
                    self.color.store_unorm8(c, self._stack[c])
                else:
                    self._stack[c] = self.uniform[c]
                self._done[c] = True
        return self._stack[ch]


# ----------------------------------------------------------------------------
# comparisons
# ----------------------------------------------------------------------------


def compare(func: CompareFunc | int, a: Any, b: Any) -> Any:
    """The boolean ``a FUNC b`` (fragment value first, as GL's depth test)."""
    func = int(func)
    if func == CompareFunc.NEVER:
        return np.zeros(np.broadcast(a, b).shape, bool)
    if func == CompareFunc.LESS:
        return a < b
    if func == CompareFunc.EQUAL:
        return a == b
    if func == CompareFunc.LEQUAL:
        return a <= b
    if func == CompareFunc.GREATER:
        return a > b
    if func == CompareFunc.NOTEQUAL:
        return a != b
    if func == CompareFunc.GEQUAL:
        return a >= b
    return np.ones(np.broadcast(a, b).shape, bool)


def _stencil_op(op: int, old: np.ndarray, ref: Any, bits: int) -> np.ndarray:
    maxv = (1 << bits) - 1
    if op == StencilOp.KEEP:
        return old
    if op == StencilOp.ZERO:
        return np.zeros_like(old)
    if op == StencilOp.REPLACE:
        return np.broadcast_to(np.asarray(ref, old.dtype) & np.asarray(maxv, old.dtype), old.shape)
    if op == StencilOp.INCR:
        return np.minimum(old.astype(np.int32) + 1, maxv).astype(old.dtype)
    if op == StencilOp.DECR:
        return np.maximum(old.astype(np.int32) - 1, 0).astype(old.dtype)
    if op == StencilOp.INCR_WRAP:
        return ((old.astype(np.int32) + 1) & maxv).astype(old.dtype)
    if op == StencilOp.DECR_WRAP:
        return ((old.astype(np.int32) - 1) & maxv).astype(old.dtype)
    if op == StencilOp.INVERT:
        return (~old) & np.asarray(maxv, old.dtype)
    raise ValueError(f"unknown stencil op {op}")


# ----------------------------------------------------------------------------
# depth / stencil
# ----------------------------------------------------------------------------


def depth_stencil(
    state: FragmentState,
    zs: Any,
    idx: tuple,
    dense: bool,
    alive: Any,
    z: Any,
    facing: Any,
    stencil_value: Any = None,
) -> Any:
    """Run stencil and depth tests and update the zs buffer; return surviving lanes."""
    layout = zs.layout
    dsa = state.dsa
    depth_on = dsa.depth.enabled and layout.z_bits > 0
    st_front = dsa.stencil[0]
    st_back = dsa.stencil[1] if dsa.stencil[1].enabled else dsa.stencil[0]
    stencil_on = st_front.enabled and layout.s_bits > 0
    if not depth_on and not stencil_on:
        return alive
    if not stencil_on:
        return _depth_only(state, zs, idx, dense, alive, z)
    words = zs.words[idx]
    shape = words.shape
    if alive is None:
        alive = np.ones(shape, bool)
    passed = alive
    write_mask = np.zeros(shape, bool)
    new_words = words.copy() if not dense else np.array(words)

    # stencil values; with two-sided stencil, back-facing lanes use stencil[1]
    fac = None
    if stencil_on and dsa.stencil[1].enabled and facing is not None:
        fac = np.broadcast_to(np.asarray(facing, bool), shape)

    def per_face(front_value: Any, back_value: Any) -> Any:
        return front_value if fac is None else np.where(fac, front_value, back_value)

    if stencil_on:
        if layout.split:
            sval = zs.stencil[idx].astype(np.uint32)
        else:
            sval = (words.astype(np.uint32) >> np.uint32(layout.s_shift)) & np.uint32(0xFF)
        ref = np.asarray(per_face(state.stencil_ref[0], state.stencil_ref[1]), np.uint32)
        if stencil_value is not None:  # the shader exported its own reference
            ref = np.asarray(stencil_value).astype(np.uint32) & np.uint32(0xFF)
        vmask = np.asarray(per_face(st_front.valuemask, st_back.valuemask), np.uint32)
        spass = per_face(
            compare(st_front.func, ref & vmask, sval & vmask),
            compare(st_back.func, ref & vmask, sval & vmask),
        )
    else:
        spass = None

    # depth values
    if depth_on:
        zword = depth_to_word(layout, np.clip(z, state.depth_clamp[0], state.depth_clamp[1]))
        if layout.z_float:
            stored = words
        else:
            stored = words & np.asarray(layout.z_mask, words.dtype)
            zword = zword.astype(words.dtype)
        zpass = compare(dsa.depth.func, zword, stored)
    else:
        zpass = None

    if spass is not None:
        s_alive = passed & spass
        d_alive = s_alive & zpass if zpass is not None else s_alive
        # stencil ops per outcome
        sfail = passed & ~spass
        zfail = s_alive & ~zpass if zpass is not None else np.zeros(shape, bool)
        zpassed = d_alive
        new_s = sval.copy()
        wm = np.asarray(per_face(st_front.writemask, st_back.writemask), np.uint32)
        for which, mask in (("fail_op", sfail), ("zfail_op", zfail), ("zpass_op", zpassed)):
            if not mask.any():
                continue
            res = per_face(
                _stencil_op(getattr(st_front, which), sval, ref, layout.s_bits),
                _stencil_op(getattr(st_back, which), sval, ref, layout.s_bits),
            )
            upd = (sval & ~wm) | (res & wm)
            new_s = np.where(mask, upd, new_s)
        s_changed = new_s != sval
        if s_changed.any():
            if layout.split:
                st_view = zs.stencil
                if dense:
                    np.copyto(st_view[idx], new_s.astype(np.uint8), where=s_changed)
                else:
                    sel = np.nonzero(s_changed)[0]
                    st_view[idx[0][sel], idx[1][sel]] = new_s[sel].astype(np.uint8)
            else:
                smask = np.uint32(((1 << layout.s_bits) - 1) << layout.s_shift)
                merged = (new_words.astype(np.uint32) & ~smask) | (
                    (new_s.astype(np.uint32) << np.uint32(layout.s_shift)) & smask
                )
                new_words = np.where(s_changed, merged.astype(words.dtype), new_words)
                write_mask |= s_changed
        passed = d_alive
    elif zpass is not None:
        passed = passed & zpass

    if depth_on and dsa.depth.writemask:
        zw = passed
        if layout.z_float:
            new_words = np.where(zw, zword, new_words)
        else:
            zm = np.asarray(layout.z_mask, words.dtype)
            new_words = np.where(zw, (new_words & ~zm) | zword, new_words)
        write_mask |= zw

    if write_mask.any():
        if dense:
            store_masked(zs.words[idx], new_words, write_mask)
        else:
            sel = np.nonzero(write_mask)[0]
            zs.words[idx[0][sel], idx[1][sel]] = new_words[sel]
    return passed


def _depth_only(state: FragmentState, zs: Any, idx: tuple, dense: bool, alive: Any, z: Any) -> Any:
    """Depth test and write without stencil: the common case, kept lean."""
    layout = zs.layout
    dsa = state.dsa
    words = zs.words[idx]
    lo, hi = state.depth_clamp
    if np.ndim(z) == 0:
        return _depth_only_constant(state, zs, idx, dense, alive, words, F32(min(max(z, lo), hi)))
    zc = np.clip(z, F32(lo), F32(hi))
    if layout.z_float:
        zq = zc.astype(F32, copy=False)
        stored = words
    else:
        zc *= F32((1 << layout.z_bits) - 1)
        zq = np.rint(zc, out=zc)
        raw = words if layout.z_shift == 0 else words >> np.uint32(layout.z_shift)
        if not layout.z_at_top:
            raw = raw & np.asarray((1 << layout.z_bits) - 1, words.dtype)
        stored = raw.astype(F32)
    passed = compare(dsa.depth.func, zq, stored)
    if alive is not None:
        passed &= alive
    if dsa.depth.writemask:
        if layout.z_float:
            new = zq
        else:
            new = zq.astype(words.dtype)
            if layout.z_shift:
                new <<= np.asarray(layout.z_shift, words.dtype)
            if layout.s_bits:
                new |= words & np.asarray(layout.s_mask, words.dtype)
        if dense:
            store_masked(zs.words[idx], new, passed)
        else:
            sel = np.nonzero(passed)[0]
            zs.words[idx[0][sel], idx[1][sel]] = new[sel]
    return passed


def _depth_only_constant(state, zs, idx, dense: bool, alive: Any, words, z: np.float32) -> Any:
    """Depth test/write of a constant depth: one compare against the buffer."""
    layout = zs.layout
    dsa = state.dsa
    passed = None
    if layout.z_float:
        zq: Any = z
        stored = words
        new_word: Any = z
    else:
        zi = int(np.rint(F32(z * F32((1 << layout.z_bits) - 1))))
        new_word = np.asarray(zi << layout.z_shift, words.dtype)
        passed = _compare_top_field(dsa.depth.func, zi, words, layout)
        if passed is None:
            raw = words if layout.z_shift == 0 else words >> np.uint32(layout.z_shift)
            if not layout.z_at_top:
                raw = raw & np.asarray((1 << layout.z_bits) - 1, words.dtype)
            stored = raw  # an integer compare is exact for every depth format
            zq = np.asarray(zi, words.dtype)
    if passed is None:
        passed = compare(dsa.depth.func, zq, stored)
    if alive is not None:
        passed &= alive
    if dsa.depth.writemask:
        if not layout.z_float and layout.s_bits:
            new_word = new_word | (words & np.asarray(layout.s_mask, words.dtype))
        if dense:
            store_masked(zs.words[idx], new_word, passed)
        else:
            sel = np.nonzero(passed)[0]
            zs.words[idx[0][sel], idx[1][sel]] = np.broadcast_to(new_word, passed.shape)[sel]
    return passed


def _compare_top_field(func: int, zi: int, words: np.ndarray, layout: Any) -> Any:
    """``zi FUNC field`` straight on the words when the depth field is their top bits.

    With ``field = word >> shift``, ``zi < field`` is ``word >= (zi + 1) << shift``
    whatever the low (stencil) bits hold, and so on: one compare per pixel.
    Returns None when the layout or function does not allow it.
    """
    top = 8 * words.dtype.itemsize
    if layout.z_shift + layout.z_bits != top:
        return None
    s = layout.z_shift
    func = int(func)
    above = (zi + 1) << s  # the smallest word whose field exceeds zi
    if func == CompareFunc.LESS:  # zi < field
        return words >= np.asarray(above, words.dtype) if above < 1 << top else _none(words)
    if func == CompareFunc.LEQUAL:  # zi <= field
        return words >= np.asarray(zi << s, words.dtype)
    if func == CompareFunc.GREATER:  # zi > field
        return words < np.asarray(zi << s, words.dtype)
    if func == CompareFunc.GEQUAL:  # zi >= field
        return words < np.asarray(above, words.dtype) if above < 1 << top else _all(words)
    return None


def _none(words: np.ndarray) -> np.ndarray:
    return np.zeros(words.shape, bool)


def _all(words: np.ndarray) -> np.ndarray:
    return np.ones(words.shape, bool)


# ----------------------------------------------------------------------------
# colour
# ----------------------------------------------------------------------------


# Adding 1.5 * 2**23 to a float32 in [0, 255] rounds it to an integer with
# round-half-to-even (the FPU's rounding) and leaves that integer in the low
# mantissa bits: the low byte of the sum's bit pattern is rint(v).
_MAGIC = F32(12582912.0)
_F255 = F32(255.0)


def unorm8_bits(x: Any) -> Any:
    """uint32 words whose low byte is rint(fl32(clamp(x, 0, 1) * 255)) (NaN -> 0)."""
    if np.ndim(x) == 0:
        v = float(x)
        v = 0.0 if not v > 0.0 else min(v, 1.0)  # NaN -> 0
        return np.uint32(int(np.rint(F32(F32(v) * _F255))))
    t = np.fmax(x, F32(0.0))
    np.fmin(t, F32(1.0), out=t)
    t *= _F255
    t += _MAGIC
    return t.view(np.uint32)


def to_unorm8(x: Any) -> np.ndarray:
    """rint(fl32(clamp(x, 0, 1) * 255)) as uint8 (NaN -> 0)."""
    bits = unorm8_bits(x)
    if np.ndim(bits) == 0:
        return np.uint8(bits & 0xFF)
    return bits.astype(np.uint8)


def _mul8(a: np.ndarray, b: Any) -> np.ndarray:
    """llvmpipe's 8-bit product: t = a*b; (t + (t >> 8) + 128) >> 8.

    Every intermediate fits in 16 bits (255*255 + 254 + 128 = 65407), so the
    arithmetic runs on uint16 arrays.
    """
    t = a * np.asarray(b, np.uint16)
    t += t >> 8
    t += 128
    t >>= 8
    return t


_SRC1 = {
    BlendFactor.SRC1_COLOR,
    BlendFactor.SRC1_ALPHA,
    BlendFactor.INV_SRC1_COLOR,
    BlendFactor.INV_SRC1_ALPHA,
}


def _factor(f: int, ch: slice, src: Any, dst: Any, const: Any, src1: Any, one: Any) -> Any:
    """Blend factor ``f`` for channels ``ch`` of (4, ...) stacks; ``one`` is 255 or 1.0.

    Returns None for ONE (multiplying by it is the identity), an array or a scalar.
    """
    f = int(f)
    if f == BlendFactor.ONE:
        return None
    if f == BlendFactor.ZERO:
        return 0
    a3 = slice(3, 4)
    table = {
        BlendFactor.SRC_COLOR: lambda: src[ch],
        BlendFactor.SRC_ALPHA: lambda: src[a3],
        BlendFactor.DST_COLOR: lambda: dst[ch],
        BlendFactor.DST_ALPHA: lambda: dst[a3],
        BlendFactor.INV_SRC_COLOR: lambda: one - src[ch],
        BlendFactor.INV_SRC_ALPHA: lambda: one - src[a3],
        BlendFactor.INV_DST_COLOR: lambda: one - dst[ch],
        BlendFactor.INV_DST_ALPHA: lambda: one - dst[a3],
        BlendFactor.CONST_COLOR: lambda: const[ch],
        BlendFactor.CONST_ALPHA: lambda: const[a3],
        BlendFactor.INV_CONST_COLOR: lambda: one - const[ch],
        BlendFactor.INV_CONST_ALPHA: lambda: one - const[a3],
    }
    if f in table:
        return table[f]()
    if f == BlendFactor.SRC_ALPHA_SATURATE:
        if ch.start == 3:
            return None
        return np.minimum(src[a3], one - dst[a3])
    if f in _SRC1:
        if src1 is None:
            raise ValueError("a SRC1 blend factor needs a second colour output (COLOR[1])")
        return {
            BlendFactor.SRC1_COLOR: lambda: src1[ch],
            BlendFactor.SRC1_ALPHA: lambda: src1[a3],
            BlendFactor.INV_SRC1_COLOR: lambda: one - src1[ch],
            BlendFactor.INV_SRC1_ALPHA: lambda: one - src1[a3],
        }[f]()
    raise ValueError(f"blend factor {f} is not supported")


def _groups(rt: RtBlendState) -> list[tuple[slice, int, int, int]]:
    """(channels, func, src factor, dst factor): one group if RGB and A agree."""
    rgb = (int(rt.rgb_func), int(rt.rgb_src_factor), int(rt.rgb_dst_factor))
    alpha = (int(rt.alpha_func), int(rt.alpha_src_factor), int(rt.alpha_dst_factor))
    if rgb == alpha and not {rgb[1], rgb[2]} & {int(BlendFactor.SRC_ALPHA_SATURATE)}:
        return [(slice(0, 4), *rgb)]
    return [(slice(0, 3), *rgb), (slice(3, 4), *alpha)]


# Factor pairs x, 1 - x: since the 8-bit product gives mul8(255, x) == x and
# grows with each operand, mul8(s, x) + mul8(d, 255 - x) <= x + 255 - x = 255.
_COMPLEMENTARY = {
    frozenset({BlendFactor.SRC_ALPHA, BlendFactor.INV_SRC_ALPHA}),
    frozenset({BlendFactor.DST_ALPHA, BlendFactor.INV_DST_ALPHA}),
    frozenset({BlendFactor.SRC_COLOR, BlendFactor.INV_SRC_COLOR}),
    frozenset({BlendFactor.DST_COLOR, BlendFactor.INV_DST_COLOR}),
    frozenset({BlendFactor.CONST_ALPHA, BlendFactor.INV_CONST_ALPHA}),
    frozenset({BlendFactor.CONST_COLOR, BlendFactor.INV_CONST_COLOR}),
}


def _sum_fits_unorm8(ch: slice, sf: int, df: int) -> bool:
    """Whether ``src*sf + dst*df`` (8-bit products) can never exceed 255, so
    the saturation is the identity: a zero factor, a complementary pair, or on
    alpha alone ONE with INV_SRC_ALPHA (the source term is then the alpha itself)."""
    if BlendFactor.ZERO in (sf, df):  # one 8-bit term alone
        return True
    if sf != df and frozenset({sf, df}) in _COMPLEMENTARY:
        return True
    return ch.start == 3 and sf == BlendFactor.ONE and df == BlendFactor.INV_SRC_ALPHA


def _term(values: Any, ch: slice, factor: Any) -> Any:
    """A blend term: the channels themselves (factor ONE: None), None for a
    ZERO factor (an int), else their 8-bit products with the factor."""
    if factor is None:
        return values[ch]
    if isinstance(factor, int):
        return None
    return _mul8(values[ch], factor)


def blend_unorm8(
    rt: RtBlendState, src: Any, dst: np.ndarray, const: Any, src1: Any, out: Any = None
) -> np.ndarray:
    """Blend (4, ...) uint16 stacks of 8-bit values exactly as llvmpipe does.

    ``src`` is a stack or a :class:`Src8`; ``out`` may be ``dst`` itself (the
    blend reads each group's destination channels, and the alpha it may use,
    before it writes them: RGB goes first and reads only RGB and A, A reads
    only A)."""
    c8 = (unorm8_bits(np.asarray(const, F32)) & np.uint32(0xFF)).astype(np.uint16)
    c8 = c8.reshape((4,) + (1,) * (src.ndim - 1))
    one = np.uint16(255)
    if out is None:
        out = np.empty(src.shape, np.uint16)
    groups = _groups(rt)
    # RGB and A with the same destination factor (the usual "over"): one set
    # of products for all four channels, taken before anything is written
    shared_ok = (
        len(groups) == 2
        and groups[0][3] == groups[1][3] != BlendFactor.SRC_ALPHA_SATURATE
        and not {groups[0][1], groups[1][1]} & {BlendFunc.MIN, BlendFunc.MAX}
    )
    shared = None  # (None with shared_ok: a ZERO factor)
    if shared_ok:
        all4 = slice(0, 4)
        f_d = _factor(groups[0][3], all4, src, dst, c8, src1, one)
        shared = _term(dst, all4, f_d)
    for ch, func, sf, df in groups:
        if func in (BlendFunc.MIN, BlendFunc.MAX):
            op = np.minimum if func == BlendFunc.MIN else np.maximum
            op(src[ch], dst[ch], out=out[ch])
            continue
        f_s = _factor(sf, ch, src, dst, c8, src1, one)
        s_term = _term(src, ch, f_s)
        if shared_ok:
            d_term = None if shared is None else shared[ch]
        else:
            f_d = _factor(df, ch, src, dst, c8, src1, one)
            d_term = _term(dst, ch, f_d)
        zero = np.uint16(0)
        if s_term is None:  # ZERO factor
            s_term = zero
        if d_term is None:
            d_term = zero
        if func == BlendFunc.ADD:
            np.add(s_term, d_term, out=out[ch])
            if not _sum_fits_unorm8(ch, int(sf), int(df)):
                # saturate with clip and typed scalars: numpy's integer minimum
                # with a scalar operand takes a loop several times slower
                np.clip(out[ch], np.uint16(0), one, out=out[ch])
        elif func == BlendFunc.SUBTRACT:
            out[ch] = np.where(s_term > d_term, s_term - d_term, zero)
        elif func == BlendFunc.REVERSE_SUBTRACT:
            out[ch] = np.where(d_term > s_term, d_term - s_term, zero)
        else:
            raise ValueError(f"blend func {func} is not supported")
    return out


def blend_float(
    rt: RtBlendState, src: np.ndarray, dst: np.ndarray, const: Any, src1: Any
) -> np.ndarray:
    """Blend (4, ...) float32 stacks (float render targets)."""
    cf = np.asarray(const, F32).reshape((4,) + (1,) * (src.ndim - 1))
    one = F32(1.0)
    out = np.empty(np.broadcast_shapes(src.shape, dst.shape), F32)
    for ch, func, sf, df in _groups(rt):
        if func in (BlendFunc.MIN, BlendFunc.MAX):
            op = np.minimum if func == BlendFunc.MIN else np.maximum
            out[ch] = op(src[ch], dst[ch])
            continue
        f_s = _factor(sf, ch, src, dst, cf, src1, one)
        f_d = _factor(df, ch, src, dst, cf, src1, one)
        s_term = src[ch] if f_s is None else src[ch] * f_s
        d_term = dst[ch] if f_d is None else dst[ch] * f_d
        if func == BlendFunc.ADD:
            out[ch] = s_term + d_term
        elif func == BlendFunc.SUBTRACT:
            out[ch] = s_term - d_term
        else:
            out[ch] = d_term - s_term
    return out


def write_color(
    target: Any,
    idx: tuple,
    dense: bool,
    alive: Any,
    color: np.ndarray,
    rt: RtBlendState,
    state: FragmentState,
    src1: np.ndarray | None = None,
) -> None:
    """Blend (if enabled) and write one render target's colour for the live lanes.

    ``color`` (and ``src1``) are (4, ...) stacks: (4, h, w) for a dense
    rectangle, (4, n) for sparse pixels, or PlaneColour / PixelPlaneColour
    for the outputs of a pass-through shader.
    """
    colormask = int(rt.colormask) & 0xF
    if colormask == 0:
        return
    if isinstance(src1, PlaneColour | MixedPlaneColour | PixelPlaneColour | TexelWords):
        src1 = src1.stack()
    if isinstance(color, PlaneColour | MixedPlaneColour | PixelPlaneColour | TexelWords) and (
        target.kind != "unorm8" or src1 is not None
    ):
        if not (
            type(color) in (PlaneColour, MixedPlaneColour)
            and target.kind == "float32"
            and src1 is None
        ):
            color = color.stack()  # (a float target's planes: see _write_float32)
    if alive is not None and not dense:
        sel = np.nonzero(alive)[0]
        if sel.size == 0:
            return
        idx = (idx[0][sel], idx[1][sel])
        color = color[:, sel]
        if src1 is not None:
            src1 = src1[:, sel]
        alive = None
    logicop = getattr(state, "logicop", None)  # (a blit's write state has none)
    logic = logicop is not None and logic_op_applies(target.desc)
    band = getattr(_band, "resident", None)  # (not resident_colour(): see defer_clear)
    if band is not None and band.clears:
        band.before_write(target, idx, dense, alive, rt, colormask, logic)
    if logic:  # (overrides blending)
        _write_logicop(target, idx, dense, alive, color, logicop, colormask)
        return
    # A NaN colour converts to whatever the platform's cast gives (every path
    # the same); it is not the application's warning to see.
    with np.errstate(invalid="ignore"):
        if target.kind == "unorm8":
            _write_unorm8(target, idx, dense, alive, color, rt, state, src1, colormask)
        elif target.kind == "float32":
            _write_float32(target, idx, dense, alive, color, rt, state, src1, colormask)
        else:
            _write_generic(target, idx, dense, alive, color, rt, state, src1, colormask)


def _write_channels(
    view: np.ndarray, src: np.ndarray, perm, colormask: int, alive, dense, idx, target_arr
):
    """Store a (4, ...) stack into a (..., C) view, RGBA component i -> channel perm[i]."""
    chans = [i for i in range(4) if perm[i] >= 0 and colormask >> i & 1]
    if dense:
        dst = np.moveaxis(view, -1, 0)  # (C, h, w) view of the destination
        mem = [perm[i] for i in chans]
        nch = view.shape[-1]
        if mem == list(range(nch)) and len(chans) == nch:
            np.copyto(dst, src[: nch] if chans == mem else src[chans], casting="unsafe",
                      where=True if alive is None else alive[None])  # fmt: skip
            return
        for i in chans:
            if alive is None:
                np.copyto(dst[perm[i]], src[i], casting="unsafe")
            else:
                np.copyto(dst[perm[i]], src[i], casting="unsafe", where=alive)
    else:
        out = view.copy()
        for i in chans:
            np.copyto(out[..., perm[i]], src[i], casting="unsafe")
        target_arr[idx] = out


_band = threading.local()


class ResidentColour:
    """Blended UNORM8 rectangles a band keeps unpacked between writes.

    A blended write reads the destination's bytes into a (4, h, w) stack and
    stores the result back.  When the next blended write to the same target
    covers exactly the same rectangle (layers of full-screen passes), the
    stack it would read is the one just computed: it is kept here instead of
    being stored and read back, and stored once, when anything else touches
    an overlapping part of the target or when the band ends
    (``workers.band.execute_band`` installs one per band on its thread).
    The bytes that end up in the framebuffer are the same."""

    def __init__(self) -> None:
        self.rects: dict[tuple[int, int, int, int, int], tuple[Any, tuple, np.ndarray]] = {}
        # colour clears not yet written: surface address -> (target, packed pixel, rows)
        self.clears: dict[int, tuple[Any, np.ndarray, tuple[int, int]]] = {}

    def defer_clear(self, target: Any, packed: np.ndarray, y0: int, y1: int) -> None:
        """A clear of the band's rows of ``target``, written when something
        else touches the target -- or never, when the first write replaces
        every byte of those rows (a full-screen opaque pass right after the
        clear: llvmpipe drops such clears from a tile's bin too)."""
        self.drop(target)
        self.clears[_address(target)] = (target, packed, (y0, y1))

    def before_write(
        self, target: Any, idx: tuple, dense: bool, alive, rt, colormask: int, reads=False
    ) -> None:
        """Called before every colour write to ``target``: a deferred clear of
        it is dropped if this write covers all of its rows with every byte
        replaced (and neither blends nor applies a logic op: ``reads``), and
        written out first otherwise."""
        key = _address(target)
        pending = self.clears.pop(key, None)
        if pending is None:
            return
        tgt, packed, (y0, y1) = pending
        if not (
            dense
            and alive is None
            and not rt.blend_enable
            and not reads
            and _every_byte(target, colormask)
            and (idx[0].start, idx[0].stop) == (y0, y1)
            and (idx[1].start, idx[1].stop) == (0, target.raw.shape[1])
        ):
            fill_rows(tgt.raw[y0:y1], packed)

    def before_partial(self, target: Any, idx: tuple) -> None:
        """Before a write of the rectangle ``idx`` of ``target`` that is not a
        draw (a scissored clear): its deferred clear is written out and its
        kept rectangles that ``idx`` overlaps are stored first."""
        pending = self.clears.pop(_address(target), None)
        if pending is not None:
            tgt, packed, (y0, y1) = pending
            fill_rows(tgt.raw[y0:y1], packed)
        self.release(target, idx)

    def _write_clears(self) -> None:
        clears, self.clears = self.clears, {}
        for tgt, packed, (y0, y1) in clears.values():
            fill_rows(tgt.raw[y0:y1], packed)

    @staticmethod
    def _key(target: Any, idx: tuple) -> tuple[int, int, int, int, int]:
        return (_address(target), idx[0].start, idx[0].stop, idx[1].start, idx[1].stop)

    def take(self, target: Any, idx: tuple) -> np.ndarray | None:
        hit = self.rects.pop(self._key(target, idx), None)
        return None if hit is None else hit[2]

    def put(self, target: Any, idx: tuple, stack: np.ndarray) -> None:
        self.rects[self._key(target, idx)] = (target, idx, stack)

    def release(self, target: Any, idx: tuple | None = None) -> None:
        """Store the kept rectangles of ``target`` that ``idx`` (a pair of
        slices; None: anything) overlaps."""
        where = _address(target)
        for key, (t, kidx, stack) in list(self.rects.items()):
            if key[0] == where and (idx is None or _overlap(kidx, idx)):
                del self.rects[key]
                _store_stack(t, kidx, stack)

    def drop(self, target: Any) -> None:
        """Forget the kept rectangles of ``target`` (a clear overwrites them)."""
        where = _address(target)
        for key in [k for k in self.rects if k[0] == where]:
            del self.rects[key]

    def release_all(self) -> None:
        self._write_clears()
        rects, self.rects = self.rects, {}
        for t, kidx, stack in rects.values():
            _store_stack(t, kidx, stack)


def _every_byte(target: Any, colormask: int) -> bool:
    """Whether an unmasked write with ``colormask`` replaces every byte of
    ``target``'s pixels: a 4 x 8-bit target with all four channels (no
    padding byte), or a float target with all of its channels."""
    if target.kind == "unorm8":
        return colormask == 0xF and sorted(target.perm) == [0, 1, 2, 3]
    if target.kind == "float32":
        full = (1 << target.typed.shape[-1]) - 1
        return colormask & full == full
    return False


def fill_rows(raw: np.ndarray, packed: np.ndarray) -> None:
    """Fill a (rows, width, block_bytes) byte view with one packed pixel."""
    bb = packed.size
    if bb in (1, 2, 4, 8):
        word = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[bb]
        value = packed.view(word)[0]
        try:
            raw.view(word)[..., 0] = value
            return
        except ValueError:  # the view's strides do not allow reinterpretation
            pass
    elif raw.ndim == 3 and raw.shape[1] > 1 and raw.strides[1:] == (bb, 1):
        # other pixel sizes (RGBA32F's 16 bytes, RGB32F's 12): one row of
        # pixels copied into every row, long contiguous copies instead of a
        # broadcast whose inner loop is one pixel's bytes (~5x faster)
        rows = raw.reshape(raw.shape[0], raw.shape[1] * bb)  # a view: whole pixels
        rows[...] = np.tile(packed, raw.shape[1])
        return
    raw[...] = packed


def _address(target: Any) -> int:
    """Where a colour target's pixels start: two targets over the same surface
    (one surface bound to two colour buffers) share their kept rectangles."""
    cached = target.__dict__.get("_address")
    if cached is None:  # (a target's pixels never move: cached on it)
        cached = target.__dict__["_address"] = int(target.raw.__array_interface__["data"][0])
    return cached


def _overlap(a: tuple, b: tuple) -> bool:
    return all(x.start < y.stop and y.start < x.stop for x, y in zip(a, b))


def _store_stack(target: Any, idx: tuple, stack: np.ndarray) -> None:
    pixels = target.typed[idx]
    for i, p in enumerate(target.perm):
        if p >= 0:
            pixels[..., p] = stack[i]


def resident_colour() -> ResidentColour | None:
    """The current band's ResidentColour (None outside a band)."""
    return getattr(_band, "resident", None)


def set_resident_colour(res: ResidentColour | None) -> None:
    _band.resident = res


def _write_unorm8(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    """4 x 8-bit UNORM targets.

    The colour's UNORM8 values are the low bytes of ``unorm8_bits`` (their low
    16 bits, in fact, which is what the uint16 blend arithmetic reads). Each
    pixel's four bytes are assembled into one 32-bit word in a scratch buffer
    and the words are stored with one (masked) write.
    """
    perm = target.perm
    kept = None  # the destination's bytes as a band kept them (ResidentColour)
    resident = resident_colour()
    keep = resident is not None and rt.blend_enable and dense and alive is None
    if keep:
        kept = resident.take(target, idx)
        if kept is None:
            resident.release(target, idx)
    elif resident is not None:
        resident.release(target, idx if dense else None)
    planes = isinstance(color, PlaneColour | MixedPlaneColour | PixelPlaneColour)
    if keep and isinstance(color, PlaneColour | MixedPlaneColour):
        _blend_planes_kept(target, idx, kept, color, rt, state, src1, colormask, resident)
        return
    if isinstance(color, TexelWords):
        if not rt.blend_enable and colormask == 0xF and dense and color.same_layout(perm):
            store_masked(target.words[idx], color.words, alive)
            return
        src = bits = color.unorm8_stack()  # the low bytes are the values
    elif planes and not rt.blend_enable:
        bits = None  # each channel is evaluated as it is stored
    elif planes:
        src = color.unorm8_stack()
    else:
        bits = unorm8_bits(color)  # (4, ...) uint32, low byte = the UNORM8 value
        if rt.blend_enable:  # (the stores below read the low bytes of ``bits``)
            src = bits.astype(np.uint16)  # the high half is 0x4B40: dropped
    if rt.blend_enable:
        if kept is not None:
            dst = kept
        else:
            dst = _read_stack(target, idx, np.uint8)
        s1 = None
        if src1 is not None:
            s1 = unorm8_bits(src1).astype(np.uint16)
        bits = blend_unorm8(rt, src, dst, state.blend_color, s1)
    shape = color.shape[1:] if bits is None else bits.shape[1:]
    channels = [i for i in range(4) if perm[i] >= 0 and colormask >> i & 1]
    if keep:
        # the rectangle's bytes after this write: written channels' low bytes,
        # the rest as they were; stored when the band is done with them
        for i in channels:
            np.copyto(dst[i], bits[i], casting="unsafe")
        resident.put(target, idx, dst)
        return
    if not channels:
        return
    if dense and alive is None:
        # every pixel written: each channel goes straight into its bytes (the
        # others, masked or padding, are left as they are)
        planar = isinstance(color, PlaneColour | MixedPlaneColour)
        pixels = target.typed[idx]
        if bits is None and planar and len(channels) == 4 and target.words is not None:
            if type(color) is PlaneColour and store_planes_interleaved(pixels, color, perm):
                return
            if type(color) is MixedPlaneColour and store_mixed_interleaved(
                pixels, target.words[idx], color, perm
            ):
                return
            channels = _fill_uniform_channels(target, idx, color, channels)
        for i in channels:
            _store_channel(color, bits, i, pixels[..., perm[i]])
        return
    scratch = np.empty((*shape, 4), np.uint8)
    for i in channels:
        _store_channel(color, bits, i, scratch[..., perm[i]])
    word = scratch.view(np.uint32).reshape(shape)
    keep = 0xFFFFFFFF
    for i in channels:
        keep &= ~(0xFF << (8 * perm[i]))
    run = None if dense else target_run(target)
    if run is not None:
        flat = idx[0] * run[1]
        flat += idx[1]
    if keep:
        # bytes not written (masked channels, padding) come from the pixel
        word &= np.uint32(~keep & 0xFFFFFFFF)
        word |= (target.words[idx] if run is None else run[0][flat]) & np.uint32(keep)
    if dense:
        store_masked(target.words[idx], word, alive)
    elif run is None:
        target.words[idx] = word
    else:
        run[0][flat] = word


def _read_stack(target: Any, idx: tuple, dtype: Any) -> np.ndarray:
    """The target's pixels at ``idx`` as a (4, ...) RGBA stack of 8-bit values
    (a channel the format lacks reads 255)."""
    pixels = target.typed[idx]  # (..., 4) uint8: view (dense) or copy (sparse)
    out = np.empty((4, *pixels.shape[:-1]), dtype)
    for i, p in enumerate(target.perm):
        out[i] = pixels[..., p] if p >= 0 else 255
    return out


def _blend_planes_kept(target, idx, kept, color, rt, state, src1, colormask, resident) -> None:
    """A blended dense rectangle of plane colours onto the band's kept bytes
    (``kept``; None: read from the target); the result is kept for the band
    (see ResidentColour).  Channels uniform over the rectangle (a flat
    alpha) blend as constants.  (Blending 64k-pixel chunks of rows, to keep
    the temporaries in cache, measured slower with two workers: the extra
    calls cost more in GIL hand-offs than the cache saves.)"""
    perm = target.perm
    if kept is None:
        kept = _read_stack(target, idx, np.uint16)  # blended in place below
    s1 = None if src1 is None else unorm8_bits(src1).astype(np.uint16)
    channels = [i for i in range(4) if perm[i] >= 0 and colormask >> i & 1]
    # every channel written (none masked, none padding): blend in place
    whole = len(channels) == 4 and kept.dtype == np.uint16
    src = color.unorm8_source()
    bits = blend_unorm8(rt, src, kept, state.blend_color, s1, out=kept if whole else None)
    if not whole:
        for i in channels:
            np.copyto(kept[i], bits[i], casting="unsafe")
    resident.put(target, idx, kept)


def _fill_uniform_channels(target, idx: tuple, color, channels: list[int]) -> list[int]:
    """Every pixel of ``idx`` gets all four bytes written: the channels with
    one value over the rectangle (an opaque alpha, say) go in with one fill of
    whole words -- the other channels' bytes zero, stored over next -- instead
    of a strided byte store each (~2x faster than the byte store; the alpha
    of the fill scene's bands ~0.2 -> ~0.1 ms).  Returns the channels left."""
    uniform = color.uniform8()
    const = [i for i in channels if uniform[i] is not None]
    if not const:
        return channels
    word = np.zeros(4, np.uint8)
    for i in const:
        word[target.perm[i]] = uniform[i]
    target.words[idx] = word.view(np.uint32)[0]
    return [i for i in channels if uniform[i] is None]


# Rectangles of at least this many pixels take store_planes_interleaved (below
# it the few calls that build its matrices cost more than the strided stores).
INTERLEAVED_MIN_PIXELS = 1 << 13
# float32 elements of one chunk of interleaved sums (512 KiB; 1 << 17
# elements x 5 terms is a product small enough for OpenBLAS to compute on the
# calling thread), and chunks per call: one batched product for two chunks,
# cast into the target by the same call (numpy computes the float32 sums into
# a temporary, 1 MiB, still in L2 when it casts them) -- each call a GIL
# hand-off, which two workers wait on each other for.  Measured on the fill,
# frames alternating in one process: one call a chunk pair against a product
# into a float32 buffer then a cast (two calls a pair), one worker 6-7%
# faster (4.88 -> 4.57, 4.49 -> 4.21 ms), two the same or faster (3.99 ->
# 4.00, 4.06 -> 3.90); arbitrary colours (two planes, strips) 1-2% / 0-1%.
# One chunk a call: one worker 9% faster, two 2-5% slower; four a call: one
# worker 1% faster, two 1-2%.
_CHUNK_ELEMS = 1 << 17
_GROUP_CHUNKS = 2
_exact: list[bool] = []  # [whether this BLAS passed _check_exact], once known


def store_planes_interleaved(pixels: np.ndarray, color: PlaneColour, perm: tuple) -> bool:
    """Store all four channels of ``color`` into ``pixels``, an (h, w, 4)
    uint8 view whose rows are runs of whole 4-byte pixels, RGBA component
    ``i`` -> byte ``perm[i]``.  Returns False (nothing written) when the
    rectangle is too small, a channel needs clamping, or the pixels are not
    laid out so.

    The stores of :meth:`PlaneColour.store_unorm8` write each channel into
    every fourth byte, where a strided store costs as much as the add.  Here
    the four channels' sums ``rows[c][x] + cols[c][y]`` come out already
    interleaved, as one matrix product per chunk of rows::

        [1, cols[c0][y], cols[c1][y], ...] @ [[rows interleaved by byte],
                                              [1 at c0's bytes, else 0], ...]

    Every element of the product is ``1*rows + 1*cols`` plus exact zeros
    (``cols * 0``: the columns are finite when no channel needs clamping),
    so in any order of summation it is the single float32 rounding of the
    sum ``np.add`` computes: the same bytes, ~2.5-3x faster for the fill's
    band (products and contiguous casts of 512 KiB chunks, two chunks a
    call, instead of three strided add-and-casts and a word fill).  Whether
    this BLAS sums so is checked once per process (:func:`_check_exact`); if
    not, this is never used."""
    if not _interleaving(pixels, (color,)):
        return False
    _interleave(pixels, color, perm)
    return True


def _interleaving(pixels: np.ndarray, colours: tuple) -> bool:
    """Whether the interleaved stores take ``pixels``, an (h, w, 4) uint8
    view, for these PlaneColours over all of it: big enough, whole 4-byte
    pixels, no channel clamped, and this BLAS sums exactly."""
    h, w = pixels.shape[:2]
    if h * w < INTERLEAVED_MIN_PIXELS or pixels.strides[1:] != (4, 1):
        return False
    if not _exact:
        _check_exact()
    return _exact[0] and all(all(c._scaled_lines()[2]) for c in colours)


def _interleave(pixels: np.ndarray, color: PlaneColour, perm: tuple) -> None:
    """The interleaved store of :func:`store_planes_interleaved`, on a
    rectangle of any size whose checks (:func:`_interleaving`) passed."""
    h, w = pixels.shape[:2]
    left, terms = _interleave_factors(color, perm)
    _interleave_rows(pixels.reshape(h, 4 * w), left, terms)


def _interleave_factors(color: PlaneColour, perm: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The product's factors for ``color``'s rectangle: ``left`` (h, k)
    ``[1, cols of the channels varying in y]`` and ``terms`` (k, 4w) ``[rows
    interleaved in byte order perm; 1 at each varying channel's bytes]``.
    Any rows of ``left`` and columns of ``terms`` give those pixels' sums."""
    rows, cols, _, _ = color._scaled_lines()
    h, w = cols.shape[1], rows.shape[1]
    # channels whose column terms are all zero (dady' == 0: a flat alpha, say)
    # need no term: rows + (+-0) is rows
    vary = [c for c, d in enumerate(color.scaled[2].tolist()) if d != 0.0]
    k = 1 + len(vary)
    terms = np.zeros((k, w, 4), F32)
    terms[0][:, list(perm)] = rows.T
    for j, c in enumerate(vary):
        terms[1 + j, :, perm[c]] = 1.0
    left = np.empty((h, k), F32)
    left[:, 0] = 1.0
    if vary:
        left[:, 1:] = cols[vary].T
    return left, terms.reshape(k, 4 * w)


def _interleave_rows(out: np.ndarray, left: np.ndarray, terms: np.ndarray) -> None:
    """``left @ terms`` cast into ``out``, an (h, n) uint8 view whose rows are
    runs of whole pixels: products of chunks of rows (at most _CHUNK_ELEMS
    sums each), two a call, each call computing its float32 sums and casting
    them into ``out`` (as ``np.copyto(..., casting="unsafe")`` casts)."""
    h, n = out.shape
    k = left.shape[1]
    step = max(1, _CHUNK_ELEMS // n)  # rows of a chunk
    group = max(1, _GROUP_CHUNKS)
    chunks = h // step
    whole = chunks * step
    left3 = left[:whole].reshape(chunks, step, k)
    for c0 in range(0, chunks, group):
        c1 = min(chunks, c0 + group)
        # (numpy calls the BLAS once per chunk of the batch)
        dst = out[c0 * step : c1 * step].reshape(c1 - c0, step, n)
        np.matmul(left3[c0:c1], terms, out=dst, dtype=F32, casting="unsafe")
    if whole < h:  # the last rows, fewer than a chunk
        np.matmul(left[whole:], terms, out=out[whole:], dtype=F32, casting="unsafe")


def store_mixed_interleaved(pixels, words, color: MixedPlaneColour, perm: tuple) -> bool:
    """:func:`store_planes_interleaved` for two triangles' planes over one
    rectangle (a MixedPlaneColour: the halves of a quad, or of a clipped
    triangle, whose planes round differently): the columns wholly one
    triangle's store its planes; the columns their shared edge crosses go
    strip by strip when ``sel`` is a half-plane's (:func:`_mixed_strips`),
    else store ``a``'s words, then ``b``'s where ``sel`` is not set -- the
    bytes of the channel-by-channel ``_store_mixed`` either way.  ``words``:
    the rectangle's (h, w) uint32 view.  False (nothing written) when a plane, over the whole
    rectangle, needs a clamp (a channel store clamps only that channel) or
    the rectangle is not for the interleaved stores."""
    a, b = color.a, color.b
    if not _interleaving(pixels, (a, b)):
        return False
    h = pixels.shape[0]
    for x0, x1, kind in color.parts:
        if kind != 2:
            _interleave(pixels[:, x0:x1], (a, b)[kind].col_slice(x0, x1), perm)
        elif color.a_left is not None:
            _mixed_strips(
                pixels[:, x0:x1].reshape(h, 4 * (x1 - x0)),
                words[:, x0:x1],
                color.sel[:, x0:x1],
                color.a_counts(x0, x1),
                color.a_left,
                _interleave_factors(a.col_slice(x0, x1), perm),
                _interleave_factors(b.col_slice(x0, x1), perm),
                4,
                _interleave_rows,
                np.uint8,
            )
        else:
            _interleave(pixels[:, x0:x1], a.col_slice(x0, x1), perm)
            other = np.empty((h, x1 - x0, 4), np.uint8)
            _interleave(other, b.col_slice(x0, x1), perm)
            np.copyto(words[:, x0:x1], other.view(np.uint32)[..., 0], where=~color.sel[:, x0:x1])
    return True


# Rows a strip of the columns two triangles' shared edge crosses (_mixed_strips).
# Measured on a 1024x1024 full-screen triangle of arbitrary colours (its
# clipped halves' planes differ; the diagonal edge crosses every column),
# frames alternating: RGBA8 one worker 32 rows 5.6 ms, 64 5.3, 128 5.4, one
# strip (both planes everywhere) 6.1; two workers 5.9-6.4 / 5.2-5.6 /
# 5.2-5.3 / 5.2-5.5 (more numpy calls, more GIL hand-offs); RGBA32F two
# workers 5.8 / 5.3 / 5.6 / 9.4.
MIXED_STRIP_ROWS = 64


def _mixed_strips(out, pixels, sel, n_a, a_left: bool, fa: tuple, fb: tuple, nb: int, rows, dtype):
    """Columns a shared edge crosses, ``sel`` (h, w) where a covers: in each
    row a's pixels are the run at the left end (``a_left``) or the right end.
    Strip by strip of MIXED_STRIP_ROWS rows, the left triangle's product goes
    into the columns left of its longest run in the strip, the right one's
    right of that, and the columns between its shortest and longest runs
    (those the edge crosses in the strip, a few when it is steep) take the
    right triangle's product too where its pixels are: each pixel's own
    triangle's sums, about one product per pixel instead of two.

    ``out`` (h, nb*w) is the rectangle's row view, ``pixels`` (h, w) the same
    memory as one element per pixel (uint32 words, or (w, C) float32 pixels),
    ``fa``/``fb`` the (left, terms) factors, ``rows(out, left, terms)``
    computes a product into ``out`` and ``dtype`` is ``out``'s; ``n_a`` each
    row's count of a's pixels."""
    h, w = sel.shape
    (f_l, f_r) = (fa, fb) if a_left else (fb, fa)
    n_left = (n_a if a_left else w - n_a).tolist()  # each row's left-triangle pixels
    for r0 in range(0, h, MIXED_STRIP_ROWS):
        r1 = min(h, r0 + MIXED_STRIP_ROWS)
        span = n_left[r0:r1]
        lo, hi = min(span), max(span)
        if hi:
            rows(out[r0:r1, : nb * hi], f_l[0][r0:r1], f_l[1][:, : nb * hi])
        if hi < w:
            rows(out[r0:r1, nb * hi :], f_r[0][r0:r1], f_r[1][:, nb * hi :])
        if lo < hi:
            tmp = np.empty((r1 - r0, nb * (hi - lo)), dtype)
            rows(tmp, f_r[0][r0:r1], f_r[1][:, nb * lo : nb * hi])
            right = ~sel[r0:r1, lo:hi] if a_left else sel[r0:r1, lo:hi]
            dst = pixels[r0:r1, lo:hi]
            src = tmp.view(np.uint32) if dtype == np.uint8 else tmp.reshape(dst.shape)
            np.copyto(dst, src, where=right if dst.ndim == 2 else right[..., None])


def store_planes_float32(view: np.ndarray, color: PlaneColour) -> bool:
    """Store ``color``'s first C channels into ``view``, an (h, w, C) float32
    view of a float target whose rows are runs of whole pixels: the
    interleaved product of :func:`store_planes_interleaved`, written straight
    into the target (no cast), instead of the (4, h, w) stack and a strided
    copy per channel (a full-screen RGBA32F rectangle ~5x faster).  Returns
    False (nothing written) for a small rectangle, pixels not so laid out, or
    planes whose sums a product could store with other bits: a term that is
    not finite (a NaN's payload, inf * 0) or a row term of -0 (-0 + -0 is -0,
    and a channel flat in y has no column term at all, where np.add adds
    its +0 or -0 columns: a product's sum of zeros may take either sign.
    With every row term +0 or non-zero, a sum that is zero includes the +0
    of ``1 * row`` and is +0 both ways)."""
    if not (_float_layout(view) and _float_planes_exact(color, view.shape[2])):
        return False
    _float_product(view, color)
    return True


def _float_layout(view: np.ndarray) -> bool:
    """Whether ``view`` (h, w, C) float32 is big enough for the products and
    its rows are runs of whole pixels, and this BLAS sums exactly."""
    h, w, nch = view.shape
    # (a one-channel target's view has a 0 stride on its channel axis)
    if h * w < INTERLEAVED_MIN_PIXELS or view.strides[1] != 4 * nch:
        return False
    if nch > 1 and view.strides[2] != 4:
        return False
    if not _exact:
        _check_exact()
    return _exact[0]


def _float_planes_exact(color: PlaneColour, nch: int) -> bool:
    """Whether the products give ``color``'s first ``nch`` channels the
    stack's bits over its whole rectangle (see store_planes_float32)."""
    rows, cols = color.float_lines()
    rows, cols = rows[:nch], cols[:nch]
    if not (np.isfinite(rows).all() and np.isfinite(cols[:, (0, -1)]).all()):
        return False  # (the column terms dady*y grow with y: the ends bound them)
    return not ((rows == 0) & np.signbit(rows)).any()


def _float_product(view: np.ndarray, color: PlaneColour) -> None:
    """The product of store_planes_float32 into ``view`` (checks passed)."""
    h, w, nch = view.shape
    left, terms = _float_factors(color, nch)
    _float_rows(view.reshape(h, nch * w), left, terms)


def _float_factors(color: PlaneColour, nch: int) -> tuple[np.ndarray, np.ndarray]:
    """``left`` (h, k) and ``terms`` (k, nch*w) of the product for ``color``'s
    first ``nch`` channels (as :func:`_interleave_factors`, no byte order)."""
    rows, cols = color.float_lines()
    rows, cols = rows[:nch], cols[:nch]
    h, w = cols.shape[1], rows.shape[1]
    vary = [c for c, d in enumerate(color.coef[2][:nch].tolist()) if d != 0.0]
    k = 1 + len(vary)
    terms = np.zeros((k, w, nch), F32)
    terms[0] = rows.T
    for j, c in enumerate(vary):
        terms[1 + j, :, c] = 1.0
    left = np.empty((h, k), F32)
    left[:, 0] = 1.0
    if vary:
        left[:, 1:] = cols[vary].T
    return left, terms.reshape(k, nch * w)


def _float_rows(out: np.ndarray, left: np.ndarray, terms: np.ndarray) -> None:
    """``left @ terms`` into ``out`` (h, n) float32, in chunks of the size of
    store_planes_interleaved's (the product on the calling thread)."""
    h, n = out.shape
    step = max(1, _CHUNK_ELEMS // n)
    for y0 in range(0, h, step):
        y1 = min(h, y0 + step)
        np.matmul(left[y0:y1], terms, out=out[y0:y1])


def store_mixed_float32(view: np.ndarray, color: MixedPlaneColour) -> bool:
    """:func:`store_planes_float32` for two triangles' planes over one
    rectangle (a MixedPlaneColour), as :func:`store_mixed_interleaved` does
    for UNORM8 targets: the columns wholly one triangle's take its product;
    the columns their shared edge crosses go strip by strip for a
    half-plane's ``sel``, else take ``a``'s, then ``b``'s where ``sel`` is
    not set.  Each pixel gets its own triangle's sums, the stack's bits.
    False (nothing written) when either plane, over the whole rectangle, is
    not for the products."""
    nch = view.shape[2]
    a, b = color.a, color.b
    if not (_float_layout(view) and _float_planes_exact(a, nch) and _float_planes_exact(b, nch)):
        return False
    h = view.shape[0]
    for x0, x1, kind in color.parts:
        if kind != 2:
            _float_product(view[:, x0:x1], (a, b)[kind].col_slice(x0, x1))
        elif color.a_left is not None:
            part = view[:, x0:x1]
            _mixed_strips(
                part.reshape(h, nch * (x1 - x0)),
                part,
                color.sel[:, x0:x1],
                color.a_counts(x0, x1),
                color.a_left,
                _float_factors(a.col_slice(x0, x1), nch),
                _float_factors(b.col_slice(x0, x1), nch),
                nch,
                _float_rows,
                F32,
            )
        else:
            _float_product(view[:, x0:x1], a.col_slice(x0, x1))
            other = np.empty((h, x1 - x0, nch), F32)
            _float_product(other, b.col_slice(x0, x1))
            np.copyto(view[:, x0:x1], other, where=~color.sel[:, x0:x1, None])
    return True


def _check_exact() -> bool:
    """Whether np.matmul of the shapes store_planes_interleaved uses gives
    exactly np.add's float32 sums (it must: each element is one sum of two
    non-zero terms; a BLAS that rounded otherwise, a Strassen-like product
    say, fails this and the strided stores are used)."""
    rng = np.random.default_rng(7)
    w, h = 256, 64
    rows = (rng.random((4, w)) * 256.0).astype(F32)
    rows[:, ::3] = np.floor(rows[:, ::3]) + F32(0.99999)  # sums near whole numbers
    cols = (rng.random((4, h)) * 2e-5).astype(F32)
    cols[1] = -cols[1]
    want = rows[:, None, :] + cols[:, :, None]  # (4, h, w)
    k = 5
    terms = np.zeros((k, w, 4), F32)
    terms[0] = rows.T
    for c in range(4):
        terms[1 + c, :, c] = 1.0
    left = np.empty((h, k), F32)
    left[:, 0] = 1.0
    left[:, 1:] = cols.T
    got = np.matmul(left, terms.reshape(k, 4 * w)).reshape(h, w, 4)
    ok = bool(np.array_equal(got.view(np.uint32), np.moveaxis(want, 0, -1).view(np.uint32)))
    _exact.append(ok)
    return ok


def _store_channel(color: Any, bits: np.ndarray | None, i: int, out: np.ndarray) -> None:
    """Channel ``i`` into the uint8 view ``out``: the low byte of ``bits[i]``,
    or the truncated scaled plane of a PlaneColour / PixelPlaneColour."""
    if bits is not None:
        np.copyto(out, bits[i], casting="unsafe")
    elif isinstance(color, PlaneColour | MixedPlaneColour | PixelPlaneColour):
        color.store_unorm8(i, out)
    else:
        np.copyto(out, color.unorm8_scaled(i), casting="unsafe")


def pixel_run(words: np.ndarray) -> tuple[np.ndarray, int] | None:
    """A (rows, width) array's rows as one 1-D run and its row pitch in
    elements (rows may be padded), or None when its strides do not allow it.
    ``run[y * pitch + x]`` is ``words[y, x]``: a 1-D fancy index costs about
    half of the 2-D ``words[(y, x)]`` one (which computes the same flat
    offsets and then walks them per dimension)."""
    item = words.itemsize
    h, w = words.shape
    s0, s1 = words.strides
    if h == 0 or w == 0 or s1 != item or s0 % item or s0 < w * item:
        return None
    pitch = s0 // item
    run = np.lib.stride_tricks.as_strided(words, ((h - 1) * pitch + w,), (item,))
    return run, pitch


def target_run(target: Any) -> tuple[np.ndarray, int] | None:
    """:func:`pixel_run` of ``target.words``, kept on the target while its
    words stay the same array (``as_strided`` costs ~15 us a call, with
    the GIL held, and the sparse path asks once per batch)."""
    words = target.words
    hit = getattr(target, "_run", None)
    if hit is not None and hit[0] is words:
        return hit[1]
    run = pixel_run(words)
    target._run = (words, run)
    return run


def store_masked(dst: np.ndarray, new: Any, mask: np.ndarray | None) -> None:
    """``dst[mask] = new[mask]`` for a view ``dst`` of 4-byte words.

    A masked ``np.copyto`` branches per element and costs up to 7 ns a pixel
    on a ragged mask; selecting bits with ``dst ^= (new ^ dst) & -mask`` costs
    about 1 ns whatever the mask looks like.
    """
    if mask is None or mask.all():
        dst[...] = new
        return
    if dst.dtype.itemsize != 4:
        np.copyto(dst, new, where=mask)
        return
    d = dst.view(np.uint32)
    n = np.asarray(new, dst.dtype)
    n = n.reshape(1).view(np.uint32).reshape(()) if n.ndim == 0 else n.view(np.uint32)
    m = mask.view(np.uint8).astype(np.int32)
    np.negative(m, out=m)
    x = np.bitwise_xor(n, d)
    x &= m.view(np.uint32)
    d ^= x


def _write_float32(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    view = target.typed[idx]
    nch = view.shape[-1]
    if type(color) in (PlaneColour, MixedPlaneColour):
        full = (1 << nch) - 1
        if (
            dense
            and alive is None
            and not rt.blend_enable
            and colormask & full == full
            and (
                store_planes_float32(view, color)
                if type(color) is PlaneColour
                else store_mixed_float32(view, color)
            )
        ):
            return
        color = color.stack()
    src = np.asarray(color, F32)
    if rt.blend_enable:
        dst = np.empty(src.shape, F32)
        for i in range(4):
            dst[i] = view[..., i] if i < nch else F32(1.0 if i == 3 else 0.0)
        src = blend_float(rt, src, dst, state.blend_color, src1)
    _write_channels(view, src, tuple(range(nch)) + (-1,) * (4 - nch), colormask, alive, dense,
                    idx, target.typed)  # fmt: skip


def _write_generic(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    """Any other colour format: llvmpipe's store conversion (store_rgba), the
    masked channels' bits kept; blending in float."""
    desc = target.desc
    raw = target.raw[idx]
    if desc.is_integer:
        dt = np.int32 if desc.is_signed_integer else np.uint32
        src = np.moveaxis(np.asarray(color, F32).view(dt), 0, -1)
    else:
        src4 = np.asarray(color, F32)
        if rt.blend_enable:
            dst_rgba = unpack_rgba(desc, raw)  # (..., 4)
            src4 = blend_float(rt, src4, np.moveaxis(dst_rgba, -1, 0), state.blend_color, src1)
        src = np.moveaxis(src4, 0, -1)
    packed = store_rgba(desc, src, raw, colormask)
    if dense:
        if alive is None:
            target.raw[idx] = packed
        else:
            np.copyto(target.raw[idx], packed, where=alive[..., None])
    else:
        target.raw[idx] = packed


def _write_logicop(target, idx, dense, alive, color, func: int, colormask: int) -> None:
    """A logic op's write (blend state logicop_enable): each channel's stored
    value combined with the pixel's bits (format.store_logic_op)."""
    desc = target.desc
    color = np.asarray(color)
    if desc.is_integer:
        dt = np.int32 if desc.is_signed_integer else np.uint32
        src = np.moveaxis(color.astype(np.float32, copy=False).view(dt), 0, -1)
    else:
        src = np.moveaxis(color.astype(np.float32, copy=False), 0, -1)
    raw = target.raw[idx]
    packed = store_logic_op(desc, src, raw, func, colormask)
    if dense and alive is not None:
        np.copyto(target.raw[idx], packed, where=alive[..., None])
    else:
        target.raw[idx] = packed


def read_depth_value(zs: Any, idx: tuple) -> np.ndarray:
    return word_to_depth(zs.layout, zs.words[idx])


def pack_clear_color(target: Any, rgba: tuple[float, float, float, float] | Any) -> np.ndarray:
    """The raw pixel bytes of a clear colour for ``target``'s format (read
    only; the last one is kept on the target: frames clear to one colour)."""
    arr = np.asarray(rgba)
    key = (arr.dtype.str, arr.tobytes())
    last = target.__dict__.get("_clear_bytes")
    if last is not None and last[0] == key:
        return last[1]
    packed = _pack_clear_color(target, arr, rgba)
    packed.flags.writeable = False
    target.__dict__["_clear_bytes"] = (key, packed)
    return packed


def _pack_clear_color(target: Any, arr: np.ndarray, rgba: Any) -> np.ndarray:
    if target.desc.is_integer:
        dt = np.int32 if target.desc.is_signed_integer else np.uint32
        arr = (
            np.asarray(rgba).astype(np.float64).astype(dt)
            if arr.dtype.kind == "f"
            else arr.astype(dt)
        )
    else:
        arr = arr.astype(F32)
    return pack_rgba(target.desc, arr.reshape(1, 4))[0]

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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gallium.pipe.enums import BlendFactor, BlendFunc, CompareFunc, StencilOp
from gallium.pipe.state import DepthStencilAlphaState, RtBlendState
from gallium.util.format import depth_to_word, pack_rgba, unpack_rgba, word_to_depth

F32 = np.float32
U8MAX = np.uint16(255)


@dataclass
class FragmentState:
    """Everything a worker needs to shade and write one draw's fragments.

    Captured on the driver thread when the draw is recorded; immutable after.
    """

    kernel: Any
    fs_inputs: list[tuple[int, str, int]]  # (IN register, "attr"|"pos"|"face"|"zero", slot)
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
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def depth_enabled(self) -> bool:
        return bool(self.dsa.depth.enabled)

    @property
    def stencil_enabled(self) -> bool:
        return bool(self.dsa.stencil[0].enabled)


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
            np.copyto(zs.words[idx], new_words, where=write_mask)
        else:
            sel = np.nonzero(write_mask)[0]
            zs.words[idx[0][sel], idx[1][sel]] = new_words[sel]
    return passed


# ----------------------------------------------------------------------------
# colour
# ----------------------------------------------------------------------------


def to_unorm8(x: Any) -> np.ndarray:
    """rint(fl32(clamp(x, 0, 1) * 255)) as uint8 (NaN -> 0)."""
    x = np.asarray(x, F32)
    c = np.fmin(np.fmax(x, F32(0.0)), F32(1.0))
    return np.rint(c * F32(255.0)).astype(np.uint8)


def _mul8(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    t = a.astype(np.uint32) * b.astype(np.uint32)
    return (t + (t >> 8) + 128) >> 8


def _factor8(f: int, src: list, dst: list, const: list, chan: int, src1: list | None) -> Any:
    """8-bit blend factor for channel ``chan`` (0..3) as uint32 (array or scalar)."""
    one = np.uint32(255)
    f = int(f)
    if f == BlendFactor.ONE:
        return one
    if f == BlendFactor.ZERO:
        return np.uint32(0)
    if f == BlendFactor.SRC_COLOR:
        return src[chan]
    if f == BlendFactor.SRC_ALPHA:
        return src[3]
    if f == BlendFactor.DST_COLOR:
        return dst[chan]
    if f == BlendFactor.DST_ALPHA:
        return dst[3]
    if f == BlendFactor.INV_SRC_COLOR:
        return one - src[chan]
    if f == BlendFactor.INV_SRC_ALPHA:
        return one - src[3]
    if f == BlendFactor.INV_DST_COLOR:
        return one - dst[chan]
    if f == BlendFactor.INV_DST_ALPHA:
        return one - dst[3]
    if f == BlendFactor.CONST_COLOR:
        return const[chan]
    if f == BlendFactor.CONST_ALPHA:
        return const[3]
    if f == BlendFactor.INV_CONST_COLOR:
        return one - const[chan]
    if f == BlendFactor.INV_CONST_ALPHA:
        return one - const[3]
    if f == BlendFactor.SRC_ALPHA_SATURATE:
        if chan == 3:
            return one
        return np.minimum(src[3], one - dst[3])
    if src1 is not None:
        if f == BlendFactor.SRC1_COLOR:
            return src1[chan]
        if f == BlendFactor.SRC1_ALPHA:
            return src1[3]
        if f == BlendFactor.INV_SRC1_COLOR:
            return one - src1[chan]
        if f == BlendFactor.INV_SRC1_ALPHA:
            return one - src1[3]
    raise ValueError(f"blend factor {f} is not supported")


def _combine8(func: int, s: np.ndarray, d: np.ndarray) -> np.ndarray:
    func = int(func)
    if func == BlendFunc.ADD:
        return np.minimum(s + d, 255)
    if func == BlendFunc.SUBTRACT:
        return np.where(s > d, s - d, 0)
    if func == BlendFunc.REVERSE_SUBTRACT:
        return np.where(d > s, d - s, 0)
    if func == BlendFunc.MIN:
        return np.minimum(s, d)
    if func == BlendFunc.MAX:
        return np.maximum(s, d)
    raise ValueError(f"blend func {func} is not supported")


def blend_unorm8(
    rt: RtBlendState,
    src: list[np.ndarray],
    dst: list[np.ndarray],
    const: tuple[float, float, float, float],
    src1: list[np.ndarray] | None,
) -> list[np.ndarray]:
    """Blend 8-bit RGBA channel lists (uint32 values 0..255) as llvmpipe does."""
    c8 = [np.uint32(v) for v in to_unorm8(np.asarray(const, F32))]
    out = []
    for ch in range(4):
        is_alpha = ch == 3
        func = rt.alpha_func if is_alpha else rt.rgb_func
        sf = rt.alpha_src_factor if is_alpha else rt.rgb_src_factor
        df = rt.alpha_dst_factor if is_alpha else rt.rgb_dst_factor
        if int(func) in (BlendFunc.MIN, BlendFunc.MAX):
            out.append(_combine8(func, src[ch], dst[ch]))
            continue
        s = _mul8(src[ch], _factor8(sf, src, dst, c8, ch, src1))
        d = _mul8(dst[ch], _factor8(df, src, dst, c8, ch, src1))
        out.append(_combine8(func, s, d))
    return out


def _factorf(f: int, src: list, dst: list, const: tuple, chan: int, src1: list | None) -> Any:
    one = F32(1.0)
    f = int(f)
    table = {
        BlendFactor.ONE: lambda: one,
        BlendFactor.ZERO: lambda: F32(0.0),
        BlendFactor.SRC_COLOR: lambda: src[chan],
        BlendFactor.SRC_ALPHA: lambda: src[3],
        BlendFactor.DST_COLOR: lambda: dst[chan],
        BlendFactor.DST_ALPHA: lambda: dst[3],
        BlendFactor.INV_SRC_COLOR: lambda: one - src[chan],
        BlendFactor.INV_SRC_ALPHA: lambda: one - src[3],
        BlendFactor.INV_DST_COLOR: lambda: one - dst[chan],
        BlendFactor.INV_DST_ALPHA: lambda: one - dst[3],
        BlendFactor.CONST_COLOR: lambda: F32(const[chan]),
        BlendFactor.CONST_ALPHA: lambda: F32(const[3]),
        BlendFactor.INV_CONST_COLOR: lambda: one - F32(const[chan]),
        BlendFactor.INV_CONST_ALPHA: lambda: one - F32(const[3]),
        BlendFactor.SRC_ALPHA_SATURATE: lambda: (
            one if chan == 3 else np.minimum(src[3], one - dst[3])
        ),
    }
    if f in table:
        return table[f]()
    if src1 is not None:
        t1 = {
            BlendFactor.SRC1_COLOR: lambda: src1[chan],
            BlendFactor.SRC1_ALPHA: lambda: src1[3],
            BlendFactor.INV_SRC1_COLOR: lambda: one - src1[chan],
            BlendFactor.INV_SRC1_ALPHA: lambda: one - src1[3],
        }
        if f in t1:
            return t1[f]()
    raise ValueError(f"blend factor {f} is not supported")


def blend_float(
    rt: RtBlendState,
    src: list[Any],
    dst: list[Any],
    const: tuple[float, float, float, float],
    src1: list[Any] | None,
) -> list[Any]:
    out = []
    for ch in range(4):
        is_alpha = ch == 3
        func = int(rt.alpha_func if is_alpha else rt.rgb_func)
        sf = rt.alpha_src_factor if is_alpha else rt.rgb_src_factor
        df = rt.alpha_dst_factor if is_alpha else rt.rgb_dst_factor
        s, d = np.asarray(src[ch], F32), np.asarray(dst[ch], F32)
        if func == BlendFunc.MIN:
            out.append(np.minimum(s, d))
            continue
        if func == BlendFunc.MAX:
            out.append(np.maximum(s, d))
            continue
        sv = s * _factorf(sf, src, dst, const, ch, src1)
        dv = d * _factorf(df, src, dst, const, ch, src1)
        if func == BlendFunc.ADD:
            out.append((sv + dv).astype(F32))
        elif func == BlendFunc.SUBTRACT:
            out.append((sv - dv).astype(F32))
        else:
            out.append((dv - sv).astype(F32))
    return out


def write_color(
    target: Any,
    idx: tuple,
    dense: bool,
    alive: Any,
    color: list[Any],
    rt: RtBlendState,
    state: FragmentState,
    src1: list[Any] | None = None,
) -> None:
    """Blend (if enabled) and write one render target's colour for the live lanes."""
    colormask = int(rt.colormask) & 0xF
    if colormask == 0:
        return
    if alive is not None and not dense:
        sel = np.nonzero(alive)[0]
        if sel.size == 0:
            return
        idx = (idx[0][sel], idx[1][sel])
        color = [c[sel] if np.ndim(c) else c for c in color]
        if src1 is not None:
            src1 = [c[sel] if np.ndim(c) else c for c in src1]
        alive = None
    if target.kind == "unorm8":
        _write_unorm8(target, idx, dense, alive, color, rt, state, src1, colormask)
    elif target.kind == "float32":
        _write_float32(target, idx, dense, alive, color, rt, state, src1, colormask)
    else:
        _write_generic(target, idx, dense, alive, color, rt, state, src1, colormask)


def _lane_shape(idx: tuple, dense: bool) -> tuple[int, ...]:
    if dense:
        ys, xs = idx
        return (ys.stop - ys.start, xs.stop - xs.start)
    return (idx[0].shape[0],)


def _write_unorm8(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    shape = _lane_shape(idx, dense)
    view = target.typed[idx]  # (h, w, 4) view (dense) or (n, 4) copy (sparse)
    perm = target.perm
    src8 = [np.broadcast_to(to_unorm8(c), shape) for c in color]
    if rt.blend_enable:
        dst8 = [
            view[..., perm[ch]].astype(np.uint32)
            if perm[ch] >= 0
            else np.full(shape, 255, np.uint32)
            for ch in range(4)
        ]
        s1 = [to_unorm8(c).astype(np.uint32) for c in src1] if src1 is not None else None
        res = blend_unorm8(rt, [s.astype(np.uint32) for s in src8], dst8, state.blend_color, s1)
        src8 = [r.astype(np.uint8) for r in res]
    if dense:
        for ch in range(4):
            m = perm[ch]
            if m < 0 or not (colormask >> ch & 1):
                continue
            if alive is None:
                view[..., m] = src8[ch]
            else:
                np.copyto(view[..., m], src8[ch], where=alive)
    else:
        out = view.copy()
        for ch in range(4):
            m = perm[ch]
            if m >= 0 and colormask >> ch & 1:
                out[..., m] = src8[ch]
        target.typed[idx] = out


def _write_float32(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    shape = _lane_shape(idx, dense)
    view = target.typed[idx]
    nch = view.shape[-1]
    src = [np.broadcast_to(np.asarray(c, F32), shape) for c in color]
    if rt.blend_enable:
        dst = [
            view[..., ch] if ch < nch else np.full(shape, F32(1.0 if ch == 3 else 0.0))
            for ch in range(4)
        ]
        src = blend_float(rt, src, dst, state.blend_color, src1)
    if dense:
        for ch in range(nch):
            if not (colormask >> ch & 1):
                continue
            if alive is None:
                view[..., ch] = src[ch]
            else:
                np.copyto(view[..., ch], src[ch], where=alive)
    else:
        out = view.copy()
        for ch in range(nch):
            if colormask >> ch & 1:
                out[..., ch] = src[ch]
        target.typed[idx] = out


def _write_generic(target, idx, dense, alive, color, rt, state, src1, colormask) -> None:
    desc = target.desc
    shape = _lane_shape(idx, dense)
    raw = target.raw[idx]
    dst_rgba = unpack_rgba(desc, raw)
    if desc.is_integer:
        dt = np.int32 if desc.is_signed_integer else np.uint32
        src = np.stack(
            [
                np.broadcast_to(
                    np.asarray(c).view(dt) if np.asarray(c).dtype == F32 else np.asarray(c, dt),
                    shape,
                )
                for c in color
            ],
            axis=-1,
        )
    else:
        src_list = [np.broadcast_to(np.asarray(c, F32), shape) for c in color]
        if rt.blend_enable:
            dst_list = [dst_rgba[..., ch] for ch in range(4)]
            src_list = blend_float(rt, src_list, dst_list, state.blend_color, src1)
        src = np.stack(src_list, axis=-1)
    merged = dst_rgba.copy()
    for ch in range(4):
        if colormask >> ch & 1:
            merged[..., ch] = src[..., ch]
    packed = pack_rgba(desc, merged)
    if dense:
        if alive is None:
            target.raw[idx] = packed
        else:
            np.copyto(target.raw[idx], packed, where=alive[..., None])
    else:
        target.raw[idx] = packed


def read_depth_value(zs: Any, idx: tuple) -> np.ndarray:
    return word_to_depth(zs.layout, zs.words[idx])


def pack_clear_color(target: Any, rgba: tuple[float, float, float, float] | Any) -> np.ndarray:
    """The raw pixel bytes of a clear colour for ``target``'s format."""
    arr = np.asarray(rgba)
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

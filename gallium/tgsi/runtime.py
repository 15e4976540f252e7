"""Runtime helpers called by generated TGSI kernels.

Everything here is a pure numpy function of its arguments: a value is either
an array of ``n`` lanes or a numpy scalar (a value uniform over all lanes).
Registers are 32-bit words; a helper takes and returns them in the view it
names (``float32``, ``int32`` or ``uint32``) and never changes bits it does
not have to.

Where TGSI (or C) leaves a result undefined, the helpers reproduce what
Mesa's ``tgsi_exec.c`` (softpipe) computes on x86-64, measured through
moderngl on this machine (see the decisions listed in
:mod:`gallium.tgsi.compiler`):

* F2I (and ARL, D2I, ...): NaN, infinities and values outside the int32 range
  give ``0x80000000`` (the x86 "integer indefinite").
* F2U: values ``>= 2**31`` convert as ``F2I(x - 2**31) ^ 0x80000000``,
  everything else as F2I; so -1.5 gives 0xFFFFFFFF, +inf and 2**32 give 0,
  NaN and -inf give 0x80000000.  The 64-bit conversions follow the same rules
  with 2**63.
* Integer division by zero: IDIV 0, UDIV/UMOD 0xFFFFFFFF, MOD -1 (all bits
  set); ``INT_MIN / -1`` (a trap on x86) wraps to INT_MIN here and the
  matching remainder is 0.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from ..pipe.errors import PipeError, UnsupportedError

F32, I32, U32 = np.float32, np.int32, np.uint32
F64, I64, U64 = np.float64, np.int64, np.uint64
F16, U16 = np.float16, np.uint16

# Loop iterations of one kernel call, every loop together (so nested loops cannot
# multiply it): llvmpipe's LP_MAX_TGSI_LOOP_ITERATIONS.
MAX_LOOP_ITERATIONS = 65535


class ShaderRuntimeError(PipeError, RuntimeError):
    """A shader failed while running (a loop that never ends, a missing binding)."""


def _scalar(r: np.ndarray) -> Any:
    return r[()] if r.ndim == 0 else r


# ----------------------------------------------------------------------------
# Views, masks, lanes
# ----------------------------------------------------------------------------


def as_view(x: Any, t: type) -> Any:
    """Reinterpret the 32 bits of ``x`` as type ``t`` (free for arrays)."""
    if isinstance(x, np.ndarray | np.generic):
        if x.dtype == t:
            return x
        return x.view(t)
    return np.asarray(x, dtype=t)[()]


def lanes(x: Any, n: int) -> np.ndarray:
    """``x`` as a writable array of ``n`` lanes."""
    return np.array(np.broadcast_to(x, (n,)))


def full(n: int, value: bool) -> np.ndarray:
    return np.full(n, value, dtype=bool)


def any_lane(m: Any) -> bool:
    return bool(np.any(m))


def where(mask: Any, new: Any, old: Any) -> Any:
    return np.where(mask, new, old)


# ----------------------------------------------------------------------------
# Float helpers
# ----------------------------------------------------------------------------


def sat(x: Any) -> Any:
    """Clamp to [0, 1]; NaN becomes 0 (tgsi_exec: fminf(fmaxf(x, 0), 1))."""
    r = np.fmax(x, F32(0.0))
    if isinstance(r, np.ndarray):
        return np.fmin(r, F32(1.0), out=r)
    return np.fmin(r, F32(1.0))


def clamp(x: Any, lo: Any, hi: Any) -> Any:
    """tgsi.rst's clamp(x, y, z) = (x < y) ? y : (x > z) ? z : x (NaN stays NaN)."""
    return np.where(x < lo, lo, np.where(x > hi, hi, x))


def b2f(c: Any) -> Any:
    return np.where(c, F32(1.0), F32(0.0))


def b2u(c: Any) -> Any:
    return np.where(c, U32(0xFFFFFFFF), U32(0))


def ssg(x: Any) -> Any:
    """SSG as tgsi_exec: -1, 1, or 0 (also for -0.0 and NaN)."""
    return np.where(x < 0, F32(-1.0), np.where(x > 0, F32(1.0), F32(0.0)))


def rcc(x: Any) -> Any:
    """RCC: 1/x clamped away from zero and infinity, keeping its sign (tgsi.rst)."""
    r = np.divide(F32(1.0), x, dtype=F32)
    lo, hi = F32(5.42101e-020), F32(1.884467e019)
    return np.where(r > 0, clamp(r, lo, hi), clamp(r, -hi, -lo))


def fma32(a: Any, b: Any, c: Any) -> Any:
    """Fused a*b+c with one rounding to float32.

    The float64 product of two float32 values is exact; the sum is rounded to
    odd in float64 (TwoSum error decides the last bit), and rounding that to
    float32 gives the correctly rounded fused result.
    """
    p = np.asarray(a, F64) * np.asarray(b, F64)
    c64 = np.asarray(c, F64)
    s = p + c64
    bv = s - p
    err = (p - (s - bv)) + (c64 - bv)
    s = _round_to_odd(s, err)
    return _scalar(np.asarray(s).astype(F32))


def _round_to_odd(s: np.ndarray, err: np.ndarray) -> np.ndarray:
    s = np.asarray(s, F64)
    odd = (s.view(I64) & 1) == 1
    fix = (err != 0) & ~odd & np.isfinite(s) & np.isfinite(err)
    if not np.any(fix):
        return s
    toward = np.where(err > 0, np.inf, -np.inf)
    return np.where(fix, np.nextafter(s, toward), s)


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dekker's exact product: a*b = p + e, plus a mask of lanes where it is exact."""
    p = a * b
    k = F64(134217729.0)  # 2**27 + 1
    ah = a * k
    ah = ah - (ah - a)
    al = a - ah
    bh = b * k
    bh = bh - (bh - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    ok = (
        np.isfinite(p)
        & (np.abs(a) < 2.0**995)
        & (np.abs(b) < 2.0**995)
        & ((np.abs(p) >= 2.0**-969) | (p == 0))
    )
    return p, e, ok


def fma64(a: Any, b: Any, c: Any) -> Any:
    """DFMA: a*b+c rounded once (Boldo-Melquiond emulation with rounding to odd).

    Exact except where a*b is below 2**-969 in magnitude or an operand is
    2**995 or larger: there the plain a*b+c (two roundings) is used.
    """
    a = np.asarray(a, F64)
    b = np.asarray(b, F64)
    c = np.asarray(c, F64)
    p, e, ok = _two_prod(a, b)
    th = c + p
    bv = th - c
    tl = (c - (th - bv)) + (p - bv)
    z = tl + e
    bz = z - tl
    zerr = (tl - (z - bz)) + (e - bz)
    v = _round_to_odd(z, zerr)
    r = np.where(ok & np.isfinite(th), th + v, a * b + c)
    return _scalar(np.asarray(r, F64))


# ----------------------------------------------------------------------------
# Conversions (x86 semantics for undefined cases, see the module docstring)
# ----------------------------------------------------------------------------

_INT_MIN = I32(-2147483648)


def f2i(x: Any) -> Any:
    a = np.asarray(x)
    if a.dtype == F64:
        ok = (a > -2147483649.0) & (a < 2147483648.0)
    else:
        a = a.astype(F32, copy=False)
        ok = (a >= F32(-2147483648.0)) & (a < F32(2147483648.0))
    r = np.where(ok, a, 0).astype(I32)
    return _scalar(np.where(ok, r, _INT_MIN))


def f2u(x: Any) -> Any:
    a = np.asarray(x)
    if a.dtype != F64:
        a = a.astype(F32, copy=False)
    big = a >= 2147483648.0
    v = np.where(big, a - a.dtype.type(2147483648.0), a)
    r = np.asarray(f2i(v)).view(U32)
    return _scalar(r ^ np.where(big, U32(0x80000000), U32(0)))


_I64_MIN = I64(-(1 << 63))


def f2i64(x: Any) -> Any:
    a = np.asarray(x, F64)
    ok = (a >= -(2.0**63)) & (a < 2.0**63)
    r = np.where(ok, a, 0).astype(I64)
    return _scalar(np.where(ok, r, _I64_MIN))


def f2u64(x: Any) -> Any:
    a = np.asarray(x, F64)
    big = a >= 2.0**63
    v = np.where(big, a - 2.0**63, a)
    r = np.asarray(f2i64(v)).view(U64)
    return _scalar(r ^ np.where(big, U64(1 << 63), U64(0)))


# ----------------------------------------------------------------------------
# Integer arithmetic
# ----------------------------------------------------------------------------


def idiv(a: Any, b: Any) -> Any:
    a64 = np.asarray(a, I64)
    b64 = np.asarray(b, I64)
    zero = b64 == 0
    bs = np.where(zero, 1, b64)
    q = np.abs(a64) // np.abs(bs)
    q = np.where((a64 < 0) != (bs < 0), -q, q)
    return _scalar(np.where(zero, 0, q).astype(I32))


def imod(a: Any, b: Any) -> Any:
    """MOD: C's signed remainder (sign of the dividend); x % 0 = -1."""
    a64 = np.asarray(a, I64)
    b64 = np.asarray(b, I64)
    zero = b64 == 0
    r = np.fmod(a64, np.where(zero, 1, b64))
    return _scalar(np.where(zero, -1, r).astype(I32))


def _unsigned_div(a: Any, b: Any, dt: Any, op: Any) -> Any:
    """``op`` (// or %) on unsigned ``dt`` lanes; division by zero gives all ones."""
    a = np.asarray(a, dt)
    b = np.asarray(b, dt)
    zero = b == 0
    r = op(a, np.where(zero, dt(1), b))
    return _scalar(np.where(zero, dt(np.iinfo(dt).max), r))


def udiv(a: Any, b: Any) -> Any:
    return _unsigned_div(a, b, U32, np.floor_divide)


def umod(a: Any, b: Any) -> Any:
    return _unsigned_div(a, b, U32, np.remainder)


def imul_hi(a: Any, b: Any) -> Any:
    p = np.asarray(a, I64) * np.asarray(b, I64)
    return _scalar((p >> 32).astype(I32))


def umul_hi(a: Any, b: Any) -> Any:
    p = np.asarray(a, U64) * np.asarray(b, U64)
    return _scalar((p >> U64(32)).astype(U32))


def usad(a: Any, b: Any, c: Any) -> Any:
    """SAD on unsigned words: |a - b| + c, wrapping."""
    a = np.asarray(a, U32)
    b = np.asarray(b, U32)
    d = np.where(a > b, a - b, b - a)
    return _scalar((d + np.asarray(c, U32)).astype(U32))


def _shift_ok(s: np.ndarray, lo: int, hi: int) -> np.ndarray:
    return np.clip(s, lo, hi)


def ibfe(x: Any, off: Any, width: Any) -> Any:
    """Signed bitfield extract, as tgsi_exec's micro_ibfe."""
    x = np.asarray(x, I32)
    o = np.asarray(off, I32) & 31
    w = np.asarray(width, I32)
    whole = (w == 32) & (o == 0)
    w = w & 31
    inside = (w != 0) & (w + o < 32)
    s1 = _shift_ok(32 - w - o, 0, 31).astype(U32)
    s2 = _shift_ok(32 - w, 0, 31).astype(I32)
    a = (x.view(U32) << s1).view(I32) >> s2
    b = x >> o
    r = np.where(w == 0, I32(0), np.where(inside, a, b))
    return _scalar(np.where(whole, x, r).astype(I32))


def ubfe(x: Any, off: Any, width: Any) -> Any:
    """Unsigned bitfield extract, as tgsi_exec's micro_ubfe."""
    x = np.asarray(x, U32)
    o = np.asarray(off, U32) & U32(31)
    w = np.asarray(width, U32)
    whole = (w == 32) & (o == 0)
    w = w & U32(31)
    inside = (w != 0) & (w.astype(I64) + o < 32)
    s1 = _shift_ok(32 - w.astype(I64) - o, 0, 31).astype(U32)
    s2 = _shift_ok(32 - w.astype(I64), 0, 31).astype(U32)
    a = (x << s1) >> s2
    b = x >> o
    r = np.where(w == 0, U32(0), np.where(inside, a, b))
    return _scalar(np.where(whole, x, r).astype(U32))


def bfi(base: Any, insert: Any, off: Any, width: Any) -> Any:
    """Bitfield insert, as tgsi_exec's micro_bfi (x86 masks shift counts by 31)."""
    base = np.asarray(base, U32)
    insert = np.asarray(insert, U32)
    o = np.asarray(off, U32) & U32(31)
    w = np.asarray(width, U32)
    m = ((U32(1) << (w & U32(31))) - U32(1)) << o
    r = ((insert << o) & m) | (base & ~m)
    return _scalar(np.where(w == 32, insert, r).astype(U32))


def brev(x: Any) -> Any:
    v = np.asarray(x, U32)
    v = ((v >> U32(1)) & U32(0x55555555)) | ((v & U32(0x55555555)) << U32(1))
    v = ((v >> U32(2)) & U32(0x33333333)) | ((v & U32(0x33333333)) << U32(2))
    v = ((v >> U32(4)) & U32(0x0F0F0F0F)) | ((v & U32(0x0F0F0F0F)) << U32(4))
    v = ((v >> U32(8)) & U32(0x00FF00FF)) | ((v & U32(0x00FF00FF)) << U32(8))
    v = (v >> U32(16)) | (v << U32(16))
    return _scalar(v.astype(U32))


def popc(x: Any) -> Any:
    v = np.asarray(x, U32)
    v = v - ((v >> U32(1)) & U32(0x55555555))
    v = (v & U32(0x33333333)) + ((v >> U32(2)) & U32(0x33333333))
    v = (v + (v >> U32(4))) & U32(0x0F0F0F0F)
    return _scalar(((v * U32(0x01010101)) >> U32(24)).astype(U32))


def umsb(x: Any) -> Any:
    """Index of the highest set bit, -1 for 0."""
    _, e = np.frexp(np.asarray(x, U32).astype(F64))
    return _scalar((e - 1).astype(I32))


def imsb(x: Any) -> Any:
    """Highest bit that differs from the sign bit, -1 for 0 and -1."""
    v = np.asarray(x, I32)
    return umsb(np.where(v < 0, ~v, v).view(U32))


def lsb(x: Any) -> Any:
    """Index of the lowest set bit, -1 for 0."""
    v = np.asarray(x, U32)
    return umsb(v & (U32(0) - v))


# ----------------------------------------------------------------------------
# Packing (PK*/UP*), following NV_fragment_program where tgsi.rst says "TBD"
# ----------------------------------------------------------------------------


def _f2h_bits(x: Any) -> np.ndarray:
    return np.asarray(x, F32).astype(F16).view(U16).astype(U32)


def pk2h(x: Any, y: Any) -> Any:
    return _scalar(_f2h_bits(x) | (_f2h_bits(y) << U32(16)))


def up2h(u: Any, hi: bool) -> Any:
    v = np.asarray(u, U32)
    h = (v >> U32(16)) if hi else (v & U32(0xFFFF))
    return _scalar(h.astype(U16).view(F16).astype(F32))


def _unorm(x: Any, scale: float) -> np.ndarray:
    v = np.fmin(np.fmax(np.asarray(x, F32), F32(0.0)), F32(1.0))
    return np.rint(v.astype(F64) * scale).astype(U32)


def pk2us(x: Any, y: Any) -> Any:
    return _scalar(_unorm(x, 65535.0) | (_unorm(y, 65535.0) << U32(16)))


def pk4ub(x: Any, y: Any, z: Any, w: Any) -> Any:
    b = [_unorm(v, 255.0) for v in (x, y, z, w)]
    return _scalar(b[0] | (b[1] << U32(8)) | (b[2] << U32(16)) | (b[3] << U32(24)))


def _snorm_biased(x: Any) -> np.ndarray:
    v = np.fmin(np.fmax(np.asarray(x, F32).astype(F64), -128.0 / 127.0), 1.0)
    return np.rint(127.0 * v + 128.0).astype(U32)


def pk4b(x: Any, y: Any, z: Any, w: Any) -> Any:
    b = [_snorm_biased(v) for v in (x, y, z, w)]
    return _scalar(b[0] | (b[1] << U32(8)) | (b[2] << U32(16)) | (b[3] << U32(24)))


def up2us(u: Any, hi: bool) -> Any:
    v = np.asarray(u, U32)
    h = (v >> U32(16)) if hi else (v & U32(0xFFFF))
    return _scalar((h.astype(F64) / 65535.0).astype(F32))


def up4ub(u: Any, k: int) -> Any:
    v = (np.asarray(u, U32) >> U32(8 * k)) & U32(0xFF)
    return _scalar((v.astype(F64) / 255.0).astype(F32))


def up4b(u: Any, k: int) -> Any:
    v = (np.asarray(u, U32) >> U32(8 * k)) & U32(0xFF)
    return _scalar(((v.astype(F64) - 128.0) / 127.0).astype(F32))


# ----------------------------------------------------------------------------
# 64-bit values: a pair of 32-bit channels, low word first (as Mesa)
# ----------------------------------------------------------------------------


def pack64(lo: Any, hi: Any, t: type) -> Any:
    """Two uint32 words as one 64-bit value of type ``t`` (float64/int64/uint64)."""
    q = np.asarray(lo, U32).astype(U64) | (np.asarray(hi, U32).astype(U64) << U64(32))
    return _scalar(q.view(t) if t is not U64 else q)


def lo32(x: Any) -> Any:
    q = np.asarray(x)
    q = q.view(U64) if q.dtype != U64 else q
    return _scalar((q & U64(0xFFFFFFFF)).astype(U32))


def hi32(x: Any) -> Any:
    q = np.asarray(x)
    q = q.view(U64) if q.dtype != U64 else q
    return _scalar((q >> U64(32)).astype(U32))


def dsat(x: Any) -> Any:
    """Saturate a double as tgsi_exec's store_double_channel: NaN -> 0."""
    x = np.asarray(x, F64)
    return _scalar(np.where((x < 0) | np.isnan(x), 0.0, np.where(x > 1, 1.0, x)))


def dssg(x: Any) -> Any:
    return np.where(x < 0, F64(-1.0), np.where(x > 0, F64(1.0), F64(0.0)))


def i64div(a: Any, b: Any) -> Any:
    a = np.asarray(a, I64)
    b = np.asarray(b, I64)
    zero = b == 0
    neg1 = b == -1
    bs = np.where(zero | neg1, 1, b)
    q = a // bs
    r = a - q * bs
    q = np.where((r != 0) & ((a < 0) != (bs < 0)), q + 1, q)
    q = np.where(neg1, I64(0) - a, q)
    return _scalar(np.where(zero, I64(0), q).astype(I64))


def i64mod(a: Any, b: Any) -> Any:
    a = np.asarray(a, I64)
    b = np.asarray(b, I64)
    zero = b == 0
    bs = np.where(zero | (b == -1), 1, b)
    r = np.fmod(a, bs)
    r = np.where(b == -1, I64(0), r)
    return _scalar(np.where(zero, I64(-1), r).astype(I64))


def u64div(a: Any, b: Any) -> Any:
    return _unsigned_div(a, b, U64, np.floor_divide)


def u64mod(a: Any, b: Any) -> Any:
    return _unsigned_div(a, b, U64, np.remainder)


def clock64() -> tuple[Any, Any]:
    t = time.perf_counter_ns() & 0xFFFFFFFFFFFFFFFF
    return U32(t & 0xFFFFFFFF), U32(t >> 32)


# ----------------------------------------------------------------------------
# Register files read per lane
# ----------------------------------------------------------------------------


def read_input(inputs: list[Any], index: int, chan: int) -> Any:
    """IN[index] channel ``chan`` as float32-viewed bits (missing inputs read 0)."""
    if index < len(inputs) and inputs[index] is not None:
        chans = inputs[index]
        if len(chans) != 4:
            raise ShaderRuntimeError(
                f"input register {index} must have 4 channels, not {len(chans)}"
            )
        v = chans[chan]
        if v is not None:
            return chan_bits(v)
    return F32(0.0)


def read_vertex_input(vertices: Any, vertex: int, index: int, chan: int) -> Any:
    """IN[vertex][index] of a geometry / tessellation kernel (``ExecEnv.vertices``)."""
    if vertices is None:
        raise ShaderRuntimeError(
            "the shader reads 2-D inputs IN[vertex][index] but ExecEnv.vertices is not set"
        )
    if 0 <= vertex < len(vertices) and vertices[vertex] is not None:
        return read_input(vertices[vertex], index, chan)
    return F32(0.0)


def read_system_value(values: dict[str, Any], semantic: str, chan: int) -> Any:
    v = values.get(semantic)
    if v is None:
        raise ShaderRuntimeError(f"system value {semantic} is not provided by this stage")
    c = v[chan]
    return F32(0.0) if c is None else chan_bits(c)


def gather(arr: np.ndarray, idx: Any, chan: int, lo: int, hi: int) -> Any:
    """``arr[idx, chan]`` per lane (``arr`` is (count, 4, n) float32 bits).

    Indices outside ``[lo, hi]`` (the declared array) read 0.
    """
    if np.ndim(idx) == 0:
        i = int(idx)
        if lo <= i <= hi:
            return arr[i, chan].copy()
        return np.zeros(arr.shape[2], F32)
    idx = np.asarray(idx, np.intp)
    valid = (idx >= lo) & (idx <= hi)
    safe = np.where(valid, idx, lo)
    vals = np.take_along_axis(arr[:, chan, :], safe[None, :], axis=0)[0]
    return np.where(valid, vals, F32(0.0))


def scatter(arr: np.ndarray, idx: Any, chan: int, value: Any, mask: Any, lo: int, hi: int) -> None:
    """Write ``value`` to ``arr[idx, chan]`` per lane where ``mask`` (None = all lanes).

    Indices outside ``[lo, hi]`` are dropped; inactive lanes never write.
    """
    n = arr.shape[2]
    value = as_view(value, F32)
    if np.ndim(idx) == 0:
        i = int(idx)
        if lo <= i <= hi:
            if mask is None:
                arr[i, chan] = value
            else:
                np.copyto(arr[i, chan], value, where=mask)
        return
    idx = np.asarray(idx, np.int64)
    ok = (idx >= lo) & (idx <= hi)
    if mask is not None:
        ok = ok & mask
    sel = np.nonzero(ok)[0]
    arr[idx[sel], chan, sel] = lanes(value, n)[sel]


def gather_imm(table: np.ndarray, idx: Any, chan: int) -> Any:
    """``IMM[idx]`` per lane from the raw (count, 4) uint32 table; out of range reads 0."""
    count = table.shape[0]
    if np.ndim(idx) == 0:
        i = int(idx)
        return table[i, chan] if 0 <= i < count else U32(0)
    idx = np.asarray(idx, np.int64)
    valid = (idx >= 0) & (idx < count)
    return np.where(valid, table[np.where(valid, idx, 0), chan], U32(0))


class LaneConstants:
    """A constant buffer that differs between the draws of one kernel call.

    Row ``r`` of ``data`` (R, nbytes) uint8 is one draw's buffer, zero-padded
    to the longest; ``sizes[r]`` its own length in bytes; lane ``k`` reads row
    ``rows[k]``.  Every read gives each lane exactly what a call over its own
    draw alone would give: vector reads past a buffer's end read 0 there as
    here (the padding is zero), and LOAD checks each lane against its own
    row's size.  (The draw module's vertex stages pass these; a constant
    buffer that all draws share stays one plain buffer, read as scalars.)
    """

    __slots__ = ("data", "rows", "sizes")

    def __init__(self, data: np.ndarray, rows: np.ndarray, sizes: np.ndarray) -> None:
        self.data = data
        self.rows = rows
        self.sizes = sizes

    def words(self, t: type) -> np.ndarray:
        """(R, vectors, 4) view of the rows as ``t``."""
        return self.data.view(t).reshape(self.data.shape[0], -1, 4)


def lane_constant_buffers(per_row: list, lane_row: np.ndarray | None) -> list:
    """The constant buffers of one kernel call whose lanes belong to several
    draws (or fragment states), ``per_row[r]`` row r's buffers (uint8 arrays
    or None per slot), ``lane_row`` each lane's row (None: every lane row 0).

    A slot bound to the same bytes for every row stays that buffer (read as
    scalars); any other becomes a :class:`LaneConstants`.
    """
    first = per_row[0]
    if len(per_row) == 1 or all(c is first for c in per_row):
        return list(first)
    nslots = max(len(c) for c in per_row)
    out: list[Any] = []
    for slot in range(nslots):
        bufs = [c[slot] if slot < len(c) else None for c in per_row]
        b0 = bufs[0]
        if all(b is b0 for b in bufs):
            out.append(b0)
            continue
        if b0 is not None and all(
            b is b0 or (b is not None and b.size == b0.size and np.array_equal(b, b0)) for b in bufs
        ):
            out.append(b0)
            continue
        out.append(_lane_constants(bufs, lane_row))
    return out


def _lane_constants(bufs: list, lane_row: np.ndarray) -> LaneConstants:
    sizes = np.array([0 if b is None else np.asarray(b).nbytes for b in bufs], np.int64)
    width = max(16, int(-(-int(sizes.max()) // 16) * 16))
    if all(b is not None and np.asarray(b).nbytes == width for b in bufs):
        data = np.stack([np.asarray(b).reshape(-1).view(np.uint8) for b in bufs])
    else:
        data = np.zeros((len(bufs), width), np.uint8)
        for r, b in enumerate(bufs):
            if b is not None:
                raw = np.asarray(b).reshape(-1).view(np.uint8)
                data[r, : raw.size] = raw
    return LaneConstants(data, lane_row, sizes)


def _const_words(buf: Any, t: type) -> np.ndarray | None:
    if buf is None:
        return None
    b = np.asarray(buf)
    if b.dtype != np.uint8:
        b = b.reshape(-1).view(np.uint8)
    if b.size % 16:
        padded = np.zeros((b.size + 15) // 16 * 16, np.uint8)
        padded[: b.size] = b
        b = padded
    return b.view(t).reshape(-1, 4)


def const_vec(buf: Any, index: int) -> tuple[Any, Any, Any, Any]:
    """A direct CONST[b][index] read: four float32 scalars (0 beyond the buffer),
    or four per-lane arrays for a :class:`LaneConstants` buffer."""
    if type(buf) is LaneConstants:
        words = buf.words(F32)
        if not 0 <= index < words.shape[1]:
            z = F32(0.0)
            return z, z, z, z
        # (4, R) -> (4, lanes): each channel one contiguous row
        g = np.ascontiguousarray(words[:, index, :].T).take(buf.rows, axis=1)
        return g[0], g[1], g[2], g[3]
    words = _const_words(buf, F32)
    if words is None or not 0 <= index < words.shape[0]:
        z = F32(0.0)
        return z, z, z, z
    v = words[index]
    return v[0], v[1], v[2], v[3]


def const_read(buf: Any, idx: Any, chan: int, t: type) -> Any:
    """Per-lane CONST[b][idx] channel; out-of-range vectors read 0 (as tgsi_exec)."""
    if type(buf) is LaneConstants:
        words = buf.words(t)
        count = words.shape[1]
        idx = np.broadcast_to(np.asarray(idx, np.int64), buf.rows.shape)
        valid = (idx >= 0) & (idx < count)
        return np.where(valid, words[buf.rows, np.where(valid, idx, 0), chan], t(0))
    words = _const_words(buf, t)
    if words is None:
        return t(0)
    count = words.shape[0]
    if np.ndim(idx) == 0:
        i = int(idx)
        return words[i, chan] if 0 <= i < count else t(0)
    idx = np.asarray(idx, np.int64)
    valid = (idx >= 0) & (idx < count)
    return np.where(valid, words[np.where(valid, idx, 0), chan], t(0))


def const_read2(consts: list[Any], bidx: Any, idx: Any, chan: int, t: type, n: int) -> Any:
    """CONST[bidx][idx] with a per-lane buffer index (uniform block arrays)."""
    if np.ndim(bidx) == 0:
        b = int(bidx)
        return const_read(consts[b] if 0 <= b < len(consts) else None, idx, chan, t)
    bidx = np.asarray(bidx, np.int64)
    out = np.zeros(n, t)
    for b in np.unique(bidx):
        sel = bidx == b
        buf = consts[int(b)] if 0 <= b < len(consts) else None
        out = np.where(sel, const_read(buf, idx, chan, t), out)
    return out


# ----------------------------------------------------------------------------
# Texture and memory calls
# ----------------------------------------------------------------------------


def sample_info(values: dict[str, Any]) -> list[Any]:
    """SAMPLE_INFO of the render target: (samples when the fragment shader
    runs per sample, else 1; 0, 0, 0) as integer bits."""
    info = values.get("__SAMPLE_INFO__")
    count = int(info[0]) if info is not None and info[1] else 1
    zero = np.array(0, I32).view(F32)
    return [np.array(count, I32).view(F32), zero, zero, zero]


def sample_pos(values: dict[str, Any], index: Any, n: int) -> list[Any]:
    """SAMPLE_POS of the render target: the position of sample ``index``
    (clamped to the samples) when shading per sample, else (0.5, 0.5)."""
    info = values.get("__SAMPLE_INFO__")
    table = values.get("__SAMPLE_POSITIONS__")
    if info is None or not info[1] or table is None:
        return [F32(0.5), F32(0.5), F32(0.0), F32(0.0)]
    idx = np.clip(np.asarray(index, np.int64), 0, len(table) - 1)
    return [table[idx, 0], table[idx, 1], F32(0.0), F32(0.0)]


def fbfetch(values: dict[str, Any], index: int, n: int) -> list[Any]:
    """FBFETCH of colour buffer ``index``: what the rasterizer's
    ``__FBFETCH__`` callback reads (four float32-viewed channels), or
    (0, 0, 0, 0) where nothing answers it (no such buffer)."""
    fetch = values.get("__FBFETCH__")
    out = None if fetch is None else fetch(index)
    if out is None:
        return [F32(0.0)] * 4
    return out


def chan_bits(x: Any) -> Any:
    """One result channel of a texture / memory call as float32-viewed 32-bit word."""
    if isinstance(x, np.ndarray | np.generic):
        dt = x.dtype
        if dt == F32:
            return x
        if dt in (I32, U32):
            return x.view(F32)
        if dt.kind == "f":
            return x.astype(F32)
        if dt.kind in "iub":
            return x.astype(I64).astype(U32).view(F32)
        raise ShaderRuntimeError(f"texture/memory result channel has dtype {dt}")
    if isinstance(x, bool | int):
        return np.array(int(x) & 0xFFFFFFFF, U32).view(F32)[()]
    if isinstance(x, float):
        return F32(x)
    raise ShaderRuntimeError(f"texture/memory result channel of type {type(x).__name__}")


def bindless_unit(textures: Any, lo: Any, hi: Any) -> Any:
    """The texture unit of bindless handles (low and high words, per lane or
    uniform) in the stage's bindings: -1 where no resident handle (or bound
    slot, for SAMP2HND's) answers -- those lanes sample (0, 0, 0, 0)."""
    if textures is None:
        return np.int64(-1)
    return textures.bindless_unit(lo, hi)


def bindless_image_unit(memory: Any, lo: Any, hi: Any) -> Any:
    """bindless_unit for image handles in the grid's memory bindings (-1: no
    image: loads read 0, stores are dropped)."""
    if memory is None or not hasattr(memory, "bindless_unit"):
        return np.int64(-1)
    return memory.bindless_unit(lo, hi)


def unbound_view_result(n: int) -> list[Any]:
    """What every texture operation on a sampler view slot with nothing bound
    reads: zero in all four channels (llvmpipe returns zero for an unbound
    view, as D3D10 mandates; sizes and sample counts too)."""
    return [np.zeros(int(n), F32) for _ in range(4)]


def tex_exec(textures: Any, req: Any, unit: Any, sampler: Any, mask: Any) -> list[Any]:
    """Run a TexRequest; per-lane ``unit``/``sampler`` arrays split the request.
    A negative unit (a bindless handle nothing answers) samples zeros."""
    if np.ndim(unit) == 0 and int(unit) < 0:
        return [np.zeros(req.n, F32) for _ in range(4)]
    if textures is None:  # no texture units at all: as an unbound view
        return unbound_view_result(req.n)
    if np.ndim(unit) == 0 and np.ndim(sampler) == 0:
        if int(unit) < 0:
            return [np.zeros(req.n, F32) for _ in range(4)]
        req.unit, req.sampler = int(unit), int(sampler)
        return [chan_bits(c) for c in textures.execute(req)]
    n = req.n
    u = np.broadcast_to(np.asarray(unit, np.int64), (n,))
    s = np.broadcast_to(np.asarray(sampler, np.int64), (n,))
    live = np.broadcast_to(mask, (n,)) if mask is not None else np.ones(n, bool)
    live = live & (u >= 0) & (s >= 0)
    pairs = np.unique(np.stack([u[live], s[live]]), axis=1) if live.any() else np.zeros((2, 0))
    out = [np.zeros(n, F32) for _ in range(4)]
    for uu, ss in pairs.T:
        sub = dataclasses.replace(req, unit=int(uu), sampler=int(ss))
        res = [chan_bits(c) for c in textures.execute(sub)]
        sel = (u == uu) & (s == ss)
        out = [np.where(sel, r, o) for r, o in zip(res, out)]
    return out


def mem_exec(memory: Any, req: Any) -> list[Any] | None:
    if memory is None:
        raise ShaderRuntimeError(
            f"the shader uses memory opcode '{req.op}' on {req.file} but ExecEnv.memory is not set"
        )
    res = memory.execute(req)
    if res is None:
        return None
    return [chan_bits(c) for c in res]


def side_effect_mask(active: Any, kill: Any, helper: Any, n: int) -> np.ndarray:
    """Lanes whose stores and atomics land: active, not killed, not helpers."""
    m = np.broadcast_to(np.asarray(active, bool), (n,))
    if kill is not None:
        m = m & ~np.broadcast_to(kill, (n,))
    if helper is not None:
        m = m & ~np.broadcast_to(np.asarray(helper, bool), (n,))
    return np.array(m)


def unsupported(message: str) -> None:
    raise UnsupportedError(message)


# ----------------------------------------------------------------------------
# Derivatives on 2x2 quads
# ----------------------------------------------------------------------------


def _quad(x: Any, quad_shape: tuple[int, int] | None) -> np.ndarray | None:
    if quad_shape is None or np.ndim(x) == 0:
        return None
    a, b = quad_shape
    return np.asarray(x).reshape(a, 2, b, 2)


def ddx(x: Any, quad_shape: tuple[int, int] | None, fine: bool) -> Any:
    """d/dx over 2x2 quads laid out as ``(A, 2, B, 2)`` = [quad row, y, quad column, x].

    Coarse (DDX) takes the difference of the quad's second row (y = 1, the
    larger row index) for all four pixels, as tgsi_exec's micro_ddx
    (TILE_BOTTOM_RIGHT - TILE_BOTTOM_LEFT); fine (DDX_FINE) uses each row's
    own difference.  Uniform values and non-fragment kernels give 0.
    """
    q = _quad(x, quad_shape)
    if q is None:
        return F32(0.0) if np.ndim(x) == 0 else np.zeros_like(x)
    if fine:
        d = q[:, :, :, 1] - q[:, :, :, 0]
        out = np.broadcast_to(d[:, :, :, None], q.shape)
    else:
        d = q[:, 1, :, 1] - q[:, 1, :, 0]
        out = np.broadcast_to(d[:, None, :, None], q.shape)
    return np.ascontiguousarray(out).reshape(-1)


def ddy(x: Any, quad_shape: tuple[int, int] | None, fine: bool) -> Any:
    """d/dy over 2x2 quads: coarse uses the left column for all four pixels
    (tgsi_exec: TILE_BOTTOM_LEFT - TILE_TOP_LEFT); fine each column's own."""
    q = _quad(x, quad_shape)
    if q is None:
        return F32(0.0) if np.ndim(x) == 0 else np.zeros_like(x)
    if fine:
        d = q[:, 1, :, :] - q[:, 0, :, :]
        out = np.broadcast_to(d[:, None, :, :], q.shape)
    else:
        d = q[:, 1, :, 0] - q[:, 0, :, 0]
        out = np.broadcast_to(d[:, None, :, None], q.shape)
    return np.ascontiguousarray(out).reshape(-1)


def const_buf(consts: list[Any], b: int) -> Any:
    return consts[b] if 0 <= b < len(consts) else None


def load_const_bytes(buf: Any, off: Any, writemask: int, active: Any, n: int) -> list[Any]:
    """LOAD from a constant buffer (bytes at per-lane offsets), bounds as a BUFFER LOAD."""
    from .memory_api import load_words

    if buf is None:
        return [np.zeros(n, U32)] * 4
    offs = np.broadcast_to(np.asarray(off, U32), (n,)).astype(np.int64)
    mask = np.broadcast_to(np.asarray(active, bool), (n,))
    if type(buf) is LaneConstants:
        # each lane in its own row, against its own buffer's size
        row = buf.data.shape[1]
        sizes = buf.sizes[buf.rows]
        mask = mask & (offs <= sizes - 4 * max(writemask.bit_length(), 1))
        words = load_words(buf.data.reshape(-1), offs, mask, writemask, buf.rows * row, row)
        return [c.view(F32) for c in words]
    b = np.asarray(buf)
    b = b.reshape(-1).view(np.uint8) if b.dtype != np.uint8 else b.reshape(-1)
    return [c.view(F32) for c in load_words(b, offs, mask, writemask)]


def vertex_gather(vertices: Any, vidx: Any, iidx: Any, chan: int, n: int) -> Any:
    """IN[vidx][iidx] with per-lane vertex and/or register indices (0 out of range)."""
    v = np.broadcast_to(np.asarray(vidx, np.int64), (n,))
    i = np.broadcast_to(np.asarray(iidx, np.int64), (n,))
    out = np.zeros(n, F32)
    for vv in np.unique(v):
        for ii in np.unique(i[v == vv]):
            sel = (v == vv) & (i == ii)
            val = read_vertex_input(vertices, int(vv), int(ii), chan) if ii >= 0 else F32(0)
            out = np.where(sel, as_view(val, F32), out)
    return out


class TcsOutputs:
    """The outputs of a tessellation control kernel, shared by the invocations
    of each patch: lane k is invocation ``k % vertices`` of patch ``k //
    vertices``.  ``vertex[reg, chan, patch * vertices + v]`` is output vertex
    v's register, ``patch[reg, chan, patch]`` a per-patch output (float32
    bits).  Every invocation runs each instruction before the next one runs
    (the kernel is lock-step over its lanes), so a value written before a
    BARRIER is there for every invocation after it."""

    def __init__(self, patches: int, vertices: int, registers: int) -> None:
        self.vertices = vertices
        self.registers = registers
        self.vertex = np.zeros((registers, 4, patches * vertices), F32)
        self.patch = np.zeros((registers, 4, patches), F32)
        self.lane_patch = np.repeat(np.arange(patches, dtype=np.int64), vertices)

    def _where(self, vidx: Any, iidx: Any, n: int) -> tuple:
        v = np.broadcast_to(np.asarray(vidx, np.int64), (n,))
        i = np.broadcast_to(np.asarray(iidx, np.int64), (n,))
        per_patch = v < 0
        ok = (i >= 0) & (i < self.registers) & (per_patch | (v < self.vertices))
        col = np.where(per_patch, self.lane_patch, self.lane_patch * self.vertices + v)
        return per_patch, ok, np.where(ok, i, 0), np.where(ok, col, 0)


def tcs_load(t: TcsOutputs, vidx: Any, iidx: Any, chan: int, n: int) -> np.ndarray:
    """OUT[vidx][iidx] (vidx -1: the per-patch OUT[iidx]) for each lane's
    patch; 0 outside the outputs."""
    per_patch, ok, i, col = t._where(vidx, iidx, n)
    vals = np.where(per_patch, t.patch[i, chan, np.minimum(col, t.patch.shape[2] - 1)], 0)
    vals = np.where(per_patch, vals, t.vertex[i, chan, np.minimum(col, t.vertex.shape[2] - 1)])
    return np.where(ok, vals, F32(0)).astype(F32, copy=False)


def tcs_store(t: TcsOutputs, vidx: Any, iidx: Any, chan: int, value: Any, mask: Any) -> None:
    """Write OUT[vidx][iidx] of each active lane's patch (writes outside the
    outputs are dropped; of lanes writing one place in one instruction, the
    last lane's value stays)."""
    n = t.lane_patch.size
    per_patch, ok, i, col = t._where(vidx, iidx, n)
    if mask is not None:
        ok = ok & np.broadcast_to(mask, (n,))
    vals = np.broadcast_to(
        np.asarray(value).view(F32) if np.ndim(value) else np.asarray(value, F32), (n,)
    )
    sel = ok & per_patch
    if sel.any():
        t.patch[i[sel], chan, col[sel]] = vals[sel]
    sel = ok & ~per_patch
    if sel.any():
        t.vertex[i[sel], chan, col[sel]] = vals[sel]

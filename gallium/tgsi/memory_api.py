"""The interface between shader kernels and shader-writable memory.

The TGSI compiler decodes LOAD, STORE, the ATOM* opcodes and RESQ on the
BUFFER, MEMORY and IMAGE register files into a :class:`MemoryRequest` and
hands it to ``ExecEnv.memory.execute(request)``: the kernel knows operand
layouts, the memory object knows storage, formats and bounds.  The driver
binds real shader buffers and images behind this interface; the tests use
:class:`ReferenceMemory`, a small implementation over numpy byte arrays that
also documents the exact semantics every implementation must keep:

* ``mask`` is the set of lanes taking part: lanes that are executing, not
  killed and not helper invocations.  A lane outside the mask never writes and
  reads zero.
* Lanes act in lane order.  When several lanes store to the same bytes the
  highest lane wins; atomics apply one lane after another in ascending lane
  order, each returning the value it found (so ``ATOMUADD`` of 1 from lanes
  0..3 on one counter returns 0, 1, 2, 3 and leaves 4).
* BUFFER / MEMORY addresses are byte offsets (``offset``).  A LOAD whose
  words do not all fit in the buffer reads zeros; a STORE writes only the
  words that fit; an atomic on a word that does not fit does nothing and
  returns 0 (Mesa's tgsi_exec bounds rules).
* Values travel as raw 32-bit words (``uint32`` arrays).  Results come back
  the same way, four channels per lane (an atomic returns its old value in
  all four).

BARRIER and MEMBAR need no call: a kernel runs every invocation of a block at
once, instruction by instruction, so all memory operations before a barrier
have completed for every lane before any operation after it starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..pipe.errors import PipeValueError, UnsupportedError

U32, I32, F32 = np.uint32, np.int32, np.float32

ATOMIC_OPS = (
    "UADD",
    "XCHG",
    "CAS",
    "AND",
    "OR",
    "XOR",
    "UMIN",
    "UMAX",
    "IMIN",
    "IMAX",
    "FADD",
    "INC_WRAP",
    "DEC_WRAP",
)

# Image coordinate count by target (x, y, z); MSAA sample indices travel apart.
IMAGE_COORDS = {
    "BUFFER": 1,
    "1D": 1,
    "2D": 2,
    "RECT": 2,
    "1D_ARRAY": 2,
    "2D_MSAA": 2,
    "3D": 3,
    "CUBE": 3,
    "2D_ARRAY": 3,
    "2D_ARRAY_MSAA": 3,
    "CUBEARRAY": 3,
}


@dataclass
class MemoryRequest:
    """One memory operation for ``n`` lanes.

    ``op`` is ``"load"``, ``"store"``, ``"atomic"`` or ``"size"`` (RESQ);
    ``file`` is ``"BUFFER"``, ``"MEMORY"`` or ``"IMAGE"``; ``unit`` is the
    register index (an int, or an int array per lane for indirect access).
    ``offset`` (BUFFER, MEMORY) is a per-lane byte offset; ``coords`` (IMAGE)
    are per-lane int32 x, y, z and ``sample`` the MSAA sample index.
    ``values`` holds the four channels to store, or the atomic operand in
    ``values[0]``; ``compare`` is ATOMCAS's comparison value.  ``writemask``
    says which channels a STORE writes and how many a LOAD reads.  ``atomic``
    names the operation (one of :data:`ATOMIC_OPS`).  ``target`` and
    ``format`` are the image target and ``PIPE_FORMAT_*`` name the
    instruction (or the IMAGE declaration) gave.
    """

    op: str
    file: str
    unit: Any
    n: int
    mask: np.ndarray
    offset: Any = None
    coords: tuple[Any, ...] | None = None
    sample: Any = None
    target: str | None = None
    format: str | None = None
    values: list[Any] | None = None
    compare: Any = None
    writemask: int = 0xF
    atomic: str | None = None


class MemoryUnits(Protocol):
    """What ``ExecEnv.memory`` must provide."""

    def execute(self, req: MemoryRequest) -> list[Any] | None:
        """Perform ``req``; loads, atomics and sizes return four channels."""
        ...


def execute_by_unit(req: MemoryRequest, run: Any) -> list[Any] | None:
    """Perform ``req`` with ``run(req, unit, mask)`` once per register it
    addresses (per-lane ``unit`` arrays split it), merging the results."""
    n = req.n
    mask = np.broadcast_to(np.asarray(req.mask, bool), (n,))
    if np.ndim(req.unit) == 0:
        return run(req, int(req.unit), mask)
    units = np.broadcast_to(np.asarray(req.unit, np.int64), (n,))
    out: list[Any] | None = None
    for u in np.unique(units[mask]):
        sel = units == u
        part = run(req, int(u), mask & sel)
        if part is None:
            continue
        if out is None:
            out = [np.zeros(n, U32) for _ in range(4)]
        out = [np.where(sel, p, o) for p, o in zip(part, out)]
    if out is None and req.op != "store":
        out = [np.zeros(n, U32) for _ in range(4)]
    return out


# ----------------------------------------------------------------------------
# Reference implementation
# ----------------------------------------------------------------------------


@dataclass
class ReferenceImage:
    """An image as 32-bit words: ``data`` is (depth or layers, height, width, channels).

    ``kind`` says how a channel the data lacks reads: 0, and 1 for alpha, as
    a float (``"float"``) or an integer (``"uint"``/``"sint"``).
    """

    data: np.ndarray
    kind: str = "float"


@dataclass
class ReferenceMemory:
    """:class:`MemoryUnits` over numpy arrays, for tests and as the reference.

    ``buffers[i]`` backs ``BUFFER[i]``, ``memory[i]`` backs ``MEMORY[i]``
    (both ``uint8`` arrays, changed in place) and ``images[i]`` backs
    ``IMAGE[i]``.
    """

    buffers: dict[int, np.ndarray] = field(default_factory=dict)
    memory: dict[int, np.ndarray] = field(default_factory=dict)
    images: dict[int, ReferenceImage] = field(default_factory=dict)

    def execute(self, req: MemoryRequest) -> list[Any] | None:
        return execute_by_unit(req, self._execute_unit)

    def _execute_unit(self, req: MemoryRequest, unit: int, mask: np.ndarray) -> list[Any] | None:
        if req.file in ("BUFFER", "MEMORY"):
            table = self.buffers if req.file == "BUFFER" else self.memory
            if unit not in table:
                raise PipeValueError(f"{req.file}[{unit}] is not bound to the reference memory")
            buf = table[unit]
            if buf.dtype != np.uint8 or buf.ndim != 1:
                raise PipeValueError(f"{req.file}[{unit}] must be a 1-D uint8 array")
            if req.op == "size":
                z = U32(0)
                return [U32(buf.size), z, z, z]
            off = np.broadcast_to(np.asarray(req.offset, U32), (req.n,)).astype(np.int64)
            if req.op == "load":
                return load_words(buf, off, mask, req.writemask)
            if req.op == "store":
                store_words(buf, off, mask, req.writemask, req.values or [])
                return None
            if req.op == "atomic":
                old = atomic_words(buf, off, mask, req)
                return [old, old, old, old]
        elif req.file == "IMAGE":
            if unit not in self.images:
                raise PipeValueError(f"IMAGE[{unit}] is not bound to the reference memory")
            return _image_op(self.images[unit], req, mask)
        raise UnsupportedError(f"memory op {req.op} on file {req.file}")


def load_words(
    buf: np.ndarray,
    off: np.ndarray,
    mask: np.ndarray,
    writemask: int,
    base: np.ndarray | None = None,
    size: int | None = None,
) -> list:
    """LOAD from a byte buffer: the words up to the last written channel, or zeros
    for a lane whose words do not all fit (and for lanes outside ``mask``).

    With ``base`` and ``size`` each lane addresses its own region of ``buf``
    (bytes ``base[lane]`` to ``base[lane] + size``; compute shared and private
    memory): offsets are checked against ``size`` and land at ``base + off``.
    """
    n = off.size
    nwords = max(writemask.bit_length(), 1)
    if size is None:
        size = buf.size
    limit = size - 4 * nwords
    if limit < 0:
        return [np.zeros(n, U32) for _ in range(4)]
    ok = mask & (off <= limit)
    full = bool(ok.all())
    if not full and not ok.any():
        return [np.zeros(n, U32) for _ in range(4)]
    # every index below is in range: ok lanes by the test, the others read offset 0
    safe = off if full else np.where(ok, off, 0)
    if base is not None:
        safe = safe + base
    if not (safe & 3).any():  # word-aligned: gather words, not bytes
        w = safe >> 2
        words = word_view(buf)
        if nwords == 1 and full:  # the common scalar LOAD: one gather
            return [words[w].astype(U32, copy=False)] + [np.zeros(n, U32) for _ in range(3)]
        raw = words[w][:, None] if nwords == 1 else words[w[:, None] + np.arange(nwords)]
    else:
        idx = safe[:, None] + np.arange(4 * nwords)[None, :]
        raw = np.ascontiguousarray(buf[idx]).view("<u4")
    out = []
    for c in range(4):
        if c >= nwords:
            out.append(np.zeros(n, U32))
        elif full:
            out.append(np.ascontiguousarray(raw[:, c], U32))
        else:
            out.append(np.where(ok, raw[:, c], U32(0)).astype(U32))
    return out


def store_words(buf, off, mask, writemask: int, values: list, base=None, size=None) -> None:
    """STORE to a byte buffer: each written channel's word where it fits, the
    highest lane winning every byte; ``base`` and ``size`` as for :func:`load_words`."""
    n = off.size
    if size is None:
        size = buf.size
    at = off if base is None else off + base
    if _store_aligned(buf, off, at, mask, writemask, values, size):
        return
    pos_list = []
    for c in range(4):
        if not writemask >> c & 1:
            continue
        fits = mask & (off + 4 * c + 4 <= size)
        lanes_c = np.nonzero(fits)[0]
        if lanes_c.size == 0:
            continue
        word = np.broadcast_to(to_words(values[c]), (n,))
        b = np.ascontiguousarray(word[lanes_c].astype("<u4")).view(np.uint8).reshape(-1, 4)
        pos = at[lanes_c][:, None] + 4 * c + np.arange(4)[None, :]
        pos_list.append((lanes_c, pos, b))
    if not pos_list:
        return
    lane_all = np.concatenate([np.repeat(lc, 4) for lc, _, _ in pos_list])
    pos_all = np.concatenate([p.reshape(-1) for _, p, _ in pos_list])
    byte_all = np.concatenate([b.reshape(-1) for _, _, b in pos_list])
    order = np.argsort(lane_all, kind="stable")
    pos_all, byte_all = pos_all[order], byte_all[order]
    # Keep the last write of every byte (the highest lane).
    rev_pos = pos_all[::-1]
    _, first_in_rev = np.unique(rev_pos, return_index=True)
    keep = pos_all.size - 1 - first_in_rev
    buf[pos_all[keep]] = byte_all[keep]


def word_view(buf: np.ndarray) -> np.ndarray:
    """``buf`` (1-D uint8) as little-endian words, its tail bytes left out."""
    return buf[: buf.size - buf.size % 4].view("<u4")


def _store_aligned(buf, off, at, mask, writemask: int, values: list, size: int) -> bool:
    """:func:`store_words` for the common case, word by word: every lane in
    ``mask`` writes all its channels in bounds, at word-aligned addresses
    that rise strictly in lane order (so no two stores meet and the
    highest-lane rule cannot matter).  Returns False, doing nothing, otherwise."""
    chans = [c for c in range(4) if writemask >> c & 1]
    if not chans:
        return True
    every = bool(mask.all())
    lanes = slice(None) if every else np.flatnonzero(mask)
    a = at[lanes]
    if a.size == 0:
        return True
    top = 4 * chans[-1] + 4
    if int(off[lanes].max()) > size - top or (a & 3).any():
        return False
    w = a >> 2
    if len(chans) == 1:
        flat = w + chans[0] if chans[0] else w
    else:
        flat = (w[:, None] + np.asarray(chans)[None, :]).reshape(-1)
    if flat.size > 1 and not (flat[1:] > flat[:-1]).all():
        return False
    cols = [np.broadcast_to(to_words(values[c]), (off.size,))[lanes] for c in chans]
    word_view(buf)[flat] = cols[0] if len(cols) == 1 else np.stack(cols, 1).reshape(-1)
    return True


def _read_word(buf: np.ndarray, addr: np.ndarray) -> np.ndarray:
    idx = addr[:, None] + np.arange(4)[None, :]
    return np.ascontiguousarray(buf[idx]).view("<u4").reshape(-1).astype(U32)


def _write_word(buf: np.ndarray, addr: np.ndarray, value: np.ndarray) -> None:
    b = np.ascontiguousarray(value.astype("<u4")).view(np.uint8).reshape(-1, 4)
    buf[addr[:, None] + np.arange(4)[None, :]] = b


_ASSOC = {
    "UADD": lambda a, b: (a + b).astype(U32),
    "AND": lambda a, b: a & b,
    "OR": lambda a, b: a | b,
    "XOR": lambda a, b: a ^ b,
    "UMIN": np.minimum,
    "UMAX": np.maximum,
    "IMIN": lambda a, b: np.minimum(a.view(I32), b.view(I32)).view(U32),
    "IMAX": lambda a, b: np.maximum(a.view(I32), b.view(I32)).view(U32),
}


def _atomic_step(op: str, old: np.ndarray, v: np.ndarray, cmp: np.ndarray) -> np.ndarray:
    if op in _ASSOC:
        return _ASSOC[op](old, v)
    if op == "XCHG":
        return v
    if op == "CAS":
        return np.where(old == cmp, v, old)
    if op == "FADD":
        return (old.view(F32) + v.view(F32)).astype(F32).view(U32)
    if op == "INC_WRAP":
        return np.where(old >= v, U32(0), old + U32(1))
    if op == "DEC_WRAP":
        return np.where((old == 0) | (old > v), v, old - U32(1))
    raise UnsupportedError(f"atomic operation {op}")


def _seg_scan(x: np.ndarray, seg: np.ndarray, op) -> np.ndarray:
    """Inclusive scan of ``x`` with ``op`` restarting at every new ``seg`` value."""
    x = x.copy()
    m = x.size
    d = 1
    while d < m:
        same = np.zeros(m, bool)
        same[d:] = seg[d:] == seg[:-d]
        prev = np.concatenate([x[:d], x[:-d]])
        x = np.where(same, op(prev, x), x)
        d *= 2
    return x


def atomic_words(
    buf: np.ndarray,
    off: np.ndarray,
    mask: np.ndarray,
    req: MemoryRequest,
    base: np.ndarray | None = None,
    size: int | None = None,
):
    """Apply ``req``'s atomic lane after lane (ascending) and return each lane's
    old word; ``base`` and ``size`` as for :func:`load_words`."""
    n = off.size
    op = req.atomic or ""
    if op not in ATOMIC_OPS:
        raise UnsupportedError(f"atomic operation {op!r}")
    if size is None:
        size = buf.size
    old_out = np.zeros(n, U32)
    ok = mask & (size >= 4) & (off <= size - 4)
    lanes = np.nonzero(ok)[0]
    if lanes.size == 0:
        return old_out
    vals = np.broadcast_to(to_words(req.values[0] if req.values else 0), (n,))[lanes]
    cmps = np.broadcast_to(to_words(req.compare if req.compare is not None else 0), (n,))[lanes]
    addr = off[lanes] if base is None else off[lanes] + base[lanes]
    order = np.argsort(addr, kind="stable")  # groups by address, lane order inside
    addr_s, vals_s, cmps_s = addr[order], vals[order], cmps[order]
    starts = np.ones(addr_s.size, bool)
    starts[1:] = addr_s[1:] != addr_s[:-1]
    group = np.cumsum(starts) - 1
    first = np.nonzero(starts)[0]
    init = _read_word(buf, addr_s[first])
    init_lane = init[group]
    if op in _ASSOC:
        incl = _seg_scan(vals_s, group, _ASSOC[op])
        prev = np.concatenate([incl[:1], incl[:-1]])
        old_s = np.where(starts, init_lane, _ASSOC[op](init_lane, prev))
        last = np.append(first[1:] - 1, addr_s.size - 1)
        final = _ASSOC[op](init, incl[last])
    elif op == "XCHG":
        prev = np.concatenate([vals_s[:1], vals_s[:-1]])
        old_s = np.where(starts, init_lane, prev)
        last = np.append(first[1:] - 1, addr_s.size - 1)
        final = vals_s[last]
    else:
        # Order-dependent and not associative: one rank of every group at a time.
        rank = np.arange(addr_s.size) - first[group]
        cur = init.copy()
        old_s = np.zeros(addr_s.size, U32)
        for r in range(int(rank.max()) + 1):
            sel = np.nonzero(rank == r)[0]
            g = group[sel]
            o = cur[g]
            old_s[sel] = o
            cur[g] = _atomic_step(op, o, vals_s[sel], cmps_s[sel])
        final = cur
    _write_word(buf, addr_s[first], np.asarray(final, U32))
    old = np.empty(lanes.size, U32)
    old[order] = old_s
    old_out[lanes] = old
    return old_out


def to_words(x: Any) -> np.ndarray:
    """A store or atomic operand as uint32 words (32-bit values by their bits)."""
    a = np.asarray(x)
    if a.dtype in (np.float32, np.int32, np.uint32):
        return a.view(U32)
    return a.astype(np.int64).astype(U32)


def _image_op(img: ReferenceImage, req: MemoryRequest, mask: np.ndarray) -> list | None:
    data = img.data
    if data.ndim != 4 or data.dtype.itemsize != 4:
        raise PipeValueError("ReferenceImage.data must be (depth, height, width, channels) 32-bit")
    depth, height, width, nch = data.shape
    words = data.view(U32)
    n = req.n
    if req.op == "size":
        target = req.target or "2D"
        dims = {1: [width], 2: [width, height], 3: [width, height, depth]}
        if target == "1D_ARRAY":
            vals = [width, depth]
        else:
            vals = dims[IMAGE_COORDS.get(target, 2)]
        vals = vals + [0] * (4 - len(vals))
        return [U32(v) for v in vals]
    coords = list(req.coords or ())
    coords += [0] * (3 - len(coords))
    x, y, z = (np.broadcast_to(np.asarray(c, np.int64), (n,)) for c in coords)
    if (req.target or "") == "1D_ARRAY":
        y, z = np.zeros(n, np.int64), y
    sample = np.broadcast_to(np.asarray(0 if req.sample is None else req.sample, np.int64), (n,))
    ok = (
        mask
        & (x >= 0)
        & (x < width)
        & (y >= 0)
        & (y < height)
        & (z >= 0)
        & (z < depth)
        & (sample == 0)
    )
    xs, ys, zs = (np.where(ok, c, 0) for c in (x, y, z))
    if req.op == "load":
        one = F32(1.0).view(U32) if img.kind == "float" else U32(1)
        out = []
        for c in range(4):
            if c < nch:
                v = words[zs, ys, xs, c]
            else:
                v = np.full(n, one if c == 3 else U32(0), U32)
            out.append(np.where(ok, v, U32(0)).astype(U32))
        return out
    if req.op == "store":
        sel = np.nonzero(ok)[0]
        for c in range(min(nch, 4)):
            if req.writemask >> c & 1 and req.values is not None:
                v = np.broadcast_to(to_words(req.values[c]), (n,))
                # Assign lane by lane in order so the highest lane wins.
                for lane in sel:
                    words[zs[lane], ys[lane], xs[lane], c] = v[lane]
        return None
    if req.op == "atomic":
        op = req.atomic or ""
        v = np.broadcast_to(to_words(req.values[0] if req.values else 0), (n,))
        cmp = np.broadcast_to(to_words(req.compare if req.compare is not None else 0), (n,))
        old = np.zeros(n, U32)
        for lane in np.nonzero(ok)[0]:
            cur = np.array([words[zs[lane], ys[lane], xs[lane], 0]], U32)
            old[lane] = cur[0]
            words[zs[lane], ys[lane], xs[lane], 0] = _atomic_step(
                op, cur, v[lane : lane + 1], cmp[lane : lane + 1]
            )[0]
        return [old, old, old, old]
    raise UnsupportedError(f"memory op {req.op} on images")

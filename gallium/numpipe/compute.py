"""Compute: ``launch_grid`` on the screen's worker pool.

Theory of operation
-------------------
A compute program is a COMP TGSI shader compiled like any other stage: one
call of its kernel runs many invocations at once, lane by lane, instruction
by instruction.  A call holds whole blocks (``block`` invocations each, in
linear order ``x + bx * (y + by * z)``), at most ``ComputeCSO.lanes``
(64k, or 256k for short programs) and at most 16 MiB of SHARED and PRIVATE
memory (``CALL_MEMORY``), but always at least one block, so

* BARRIER and MEMBAR need nothing: every invocation of a block is in the same
  call, and each instruction finishes for every lane before the next starts;
* SHARED memory (``req_local_mem`` bytes per block) is one zeroed byte array
  per call, each block addressing its own region; PRIVATE memory
  (``req_private_mem`` bytes per invocation) likewise per lane; INPUT memory
  is ``GridInfo.input`` (read-only); GLOBAL memory is the buffers of
  ``set_global_binding``: buffer k answers the 32-bit addresses from
  :func:`global_base` (k) on, a 64 MiB window each (address 0 and the
  windows of unbound slots hold nothing: loads read zero, stores and
  atomics are dropped), and the program finds the addresses where the
  application put the handles, in its INPUT memory;
* BUFFER[i] is the shader buffer bound at slot i of the compute stage (an
  unbound slot is a buffer of size 0: loads read zero, stores are dropped);
  the memory rules are those of :mod:`gallium.tgsi.memory_api` (lane order,
  bounds, atomics one lane after another); IMAGE[i] is the image view bound
  at slot i (:class:`ImageUnit`: texels through the view format's unpack and
  pack, atomics on R32 formats).

The calls of a grid are the units of one pool job, so the workers share them.
A unit's lanes depend on the grid only, never on the number of workers, so
the bytes a grid writes do not either -- with one exception the program
decides: atomics on buffers and images read and write words other blocks may
use, so a program with any runs its calls one after another, in block order
(the returned old values are then the same on every run).  Stores from
different blocks to the same bytes race as on any GPU (the program's bug, not
ours).

A grid may hold 65535^3 blocks: its calls are numbers the pool turns into
block ranges when a worker takes one (nothing per call is queued), and the
grid takes turns with the other jobs on the screen's pool one call at a time,
so other contexts' frames and grids run while a long grid does
(workers/pool.py).  A call that fails (a shader error) drops the rest of its
grid.

``launch_grid`` is synchronous on the thread that executes it (like
llvmpipe's): it submits the rendering recorded so far, the grid runs after
it, and the call returns when the grid is done, so every later call -- a
draw reading a written buffer, a map -- sees the results with no further
tracking.  Under a threaded context that thread is the driver thread, so
the application does not wait.  A shader error in a unit is kept and
reported like a draw's: at the next sync point, with the context reset.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..pipe import objects as contract
from ..pipe.checks import (  # noqa: F401  (the checks live in the contract)
    Grid,
    check_compute_cso,
    check_grid_info,
    check_shader_buffers,
    check_shader_images,
)
from ..pipe.enums import (
    PIPE_MAX_SHADER_BUFFERS,
    PIPE_MAX_SHADER_IMAGES,
    Format,
    ShaderIR,
)
from ..pipe.errors import (
    UnsupportedError,
    add_origin_note,
    bad_type,
    bad_value,
    check_int,
)
from ..pipe.fence import Fence
from ..pipe.state import ComputeState, ImageView, ShaderBuffer
from ..tgsi import NUMPIPE, ExecEnv, Kernel, Shader, compile_shader, parse
from ..tgsi.memory_api import (
    IMAGE_COORDS,
    MemoryRequest,
    atomic_words,
    execute_by_unit,
    load_words,
    store_words,
    to_words,
    word_view,
)
from ..tgsi.ops_tex import sampler_pairs
from ..tgsi.runtime import ShaderRuntimeError
from ..util.format import pack_rgba, try_describe, unpack_rgba

U32 = np.uint32
F32 = np.float32

# Invocations per kernel call (whole blocks; at least one block).  Short
# programs (saxpy-like, mostly memory traffic) take big calls: fewer calls hand
# the GIL between workers less often (saxpy over 1M invocations, two workers:
# 11 ms a grid with 128k-lane calls, 9 ms with 256k; one worker 13.5-15 ms
# either way).  Longer programs keep each temporary in cache, as the fragment
# kernel does (a 40-instruction shader ran 1.5-1.9x slower at 256k lanes).
COMPUTE_LANES = 1 << 16
COMPUTE_LANES_SHORT = 1 << 18
SHORT_PROGRAM = 16  # instructions
# SHARED and PRIVATE memory of one kernel call at most (whole blocks; at least
# one): one-invocation blocks with 32 KiB of SHARED memory each would otherwise
# ask for 2 GiB a call.
CALL_MEMORY = 16 << 20
MAX_GRID_SIZE = (65535, 65535, 65535)
MAX_BLOCK_SIZE = (1024, 1024, 64)
MAX_THREADS_PER_BLOCK = 1024
MAX_LOCAL_SIZE = 1 << 15  # bytes of SHARED memory per block
MAX_PRIVATE_SIZE = 1 << 12  # bytes of PRIVATE memory per invocation
MAX_INPUT_SIZE = 1 << 12  # bytes of INPUT memory
MAX_SHADER_BUFFERS = PIPE_MAX_SHADER_BUFFERS
MAX_SHADER_IMAGES = PIPE_MAX_SHADER_IMAGES

_SYSTEM_VALUES = ("THREAD_ID", "BLOCK_ID", "BLOCK_SIZE", "GRID_SIZE")
_ids = itertools.count(1)


# ----------------------------------------------------------------------------
# Programs
# ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ComputeCSO(contract.ComputeCSO):
    """A compiled compute program and what launching it needs to know."""

    shader: Shader
    kernel: Kernel
    local_size: int  # req_local_mem
    private_size: int  # req_private_mem
    input_size: int  # req_input_mem
    fixed_block: tuple[int, int, int] | None  # CS_FIXED_BLOCK_* when declared
    memory_types: dict[int, str]  # MEMORY[i] -> "GLOBAL" | "SHARED" | "PRIVATE" | "INPUT"
    # an ATOM* on a BUFFER, IMAGE or GLOBAL memory: the grid's calls run in order
    global_atomics: bool
    lanes: int  # invocations per kernel call at most (COMPUTE_LANES[_SHORT])
    id: int = field(default_factory=lambda: next(_ids))

    @cached_property
    def sampler_pairs(self) -> frozenset[tuple[int, int]]:
        return sampler_pairs(self.shader)


def _resource_file(inst: Any) -> str | None:
    """The register file an instruction's memory operand is in, if any."""
    op = inst.opcode
    if op == "STORE" and inst.dst:
        return inst.dst[0].reg.file
    if (op == "LOAD" or op.startswith("ATOM") or op == "RESQ") and inst.src:
        return inst.src[0].reg.file
    return None


def make_compute(state: Any) -> ComputeCSO:
    """Validate and compile a ``pipe.ComputeState``."""
    if not isinstance(state, ComputeState):
        raise bad_type("state", "a pipe.ComputeState", state)
    try:
        ir = ShaderIR(state.ir_type)
    except ValueError:
        raise bad_value("state.ir_type", "must be a pipe.ShaderIR", state.ir_type) from None
    if ir != ShaderIR.TGSI:
        raise UnsupportedError(f"compute programs in {ir.name} are not supported (TGSI only)")
    prog = state.prog
    if isinstance(prog, str):
        shader = parse(prog, NUMPIPE)  # a limit broken: at its line and column
    elif isinstance(prog, Shader):
        shader = prog
    elif prog is None:
        raise bad_value("state.prog", "must hold TGSI text or a parsed gallium.tgsi.Shader", None)
    else:
        raise bad_type("state.prog", "TGSI text (str) or a gallium.tgsi.Shader", prog)
    if shader.processor != "COMP":
        raise bad_value("state.prog", "must be a COMP program", shader.processor)
    local = check_int("state.req_local_mem", state.req_local_mem, 0, MAX_LOCAL_SIZE)
    private = check_int("state.req_private_mem", state.req_private_mem, 0, MAX_PRIVATE_SIZE)
    inp = check_int("state.req_input_mem", state.req_input_mem, 0, MAX_INPUT_SIZE)
    memory_types: dict[int, str] = {}
    for d in shader.declarations:
        if d.file == "SV" and d.semantic not in _SYSTEM_VALUES:
            raise bad_value(
                "state.prog",
                f"declares SV[{d.first}] as {d.semantic}; compute programs have "
                + ", ".join(_SYSTEM_VALUES),
                d.semantic,
            )
        if d.file == "MEMORY":
            kind = d.mem_type or "GLOBAL"
            if kind == "GLOBAL":  # (the buffers of set_global_binding, by address)
                for i in range(d.first, d.last + 1):
                    memory_types[i] = kind
                continue
            need = {"SHARED": ("req_local_mem", local), "PRIVATE": ("req_private_mem", private)}
            need["INPUT"] = ("req_input_mem", inp)
            name, size = need[kind]
            if size == 0:
                raise bad_value(
                    f"state.{name}",
                    f"must be > 0 (the size of the {kind} memory) for a program that "
                    f"declares MEMORY[{d.first}], {kind}",
                    0,
                )
            for i in range(d.first, d.last + 1):
                memory_types[i] = kind
    global_atomics = False
    for inst in shader.instructions:
        file = _resource_file(inst)
        if file is None:
            continue
        reg = inst.dst[0].reg if inst.opcode == "STORE" else inst.src[0].reg
        if inst.opcode.startswith("ATOM") and (
            file in ("BUFFER", "IMAGE")
            or (file == "MEMORY" and memory_types.get(reg.index) == "GLOBAL")
        ):
            global_atomics = True
        if file == "MEMORY" and reg.indirect is not None:
            raise UnsupportedError(
                f"{inst.opcode} indexes MEMORY indirectly; numpipe addresses MEMORY registers "
                "only directly (their index names the declared kind of memory)"
            )
        if file == "MEMORY" and reg.index not in memory_types:
            raise bad_value(
                "state.prog",
                f"uses MEMORY[{reg.index}] in {inst.opcode} but does not declare it",
                reg.index,
            )
        if file == "MEMORY" and (inst.opcode == "STORE" or inst.opcode.startswith("ATOM")):
            if memory_types[reg.index] == "INPUT":
                raise bad_value(
                    "state.prog",
                    f"writes MEMORY[{reg.index}], which is INPUT memory (read-only)",
                    inst.opcode,
                )
    fixed = tuple(
        int(shader.get_property(f"CS_FIXED_BLOCK_{d}", 0)) for d in ("WIDTH", "HEIGHT", "DEPTH")
    )
    if any(fixed):
        for d, v, hi in zip(("WIDTH", "HEIGHT", "DEPTH"), fixed, MAX_BLOCK_SIZE):
            if not 1 <= v <= hi:
                raise bad_value(
                    "state.prog",
                    f"declares CS_FIXED_BLOCK_{d} {v}; it must be in [1, {hi}] "
                    "(PIPE_COMPUTE_CAP_MAX_BLOCK_SIZE)",
                    v,
                )
        if fixed[0] * fixed[1] * fixed[2] > MAX_THREADS_PER_BLOCK:
            raise bad_value(
                "state.prog",
                f"declares a fixed block of {fixed[0] * fixed[1] * fixed[2]} invocations; "
                f"at most {MAX_THREADS_PER_BLOCK} (PIPE_COMPUTE_CAP_MAX_THREADS_PER_BLOCK)",
                fixed,
            )
    kernel = compile_shader(shader)
    return ComputeCSO(
        shader=shader,
        kernel=kernel,
        local_size=local,
        private_size=private,
        input_size=inp,
        fixed_block=fixed if any(fixed) else None,  # type: ignore[arg-type]
        memory_types=memory_types,
        global_atomics=global_atomics,
        lanes=COMPUTE_LANES_SHORT if len(shader.instructions) <= SHORT_PROGRAM else COMPUTE_LANES,
    )


# ----------------------------------------------------------------------------
# Memory
# ----------------------------------------------------------------------------

_EMPTY = np.zeros(0, np.uint8)


class ComputeMemory:
    """``ExecEnv.memory`` for one kernel call of a grid (see the module docstring)."""

    def __init__(
        self,
        cso: ComputeCSO,
        buffers: dict[int, np.ndarray],
        images: dict[int, ImageUnit],
        input_bytes: np.ndarray,
        n: int,
        threads: int,
        globals_: dict[int, np.ndarray] | None = None,
        image_handles: dict[int, int] | None = None,
    ) -> None:
        self.cso = cso
        self.buffers = buffers
        self.images = images
        self.globals = globals_ or {}
        # bindless: resident image handle -> its unit in ``images``
        self.image_handles = image_handles or {}
        self.input = input_bytes
        self.n = n
        self.threads = threads
        self._shared: np.ndarray | None = None
        self._private: np.ndarray | None = None
        # facts about the kernel's offset and mask arrays, computed once per call
        # (a program often uses one address for several LOADs and a STORE); the
        # entries keep the arrays alive, so an id is never reused meanwhile
        self._addresses: dict[int, _Address] = {}
        self._masks: dict[int, tuple[Any, bool]] = {}
        self._lanes: np.ndarray | None = None

    def _region(self, kind: str) -> tuple[np.ndarray, np.ndarray | None, int]:
        """(bytes, per-lane base or None, size) of a MEMORY kind."""
        cso, n = self.cso, self.n
        if self._lanes is None:
            self._lanes = np.arange(n, dtype=np.int64)
        lane = self._lanes
        if kind == "SHARED":
            if self._shared is None:
                self._shared = np.zeros((n // self.threads) * cso.local_size, np.uint8)
            return self._shared, (lane // self.threads) * cso.local_size, cso.local_size
        if kind == "PRIVATE":
            if self._private is None:
                self._private = np.zeros(n * cso.private_size, np.uint8)
            return self._private, lane * cso.private_size, cso.private_size
        return self.input, None, cso.input_size

    def execute(self, req: MemoryRequest) -> list[Any] | None:
        return execute_by_unit(req, self._unit)

    def bindless_unit(self, lo: Any, hi: Any) -> Any:
        """The image units of bindless image handles (words per lane or
        uniform): a resident handle's, a bound slot's for IMG2HND's, else -1
        (no image: loads read 0, stores are dropped)."""
        from ..tgsi.ops_tex import IMG_SLOT_TAG

        def unit(handle: int) -> int:
            if handle >> 32 == IMG_SLOT_TAG:
                return handle & 0xFFFFFFFF
            return self.image_handles.get(handle, -1)

        h = (np.asarray(hi, np.uint32).astype(np.uint64) << np.uint64(32)) | np.asarray(
            lo, np.uint32
        ).astype(np.uint64)
        if h.ndim == 0:
            return np.int64(unit(int(h)))
        uniq, inverse = np.unique(h, return_inverse=True)
        return np.array([unit(int(x)) for x in uniq], np.int64)[inverse]

    def _unit(self, req: MemoryRequest, unit: int, mask: np.ndarray) -> list[Any] | None:
        base = None
        if req.file == "BUFFER":
            buf, size = self.buffers.get(unit, _EMPTY), None
        elif req.file == "MEMORY":
            kind = self.cso.memory_types.get(unit)
            if kind is None:
                raise ShaderRuntimeError(f"MEMORY[{unit}] is used but not declared")
            if kind == "INPUT" and req.op in ("store", "atomic"):
                raise ShaderRuntimeError(f"MEMORY[{unit}] is INPUT memory (read-only)")
            if kind == "GLOBAL":
                return self._global(req, mask)
            buf, base, size = self._region(kind)
        elif req.file == "IMAGE":
            image = self.images.get(unit)
            if image is None:  # unbound: no texels (loads read 0, stores are dropped)
                if req.op == "store":
                    return None
                return [np.zeros(req.n, U32) for _ in range(4)]
            return image.execute(req, mask)
        else:
            raise UnsupportedError(f"memory operations on {req.file} in compute programs")
        if req.op == "size":
            z = U32(0)
            return [U32(buf.size if size is None else size), z, z, z]
        addr = self._address(req.offset)
        if base is None and addr.words is not None and self._all(req.mask):
            done, result = _buffer_fast(buf, addr, req)
            if done:
                return result
        off = addr.off
        if req.op == "load":
            return load_words(buf, off, mask, req.writemask, base, size)
        if req.op == "store":
            store_words(buf, off, mask, req.writemask, req.values or [], base, size)
            return None
        if req.op == "atomic":
            old = atomic_words(buf, off, mask, req, base, size)
            return [old, old, old, old]
        raise UnsupportedError(f"memory op {req.op}")

    def _global(self, req: MemoryRequest, mask: np.ndarray) -> list[Any] | None:
        """A GLOBAL access: each lane's address names a bound buffer's window
        (:func:`global_base`) and a byte in it; an address in no bound
        buffer's window, or past its end, loads zero and stores nothing."""
        n = req.n
        if req.op == "size":
            return [U32(0)] * 4
        addr = self._address(req.offset).off
        slot = (addr >> GLOBAL_SHIFT) - 1
        off = addr & (GLOBAL_WINDOW - 1)
        out: list[Any] | None = None if req.op == "store" else [np.zeros(n, U32)] * 4
        for s in np.unique(slot[mask]).tolist():
            buf = self.globals.get(s)
            if buf is None:
                continue
            sel = mask & (slot == s)
            if req.op == "store":
                store_words(buf, off, sel, req.writemask, req.values or [])
                continue
            if req.op == "load":
                part = load_words(buf, off, sel, req.writemask)
            elif req.op == "atomic":
                part = [atomic_words(buf, off, sel, req)] * 4
            else:
                raise UnsupportedError(f"memory op {req.op}")
            out = [np.where(sel, p, o) for p, o in zip(part, out)]  # type: ignore[arg-type]
        return out

    def _address(self, offset: Any) -> _Address:
        hit = self._addresses.get(id(offset))
        if hit is None or hit.source is not offset:
            hit = _Address(offset, self.n)
            self._addresses[id(offset)] = hit
        return hit

    def _all(self, mask: Any) -> bool:
        """Whether every lane takes part (``mask`` as the kernel passed it)."""
        if np.ndim(mask) == 0:
            return bool(mask)
        hit = self._masks.get(id(mask))
        if hit is None or hit[0] is not mask:
            hit = (mask, bool(np.all(mask)))
            self._masks[id(mask)] = hit
        return hit[1]


class _Address:
    """One offset operand: int64 offsets, their word indices when all are
    word-aligned, the largest, and (on first need) whether the words rise
    strictly in lane order."""

    __slots__ = ("_rising", "off", "source", "top", "words")

    def __init__(self, offset: Any, n: int) -> None:
        self.source = offset
        self.off = np.broadcast_to(np.asarray(offset, U32), (n,)).astype(np.int64)
        self.top = int(self.off.max()) if n else 0
        self.words = None if (self.off & 3).any() else self.off >> 2
        self._rising: bool | None = None

    @property
    def rising(self) -> bool:
        if self._rising is None:
            w = self.words
            self._rising = w is not None and bool((w[1:] > w[:-1]).all())
        return self._rising


def _buffer_fast(buf: np.ndarray, addr: _Address, req: MemoryRequest) -> tuple[bool, Any]:
    """A LOAD, or a one-channel STORE, on a buffer by every lane at word-aligned
    offsets all in bounds (and, storing, at rising words, so no two lanes meet):
    word gathers and one scatter, the same words the general path gives.
    Returns (False, None) when the request is not that case."""
    if req.op == "load":
        nw = max(req.writemask.bit_length(), 1)
        if addr.top > buf.size - 4 * nw:
            return False, None
        words = word_view(buf)
        w = addr.words
        out = [np.take(words, w + c if c else w).astype(U32, copy=False) for c in range(nw)]
        return True, out + [np.zeros(req.n, U32) for _ in range(4 - nw)]
    if req.op == "store" and req.writemask in (1, 2, 4, 8):
        c = req.writemask.bit_length() - 1
        if addr.top > buf.size - 4 * c - 4 or not addr.rising:
            return False, None
        value = np.broadcast_to(to_words(req.values[c]), (req.n,))  # type: ignore[index]
        w = addr.words
        word_view(buf)[w + c if c else w] = value
        return True, None
    return False, None


class ImageUnit:
    """A bound image view as the memory object sees it: texels ``(S, D, H, W,
    B)`` (samples, layers or depth, rows, columns, bytes) of the view's format,
    read and written through the format's unpack/pack (tgsi.rst: loads give
    the unpacked RGBA, stores pack RGBA).  Coordinates outside the view (or a
    sample index past the resource's samples) read 0 and write nothing;
    atomics need a single 32-bit channel (R32_UINT, R32_SINT, R32_FLOAT) and
    apply lane after lane like buffer atomics.  A multisample image's sample
    is the address's w (2D_MSAA, 2D_ARRAY_MSAA targets; sample 0 through the
    other targets), and RESQ gives its sample count in w."""

    def __init__(self, view: ImageView) -> None:
        res = view.resource
        self.desc = desc = try_describe(view.format)
        assert desc is not None
        b = desc.block_bytes
        self.samples = 0
        if res.is_buffer:
            count = view.buf_size // b
            flat = res.storage[view.buf_offset : view.buf_offset + count * b]
            self.texels = flat.reshape(1, 1, 1, count, b)
        else:
            n = view.last_layer - view.first_layer + 1
            t = res.level_view(view.level, view.first_layer, n, storage=res.storage)
            self.samples = ns = max(1, res.nr_samples) if res.nr_samples > 1 else 0
            # the sample planes follow one another (Resource.sample_stride)
            self.texels = np.lib.stride_tricks.as_strided(
                t, shape=(max(1, ns), *t.shape), strides=(res.sample_stride, *t.strides)
            )

    def _flat(self) -> tuple[np.ndarray, tuple[int, int, int, int]]:
        """The texels' bytes as one 1-D view (from the first texel to the last)
        and the byte strides of (S, D, H, W)."""
        t = self.texels
        ns, d, h, w, b = t.shape
        s3, s0, s1, s2, _ = t.strides
        extent = (ns - 1) * s3 + (d - 1) * s0 + (h - 1) * s1 + (w - 1) * s2 + b
        flat = np.lib.stride_tricks.as_strided(t, shape=(extent,), strides=(1,))
        return flat, (s3, s0, s1, s2)

    def execute(self, req: MemoryRequest, mask: np.ndarray) -> list[Any] | None:
        ns, d, h, w, _ = self.texels.shape
        n = req.n
        target = req.target or "2D"
        if req.op == "size":
            if target == "1D_ARRAY":
                vals = [w, d]
            else:
                vals = [w, h, d][: IMAGE_COORDS.get(target, 2)]
            vals += [0] * (3 - len(vals))
            return [U32(v) for v in [*vals, self.samples]]
        coords = [*(req.coords or ()), 0, 0]
        x, y, z = (np.broadcast_to(np.asarray(c, np.int64), (n,)) for c in coords[:3])
        if target == "1D_ARRAY":
            y, z = np.zeros(n, np.int64), y
        sample = np.broadcast_to(
            np.asarray(0 if req.sample is None else req.sample).astype(np.int64), (n,)
        )
        ok = mask & (x >= 0) & (x < w) & (y >= 0) & (y < h) & (z >= 0) & (z < d)
        ok &= (sample >= 0) & (sample < ns)
        lanes = np.flatnonzero(ok)
        ss, xs, ys, zs = sample[lanes], x[lanes], y[lanes], z[lanes]
        if req.op == "load":
            out = [np.zeros(n, U32) for _ in range(4)]
            if lanes.size:
                rgba = unpack_rgba(self.desc, self.texels[ss, zs, ys, xs])
                bits = np.ascontiguousarray(rgba).view(U32)
                for c in range(4):
                    out[c][lanes] = bits[:, c]
            return out
        if req.op == "store":
            if lanes.size:
                self._store(req, lanes, ss, xs, ys, zs)
            return None
        if req.op == "atomic":
            if self.desc.format not in (Format.R32_UINT, Format.R32_SINT, Format.R32_FLOAT):
                raise ShaderRuntimeError(
                    f"image atomics need an R32_UINT, R32_SINT or R32_FLOAT view, "
                    f"not {self.desc.name}"
                )
            flat, (s3, s0, s1, s2) = self._flat()
            off = np.zeros(n, np.int64)
            off[lanes] = ss * s3 + zs * s0 + ys * s1 + xs * s2
            old = atomic_words(flat, off, ok, req)
            return [old, old, old, old]
        raise UnsupportedError(f"memory op {req.op} on images")

    def _store(self, req: MemoryRequest, lanes, ss, xs, ys, zs) -> None:
        desc = self.desc
        vals = [np.broadcast_to(to_words(v), (req.n,))[lanes] for v in (req.values or [0] * 4)]
        words = np.stack(vals, 1)
        kind = (np.int32 if desc.is_signed_integer else np.uint32) if desc.is_integer else F32
        rgba = words.view(kind)
        if req.writemask & 0xF != 0xF:  # the other channels keep the texel's values
            old = unpack_rgba(desc, self.texels[ss, zs, ys, xs])
            keep = [c for c in range(4) if not req.writemask >> c & 1]
            rgba = rgba.copy()
            rgba[:, keep] = old[:, keep].view(kind)
        packed = pack_rgba(desc, rgba)
        # the highest lane wins a texel several lanes store to
        _, nd, nh, nw, _ = self.texels.shape
        key = ((ss * nd + zs) * nh + ys) * nw + xs
        _, first_rev = np.unique(key[::-1], return_index=True)
        keep_i = key.size - 1 - first_rev
        self.texels[ss[keep_i], zs[keep_i], ys[keep_i], xs[keep_i]] = packed[keep_i]


# ----------------------------------------------------------------------------
# Execution
# ----------------------------------------------------------------------------


class _Channels:
    """A system value's four channels, x/y/z made on first read (a program
    mostly reads one or two of them); w is 0."""

    __slots__ = ("_done", "_make")

    def __init__(self, make: Any) -> None:
        self._make = make
        self._done: dict[int, Any] = {}

    def __getitem__(self, c: int) -> Any:
        if c == 3:
            return U32(0)
        if c not in self._done:
            self._done[c] = self._make(c)
        return self._done[c]


class ComputeJob:
    """One grid as a worker-pool job: each unit is one kernel call of whole
    blocks, made when a worker takes it (workers/pool.py).  The grid takes
    turns with the other jobs on the pool, one call at a time; with buffer or
    image atomics its calls run one after another in block order.  After a
    call fails, the rest of the grid is dropped."""

    units_per_turn = 1

    def __init__(
        self,
        cso: ComputeCSO,
        block: tuple[int, int, int],
        grid: tuple[int, int, int],
        buffers: dict[int, np.ndarray],
        consts: list[Any],
        textures: Any,
        input_bytes: np.ndarray | None,
        label: str = "",
        images: dict[int, ImageUnit] | None = None,
        globals_: dict[int, np.ndarray] | None = None,
        image_handles: dict[int, int] | None = None,
    ) -> None:
        self.cso = cso
        self.globals = globals_ or {}
        self.block = block
        self.grid = grid
        self.buffers = buffers
        self.images = images or {}
        self.image_handles = image_handles or {}
        self.consts = consts
        self.textures = textures
        size = cso.input_size
        data = np.zeros(size, np.uint8)
        if input_bytes is not None:
            data[: min(size, input_bytes.size)] = input_bytes[:size]
        self.input = data
        self.threads = block[0] * block[1] * block[2]
        self.blocks = grid[0] * grid[1] * grid[2]
        per_block = cso.local_size + cso.private_size * self.threads
        self.per_call = max(1, min(cso.lanes // self.threads, CALL_MEMORY // max(1, per_block)))
        self.calls = -(-self.blocks // self.per_call)
        self.fence = Fence(label=label)
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        # thread ids of one block, in lane order
        t = np.arange(self.threads, dtype=np.int64)
        bx, by, _ = block
        self._tid = [
            (t % bx).astype(U32),
            ((t // bx) % by).astype(U32),
            (t // (bx * by)).astype(U32),
        ]

    @property
    def sequential(self) -> bool:
        return self.cso.global_atomics

    def unit_count(self) -> int:
        return self.calls

    def cancelled(self) -> bool:
        return bool(self.errors)

    def run_unit(self, unit: int, worker: int) -> None:
        b0 = unit * self.per_call
        self._run_call(b0, min(self.blocks, b0 + self.per_call))

    def _run_call(self, b0: int, b1: int) -> None:
        nb, threads = b1 - b0, self.threads
        n = nb * threads
        gx, gy, _ = self.grid
        ids = np.arange(b0, b1, dtype=np.int64)
        tid = self._tid
        bid = (ids % gx, (ids // gx) % gy, ids // (gx * gy))
        svs = {
            "THREAD_ID": _Channels(lambda c: np.tile(tid[c], nb)),
            "BLOCK_ID": _Channels(
                lambda c: np.broadcast_to(bid[c].astype(U32)[:, None], (nb, threads)).reshape(-1)
            ),
            "BLOCK_SIZE": [U32(v) for v in self.block] + [U32(0)],
            "GRID_SIZE": [U32(v) for v in self.grid] + [U32(0)],
        }
        memory = ComputeMemory(
            self.cso,
            self.buffers,
            self.images,
            self.input,
            n,
            threads,
            self.globals,
            self.image_handles,
        )
        env = ExecEnv(
            n=n, consts=self.consts, system_values=svs, textures=self.textures, memory=memory
        )
        self.cso.kernel(env)

    def unit_failed(self, unit: int, exc: BaseException) -> None:
        where = f"a compute worker (unit {unit})" if unit >= 0 else "the worker pool"
        add_origin_note(exc, where)
        with self._lock:
            self.errors.append(exc)

    def complete(self) -> None:
        self.fence.signal()


def buffer_views(bindings: dict[int, ShaderBuffer]) -> dict[int, np.ndarray]:
    """The bound shader buffers as byte views of their current storage."""
    out = {}
    for slot, b in bindings.items():
        store = b.buffer.storage
        out[slot] = store[b.buffer_offset : b.buffer_offset + b.buffer_size]
    return out


# GLOBAL memory: buffer k of set_global_binding occupies the 32-bit addresses
# [global_base(k), global_base(k) + GLOBAL_WINDOW) (address 0 is in none)
GLOBAL_SHIFT = 26
GLOBAL_WINDOW = 1 << GLOBAL_SHIFT  # 64 MiB: the largest buffer that can be bound
MAX_GLOBAL_BUFFERS = 32  # binding slots (PIPE_COMPUTE_CAP_MAX_GLOBAL_SIZE: 32 windows)


def global_base(slot: int) -> int:
    """The GLOBAL address of byte 0 of the buffer bound at ``slot``."""
    return (slot + 1) << GLOBAL_SHIFT


def global_views(bindings: dict[int, Any]) -> dict[int, np.ndarray]:
    """The buffers bound for GLOBAL memory as byte views of their current storage."""
    return {slot: res.storage[: res.width0] for slot, res in bindings.items()}


def image_units(bindings: dict[int, ImageView]) -> dict[int, ImageUnit]:
    """The bound images as views of their resources' current storage."""
    return {slot: ImageUnit(v) for slot, v in bindings.items()}


def resident_image_units(units: dict[int, ImageUnit], resident: Any) -> dict[int, int]:
    """Add the resident bindless image handles ((handle, view) pairs) to
    ``units`` after every bound slot; returns handle -> unit."""
    handles = {}
    for k, (handle, view) in enumerate(resident):
        handles[handle] = BINDLESS_IMAGE_UNITS + k
        units[BINDLESS_IMAGE_UNITS + k] = ImageUnit(view)
    return handles


BINDLESS_IMAGE_UNITS = 1 << 20  # (the first unit of resident image handles)


def indirect_grid(grid: Grid) -> tuple[int, int, int]:
    """The grid size: given, or three uint32 read from the indirect buffer now."""
    if grid.indirect is None:
        return grid.grid
    raw = grid.indirect.storage[grid.indirect_offset : grid.indirect_offset + 12]
    dims = tuple(int(v) for v in raw.view("<u4"))
    for i, v in enumerate(dims):
        if v > MAX_GRID_SIZE[i]:
            raise bad_value(
                f"info.indirect (grid[{i}] at offset {grid.indirect_offset + 4 * i})",
                f"must be <= {MAX_GRID_SIZE[i]}",
                v,
            )
    return dims  # type: ignore[return-value]

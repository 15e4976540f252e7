"""Compile a TGSI shader into a vectorized Python kernel.

Theory of operation
-------------------
A kernel runs one shader over N invocations ("lanes") at once: the pixels of
a batch of quads, the vertices of a draw, the threads of a compute block.
``compile_shader(shader)`` generates Python source once per shader (cached by
the caller) in which every register channel is a local variable holding a
numpy array of N lanes, or a numpy scalar when the value is uniform (constants,
immediates, anything computed only from them).  Each TGSI instruction becomes
a few numpy expressions; nothing is interpreted per instruction at run time.

Registers are 32 bits viewed as float, int or uint (tgsi.rst "Basics").  The
generator tracks which view each variable currently holds and inserts a free
``.view()`` where an instruction reads it as another type.  At every point
where control flow joins, all registers are brought back to the float view, so
the static types agree on every path.

Control flow is per lane.  A boolean lane mask says which lanes execute; when
it is not "all lanes", a write becomes ``where(mask, new, old)`` so an inactive
lane never changes a register.  IF/UIF/ELSE/ENDIF narrow the mask (and a branch
whose mask is empty is skipped outright), BGNLOOP/ENDLOOP become a Python loop
that runs while any lane is still in the loop, BRK/CONT/RET remove lanes until
the end of the loop / iteration / subroutine, SWITCH/CASE/DEFAULT track which
lanes matched and fall through, and CAL inlines the subroutine body.  KILL and
KILL_IF add active lanes to the kill mask; killed lanes keep executing (their
results are discarded), as on hardware, so derivatives stay defined.

Derivatives (DDX/DDY and the _FINE forms) work on 2x2 quads: the lanes of a
fragment kernel are laid out so that reshaping them to ``(A, 2, B, 2)`` gives
``[quad_row, y_in_quad, quad_column, x_in_quad]`` (see ``ExecEnv.quad_shape``).
Texture, image, buffer and memory opcodes call methods of the ``ExecEnv`` the
driver passes in, so the compiler knows nothing about resources.

The generated source is kept on the kernel (``kernel.source``) for debugging.
A kernel is a pure function of its ``ExecEnv`` and holds no per-call state, so
one kernel may run on several threads at once.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..pipe.errors import PipeError, PipeValueError, UnsupportedError
from .parser import parse
from .shader import Declaration, Dst, Instruction, Shader, Src

F32, I32, U32 = np.float32, np.int32, np.uint32
_TYPE_NAMES = {"f": "_F32", "i": "_I32", "u": "_U32"}

MAX_LOOP_ITERATIONS = 1 << 20
MAX_CALL_DEPTH = 32


class ShaderCompileError(PipeValueError):
    """A shader that parses but cannot be compiled (bad structure or operands)."""


class ShaderRuntimeError(PipeError, RuntimeError):
    """A shader failed while running (for example a loop that never ends)."""


# ----------------------------------------------------------------------------
# Execution environment
# ----------------------------------------------------------------------------


@dataclass
class ExecEnv:
    """Everything a kernel reads besides its own registers.

    ``inputs[i]`` is IN[i] as four channels (arrays of ``n`` lanes, numpy
    scalars, or None for zero).  ``consts[b]`` is constant buffer b as raw
    little-endian bytes (``np.uint8`` array) or None.  ``system_values`` maps a
    semantic name (``"INSTANCEID"``) to four channels.  ``quad_shape`` is
    ``(A, B)`` for fragment kernels (see the module docstring).  The texture
    and memory hooks are filled in by the driver.
    """

    n: int
    inputs: list[Any] = field(default_factory=list)
    consts: list[Any] = field(default_factory=list)
    system_values: dict[str, Any] = field(default_factory=dict)
    quad_shape: tuple[int, int] | None = None
    textures: Any = None  # object with sample(...), fetch(...), query(...)
    memory: Any = None  # object with load/store/atomic for BUFFER/IMAGE/MEMORY
    helper_mask: Any = None  # lanes that are helpers (not covered); READ_HELPER

    def _quad(self, x: Any) -> np.ndarray | None:
        if np.ndim(x) == 0 or self.quad_shape is None:
            return None
        a, b = self.quad_shape
        return np.asarray(x).reshape(a, 2, b, 2)

    def ddx(self, x: Any, fine: bool = False) -> Any:
        q = self._quad(x)
        if q is None:
            return F32(0.0) if self.quad_shape is None or np.ndim(x) == 0 else np.zeros_like(x)
        if fine:
            d = q[:, :, :, 1] - q[:, :, :, 0]  # per row of the quad
            out = np.broadcast_to(d[:, :, :, None], q.shape)
        else:
            d = q[:, 0, :, 1] - q[:, 0, :, 0]  # top row only
            out = np.broadcast_to(d[:, None, :, None], q.shape)
        return np.ascontiguousarray(out).reshape(-1)

    def ddy(self, x: Any, fine: bool = False) -> Any:
        q = self._quad(x)
        if q is None:
            return F32(0.0) if self.quad_shape is None or np.ndim(x) == 0 else np.zeros_like(x)
        if fine:
            d = q[:, 1, :, :] - q[:, 0, :, :]  # per column of the quad
            out = np.broadcast_to(d[:, None, :, :], q.shape)
        else:
            d = q[:, 1, :, 0] - q[:, 0, :, 0]  # left column only
            out = np.broadcast_to(d[:, None, :, None], q.shape)
        return np.ascontiguousarray(out).reshape(-1)


@dataclass
class KernelResult:
    """What a kernel run produced: OUT registers, the kill mask, and memory effects."""

    outputs: dict[int, list[Any]]
    kill: Any  # bool array of lanes killed, or None if KILL never ran
    emitted: Any = None  # geometry shaders: list of emitted vertices


# ----------------------------------------------------------------------------
# Compiled kernel
# ----------------------------------------------------------------------------


class Kernel:
    """A compiled shader.  Call it with an :class:`ExecEnv`."""

    def __init__(self, shader: Shader, source: str, fn: Callable[..., KernelResult]):
        self.shader = shader
        self.source = source
        self._fn = fn
        self.processor = shader.processor
        self.input_decls = _io_decls(shader, "IN")
        self.output_decls = _io_decls(shader, "OUT")
        self.system_value_decls = {
            d.first: d.semantic for d in shader.declarations if d.file == "SV"
        }
        self.uses_kill = any(i.opcode in _KILL_OPS for i in shader.instructions)
        self.uses_derivatives = any(i.opcode in _DERIV_OPS for i in shader.instructions)
        self.writes_depth = (
            any(d.semantic == "POSITION" for d in self.output_decls.values())
            and shader.processor == "FRAG"
        )
        self.const_buffers = sorted(
            {d.dimension or 0 for d in shader.declarations if d.file == "CONST"}
        )

    def __call__(self, env: ExecEnv) -> KernelResult:
        return self._fn(env)

    def output_index(self, semantic: str, index: int = 0) -> int | None:
        for reg, d in self.output_decls.items():
            if d.semantic == semantic and d.semantic_index == index:
                return reg
        return None


def _io_decls(shader: Shader, file: str) -> dict[int, Declaration]:
    out: dict[int, Declaration] = {}
    for d in shader.declarations:
        if d.file == file:
            for i in range(d.first, d.last + 1):
                sem_index = d.semantic_index + (i - d.first) if d.semantic else 0
                out[i] = Declaration(
                    file=d.file,
                    first=i,
                    last=i,
                    usage_mask=d.usage_mask,
                    semantic=d.semantic,
                    semantic_index=sem_index,
                    interpolate=d.interpolate,
                    location=d.location,
                    array_id=d.array_id,
                )
    return out


_KILL_OPS = frozenset({"KILL", "KILL_IF", "KIL", "KILP", "DEMOTE"})
_DERIV_OPS = frozenset({"DDX", "DDY", "DDX_FINE", "DDY_FINE"})

_cache_lock = threading.Lock()
_cache: dict[Shader, Kernel] = {}


def compile_shader(shader: Shader | str) -> Kernel:
    """Compile (or fetch from the cache) the kernel of a shader or TGSI text."""
    if isinstance(shader, str):
        shader = parse(shader)
    with _cache_lock:
        kernel = _cache.get(shader)
    if kernel is not None:
        return kernel
    source = _Generator(shader).generate()
    namespace = dict(_RUNTIME)
    namespace.update(_immediate_namespace(shader))
    try:
        code = compile(source, f"<tgsi {shader.processor} kernel>", "exec")
    except SyntaxError as exc:  # a generator bug, never the user's fault
        raise ShaderCompileError(f"internal error generating kernel: {exc}") from exc
    exec(code, namespace)
    kernel = Kernel(shader, source, namespace["kernel"])
    with _cache_lock:
        if len(_cache) > 512:
            _cache.clear()
        _cache.setdefault(shader, kernel)
    return kernel


def _immediate_namespace(shader: Shader) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    for i, imm in enumerate(shader.immediates):
        raw = np.array(imm.bits, dtype=np.uint32)
        if imm.type == "FLT32":
            vals = raw.view(np.float32)
        elif imm.type == "INT32":
            vals = raw.view(np.int32)
        else:  # UINT32 and the 64-bit types keep their raw words
            vals = raw
        for c in range(4):
            ns[f"IMM{i}_{c}"] = vals[c]
    return ns


# ----------------------------------------------------------------------------
# Runtime helpers referenced by generated code
# ----------------------------------------------------------------------------


def _sat(x: Any) -> Any:
    """Clamp to [0, 1]; NaN becomes 0 (llvmpipe's saturate)."""
    return np.fmin(np.fmax(x, F32(0.0)), F32(1.0))


def _where(mask: Any, new: Any, old: Any) -> Any:
    return np.where(mask, new, old)


def _as(x: Any, t: type) -> Any:
    """Reinterpret the 32 bits of ``x`` as type ``t`` (free for arrays)."""
    if isinstance(x, np.ndarray | np.generic):
        if x.dtype == t:
            return x
        return x.view(t)
    return np.asarray(x, dtype=t)[()]


def _b2f(c: Any) -> Any:
    return np.where(c, F32(1.0), F32(0.0))


def _b2u(c: Any) -> Any:
    return np.where(c, U32(0xFFFFFFFF), U32(0))


def _f2i(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    x = np.where(np.isnan(x), 0.0, np.clip(x, -2147483648.0, 2147483647.0))
    r = np.trunc(x).astype(np.int32)
    return r[()] if r.ndim == 0 else r


def _f2u(x: Any) -> Any:
    x = np.asarray(x, dtype=np.float64)
    x = np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 4294967295.0))
    r = np.trunc(x).astype(np.uint32)
    return r[()] if r.ndim == 0 else r


def _any(m: Any) -> bool:
    return bool(np.any(m))


def _full(n: int, value: bool) -> np.ndarray:
    return np.full(n, value, dtype=bool)


def _lanes(x: Any, n: int) -> np.ndarray:
    """``x`` as a writable array of n lanes (for indirect stores)."""
    return np.array(np.broadcast_to(x, (n,)))


def _loop_overflow() -> None:
    raise ShaderRuntimeError(
        f"shader loop ran {MAX_LOOP_ITERATIONS} iterations without every lane leaving it"
    )


def _gather_index(idx: Any, count: int) -> Any:
    """Per-lane register index clamped into range (out of range reads give index 0)."""
    idx = np.asarray(idx, dtype=np.int64)
    return np.where((idx >= 0) & (idx < count), idx, 0)


def _gather(arr: np.ndarray, idx: Any, chan: int) -> Any:
    """Read ``arr[idx, chan]`` per lane; ``arr`` has shape (count, 4, n)."""
    count = arr.shape[0]
    if np.ndim(idx) == 0:
        i = int(idx)
        return arr[i, chan].copy() if 0 <= i < count else np.zeros_like(arr[0, chan])
    valid = (idx >= 0) & (idx < count)
    safe = np.where(valid, idx, 0).astype(np.intp)
    lanes = np.arange(arr.shape[2])
    return np.where(valid, arr[safe, chan, lanes], F32(0.0))


def _scatter(arr: np.ndarray, idx: Any, chan: int, value: Any, mask: Any) -> None:
    """Write ``value`` to ``arr[idx, chan]`` per lane where ``mask`` (None = all)."""
    n = arr.shape[2]
    count = arr.shape[0]
    value = _lanes(_as(value, F32), n)
    if np.ndim(idx) == 0:
        i = int(idx)
        if 0 <= i < count:
            if mask is None:
                arr[i, chan] = value
            else:
                np.copyto(arr[i, chan], value, where=mask)
        return
    idx = np.asarray(idx, dtype=np.int64)
    ok = (idx >= 0) & (idx < count)
    if mask is not None:
        ok = ok & mask
    lanes = np.nonzero(ok)[0]
    arr[idx[lanes], chan, lanes] = value[lanes]


def _const_read(buf: Any, idx: Any, chan: int, t: type) -> Any:
    """Per-lane read of a constant buffer vector component (out of range reads 0)."""
    if buf is None:
        return t(0)
    view = buf.view(t).reshape(-1, 4) if buf.size % 16 == 0 else _pad16(buf).view(t).reshape(-1, 4)
    count = view.shape[0]
    if np.ndim(idx) == 0:
        i = int(idx)
        return view[i, chan] if 0 <= i < count else t(0)
    idx = np.asarray(idx, dtype=np.int64)
    valid = (idx >= 0) & (idx < count)
    safe = np.where(valid, idx, 0)
    return np.where(valid, view[safe, chan], t(0))


def _pad16(buf: np.ndarray) -> np.ndarray:
    out = np.zeros((buf.size + 15) // 16 * 16, dtype=np.uint8)
    out[: buf.size] = buf
    return out


def _const_vec(buf: Any, index: int) -> tuple[Any, Any, Any, Any]:
    """A direct CONST[b][index] read: four float32 scalars (zero if out of range)."""
    if buf is None or (index + 1) * 16 > buf.size:
        if buf is not None and index * 16 < buf.size:
            padded = _pad16(buf)
            v = padded[index * 16 : index * 16 + 16].view(F32)
            return v[0], v[1], v[2], v[3]
        z = F32(0.0)
        return z, z, z, z
    v = buf[index * 16 : index * 16 + 16].view(F32)
    return v[0], v[1], v[2], v[3]


def _emit_vertex(env_out: list, outputs: dict[int, list[Any]], mask: Any, stream: int) -> None:
    env_out.append((stream, {k: list(v) for k, v in outputs.items()}, mask))


_RUNTIME: dict[str, Any] = {
    "np": np,
    "_F32": F32,
    "_I32": I32,
    "_U32": U32,
    "_sat": _sat,
    "_where": _where,
    "_as": _as,
    "_b2f": _b2f,
    "_b2u": _b2u,
    "_f2i": _f2i,
    "_f2u": _f2u,
    "_any": _any,
    "_full": _full,
    "_gather": _gather,
    "_scatter": _scatter,
    "_const_read": _const_read,
    "_const_vec": _const_vec,
    "_loop_overflow": _loop_overflow,
    "_lanes": _lanes,
    "_emit_vertex": _emit_vertex,
    "KernelResult": KernelResult,
    "MAX_LOOP_ITERATIONS": MAX_LOOP_ITERATIONS,
    "UnsupportedError": UnsupportedError,
}


# ----------------------------------------------------------------------------
# Code generation
# ----------------------------------------------------------------------------


@dataclass
class _Frame:
    """One open control-flow construct while generating code."""

    kind: str  # "if", "loop", "switch", "sub"
    parent_mask: str | None
    cond: str | None = None  # IF: the condition variable
    brk: str | None = None  # LOOP/SWITCH: lanes that left with BRK
    cont: str | None = None  # LOOP: lanes that skipped to the next iteration
    ret: str | None = None  # SUB (and main): lanes that executed RET
    base: str | None = None  # LOOP/SWITCH: mask on entry
    counter: str | None = None
    sw_value: str | None = None
    sw_matched: str | None = None
    sw_any: str | None = None
    in_else: bool = False


class _Generator:
    def __init__(self, shader: Shader) -> None:
        self.shader = shader
        self.lines: list[str] = []
        self.depth = 1
        self.types: dict[str, str] = {}  # variable -> "f" | "i" | "u"
        self.ids = itertools.count()
        self.mask: str | None = None  # current lane mask variable (None = all lanes)
        self.frames: list[_Frame] = []
        self.main_ret: str | None = None
        self.registers: set[str] = set()  # every register variable name
        self.arrays: dict[
            tuple[str, int], tuple[str, int, int]
        ] = {}  # (file, reg) -> (arr, base, count)
        self.array_names: dict[str, tuple[int, int]] = {}
        self.sub_starts = self._subroutines()
        self.call_depth = 0
        self.uses_kill = False
        self.outputs = sorted(
            {i for d in shader.declarations if d.file == "OUT" for i in range(d.first, d.last + 1)}
        )
        self.geometry = shader.processor == "GEOM"

    # -- small helpers ---------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)

    def tmp(self, prefix: str = "v") -> str:
        return f"_{prefix}{next(self.ids)}"

    def fail(self, inst: Instruction | None, message: str) -> ShaderCompileError:
        where = f"TGSI line {inst.line}: {inst.opcode}: " if inst is not None else ""
        return ShaderCompileError(where + message)

    def _subroutines(self) -> dict[int, int]:
        """BGNSUB instruction index -> matching ENDSUB index."""
        subs: dict[int, int] = {}
        stack: list[int] = []
        for i, inst in enumerate(self.shader.instructions):
            if inst.opcode == "BGNSUB":
                stack.append(i)
            elif inst.opcode == "ENDSUB":
                if not stack:
                    raise self.fail(inst, "ENDSUB without BGNSUB")
                subs[stack.pop()] = i
        if stack:
            raise self.fail(self.shader.instructions[stack[-1]], "BGNSUB without ENDSUB")
        return subs

    # -- register naming -------------------------------------------------------------

    def _array_backed(self) -> None:
        """Register ranges that are ever indirectly addressed live in one numpy array."""
        indirect_files: set[tuple[str, int | None]] = set()
        for inst in self.shader.instructions:
            for op in list(inst.dst) + list(inst.src):
                r = op.reg
                if r.indirect is not None and r.file in ("TEMP", "OUT", "IN", "ADDR"):
                    indirect_files.add((r.file, r.indirect.array_id or None))
        for file, array_id in indirect_files:
            decls = [d for d in self.shader.declarations if d.file == file]
            if array_id is not None:
                decls = [d for d in decls if d.array_id == array_id] or decls
            if not decls:
                continue
            first = min(d.first for d in decls)
            last = max(d.last for d in decls)
            name = f"{file}_arr{array_id or 0}"
            if name in self.array_names:
                continue
            self.array_names[name] = (first, last - first + 1)
            for r in range(first, last + 1):
                self.arrays.setdefault((file, r), (name, first, last - first + 1))

    def reg_var(self, file: str, index: int, chan: int) -> str:
        prefix = {"TEMP": "t", "OUT": "o", "IN": "i", "ADDR": "a", "SV": "s"}.get(file)
        if prefix is None:
            raise ShaderCompileError(f"register file {file} cannot hold values")
        name = f"{prefix}{index}_{chan}"
        self.registers.add(name)
        self.types.setdefault(name, "f")
        return name

    # -- operand reads -----------------------------------------------------------------

    def index_expr(self, reg_index: int, indirect) -> str:
        """Python expression for a (possibly per-lane) register index."""
        if indirect is None:
            return str(reg_index)
        addr = self.read_reg(indirect.file, indirect.index, indirect.component, "i", None)
        if reg_index:
            return f"({addr} + {reg_index})"
        return addr

    def read_reg(self, file: str, index: int, chan: int, want: str, src: Src | None) -> str:
        """An expression for one channel of a register, viewed as ``want``."""
        reg = src.reg if src is not None else None
        t = _TYPE_NAMES[want]
        if file == "IMM":
            if index >= len(self.shader.immediates):
                raise ShaderCompileError(f"IMM[{index}] is not declared")
            imm_t = {"FLT32": "f", "INT32": "i"}.get(self.shader.immediates[index].type, "u")
            name = f"IMM{index}_{chan}"
            return name if imm_t == want else f"_as({name}, {t})"
        if file == "CONST":
            buf_index = reg.dimension if reg is not None and reg.dimension is not None else 0
            if reg is not None and reg.dim_indirect is not None:
                raise ShaderCompileError("indirect constant buffer selection is not supported")
            if reg is not None and reg.indirect is not None:
                idx = self.index_expr(reg.index, reg.indirect)
                return f"_const_read(env_consts[{buf_index}], {idx}, {chan}, {t})"
            name = f"c{buf_index}_{index}_{chan}"
            self.const_reads.add((buf_index, index))
            return name if want == "f" else f"_as({name}, {t})"
        if file == "SV":
            name = self.reg_var("SV", index, chan)
            self.sv_reads.add(index)
            return self.view(name, want)
        if file in ("TEMP", "OUT", "IN", "ADDR"):
            indirect = reg.indirect if reg is not None else None
            arr = self.arrays.get((file, index))
            if arr is None and indirect is not None:
                arr = next(
                    (v for (f, _), v in self.arrays.items() if f == file),
                    None,
                )
            if arr is not None:
                name, base, _count = arr
                idx = self.index_expr(index - base, indirect)
                expr = f"_gather({name}, {idx}, {chan})"
                return expr if want == "f" else f"_as({expr}, {t})"
            if file == "IN":
                self.in_reads.add(index)
            return self.view(self.reg_var(file, index, chan), want)
        raise ShaderCompileError(f"register file {file} cannot be read as a value")

    def view(self, name: str, want: str) -> str:
        have = self.types.get(name, "f")
        if have == want:
            return name
        return f"_as({name}, {_TYPE_NAMES[want]})"

    def src(self, inst: Instruction, k: int, chan: int, want: str = "f") -> str:
        """Channel ``chan`` of source ``k`` after swizzle and modifiers, as ``want``."""
        if k >= len(inst.src):
            raise self.fail(inst, f"needs source operand {k}")
        s = inst.src[k]
        comp = s.swizzle[chan]
        expr = self.read_reg(s.reg.file, s.reg.index, comp, want, s)
        if s.absolute:
            expr = f"np.abs({expr})"
        if s.negate:
            if want == "u":
                expr = f"(_U32(0) - {expr})"
            else:
                expr = f"(-{expr})"
        return expr

    # -- writes ------------------------------------------------------------------------

    def write(self, inst: Instruction, results: dict[int, tuple[str, str]], dst_index: int = 0):
        """Write per-channel results ``{chan: (expr, type)}`` to dst ``dst_index``.

        Every result is first evaluated into a fresh temporary, so a destination
        that is also a source is read before it is written.
        """
        if dst_index >= len(inst.dst):
            raise self.fail(inst, f"needs destination operand {dst_index}")
        d: Dst = inst.dst[dst_index]
        staged: list[tuple[int, str, str]] = []
        for chan in range(4):
            if not (d.writemask >> chan & 1) or chan not in results:
                continue
            expr, typ = results[chan]
            if inst.saturate and typ == "f":
                expr = f"_sat({expr})"
            v = self.tmp()
            self.emit(f"{v} = {expr}")
            staged.append((chan, v, typ))
        for chan, v, typ in staged:
            self.store(d, chan, v, typ)

    def store(self, d: Dst, chan: int, value: str, typ: str) -> None:
        file = d.reg.file
        if file == "NULL":
            return
        if file not in ("TEMP", "OUT", "ADDR"):
            raise ShaderCompileError(f"cannot write to register file {file}")
        arr = self.arrays.get((file, d.reg.index))
        if arr is None and d.reg.indirect is not None:
            arr = next((v for (f, _), v in self.arrays.items() if f == file), None)
        if arr is not None:
            name, base, _count = arr
            idx = self.index_expr(d.reg.index - base, d.reg.indirect)
            self.emit(f"_scatter({name}, {idx}, {chan}, {value}, {self.mask})")
            return
        target = self.reg_var(file, d.reg.index, chan)
        if self.mask is None:
            self.emit(f"{target} = {value}")
        else:
            old = self.view(target, typ)
            self.emit(f"{target} = _where({self.mask}, {value}, {old})")
        self.types[target] = typ

    def normalize(self) -> None:
        """Bring every register back to the float view (before a control-flow join)."""
        for name in sorted(self.registers):
            if self.types.get(name, "f") != "f":
                self.emit(f"{name} = _as({name}, _F32)")
                self.types[name] = "f"

    # -- masks -------------------------------------------------------------------------

    def alive(self) -> list[str]:
        """Mask variables whose lanes have left the current loop/switch/sub/main."""
        out = []
        for fr in reversed(self.frames):
            if fr.kind in ("loop", "switch"):
                out += [x for x in (fr.brk, fr.cont) if x]
                break
        for fr in reversed(self.frames):
            if fr.kind == "sub":
                if fr.ret:
                    out.append(fr.ret)
                break
        else:
            if self.main_ret:
                out.append(self.main_ret)
        return out

    def set_mask(self, base: str | None, extra: list[str] | None = None) -> None:
        """cur = base & ~alive-exclusions & extra, into a fresh variable."""
        terms = [] if base is None else [base]
        terms += extra or []
        terms += [f"~{x}" for x in self.alive()]
        if not terms:
            self.mask = None
            return
        v = self.tmp("m")
        self.emit(f"{v} = " + " & ".join(terms))
        self.mask = v

    def active(self) -> str:
        """The current mask as an expression that is always a bool array."""
        return self.mask if self.mask is not None else "_ALL"

    # -- generation ----------------------------------------------------------------------

    def generate(self) -> str:
        self.const_reads: set[tuple[int, int]] = set()
        self.sv_reads: set[int] = set()
        self.in_reads: set[int] = set()
        self._array_backed()
        body_start = len(self.lines)
        self.body(0, len(self.shader.instructions), top=True)
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        # Prologue: bind inputs, constants, arrays, zero registers.
        self.emit("n = env.n")
        self.emit("_ALL = _full(n, True)")
        self.emit("env_consts = list(env.consts) + [None] * 32")
        self.emit("_kill = None")
        self.emit("_emitted = [] if " + str(self.geometry) + " else None")
        for name, (_first, count) in sorted(self.array_names.items()):
            self.emit(f"{name} = np.zeros(({count}, 4, n), dtype=_F32)")
            file = name.split("_arr")[0]
            if file == "IN":
                self.emit(f"for _r in range({count}):")
                self.emit(f"    _reg = {_first} + _r")
                self.emit("    _src = env.inputs[_reg] if _reg < len(env.inputs) else None")
                self.emit("    if _src is not None:")
                self.emit("        for _c in range(4):")
                self.emit("            if _src[_c] is not None:")
                self.emit(f"                {name}[_r, _c] = _src[_c]")
        for b, i in sorted(self.const_reads):
            self.emit(
                f"c{b}_{i}_0, c{b}_{i}_1, c{b}_{i}_2, c{b}_{i}_3 = _const_vec(env_consts[{b}], {i})"
            )
        for name in sorted(self.registers):
            prefix, rest = name[0], name[1:]
            index, chan = (int(x) for x in rest.split("_"))
            if prefix == "i":
                self.emit(f"{name} = _in(env.inputs, {index}, {chan})")
            elif prefix == "s":
                sem = self._sv_semantic(index)
                self.emit(f"{name} = _sv(env.system_values, {sem!r}, {chan})")
            else:
                self.emit(f"{name} = _F32(0.0)")
        if self.main_ret:
            pass
        self.lines.extend(body)
        # Epilogue: collect outputs.
        self.normalize()
        outs = []
        for o in self.outputs:
            arr = self.arrays.get(("OUT", o))
            if arr is not None:
                name, base, _c = arr
                outs.append(f"{o}: [{name}[{o - base}, c] for c in range(4)]")
            else:
                chans = ", ".join(self._out_chan(o, c) for c in range(4))
                outs.append(f"{o}: [{chans}]")
        self.emit("return KernelResult({" + ", ".join(outs) + "}, _kill, _emitted)")
        header = ["def kernel(env):"]
        return "\n".join(header + self.lines) + "\n"

    def _out_chan(self, o: int, c: int) -> str:
        name = f"o{o}_{c}"
        if name in self.registers:
            return name
        return "_F32(0.0)"

    def _sv_semantic(self, index: int) -> str:
        for d in self.shader.declarations:
            if d.file == "SV" and d.first <= index <= d.last:
                return d.semantic or ""
        raise ShaderCompileError(f"SV[{index}] is read but not declared")

    def body(self, start: int, end: int, top: bool = False) -> None:
        insts = self.shader.instructions
        pc = start
        while pc < end:
            inst = insts[pc]
            op = inst.opcode
            if op == "BGNSUB":
                # Subroutine bodies are only generated where they are called.
                pc = self.sub_starts[pc] + 1
                continue
            if op == "END":
                if top:
                    break
                pc += 1
                continue
            handler = _CONTROL.get(op)
            if handler is not None:
                handler(self, inst)
            else:
                emitter = OPCODE_EMITTERS.get(op)
                if emitter is None:
                    raise UnsupportedError(
                        f"TGSI opcode {op} (line {inst.line}) is not implemented by numpipe yet"
                    )
                emitter(self, inst)
            pc += 1
        if top and self.frames:
            raise self.fail(None, f"unterminated {self.frames[-1].kind.upper()} block")


# ----------------------------------------------------------------------------
# Control flow
# ----------------------------------------------------------------------------


def _cf_if(g: _Generator, inst: Instruction) -> None:
    cond = g.tmp("c")
    if inst.opcode == "UIF":
        g.emit(f"{cond} = {g.src(inst, 0, 0, 'u')} != 0")
    else:
        g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != 0")
    g.normalize()
    fr = _Frame("if", g.mask, cond=cond)
    g.frames.append(fr)
    g.set_mask(g.mask, [cond])
    g.emit(f"if _any({g.mask}):")
    g.depth += 1
    g.emit("pass")


def _cf_else(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "if" or g.frames[-1].in_else:
        raise g.fail(inst, "ELSE without IF")
    fr = g.frames[-1]
    g.normalize()
    g.depth -= 1
    fr.in_else = True
    g.set_mask(fr.parent_mask, [f"~{fr.cond}"])
    g.emit(f"if _any({g.mask}):")
    g.depth += 1
    g.emit("pass")


def _cf_endif(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "if":
        raise g.fail(inst, "ENDIF without IF")
    fr = g.frames.pop()
    g.normalize()
    g.depth -= 1
    g.set_mask(fr.parent_mask)


def _cf_bgnloop(g: _Generator, inst: Instruction) -> None:
    g.normalize()
    brk, cont, counter = g.tmp("brk"), g.tmp("cont"), g.tmp("it")
    base = g.mask
    fr = _Frame("loop", base, brk=brk, cont=cont, base=base, counter=counter)
    g.emit(f"{brk} = _full(n, False)")
    g.emit(f"{counter} = 0")
    g.emit("while True:")
    g.depth += 1
    g.emit(f"{counter} += 1")
    g.emit(f"if {counter} > MAX_LOOP_ITERATIONS:")
    g.emit("    _loop_overflow()")
    g.emit(f"{cont} = _full(n, False)")
    g.frames.append(fr)
    g.set_mask(base)
    g.emit(f"if not _any({g.mask}):")
    g.emit("    break")


def _cf_endloop(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "loop":
        raise g.fail(inst, "ENDLOOP without BGNLOOP")
    fr = g.frames.pop()
    g.normalize()
    g.depth -= 1
    g.set_mask(fr.base)


def _innermost(g: _Generator, kinds: tuple[str, ...]) -> _Frame | None:
    for fr in reversed(g.frames):
        if fr.kind in kinds:
            return fr
    return None


def _cf_brk(g: _Generator, inst: Instruction, cond: str | None = None) -> None:
    fr = _innermost(g, ("loop", "switch"))
    if fr is None:
        raise g.fail(inst, "BRK outside a loop or switch")
    lanes = g.active() if cond is None else f"({g.active()} & {cond})"
    g.emit(f"{fr.brk} = {fr.brk} | {lanes}")
    g.set_mask(g.mask)


def _cf_breakc(g: _Generator, inst: Instruction) -> None:
    cond = g.tmp("c")
    g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != 0")
    _cf_brk(g, inst, cond)


def _cf_cont(g: _Generator, inst: Instruction) -> None:
    fr = _innermost(g, ("loop",))
    if fr is None:
        raise g.fail(inst, "CONT outside a loop")
    g.emit(f"{fr.cont} = {fr.cont} | {g.active()}")
    g.set_mask(g.mask)


def _cf_ret(g: _Generator, inst: Instruction) -> None:
    fr = _innermost(g, ("sub",))
    if fr is not None:
        if fr.ret is None:
            fr.ret = g.tmp("ret")
            g.ret_inits.append(fr.ret)
        g.emit(f"{fr.ret} = {fr.ret} | {g.active()}")
    else:
        if g.main_ret is None:
            g.main_ret = "_ret_main"
            g.lines.insert(0, "    _ret_main = _full(env.n, False)")
        g.emit(f"{g.main_ret} = {g.main_ret} | {g.active()}")
    g.set_mask(g.mask)


def _cf_cal(g: _Generator, inst: Instruction, cond: str | None = None) -> None:
    if inst.label is None or inst.label not in g.sub_starts:
        raise g.fail(inst, f"CAL target :{inst.label} is not a BGNSUB")
    if g.call_depth >= MAX_CALL_DEPTH:
        raise g.fail(inst, f"subroutine calls nest deeper than {MAX_CALL_DEPTH} (recursion?)")
    g.normalize()
    start = inst.label
    end = g.sub_starts[start]
    call_mask = g.mask
    ret = g.tmp("ret")
    g.emit(f"{ret} = _full(n, False)")
    fr = _Frame("sub", call_mask, ret=ret)
    g.frames.append(fr)
    g.set_mask(call_mask, [cond] if cond else None)
    g.call_depth += 1
    g.ret_inits = []
    g.body(start + 1, end)
    g.call_depth -= 1
    if g.frames[-1] is not fr:
        raise g.fail(inst, "subroutine body leaves a control-flow block open")
    g.frames.pop()
    g.normalize()
    g.set_mask(call_mask)


def _cf_callnz(g: _Generator, inst: Instruction) -> None:
    cond = g.tmp("c")
    g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != 0")
    _cf_cal(g, inst, cond)


def _cf_ifc(g: _Generator, inst: Instruction) -> None:
    _cf_if(g, Instruction("IF", src=inst.src, line=inst.line))


def _cf_switch(g: _Generator, inst: Instruction) -> None:
    value, matched, brk, any_case = g.tmp("sw"), g.tmp("swm"), g.tmp("brk"), g.tmp("swa")
    g.emit(f"{value} = {g.src(inst, 0, 0, 'u')}")
    g.normalize()
    # Lanes that match some CASE of this switch (DEFAULT takes the others).
    cases = _switch_cases(g, inst)
    terms = [f"({value} == {g.src(c, 0, 0, 'u')})" for c in cases]
    g.emit(f"{any_case} = " + (" | ".join(terms) if terms else "_full(n, False)"))
    g.emit(f"{any_case} = {any_case} | _full(n, False)")
    g.emit(f"{matched} = _full(n, False)")
    g.emit(f"{brk} = _full(n, False)")
    fr = _Frame("switch", g.mask, brk=brk, base=g.mask, sw_value=value, sw_matched=matched)
    fr.sw_any = any_case
    g.frames.append(fr)
    g.emit(f"_none_{brk} = _full(n, False)")
    g.mask = f"_none_{brk}"


def _switch_cases(g: _Generator, inst: Instruction) -> list[Instruction]:
    insts = g.shader.instructions
    start = insts.index(inst) if inst in insts else 0
    depth = 0
    out = []
    for later in insts[start + 1 :]:
        if later.opcode == "SWITCH":
            depth += 1
        elif later.opcode == "ENDSWITCH":
            if depth == 0:
                break
            depth -= 1
        elif later.opcode == "CASE" and depth == 0:
            out.append(later)
    return out


def _cf_case(g: _Generator, inst: Instruction, default: bool = False) -> None:
    fr = _innermost(g, ("switch",))
    if fr is None or g.frames[-1] is not fr:
        raise g.fail(inst, "CASE/DEFAULT outside a SWITCH")
    g.normalize()
    base = fr.base if fr.base is not None else "_ALL"
    if default:
        hit = f"(~{fr.sw_any})"
    else:
        hit = f"({fr.sw_value} == {g.src(inst, 0, 0, 'u')})"
    g.emit(f"{fr.sw_matched} = {fr.sw_matched} | ({base} & {hit})")
    g.set_mask(fr.sw_matched)


def _cf_default(g: _Generator, inst: Instruction) -> None:
    _cf_case(g, inst, default=True)


def _cf_endswitch(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "switch":
        raise g.fail(inst, "ENDSWITCH without SWITCH")
    fr = g.frames.pop()
    g.normalize()
    g.set_mask(fr.base)


def _cf_nop(g: _Generator, inst: Instruction) -> None:
    pass


def _cf_bgnsub(g: _Generator, inst: Instruction) -> None:
    raise g.fail(inst, "BGNSUB reached outside a call")


_CONTROL: dict[str, Callable[[_Generator, Instruction], None]] = {
    "IF": _cf_if,
    "UIF": _cf_if,
    "ELSE": _cf_else,
    "ENDIF": _cf_endif,
    "BGNLOOP": _cf_bgnloop,
    "ENDLOOP": _cf_endloop,
    "BRK": _cf_brk,
    "BREAKC": _cf_breakc,
    "CONT": _cf_cont,
    "RET": _cf_ret,
    "CAL": _cf_cal,
    "CALLNZ": _cf_callnz,
    "IFC": _cf_ifc,
    "SWITCH": _cf_switch,
    "CASE": _cf_case,
    "DEFAULT": _cf_default,
    "ENDSWITCH": _cf_endswitch,
    "NOP": _cf_nop,
    "ENDSUB": _cf_nop,
}


# ----------------------------------------------------------------------------
# Opcode emitters
# ----------------------------------------------------------------------------

Emitter = Callable[[_Generator, Instruction], None]
OPCODE_EMITTERS: dict[str, Emitter] = {}


def _componentwise(name: str, src_types: str, dst_type: str, template: str) -> None:
    """Register a per-channel opcode: ``template`` formats the source channels."""

    def emit(g: _Generator, inst: Instruction) -> None:
        results = {}
        mask = inst.dst[0].writemask if inst.dst else 0xF
        for chan in range(4):
            if mask >> chan & 1:
                args = [g.src(inst, k, chan, t) for k, t in enumerate(src_types)]
                results[chan] = (template.format(*args), dst_type)
        g.write(inst, results)

    OPCODE_EMITTERS[name] = emit


def _replicated(name: str, src_types: str, dst_type: str, template: str, chans: str) -> None:
    """Register an opcode whose scalar result goes to every written channel.

    ``chans`` says which channel of each source feeds the template, e.g. "x"
    for RCP, or "xyz" with sources repeated for DP3 (see the callers).
    """

    def emit(g: _Generator, inst: Instruction) -> None:
        args = []
        for k, t in enumerate(src_types):
            for c in chans:
                args.append(g.src(inst, k, "xyzw".index(c), t))
        v = g.tmp()
        g.emit(f"{v} = {template.format(*args)}")
        g.write(inst, {c: (v, dst_type) for c in range(4)})

    OPCODE_EMITTERS[name] = emit


# -- float arithmetic -------------------------------------------------------------
_componentwise("MOV", "f", "f", "{0}")
_componentwise("ADD", "ff", "f", "({0} + {1})")
_componentwise("SUB", "ff", "f", "({0} - {1})")
_componentwise("MUL", "ff", "f", "({0} * {1})")
_componentwise("DIV", "ff", "f", "np.divide({0}, {1}, dtype=_F32)")
_componentwise("MAD", "fff", "f", "({0} * {1} + {2})")
_componentwise("FMA", "fff", "f", "_F32(np.float64({0}) * np.float64({1}) + np.float64({2}))")
_componentwise("LRP", "fff", "f", "({0} * {1} + (_F32(1.0) - {0}) * {2})")
_componentwise("MIN", "ff", "f", "np.fmin({0}, {1})")
_componentwise("MAX", "ff", "f", "np.fmax({0}, {1})")
_componentwise("CLAMP", "fff", "f", "np.fmin(np.fmax({0}, {1}), {2})")
_componentwise("ABS", "f", "f", "np.abs({0})")
_componentwise("FRC", "f", "f", "({0} - np.floor({0}))")
_componentwise("FLR", "f", "f", "np.floor({0})")
_componentwise("CEIL", "f", "f", "np.ceil({0})")
_componentwise("TRUNC", "f", "f", "np.trunc({0})")
_componentwise("ROUND", "f", "f", "np.rint({0})")
_componentwise("SSG", "f", "f", "np.sign({0}).astype(_F32)")
_componentwise("CMP", "fff", "f", "np.where({0} < 0, {1}, {2})")
_componentwise("CND", "fff", "f", "np.where({2} > 0.5, {0}, {1})")
_componentwise("SLT", "ff", "f", "_b2f({0} < {1})")
_componentwise("SGE", "ff", "f", "_b2f({0} >= {1})")
_componentwise("SGT", "ff", "f", "_b2f({0} > {1})")
_componentwise("SLE", "ff", "f", "_b2f({0} <= {1})")
_componentwise("SEQ", "ff", "f", "_b2f({0} == {1})")
_componentwise("SNE", "ff", "f", "_b2f({0} != {1})")
_componentwise("FSLT", "ff", "u", "_b2u({0} < {1})")
_componentwise("FSGE", "ff", "u", "_b2u({0} >= {1})")
_componentwise("FSEQ", "ff", "u", "_b2u({0} == {1})")
_componentwise("FSNE", "ff", "u", "_b2u({0} != {1})")
_componentwise("SAD", "fff", "f", "(np.abs({0} - {1}) + {2})")
_componentwise("DDX", "f", "f", "env.ddx({0})")
_componentwise("DDY", "f", "f", "env.ddy({0})")
_componentwise("DDX_FINE", "f", "f", "env.ddx({0}, fine=True)")
_componentwise("DDY_FINE", "f", "f", "env.ddy({0}, fine=True)")

# -- scalar float functions (replicated) -------------------------------------------
_replicated("RCP", "f", "f", "np.divide(_F32(1.0), {0}, dtype=_F32)", "x")
_replicated("RSQ", "f", "f", "np.divide(_F32(1.0), np.sqrt(np.abs({0})), dtype=_F32)", "x")
_replicated("SQRT", "f", "f", "np.sqrt({0})", "x")
_replicated("EX2", "f", "f", "np.exp2({0})", "x")
_replicated("LG2", "f", "f", "np.log2({0})", "x")
_replicated("POW", "ff", "f", "np.power({0}, {1})", "x")
_replicated("SIN", "f", "f", "np.sin({0})", "x")
_replicated("COS", "f", "f", "np.cos({0})", "x")
_replicated("DP2", "ff", "f", "({0} * {2} + {1} * {3})", "xy")
_replicated("DP3", "ff", "f", "({0} * {3} + {1} * {4} + {2} * {5})", "xyz")
_replicated("DP4", "ff", "f", "({0} * {4} + {1} * {5} + {2} * {6} + {3} * {7})", "xyzw")

# -- integer / bit operations -------------------------------------------------------
_componentwise("UADD", "uu", "u", "({0} + {1})")
_componentwise("UMUL", "uu", "u", "({0} * {1})")
_componentwise("UMAD", "uuu", "u", "({0} * {1} + {2})")
_componentwise("INEG", "i", "i", "(_I32(0) - {0})")
_componentwise("IABS", "i", "i", "np.abs({0})")
_componentwise("ISSG", "i", "i", "np.sign({0}).astype(_I32)")
_componentwise("IMAX", "ii", "i", "np.maximum({0}, {1})")
_componentwise("IMIN", "ii", "i", "np.minimum({0}, {1})")
_componentwise("UMAX", "uu", "u", "np.maximum({0}, {1})")
_componentwise("UMIN", "uu", "u", "np.minimum({0}, {1})")
_componentwise("AND", "uu", "u", "({0} & {1})")
_componentwise("OR", "uu", "u", "({0} | {1})")
_componentwise("XOR", "uu", "u", "({0} ^ {1})")
_componentwise("NOT", "u", "u", "(~{0})")
_componentwise("SHL", "uu", "u", "({0} << ({1} & _U32(31)))")
_componentwise("USHR", "uu", "u", "({0} >> ({1} & _U32(31)))")
_componentwise("ISHR", "iu", "i", "({0} >> _as({1} & _U32(31), _I32))")
_componentwise("SHR", "iu", "i", "({0} >> _as({1} & _U32(31), _I32))")
_componentwise("USEQ", "uu", "u", "_b2u({0} == {1})")
_componentwise("USNE", "uu", "u", "_b2u({0} != {1})")
_componentwise("USLT", "uu", "u", "_b2u({0} < {1})")
_componentwise("USGE", "uu", "u", "_b2u({0} >= {1})")
_componentwise("ISLT", "ii", "u", "_b2u({0} < {1})")
_componentwise("ISGE", "ii", "u", "_b2u({0} >= {1})")
_componentwise("UCMP", "uff", "f", "np.where({0} != 0, {1}, {2})")
_componentwise("I2F", "i", "f", "_as({0}, _I32).astype(_F32)")
_componentwise("U2F", "u", "f", "_as({0}, _U32).astype(_F32)")
_componentwise("F2I", "f", "i", "_f2i({0})")
_componentwise("F2U", "f", "u", "_f2u({0})")
_componentwise("ARL", "f", "i", "_f2i(np.floor({0}))")
_componentwise("ARR", "f", "i", "_f2i(np.rint({0}))")
_componentwise("UARL", "i", "i", "{0}")


def _emit_kill(g: _Generator, inst: Instruction) -> None:
    lanes = g.active()
    g.emit(f"_kill = {lanes}.copy() if _kill is None else (_kill | {lanes})")


def _emit_kill_if(g: _Generator, inst: Instruction) -> None:
    conds = " | ".join(f"({g.src(inst, 0, c, 'f')} < 0)" for c in range(4))
    hit = g.tmp("k")
    g.emit(f"{hit} = {g.active()} & ({conds})")
    g.emit(f"_kill = {hit} if _kill is None else (_kill | {hit})")


OPCODE_EMITTERS["KILL"] = _emit_kill
OPCODE_EMITTERS["KILP"] = _emit_kill
OPCODE_EMITTERS["DEMOTE"] = _emit_kill
OPCODE_EMITTERS["KILL_IF"] = _emit_kill_if
OPCODE_EMITTERS["KIL"] = _emit_kill_if


def _in(inputs: list[Any], index: int, chan: int) -> Any:
    if index < len(inputs) and inputs[index] is not None:
        v = inputs[index][chan]
        if v is not None:
            return v
    return F32(0.0)


def _sv(values: dict[str, Any], semantic: str, chan: int) -> Any:
    v = values.get(semantic)
    if v is None:
        raise ShaderRuntimeError(f"system value {semantic} is not provided by this stage")
    c = v[chan]
    return F32(0.0) if c is None else c


_RUNTIME["_in"] = _in
_RUNTIME["_sv"] = _sv


# ----------------------------------------------------------------------------
# Texture instructions: decode TGSI operand layouts into TexRequests
# ----------------------------------------------------------------------------


def _tex_unit(g: _Generator, inst: Instruction, k: int) -> int:
    if k >= len(inst.src):
        raise g.fail(inst, f"needs a sampler operand (source {k})")
    reg = inst.src[k].reg
    if reg.file not in ("SAMP", "SVIEW"):
        raise g.fail(inst, f"source {k} must be a SAMP or SVIEW register, not {reg.file}")
    if reg.indirect is not None:
        raise UnsupportedError(
            f"{inst.opcode} with an indirectly addressed sampler is not supported"
        )
    return reg.index


def _tex_offsets(g: _Generator, inst: Instruction) -> str:
    if not inst.tex_offsets:
        return "None"
    off = inst.tex_offsets[0]
    parts = []
    for c in off.swizzle:
        parts.append(g.read_reg(off.reg.file, off.reg.index, c, "i", None))
    return "(" + ", ".join(parts) + ")"


def _tex_coords(
    g: _Generator, inst: Instruction, target: str, proj: bool = False
) -> dict[str, str]:
    """Name the coordinate components of src0 for ``target`` (tgsi_exec's layout)."""
    from .texture_api import ARRAY_TARGETS, SHADOW_TARGETS, coord_count

    comp = {c: g.src(inst, 0, c, "f") for c in range(4)}
    if proj:
        q = g.tmp("q")
        g.emit(f"{q} = {comp[3]}")
        for c in range(3):
            v = g.tmp("p")
            g.emit(f"{v} = np.divide({comp[c]}, {q}, dtype=_F32)")
            comp[c] = v
    n = coord_count(target)
    out = {"s": comp[0]}
    if n >= 2:
        out["t"] = comp[1]
    if n >= 3:
        out["r"] = comp[2]
    if target in ARRAY_TARGETS:
        out["layer"] = comp[n] if n < 4 else comp[3]
    if target in SHADOW_TARGETS:
        used = n + (1 if target in ARRAY_TARGETS else 0)
        if used < 4:
            out["ref"] = (
                comp[max(used, 2)] if target in ("SHADOW1D", "SHADOW1D_ARRAY") else comp[used]
            )
    return out


def _tex_call(g: _Generator, inst: Instruction, op: str, unit: int, fields: dict[str, str]) -> None:
    target = inst.texture or "2D"
    args = [f"op={op!r}", f"unit={unit}", f"sampler={unit}", f"target={target!r}", "n=n"]
    args += [f"{k}={v}" for k, v in fields.items()]
    args.append("quad_shape=env.quad_shape")
    res = g.tmp("tex")
    g.emit(f"{res} = env.textures.execute(_TexRequest({', '.join(args)}))")
    g.write(inst, {c: (f"_as({res}[{c}], _F32)", "f") for c in range(4)})


def _emit_tex(g: _Generator, inst: Instruction) -> None:
    op = inst.opcode
    target = inst.texture or "2D"
    fields: dict[str, str] = {}
    if op in ("TEX", "TXP", "TXB", "TXL"):
        fields.update(_tex_coords(g, inst, target, proj=op == "TXP"))
        if op == "TXB":
            fields["bias"] = g.src(inst, 0, 3, "f")
        elif op == "TXL":
            fields["lod"] = g.src(inst, 0, 3, "f")
        unit = _tex_unit(g, inst, 1)
    elif op in ("TEX2", "TXB2", "TXL2"):
        fields.update(_tex_coords(g, inst, target))
        extra = g.src(inst, 1, 0, "f")
        key = {"TEX2": "ref", "TXB2": "bias", "TXL2": "lod"}[op]
        fields[key] = extra
        unit = _tex_unit(g, inst, 2)
    elif op == "TXD":
        fields.update(_tex_coords(g, inst, target))
        fields["ddx"] = "[" + ", ".join(g.src(inst, 1, c, "f") for c in range(3)) + "]"
        fields["ddy"] = "[" + ", ".join(g.src(inst, 2, c, "f") for c in range(3)) + "]"
        unit = _tex_unit(g, inst, 3)
    else:
        raise g.fail(inst, "not a sampling opcode")
    if inst.tex_offsets:
        fields["offset"] = _tex_offsets(g, inst)
    _tex_call(g, inst, "sample", unit, fields)


def _emit_txf(g: _Generator, inst: Instruction) -> None:
    from .texture_api import ARRAY_TARGETS, coord_count

    target = inst.texture or "2D"
    comp = {c: g.src(inst, 0, c, "i") for c in range(4)}
    n = coord_count(target)
    fields = {"s": comp[0]}
    if n >= 2:
        fields["t"] = comp[1]
    if n >= 3:
        fields["r"] = comp[2]
    if target in ARRAY_TARGETS:
        fields["layer"] = comp[n]
    if target not in ("BUFFER", "2D_MSAA", "2D_ARRAY_MSAA"):
        fields["lod"] = comp[3]
    if inst.tex_offsets:
        fields["offset"] = _tex_offsets(g, inst)
    _tex_call(g, inst, "fetch", _tex_unit(g, inst, 1), fields)


def _emit_txq(g: _Generator, inst: Instruction) -> None:
    _tex_call(g, inst, "size", _tex_unit(g, inst, 1), {"lod": g.src(inst, 0, 0, "i")})


for _name in ("TEX", "TXP", "TXB", "TXL", "TEX2", "TXB2", "TXL2", "TXD"):
    OPCODE_EMITTERS[_name] = _emit_tex
OPCODE_EMITTERS["TXF"] = _emit_txf
OPCODE_EMITTERS["TXQ"] = _emit_txq

from .texture_api import TexRequest as _TexRequestType  # noqa: E402

_RUNTIME["_TexRequest"] = _TexRequestType

"""Compile a TGSI shader into a vectorized Python kernel.

Theory of operation
-------------------
A kernel runs one shader over N invocations ("lanes") at once: the pixels of
a batch of quads, the vertices of a draw, the threads of a compute block.
``compile_shader(shader)`` generates Python source once per shader (and
caches the kernel) in which every register channel is a local variable
holding a numpy array of N lanes, or a numpy scalar when the value is uniform
(constants, immediates, anything computed only from them).  Each TGSI
instruction becomes a few numpy expressions; nothing is interpreted per
instruction or per lane at run time.  The emitters live in ``ops_alu``
(32-bit arithmetic, logic, conversions, kill), ``ops_wide`` (doubles and
64-bit integers), ``ops_tex`` (texture requests) and ``ops_mem`` (memory,
barriers, geometry output); runtime helpers in :mod:`.runtime`.

Registers are 4 x 32 bits viewed as float, int or uint (tgsi.rst "Basics").
The generator tracks which view each variable currently holds and inserts a
free ``.view()`` where an instruction reads it as another type.  Wherever
generated code jumps or is jumped to, every register is brought back to the
float view first, so the static types agree on every path.

Control flow is per lane.  A boolean lane mask says which lanes execute;
when it is not "all lanes", a write becomes ``where(mask, new, old)``, so an
inactive lane never changes a register (array registers, memory stores and
atomics take the mask too).  IF/UIF/ELSE/ENDIF narrow the mask (a branch that
no lane takes is skipped outright); BGNLOOP/ENDLOOP repeat the body while any
lane is still in the loop; BRK/CONT/RET remove lanes until the end of the
loop / iteration / subroutine; SWITCH/CASE/DEFAULT track which lanes matched
and fall through until BRK; CAL inlines the subroutine body (so recursion is
refused at compile time); BRA (a legacy forward jump) parks lanes until its
target.  KILL adds active lanes to the kill mask; killed lanes keep executing
(their results are discarded), so derivatives stay defined, but their stores
and atomics do not land.  Every loop of a call shares one budget of
MAX_LOOP_ITERATIONS iterations, as llvmpipe's loop limiter: once it is spent,
each loop ends at its ENDLOOP (no error).

The kernel's Python does not nest as the TGSI does: the code between jumps
forms *blocks*, run by a flat dispatch loop (``_Generator.assemble``), so a
program nests loops and IFs as deep as MAX_CONTROL_FLOW_DEPTH allows (Python
itself allows 20 nested loops).  Memory stays bounded whatever the program's
length: an instruction's temporaries are reused by the next instruction,
and each nesting level has one set of mask and condition variables.
Generation is linear in the program (every per-instruction lookup is
precomputed), and what a kernel may hold is checked first against the
limits of :mod:`gallium.tgsi.limits` (the screen's shader caps).

Derivatives (DDX/DDY and the _FINE forms) work on 2x2 quads: the lanes of a
fragment kernel are laid out so that reshaping them to ``(A, 2, B, 2)``
gives ``[quad_row, y_in_quad, quad_column, x_in_quad]`` (``ExecEnv.quad_shape``,
quads aligned to even pixels; y_in_quad 1 is the larger row index).

Decisions where TGSI leaves a result open (documented at the emitters):

* Float: MIN/MAX return the non-NaN operand (fminf/fmaxf); saturate maps NaN
  to 0; CLAMP follows tgsi.rst's ``(x < y) ? y : (x > z) ? z : x``; SSG and
  CMP treat NaN and -0.0 as "not negative"; ROUND rounds half to even; ARR
  is ``floor(x + 0.5)``; RSQ takes ``|x|`` (tgsi.rst).
* Conversions out of range, NaN and infinities: x86 "integer indefinite" as
  measured on softpipe (F2I -> 0x80000000, F2U per :mod:`.runtime`).
* Integer division by zero: IDIV 0, MOD -1, UDIV/UMOD 0xFFFFFFFF;
  INT_MIN / -1 wraps.  Shift counts use their low 5 bits (6 for 64-bit).
* Indirect register access outside the declared array (or, without an array
  id, outside the file's declared registers) reads 0 and drops writes;
  constant-buffer reads past the bound buffer read 0 (tgsi_exec's bounds
  check); an immediate index outside the immediates reads 0.
* DDX coarse uses the quad's second row, DDY coarse its left column (what
  softpipe computes; measured).

The generated source is kept on the kernel (``kernel.source``) for
debugging.  A kernel is a pure function of its ``ExecEnv`` and holds no
per-call state, so one kernel may run on several threads at once.
"""

from __future__ import annotations

import itertools
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..pipe.errors import PipeValueError, UnsupportedError
from . import ops_alu, ops_mem, ops_tex, ops_wide  # noqa: F401  (register emitters)
from . import runtime as rt
from .codegen import OPCODE_EMITTERS
from .limits import NUMPIPE, ShaderLimitError, check_limits, inlined_error
from .memory_api import MemoryRequest
from .parser import parse
from .runtime import MAX_LOOP_ITERATIONS, ShaderRuntimeError
from .shader import Declaration, Dst, Indirect, Instruction, Register, Shader
from .texture_api import TexRequest

F32, I32, U32 = np.float32, np.int32, np.uint32
_TYPE_NAMES = {"f": "_F32", "i": "_I32", "u": "_U32"}

MAX_CALL_DEPTH = 32
# Generated lines of a kernel at most: a program within the limits of
# gallium/tgsi/limits.py stays far below (about 14 lines an instruction at
# worst); this only guards against a generator bug.
MAX_KERNEL_LINES = 24 * NUMPIPE.instructions + 50_000

__all__ = [
    "MAX_LOOP_ITERATIONS",
    "ExecEnv",
    "GsEvent",
    "Kernel",
    "KernelResult",
    "ShaderCompileError",
    "ShaderRuntimeError",
    "compile_shader",
]


class ShaderCompileError(PipeValueError):
    """A shader that parses but cannot be compiled (bad structure or operands)."""


# ----------------------------------------------------------------------------
# Execution environment and results
# ----------------------------------------------------------------------------


@dataclass
class ExecEnv:
    """Everything a kernel reads besides its own registers.

    ``inputs[i]`` is IN[i] as four channels (arrays of ``n`` lanes, numpy
    scalars, or None for zero).  ``vertices[v][i]`` is the same for the 2-D
    inputs ``IN[v][i]`` of geometry (and tessellation) kernels, where lane k
    is the invocation of primitive k.  ``consts[b]`` is constant buffer b as
    raw little-endian bytes (``np.uint8`` array) or None.  ``system_values``
    maps a semantic name (``"INSTANCEID"``) to four channels.  ``quad_shape``
    is ``(A, B)`` for fragment kernels (see the module docstring).
    ``textures`` answers :class:`~gallium.tgsi.texture_api.TexRequest`,
    ``memory`` answers :class:`~gallium.tgsi.memory_api.MemoryRequest`;
    ``helper_mask`` marks helper lanes (covered by no primitive), whose
    stores and atomics never land.
    """

    n: int
    inputs: list[Any] = field(default_factory=list)
    consts: list[Any] = field(default_factory=list)
    system_values: dict[str, Any] = field(default_factory=dict)
    quad_shape: tuple[int, int] | None = None
    textures: Any = None
    memory: Any = None
    helper_mask: Any = None
    vertices: Any = None
    tcs: Any = None  # a tessellation control kernel's outputs (runtime.TcsOutputs)

    def ddx(self, x: Any, fine: bool = False) -> Any:
        return rt.ddx(x, self.quad_shape, fine)

    def ddy(self, x: Any, fine: bool = False) -> Any:
        return rt.ddy(x, self.quad_shape, fine)


@dataclass
class GsEvent:
    """One EMIT or ENDPRIM of a geometry kernel, for the lanes in ``mask``.

    ``kind`` is ``"vertex"`` (EMIT: ``outputs`` maps each OUT register to its
    four channels at that moment, float32-viewed bits, arrays or scalars) or
    ``"end"`` (ENDPRIM: the lanes' current strip ends).  ``stream`` is the
    vertex stream (uint, per lane or uniform).  Lane k's output is the
    events whose mask contains k, in list order.  EMIT beyond
    GS_MAX_OUTPUT_VERTICES vertices (counted per lane over all streams) is
    dropped for that lane; at the end of the program an ``"end"`` event
    closes the strips of lanes that emitted since their last ENDPRIM.
    """

    kind: str
    stream: Any
    mask: np.ndarray
    outputs: dict[int, list[Any]] | None = None


@dataclass
class KernelResult:
    """What a kernel run produced: OUT registers, the kill mask, and GS output."""

    outputs: dict[int, list[Any]]
    kill: Any  # bool array of lanes killed, or None if KILL never ran
    emitted: list[GsEvent] | None = None  # geometry kernels only


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
        # FBFETCH reads the colour buffers: fragments shaded in order (workers/raster.py)
        self.uses_fbfetch = any(i.opcode == "FBFETCH" for i in shader.instructions)
        self.uses_derivatives = any(i.opcode in _DERIV_OPS for i in shader.instructions)
        self.writes_depth = (
            any(d.semantic == "POSITION" for d in self.output_decls.values())
            and shader.processor == "FRAG"
        )
        self.const_buffers = sorted(
            {d.dimension or 0 for d in shader.declarations if d.file == "CONST"}
        )

    def __call__(self, env: ExecEnv) -> KernelResult:
        # Integer wrap-around, division by zero and NaN are part of TGSI's
        # arithmetic, not errors: keep numpy quiet about them.
        with np.errstate(all="ignore"):
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

# Equal programs share one kernel: every kernel a shader still holds (found
# through weak references), and the RECENT_KERNELS compiled or fetched last
# (held, so a program destroyed and made again is not compiled again).  A
# program that makes shaders as it goes, never the same twice, holds no more
# than those: before, every kernel stayed until 512 had piled up (~12 MiB),
# and then all went, the hot ones too.
RECENT_KERNELS = 64
_cache_lock = threading.Lock()
_live: weakref.WeakValueDictionary[Shader, Kernel] = weakref.WeakValueDictionary()
_recent: OrderedDict[Shader, Kernel] = OrderedDict()


def _remember(shader: Shader, kernel: Kernel) -> None:
    """Make ``kernel`` the most recent (caller holds the lock)."""
    _recent[shader] = kernel
    _recent.move_to_end(shader)
    while len(_recent) > RECENT_KERNELS:
        _recent.popitem(last=False)


def cache_size() -> tuple[int, int]:
    """(kernels shared, kernels held as recent): for tests and leak hunts."""
    with _cache_lock:
        return len(_live), len(_recent)


def compile_shader(shader: Shader | str) -> Kernel:
    """Compile (or fetch from the cache) the kernel of a shader or TGSI text.

    A program beyond numpipe's limits (:data:`gallium.tgsi.limits.NUMPIPE`: the
    screen's shader caps) is refused before anything is generated: text with a
    TgsiSyntaxError at the offending number, a Shader with a ShaderLimitError.
    """
    if isinstance(shader, str):
        shader = parse(shader, NUMPIPE)
    with _cache_lock:
        kernel = _live.get(shader)
        if kernel is not None:
            _remember(shader, kernel)
            return kernel
    check_limits(shader, NUMPIPE)
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
        kernel = _live.setdefault(shader, kernel)  # (another thread's, if it won)
        _remember(shader, kernel)
    return kernel


def _immediate_namespace(shader: Shader) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    table = np.zeros((max(len(shader.immediates), 1), 4), U32)
    for i, imm in enumerate(shader.immediates):
        raw = np.array(imm.bits, dtype=U32)
        table[i] = raw
        if imm.type == "FLT32":
            vals = raw.view(F32)
        elif imm.type == "INT32":
            vals = raw.view(I32)
        else:  # UINT32 and the 64-bit types keep their raw words
            vals = raw
        for c in range(4):
            ns[f"IMM{i}_{c}"] = vals[c]
    ns["_IMMS"] = table
    return ns


_RUNTIME: dict[str, Any] = {
    "np": np,
    "rt": rt,
    "_F32": F32,
    "_I32": I32,
    "_U32": U32,
    "_F64": np.float64,
    "_I64": np.int64,
    "_U64": np.uint64,
    "_where": rt.where,
    "_as": rt.as_view,
    "_any": rt.any_lane,
    "_full": rt.full,
    "_sat": rt.sat,
    "_NO": np.False_,
    "_TexRequest": TexRequest,
    "_MemoryRequest": MemoryRequest,
    "_GsEvent": GsEvent,
    "KernelResult": KernelResult,
    "MAX_LOOP_ITERATIONS": MAX_LOOP_ITERATIONS,
}

# Opcodes numpipe knows but cannot run, with the reason.
_UNSUPPORTED = {
    "BALLOT": "subgroup operations are not supported (no fixed subgroup size)",
    "VOTE_ANY": "subgroup operations are not supported (no fixed subgroup size)",
    "VOTE_ALL": "subgroup operations are not supported (no fixed subgroup size)",
    "VOTE_EQ": "subgroup operations are not supported (no fixed subgroup size)",
    "READ_FIRST": "subgroup operations are not supported (no fixed subgroup size)",
    "READ_INVOC": "subgroup operations are not supported (no fixed subgroup size)",
}


# ----------------------------------------------------------------------------
# Code generation
# ----------------------------------------------------------------------------


@dataclass
class _Frame:
    """One open control-flow construct while generating code.  Its variables
    are named after its nesting level (``_condL3``), so a kernel holds one
    set per level, not one per construct."""

    kind: str  # "if", "loop", "switch", "sub"
    parent_mask: str | None
    cond: str | None = None  # IF: the condition variable
    brk: str | None = None  # LOOP/SWITCH: lanes that left with BRK
    cont: str | None = None  # LOOP: lanes that skipped to the next iteration
    ret: str | None = None  # SUB: lanes that executed RET
    base: str | None = None  # LOOP/SWITCH: mask on entry
    sw_value: str | None = None
    sw_matched: str | None = None
    sw_any: str | None = None
    in_else: bool = False
    skip: int = -1  # IF/ELSE: the label where a part no lane takes jumps to
    top: int = -1  # LOOP: the label of each iteration's start
    exit: int = -1  # LOOP: the label after ENDLOOP


@dataclass
class _Segment:
    """A run of registers of one file kept in a (count, 4, n) array."""

    name: str
    file: str
    base: int
    count: int


_VALUE_FILES = ("TEMP", "OUT", "IN", "ADDR")
_OPENERS = ("IF", "UIF", "IFC", "BGNLOOP", "SWITCH", "BGNSUB")
_CLOSERS = ("ENDIF", "ENDLOOP", "ENDSWITCH", "ENDSUB")
# Blocks of generated code per dispatch group (see _Generator.assemble).
_GROUP = 32
_LABEL = re.compile(r"__L(\d+)__")


class _Generator:
    """Generates one kernel's source.

    The body is a list of *blocks* of straight-line code.  Where TGSI control
    flow branches (IF/ELSE/ENDIF, loops, CAL) the generator ends a block with
    a jump to a *label* (``_pc = __L7__``, patched with the block's number at
    the end) and :meth:`assemble` puts the blocks in a flat dispatch loop, so
    the Python nesting of the kernel never follows the TGSI nesting (Python
    allows 20 nested loops and 100 levels of indentation; TGSI programs nest
    MAX_CONTROL_FLOW_DEPTH deep).  A program without control flow is one
    block, emitted as it is.
    """

    def __init__(self, shader: Shader) -> None:
        self.shader = shader
        self.insts = shader.instructions
        self.blocks: list[list[str]] = [[]]
        self.lines = self.blocks[0]  # the block being generated
        self.nlines = 0
        self.depth = 0  # indentation inside the current block
        self.ended = False  # the current block ends with a jump
        self.label_block: dict[int, int] = {}  # label -> the block it starts
        self.labels = itertools.count()
        self.types: dict[str, str] = {}  # variable -> "f" | "i" | "u"
        self.nonfloat: set[str] = set()  # registers whose current view is not float
        self.local_ids = 0  # instruction-local temporaries (reset per instruction)
        self.inlined = 0  # instructions generated, subroutines counted where called
        self.mask: str | None = None  # current lane mask variable (None = all lanes)
        self.frames: list[_Frame] = []
        self.main_ret: str | None = None
        self.registers: set[str] = set()
        self.prologue: list[str] = []
        self.uses: set[str] = set()
        self.call_depth = 0
        self.pc = 0
        self.decls: dict[tuple[str, int], Declaration] = {}
        for d in shader.declarations:
            for r in range(d.first, d.last + 1):
                self.decls.setdefault((d.file, r), d)
        self.outputs = sorted(
            {i for d in shader.declarations if d.file == "OUT" for i in range(d.first, d.last + 1)}
            | {
                d.reg.index
                for inst in self.insts
                for d in inst.dst
                if d.reg.file == "OUT" and d.reg.indirect is None
            }
        )
        self.two_d_inputs = shader.processor in ("GEOM", "TESS_CTRL", "TESS_EVAL")
        self.tcs = shader.processor == "TESS_CTRL"
        self.sub_starts = self._subroutines()
        self.switch_cases = self._switch_cases()
        self._innermost: list[int] | None = None  # (BRA only: see path())
        self._enclosing: dict[int, int] = {}
        self.pending_jumps: dict[int, str] = {}  # BRA target -> its parked lanes
        self.uses_loops = any(i.opcode == "BGNLOOP" for i in self.insts)
        self._file_ranges: dict[Any, tuple[int, int]] | None = None
        self.const_reads: set[tuple[int, int]] = set()
        self.const_bufs: set[int] = set()
        self.sv_reads: set[int] = set()
        self.segments: list[_Segment] = []
        self.reg_segment: dict[tuple[str, int], _Segment] = {}
        self.ranges: dict[tuple[str, int], tuple[int, int]] = {}

    # -- small helpers ---------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.nlines += 1
        if self.nlines > MAX_KERNEL_LINES:
            raise ShaderCompileError(
                f"internal error: the kernel exceeds {MAX_KERNEL_LINES} lines of generated code"
            )
        self.lines.append("    " * self.depth + line)

    def tmp(self, prefix: str = "v") -> str:
        """A fresh name for a temporary of the current instruction.  The next
        instruction reuses the names, so a kernel keeps a few temporaries alive,
        not one per instruction (1000 instructions over 64k lanes held 1 GiB);
        what outlives an instruction is a register or a nesting level's variable."""
        self.local_ids += 1
        return f"_{prefix}{self.local_ids - 1}"

    def set_type(self, name: str, typ: str) -> None:
        self.types[name] = typ
        if typ == "f":
            self.nonfloat.discard(name)
        else:
            self.nonfloat.add(name)

    # -- blocks and labels -------------------------------------------------------------

    def new_label(self) -> int:
        return next(self.labels)

    def place(self, label: int) -> None:
        """Start the block ``label`` names; the current one falls through to it.
        Every register is in its float view at a label (as on every jump)."""
        self.normalize()
        if not self.ended:
            self.emit(f"_pc = __L{label}__")
        self.lines = []
        self.blocks.append(self.lines)
        self.label_block[label] = len(self.blocks) - 1
        self.ended = False

    def branch(self, cond: str, if_true: int, if_false: int) -> None:
        """End the current block: continue at ``if_true`` or ``if_false``
        (both later in the kernel)."""
        self.normalize()
        self.emit(f"_pc = __L{if_true}__ if {cond} else __L{if_false}__")
        self.ended = True

    def jump_back(self, label: int) -> None:
        """End the current block: continue at the earlier block ``label``."""
        self.normalize()
        self.emit(f"_pc = __L{label}__")
        self.emit("continue")
        self.ended = True

    def assemble(self, indent: int) -> list[str]:
        """The blocks as the body of a function at ``indent`` levels: as they are
        when there is one, else in a dispatch loop.  ``_pc`` selects the block;
        a block ends by setting ``_pc`` to a later block (the tests below find
        it) or to an earlier one and ``continue``.  The tests are grouped
        (_GROUP blocks, _GROUP groups of groups) so a jump costs about
        _GROUP * 3 comparisons however long the kernel is."""
        pad = "    " * indent
        if len(self.blocks) == 1:
            return [pad + line for line in self.blocks[0]]
        label_block = self.label_block

        def patch(line: str) -> str:
            if "__L" not in line:
                return line
            return _LABEL.sub(lambda m: str(label_block[int(m.group(1))]), line)

        out = [pad + "_pc = 0", pad + "while True:"]

        def group(lo: int, hi: int, size: int, depth: int) -> None:
            at = pad + "    " * depth
            if size == 1:
                for b in range(lo, hi):
                    out.append(at + f"if _pc == {b}:")
                    out.extend(at + "    " + patch(line) for line in self.blocks[b] or ["pass"])
                return
            for sub in range(lo, hi, size):
                out.append(at + f"if {sub} <= _pc < {min(hi, sub + size)}:")
                group(sub, min(hi, sub + size), size // _GROUP, depth + 1)

        nb = len(self.blocks)
        size = 1
        while size * _GROUP < nb:
            size *= _GROUP
        group(0, nb, size, 1)
        out.append(pad + "    break")
        return out

    def fail(self, inst: Instruction | None, message: str) -> ShaderCompileError:
        where = f"TGSI line {inst.line}: {inst.opcode}: " if inst is not None else ""
        return ShaderCompileError(where + message)

    def unsupported(self, inst: Instruction, what: str) -> UnsupportedError:
        return UnsupportedError(f"TGSI line {inst.line}: {inst.opcode}: {what} is not supported")

    def declaration(self, file: str, index: int) -> Declaration | None:
        return self.decls.get((file, index))

    def _subroutines(self) -> dict[int, int]:
        """BGNSUB instruction index -> matching ENDSUB index."""
        subs: dict[int, int] = {}
        stack: list[int] = []
        for i, inst in enumerate(self.insts):
            if inst.opcode == "BGNSUB":
                stack.append(i)
            elif inst.opcode == "ENDSUB":
                if not stack:
                    raise self.fail(inst, "ENDSUB without BGNSUB")
                subs[stack.pop()] = i
        if stack:
            raise self.fail(self.insts[stack[-1]], "BGNSUB without ENDSUB")
        return subs

    def path(self, pc: int) -> tuple[int, ...]:
        """The open constructs at instruction ``pc``, outermost first (an ELSE
        opens a new one).  Computed for BRA only: one pass records each
        instruction's innermost construct and each construct's enclosing one."""
        if self._innermost is None:
            innermost: list[int] = []
            stack: list[int] = []
            for i, inst in enumerate(self.insts):
                op = inst.opcode
                top = stack[-1] if stack else -(1 << 40)
                if op in _CLOSERS and stack:
                    innermost.append(top)
                    stack.pop()
                    continue
                if op == "ELSE" and stack:
                    self._enclosing[-1 - i] = self._enclosing[stack[-1]]
                    stack[-1] = -1 - i
                innermost.append(stack[-1] if stack else -(1 << 40))
                if op in _OPENERS:
                    self._enclosing[i] = stack[-1] if stack else -(1 << 40)
                    stack.append(i)
            self._innermost = innermost
        out: list[int] = []
        c = self._innermost[pc]
        while c != -(1 << 40):
            out.append(c)
            c = self._enclosing[c]
        return tuple(reversed(out))

    def _switch_cases(self) -> dict[int, list[Instruction]]:
        """SWITCH instruction index -> its CASE instructions (not those of nested
        switches), in one pass."""
        cases: dict[int, list[Instruction]] = {}
        stack: list[int] = []
        for i, inst in enumerate(self.insts):
            if inst.opcode == "SWITCH":
                cases[i] = []
                stack.append(i)
            elif inst.opcode == "ENDSWITCH" and stack:
                stack.pop()
            elif inst.opcode == "CASE" and stack:
                cases[stack[-1]].append(inst)
        return cases

    # -- register storage --------------------------------------------------------------

    def _plan_arrays(self) -> None:
        """Registers that are ever addressed indirectly live in numpy arrays."""
        wanted: dict[str, list[tuple[int, int]]] = {}
        for inst in self.insts:
            for op in list(inst.dst) + list(inst.src):
                r = op.reg
                if r.indirect is None or r.file not in _VALUE_FILES:
                    continue
                if r.file == "IN" and self.two_d_inputs and r.dimension is not None:
                    continue
                if r.file == "OUT" and self.tcs:
                    continue  # (the patch's shared outputs: see _tcs_output)
                rng = self._array_range(inst, r.file, r.indirect.array_id)
                self.ranges[(r.file, r.indirect.array_id)] = rng
                wanted.setdefault(r.file, []).append(rng)
        for file, rngs in sorted(wanted.items()):
            merged: list[list[int]] = []
            for lo, hi in sorted(rngs):
                if merged and lo <= merged[-1][1]:
                    merged[-1][1] = max(merged[-1][1], hi)
                else:
                    merged.append([lo, hi])
            for k, (lo, hi) in enumerate(merged):
                seg = _Segment(f"{file}_a{k}", file, lo, hi - lo + 1)
                self.segments.append(seg)
                for r in range(lo, hi + 1):
                    self.reg_segment[(file, r)] = seg

    def _array_range(self, inst: Instruction, file: str, array_id: int) -> tuple[int, int]:
        if self._file_ranges is None:  # once: (file, array id) and file -> declared range
            ranges: dict[Any, tuple[int, int]] = {}
            for d in self.shader.declarations:
                if d.array_id:
                    ranges.setdefault((d.file, d.array_id), (d.first, d.last))
                lo, hi = ranges.get(d.file, (d.first, d.last))
                ranges[d.file] = (min(lo, d.first), max(hi, d.last))
            self._file_ranges = ranges
        rng = self._file_ranges.get((file, array_id)) if array_id else None
        if rng is not None:
            return rng
        rng = self._file_ranges.get(file)
        if rng is None:
            raise self.fail(inst, f"indirect addressing of {file} needs a DCL {file}")
        return rng

    def reg_var(self, file: str, index: int, chan: int) -> str:
        prefix = {"TEMP": "t", "OUT": "o", "IN": "i", "ADDR": "a", "SV": "s"}[file]
        name = f"{prefix}{index}_{chan}"
        self.registers.add(name)
        self.types.setdefault(name, "f")
        return name

    def _array_access(
        self, file: str, index: int, indirect: Indirect | None
    ) -> tuple[_Segment, str, int, int] | None:
        """(segment, per-lane index expression, lo, hi) for an array-backed access."""
        if indirect is None:
            seg = self.reg_segment.get((file, index))
            if seg is None:
                return None
            return seg, str(index - seg.base), 0, seg.count - 1
        lo, hi = self.ranges[(file, indirect.array_id)]
        seg = self.reg_segment[(file, lo)]
        idx = self.index_expr(index - seg.base, indirect)
        return seg, idx, lo - seg.base, hi - seg.base

    # -- operand reads -----------------------------------------------------------------

    def index_expr(self, offset: int, indirect: Indirect | None) -> str:
        """Python expression for a (possibly per-lane) register index."""
        if indirect is None:
            return str(offset)
        if indirect.file not in ("ADDR", "TEMP"):
            raise ShaderCompileError(
                f"indirect addressing through {indirect.file} (only ADDR and TEMP hold addresses)"
            )
        addr = self.read_reg(Register(indirect.file, indirect.index), indirect.component, "i")
        return f"({addr} + _I32({offset}))" if offset else addr

    def read_reg(self, reg: Register, chan: int, want: str) -> str:
        """An expression for one channel of a register, viewed as ``want``."""
        t = _TYPE_NAMES[want]
        file, index = reg.file, reg.index
        if file == "IMM":
            if reg.indirect is not None:
                idx = self.index_expr(index, reg.indirect)
                return f"_as(rt.gather_imm(_IMMS, {idx}, {chan}), {t})"
            if not 0 <= index < len(self.shader.immediates):
                raise ShaderCompileError(f"IMM[{index}] is not declared")
            imm_t = {"FLT32": "f", "INT32": "i"}.get(self.shader.immediates[index].type, "u")
            name = f"IMM{index}_{chan}"
            return name if imm_t == want else f"_as({name}, {t})"
        if file == "CONST":
            return self._read_const(reg, chan, want)
        if file == "SV":
            if reg.indirect is not None:
                raise ShaderCompileError("indirect addressing of SV registers is not supported")
            if (("SV", index)) not in self.decls:
                raise ShaderCompileError(f"SV[{index}] is read but not declared")
            self.sv_reads.add(index)
            return self.view(self.reg_var("SV", index, chan), want)
        if file == "IN" and self.two_d_inputs and reg.dimension is not None:
            return self._read_vertex_input(reg, chan, want)
        if file == "OUT" and self.tcs:
            expr = f"rt.tcs_load(env.tcs, {self._tcs_output(reg)}, {chan}, n)"
            return expr if want == "f" else f"_as({expr}, {_TYPE_NAMES[want]})"
        if file in _VALUE_FILES:
            if reg.dimension is not None or reg.dim_indirect is not None:
                raise ShaderCompileError(f"{file} registers have no second dimension here")
            acc = self._array_access(file, index, reg.indirect)
            if acc is not None:
                seg, idx, lo, hi = acc
                expr = f"rt.gather({seg.name}, {idx}, {chan}, {lo}, {hi})"
                return expr if want == "f" else f"_as({expr}, {t})"
            return self.view(self.reg_var(file, index, chan), want)
        raise ShaderCompileError(f"register file {file} cannot be read as a value")

    def _read_const(self, reg: Register, chan: int, want: str) -> str:
        t = _TYPE_NAMES[want]
        if reg.dim_indirect is not None:
            bidx = self.index_expr(reg.dimension or 0, reg.dim_indirect)
            idx = self.index_expr(reg.index, reg.indirect)
            return f"rt.const_read2(env.consts, {bidx}, {idx}, {chan}, {t}, n)"
        b = reg.dimension if reg.dimension is not None else 0
        self.const_bufs.add(b)
        if reg.indirect is not None:
            idx = self.index_expr(reg.index, reg.indirect)
            return f"rt.const_read(cb{b}, {idx}, {chan}, {t})"
        self.const_reads.add((b, reg.index))
        name = f"c{b}_{reg.index}_{chan}"
        return name if want == "f" else f"_as({name}, {t})"

    def _read_vertex_input(self, reg: Register, chan: int, want: str) -> str:
        if reg.indirect is None and reg.dim_indirect is None:
            name = f"v{reg.dimension}_{reg.index}_{chan}"
            if name not in self.registers:
                self.registers.add(name)
                self.types[name] = "f"
                self.prologue.append(
                    f"{name} = rt.read_vertex_input(env.vertices, {reg.dimension}, "
                    f"{reg.index}, {chan})"
                )
            return self.view(name, want)
        vidx = self.index_expr(reg.dimension or 0, reg.dim_indirect)
        iidx = self.index_expr(reg.index, reg.indirect)
        expr = f"rt.vertex_gather(env.vertices, {vidx}, {iidx}, {chan}, n)"
        return expr if want == "f" else f"_as({expr}, {_TYPE_NAMES[want]})"

    def view(self, name: str, want: str) -> str:
        have = self.types.get(name, "f")
        if have == want:
            return name
        return f"_as({name}, {_TYPE_NAMES[want]})"

    def src_raw(self, inst: Instruction, k: int, chan: int, want: str = "f") -> str:
        """Channel ``chan`` of source ``k`` after swizzle, without modifiers."""
        if k >= len(inst.src):
            raise self.fail(inst, f"needs source operand {k}")
        s = inst.src[k]
        return self.read_reg(s.reg, s.swizzle[chan], want)

    def src(self, inst: Instruction, k: int, chan: int, want: str = "f") -> str:
        """Channel ``chan`` of source ``k`` after swizzle and modifiers, as ``want``.

        Absolute and negate act on the type the instruction reads (tgsi_exec's
        fetch_source: float negate for float operands, integer negate for
        integer operands).
        """
        expr = self.src_raw(inst, k, chan, want)
        s = inst.src[k]
        if s.absolute:
            expr = f"np.abs({expr})"
        if s.negate:
            expr = f"(_U32(0) - {expr})" if want == "u" else f"(-{expr})"
        return expr

    # -- writes ------------------------------------------------------------------------

    def write(self, inst: Instruction, results: dict[int, tuple[str, str]], dst_index: int = 0):
        """Write per-channel results ``{chan: (expr, type)}`` to dst ``dst_index``.

        Every result is first evaluated into a fresh temporary, so a
        destination that is also a source is read before it is written.
        """
        if dst_index >= len(inst.dst):
            raise self.fail(inst, f"needs destination operand {dst_index}")
        d: Dst = inst.dst[dst_index]
        chans: list[tuple[int, str, str]] = []
        for chan in range(4):
            if not (d.writemask >> chan & 1) or chan not in results:
                continue
            expr, typ = results[chan]
            if inst.saturate and typ == "f":
                expr = f"_sat({expr})"
            chans.append((chan, expr, typ))
        if not chans:
            return
        reg = d.reg
        plain = (
            reg.file in ("TEMP", "OUT", "ADDR")
            and not (reg.file == "OUT" and self.tcs)  # (shared by the patch: store())
            and reg.dimension is None
            and reg.dim_indirect is None
            and self._array_access(reg.file, reg.index, reg.indirect) is None
        )
        if plain:
            # One tuple assignment: every channel's value is computed before any
            # is stored (a destination that is also a source), with no temporaries.
            targets, values = [], []
            for chan, expr, typ in chans:
                target = self.reg_var(reg.file, reg.index, chan)
                if self.mask is not None:
                    expr = f"_where({self.mask}, {expr}, {self.view(target, typ)})"
                targets.append(target)
                values.append(expr)
            self.emit(f"{', '.join(targets)} = {', '.join(values)}")
            for (_chan, _expr, typ), target in zip(chans, targets):
                self.set_type(target, typ)
            return
        staged: list[tuple[int, str, str]] = []
        for chan, expr, typ in chans:
            v = self.tmp()
            self.emit(f"{v} = {expr}")
            staged.append((chan, v, typ))
        for chan, v, typ in staged:
            self.store(inst, d, chan, v, typ)

    def store(self, inst: Instruction, d: Dst, chan: int, value: str, typ: str) -> None:
        reg = d.reg
        file = reg.file
        if file == "NULL":
            return
        if file not in ("TEMP", "OUT", "ADDR"):
            raise self.fail(inst, f"cannot write to register file {file}")
        if file == "OUT" and self.tcs:
            bits = value if typ == "f" else f"_as({value}, _F32)"
            self.emit(
                f"rt.tcs_store(env.tcs, {self._tcs_output(reg)}, {chan}, {bits}, {self.mask})"
            )
            return
        if reg.dimension is not None or reg.dim_indirect is not None:
            raise self.unsupported(inst, f"writing 2-D {file} registers (tessellation control)")
        acc = self._array_access(file, reg.index, reg.indirect)
        if acc is not None:
            seg, idx, lo, hi = acc
            self.emit(f"rt.scatter({seg.name}, {idx}, {chan}, {value}, {self.mask}, {lo}, {hi})")
            return
        target = self.reg_var(file, reg.index, chan)
        if self.mask is None:
            self.emit(f"{target} = {value}")
        else:
            old = self.view(target, typ)
            self.emit(f"{target} = _where({self.mask}, {value}, {old})")
        self.set_type(target, typ)

    def _tcs_output(self, reg: Register) -> str:
        """``vertex, register`` index expressions of a tessellation control
        output: ``OUT[v][i]`` is output vertex v's register i (v -1 for a
        per-patch ``OUT[i]``), shared by the patch's invocations."""
        idx = self.index_expr(reg.index, reg.indirect)
        if reg.dimension is None and reg.dim_indirect is None:
            return f"-1, {idx}"
        return f"{self.index_expr(reg.dimension or 0, reg.dim_indirect)}, {idx}"

    def output_snapshot(self, o: int) -> list[str]:
        """Expressions copying the four channels of OUT[o] (float view)."""
        acc = self._array_access("OUT", o, None)
        if acc is not None:
            seg, idx, _lo, _hi = acc
            return [f"{seg.name}[{idx}, {c}].copy()" for c in range(4)]
        return [self.view(self.reg_var("OUT", o, c), "f") for c in range(4)]

    def normalize(self) -> None:
        """Bring every register back to the float view (at a jump or a label)."""
        for name in sorted(self.nonfloat):
            self.emit(f"{name} = _as({name}, _F32)")
            self.types[name] = "f"
        self.nonfloat.clear()

    # -- masks -------------------------------------------------------------------------

    def alive(self) -> list[str]:
        """Masks of lanes that left the current constructs (BRK, CONT, RET, BRA)."""
        out: list[str] = []
        for fr in reversed(self.frames):
            if fr.kind in ("loop", "switch"):
                out += [x for x in (fr.brk, fr.cont) if x]
            elif fr.kind == "sub":
                if fr.ret:
                    out.append(fr.ret)
                break
        else:
            if self.main_ret:
                out.append(self.main_ret)
        if self.pending_jumps:
            out.append("_parked")  # lanes waiting at a BRA target
        return out

    def set_mask(self, base: str | None, extra: list[str] | None = None) -> None:
        """cur = base & extra & ~(lanes that left), into the mask variable of the
        current nesting level (``_mL2``): the masks of enclosing levels, which
        open constructs go back to, stay as they are."""
        terms = [] if base is None else [base]
        terms += extra or []
        terms += [f"~{x}" for x in self.alive()]
        if not terms:
            self.mask = None
            return
        v = f"_mL{len(self.frames)}"
        if terms != [v]:
            self.emit(f"{v} = " + " & ".join(terms))
        self.mask = v

    def active(self) -> str:
        """The current mask as an expression that is always a bool array."""
        return self.mask if self.mask is not None else "_ALL"

    def effects(self) -> str:
        """A variable with the lanes whose stores and atomics land."""
        v = self.tmp("eff")
        self.emit(f"{v} = rt.side_effect_mask({self.active()}, _kill, env.helper_mask, n)")
        return v

    # -- generation ----------------------------------------------------------------------

    def generate(self) -> str:
        self._plan_arrays()
        self.body(0, len(self.insts), top=True)
        self.normalize()  # (the last block: the only way out of the dispatch loop)
        body = self.assemble(1)
        self.blocks = [[]]
        self.lines = self.blocks[0]
        self.depth = 1
        # Prologue: bind inputs, constants, arrays, zero registers.
        self.emit("n = env.n")
        self.emit("_ALL = _full(n, True)")
        self.emit("_kill = None")
        if self.uses_loops:
            self.emit("_iters = 0")  # loop iterations of this call, every loop together
        for b in sorted(self.const_bufs):
            self.emit(f"cb{b} = rt.const_buf(env.consts, {b})")
        for b, i in sorted(self.const_reads):
            self.emit(f"c{b}_{i}_0, c{b}_{i}_1, c{b}_{i}_2, c{b}_{i}_3 = rt.const_vec(cb{b}, {i})")
        for seg in self.segments:
            self.emit(f"{seg.name} = np.zeros(({seg.count}, 4, n), dtype=_F32)")
            if seg.file == "IN":
                self.emit(f"for _r in range({seg.count}):")
                self.emit("    for _c in range(4):")
                self.emit(
                    f"        {seg.name}[_r, _c] = rt.read_input(env.inputs, {seg.base} + _r, _c)"
                )
        if self.shader.processor == "GEOM":
            maxv = self.shader.get_property("GS_MAX_OUTPUT_VERTICES")
            self.emit("_emitted = []")
            self.emit("_gs_count = np.zeros(n, np.int64)")
            self.emit("_gs_open = np.zeros(n, bool)")
            self.emit(f"_gs_max = {int(maxv) if isinstance(maxv, int) else 1 << 62}")
        else:
            self.emit("_emitted = None")
        if "astack" in self.uses:
            self.emit("_astack = []")
        for name in sorted(self.registers):
            prefix, rest = name[0], name[1:]
            if prefix == "v":
                continue  # 2-D vertex inputs: bound by the prologue list below
            index, chan = (int(x) for x in rest.split("_"))
            if prefix == "i":
                self.emit(f"{name} = rt.read_input(env.inputs, {index}, {chan})")
            elif prefix == "s":
                sem = self.decls[("SV", index)].semantic or ""
                self.emit(f"{name} = rt.read_system_value(env.system_values, {sem!r}, {chan})")
            else:
                self.emit(f"{name} = _F32(0.0)")
        for line in self.prologue:
            self.emit(line)
        self.lines.extend(body)
        # Epilogue: collect outputs.
        if self.shader.processor == "GEOM":
            self.emit("if _any(_gs_open):")
            self.emit("    _emitted.append(_GsEvent('end', _U32(0), _gs_open.copy(), None))")
        outs = []
        for o in self.outputs:
            acc = self._array_access("OUT", o, None)
            if acc is not None:
                seg, idx, _lo, _hi = acc
                outs.append(f"{o}: [{seg.name}[{idx}, c] for c in range(4)]")
            else:
                chans = ", ".join(
                    f"o{o}_{c}" if f"o{o}_{c}" in self.registers else "_F32(0.0)" for c in range(4)
                )
                outs.append(f"{o}: [{chans}]")
        self.emit("return KernelResult({" + ", ".join(outs) + "}, _kill, _emitted)")
        return "def kernel(env):\n" + "\n".join(self.lines) + "\n"

    def body(self, start: int, end: int, top: bool = False) -> None:
        pc = start
        while pc < end:
            inst = self.insts[pc]
            self.pc = pc
            self.local_ids = 0
            self.inlined += 1
            if self.inlined > NUMPIPE.instructions:
                msg = inlined_error(NUMPIPE, self.inlined)
                raise ShaderLimitError(f"TGSI line {inst.line}: {msg}")
            if pc in self.pending_jumps:
                self._land_jumps(pc)
            op = inst.opcode
            if op == "BGNSUB":
                # Subroutine bodies are only generated where they are called.
                pc = self.sub_starts[pc] + 1
                continue
            if op == "END":
                if top and not self.frames:
                    break
                _cf_ret(self, inst, main=True)
                pc += 1
                continue
            handler = _CONTROL.get(op)
            if handler is not None:
                handler(self, inst)
            else:
                emitter = OPCODE_EMITTERS.get(op)
                if emitter is None:
                    reason = _UNSUPPORTED.get(op, "it is not implemented by numpipe")
                    raise UnsupportedError(f"TGSI opcode {op} (line {inst.line}): {reason}")
                emitter(self, inst)
            pc += 1
        if top:
            if self.frames:
                raise self.fail(None, f"unterminated {self.frames[-1].kind.upper()} block")
            if self.pending_jumps:
                label = min(self.pending_jumps)
                raise self.fail(None, f"BRA target :{label} is never reached")

    def _land_jumps(self, pc: int) -> None:
        """The lanes a BRA parked rejoin at its target."""
        parked = self.pending_jumps.pop(pc)
        joined = self.tmp("j")
        self.emit(f"{joined} = {self.active()} | {parked}")
        self.emit(f"_parked = _parked & ~{parked}")
        self.emit(f"{parked} = _NO")
        self.set_mask(joined)


# ----------------------------------------------------------------------------
# Control flow
# ----------------------------------------------------------------------------


def _cf_if(g: _Generator, inst: Instruction) -> None:
    cond = f"_condL{len(g.frames)}"
    if inst.opcode == "UIF":
        g.emit(f"{cond} = {g.src(inst, 0, 0, 'u')} != _U32(0)")
    else:
        # A float condition: -0.0 is false, NaN true (tgsi_exec's `!r.f[i]`).
        g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != _F32(0.0)")
    fr = _Frame("if", g.mask, cond=cond)
    g.frames.append(fr)
    g.set_mask(g.mask, [cond])
    # a branch that no lane takes is skipped outright
    fr.skip, then = g.new_label(), g.new_label()
    g.branch(f"_any({g.mask})", then, fr.skip)
    g.place(then)


def _cf_else(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "if" or g.frames[-1].in_else:
        raise g.fail(inst, "ELSE without IF")
    fr = g.frames[-1]
    fr.in_else = True
    g.place(fr.skip)
    g.set_mask(fr.parent_mask, [f"~{fr.cond}"])
    fr.skip, body = g.new_label(), g.new_label()
    g.branch(f"_any({g.mask})", body, fr.skip)
    g.place(body)


def _cf_endif(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "if":
        raise g.fail(inst, "ENDIF without IF")
    fr = g.frames.pop()
    g.place(fr.skip)
    g.set_mask(fr.parent_mask)


def _cf_bgnloop(g: _Generator, inst: Instruction) -> None:
    level = len(g.frames)
    brk, cont = f"_brkL{level}", f"_contL{level}"
    base = g.mask
    fr = _Frame("loop", base, brk=brk, cont=cont, base=base)
    g.emit(f"{brk} = _full(n, False)")
    fr.top, fr.exit = g.new_label(), g.new_label()
    g.place(fr.top)
    g.emit(f"{cont} = _full(n, False)")
    g.frames.append(fr)
    g.set_mask(base)
    body = g.new_label()
    g.branch(f"_any({g.active()})", body, fr.exit)
    g.place(body)


def _cf_endloop(g: _Generator, inst: Instruction) -> None:
    if not g.frames or g.frames[-1].kind != "loop":
        raise g.fail(inst, "ENDLOOP without BGNLOOP")
    fr = g.frames.pop()
    # llvmpipe's loop limiter: one budget for every loop of the call (nested
    # loops cannot multiply it), counted at ENDLOOP; once it is spent, every
    # loop ends there, silently (no error, as on llvmpipe)
    g.normalize()
    g.emit("_iters += 1")
    g.emit("if _iters < MAX_LOOP_ITERATIONS:")
    g.emit(f"    _pc = __L{fr.top}__")
    g.emit("    continue")
    g.place(fr.exit)
    g.set_mask(fr.base)


def _innermost(g: _Generator, kinds: tuple[str, ...]) -> _Frame | None:
    for fr in reversed(g.frames):
        if fr.kind in kinds:
            return fr
        if fr.kind == "sub":
            return None
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
    g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != _F32(0.0)")
    _cf_brk(g, inst, cond)


def _cf_cont(g: _Generator, inst: Instruction) -> None:
    fr = _innermost(g, ("loop",))
    if fr is None:
        raise g.fail(inst, "CONT outside a loop")
    g.emit(f"{fr.cont} = {fr.cont} | {g.active()}")
    g.set_mask(g.mask)


def _cf_ret(g: _Generator, inst: Instruction, main: bool = False) -> None:
    # RET leaves the innermost subroutine; in main (and END anywhere but the
    # very end) the lanes are done with the program.
    fr = None if main else _innermost(g, ("sub",))
    if fr is not None:
        g.emit(f"{fr.ret} = {fr.ret} | {g.active()}")
    else:
        if g.main_ret is None:
            g.main_ret = "_ret_main"
            g.prologue.append("_ret_main = _full(n, False)")
        g.emit(f"{g.main_ret} = {g.main_ret} | {g.active()}")
    g.set_mask(g.mask)


def _cf_cal(g: _Generator, inst: Instruction, cond: str | None = None) -> None:
    if inst.label is None or inst.label not in g.sub_starts:
        raise g.fail(inst, f"CAL target :{inst.label} is not a BGNSUB")
    if g.call_depth >= MAX_CALL_DEPTH:
        raise g.fail(inst, f"subroutine calls nest deeper than {MAX_CALL_DEPTH} (recursion?)")
    start = inst.label
    end = g.sub_starts[start]
    call_mask = g.mask
    ret = f"_retL{len(g.frames)}"
    g.emit(f"{ret} = _full(n, False)")
    fr = _Frame("sub", call_mask, ret=ret)
    g.frames.append(fr)
    g.set_mask(call_mask, [cond] if cond else None)
    # As tgsi_exec, a call that no lane makes is skipped.
    body, after = g.new_label(), g.new_label()
    g.branch(f"_any({g.active()})", body, after)
    g.place(body)
    g.call_depth += 1
    saved_pc = g.pc
    g.body(start + 1, end)
    g.pc = saved_pc
    g.call_depth -= 1
    if g.frames[-1] is not fr:
        raise g.fail(inst, "subroutine body leaves a control-flow block open")
    g.frames.pop()
    g.place(after)
    g.set_mask(call_mask)


def _cf_callnz(g: _Generator, inst: Instruction) -> None:
    cond = g.tmp("c")
    g.emit(f"{cond} = {g.src(inst, 0, 0, 'f')} != _F32(0.0)")
    _cf_cal(g, inst, cond)


def _cf_switch(g: _Generator, inst: Instruction) -> None:
    level = len(g.frames)
    value, matched = f"_swL{level}", f"_swmL{level}"
    brk, any_case = f"_brkL{level}", f"_swaL{level}"
    g.emit(f"{value} = {g.src(inst, 0, 0, 'u')}")
    # Lanes that match some CASE of this switch (DEFAULT takes the others);
    # CASE operands are read here, at the SWITCH.
    g.emit(f"{any_case} = _full(n, False)")
    terms = [f"({value} == {g.src(c, 0, 0, 'u')})" for c in g.switch_cases.get(g.pc, [])]
    for i in range(0, len(terms), 16):  # (short expressions, however many CASEs)
        g.emit(f"{any_case} = {any_case} | " + " | ".join(terms[i : i + 16]))
    g.emit(f"{matched} = _full(n, False)")
    g.emit(f"{brk} = _full(n, False)")
    fr = _Frame("switch", g.mask, brk=brk, base=g.mask, sw_value=value, sw_matched=matched)
    fr.sw_any = any_case
    g.frames.append(fr)
    g.set_mask(matched)


def _cf_case(g: _Generator, inst: Instruction, default: bool = False) -> None:
    fr = g.frames[-1] if g.frames else None
    if fr is None or fr.kind != "switch":
        raise g.fail(inst, "CASE/DEFAULT outside a SWITCH")
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
    g.set_mask(fr.base)


def _cf_bra(g: _Generator, inst: Instruction) -> None:
    target = inst.label
    here = g.pc
    if target is None or not here < target < len(g.insts):
        raise g.unsupported(inst, f"BRA to :{target} (only forward jumps are)")
    src, dst = g.path(here), g.path(target)
    if dst != src[: len(dst)]:
        raise g.unsupported(inst, f"BRA to :{target} into another block")
    for start, end in g.sub_starts.items():
        if (start < here <= end) != (start < target <= end):
            raise g.unsupported(inst, f"BRA to :{target} across a subroutine boundary")
    # The active lanes wait at the target: in the target's variable (one per
    # target) and in _parked, which every mask excludes while a jump is pending.
    if not g.pending_jumps and "_parked = _full(n, False)" not in g.prologue:
        g.prologue.append("_parked = _full(n, False)")
    pj = g.pending_jumps.get(target)
    if pj is None:
        pj = g.pending_jumps[target] = f"_jmp{target}"
        g.prologue.append(f"{pj} = _NO")
    g.emit(f"{pj} = {pj} | {g.active()}")
    g.emit(f"_parked = _parked | {g.active()}")
    g.set_mask(g.mask)


def _cf_nop(g: _Generator, inst: Instruction) -> None:
    pass


_CONTROL: dict[str, Callable[[_Generator, Instruction], None]] = {
    "IF": _cf_if,
    "UIF": _cf_if,
    "IFC": _cf_if,
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
    "SWITCH": _cf_switch,
    "CASE": _cf_case,
    "DEFAULT": _cf_default,
    "ENDSWITCH": _cf_endswitch,
    "BRA": _cf_bra,
    "ENDSUB": _cf_nop,
}

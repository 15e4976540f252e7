"""What a TGSI program may hold: register counts, instructions, nesting.

The screen's shader caps (``PIPE_SHADER_CAP_*``) are read from :data:`NUMPIPE`
and the compiler checks every program against it before generating anything,
so a cap is exactly what works: a program at every limit compiles and runs
(tests/tgsi/test_limits.py), one beyond any is refused at once with an error
that names the limit -- a :class:`~gallium.tgsi.parser.TgsiSyntaxError` at the
line and column of the offending number when the program is text parsed with
limits, a :class:`ShaderLimitError` for a parsed :class:`Shader` -- before
anything proportional to the number is allocated.

The values follow llvmpipe's (``gallivm/lp_bld_limits.h``) where numpipe can
keep them: 4096 temporaries, 32 inputs and outputs, 16 constant buffers of
4096 vectors, 80 levels of control flow (LP_MAX_TGSI_NESTING: "Vulkan CTS
tests seem to have up to 76 levels"), 4096 immediates, 16 address registers.
Instructions are limited to 16384 (llvmpipe takes a million): numpipe's
kernels are Python source, which CPython's compiler turns into bytecode at
about 8 KB of memory per generated line; a program of 16384 instructions of
the longest kind (DMAD: nine lines each) compiles in about 5 s and 1.2 GB at
its peak (measured), 65536 would take four times that.  CAL inlines its
subroutine where it is called, so the limit counts the instructions of the
program as inlined.

Every register index, whatever its file, also fits the 16 bits TGSI tokens
give it (``tgsi_declaration_range``, ``tgsi_src_register``).  Declaring a
register twice is an error (as tgsi_sanity reports it), so the declarations
of a file never add up to more than its limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..pipe.errors import PipeValueError
from .shader import Register, Shader

TOKEN_INDEX_LIMIT = 1 << 16  # register indices fit tgsi_declaration_range's 16 bits
_OPENERS = frozenset({"IF", "UIF", "IFC", "BGNLOOP", "SWITCH"})
_CLOSERS = frozenset({"ENDIF", "ENDLOOP", "ENDSWITCH"})


class ShaderLimitError(PipeValueError):
    """A program beyond one of the screen's shader limits (the message names the
    cap and the limit)."""


@dataclass(frozen=True, slots=True)
class ShaderLimits:
    """The limits of one screen's shader stages (PIPE_SHADER_CAP_* values)."""

    instructions: int = 1 << 14  # MAX_INSTRUCTIONS (and ALU, TEX, TEX_INDIRECTIONS)
    control_flow_depth: int = 80  # MAX_CONTROL_FLOW_DEPTH
    temps: int = 4096  # MAX_TEMPS
    inputs: int = 32  # MAX_INPUTS
    outputs: int = 32  # MAX_OUTPUTS
    const_buffer_size: int = 4096 * 16  # MAX_CONST_BUFFER_SIZE, bytes
    const_buffers: int = 16  # MAX_CONST_BUFFERS
    samplers: int = 32  # MAX_TEXTURE_SAMPLERS
    sampler_views: int = 32  # MAX_SAMPLER_VIEWS
    shader_buffers: int = 32  # MAX_SHADER_BUFFERS (every stage)
    shader_images: int = 32  # MAX_SHADER_IMAGES (every stage)
    immediates: int = 4096  # numpipe's (llvmpipe's LP_MAX_TGSI_IMMEDIATES)
    address_registers: int = 16  # numpipe's (llvmpipe's LP_MAX_TGSI_ADDRS)
    system_values: int = 64  # numpipe's: SV[0..63]
    memory: int = 32  # numpipe's: MEMORY[0..31]
    vertices: int = 32  # numpipe's: IN[v][i] / OUT[v][i] with v < 32 (patch vertices)

    def register_limit(self, file: str) -> tuple[int, str]:
        """(registers of ``file``, the cap or limit that says so)."""
        table = {
            "TEMP": (self.temps, "PIPE_SHADER_CAP_MAX_TEMPS"),
            "IN": (self.inputs, "PIPE_SHADER_CAP_MAX_INPUTS"),
            "OUT": (self.outputs, "PIPE_SHADER_CAP_MAX_OUTPUTS"),
            "CONST": (self.const_buffer_size // 16, "PIPE_SHADER_CAP_MAX_CONST_BUFFER_SIZE"),
            "SAMP": (self.samplers, "PIPE_SHADER_CAP_MAX_TEXTURE_SAMPLERS"),
            "SVIEW": (self.sampler_views, "PIPE_SHADER_CAP_MAX_SAMPLER_VIEWS"),
            "BUFFER": (self.shader_buffers, "PIPE_SHADER_CAP_MAX_SHADER_BUFFERS"),
            "IMAGE": (self.shader_images, "PIPE_SHADER_CAP_MAX_SHADER_IMAGES"),
            "IMM": (self.immediates, "numpipe's limit of immediates"),
            "ADDR": (self.address_registers, "numpipe's limit of address registers"),
            "SV": (self.system_values, "numpipe's limit of system values"),
            "MEMORY": (self.memory, "numpipe's limit of memory registers"),
            "CONSTBUF": (self.const_buffers, "PIPE_SHADER_CAP_MAX_CONST_BUFFERS"),
        }
        return table.get(file, (TOKEN_INDEX_LIMIT, "the 16-bit register index of TGSI tokens"))


# The screen's limits: gallium/numpipe/screen.py reports them as its caps.
NUMPIPE = ShaderLimits()


def register_error(
    limits: ShaderLimits, file: str, index: int, dimension: int | None = None
) -> str | None:
    """Why ``file[dimension][index]`` is beyond ``limits``, or None."""
    count, cap = limits.register_limit(file)
    if not 0 <= index < count:
        return _beyond(file, index, count, cap)
    if dimension is not None:
        if file == "CONST":
            n, cap = limits.const_buffers, "PIPE_SHADER_CAP_MAX_CONST_BUFFERS"
            if not 0 <= dimension < n:
                return (
                    f"constant buffer {dimension} is beyond {cap}: numpipe has buffers 0..{n - 1}"
                )
        elif not 0 <= dimension < limits.vertices:
            return (
                f"vertex {dimension} of {file} is beyond numpipe's limit of "
                f"{limits.vertices} vertices"
            )
    return None


def _beyond(file: str, index: int, count: int, cap: str) -> str:
    if count == 0:
        return f"{file}[{index}] is beyond {cap}: numpipe has no {file} registers here"
    return f"{file}[{index}] is beyond {cap}: numpipe has {file}[0..{count - 1}]"


def instructions_error(limits: ShaderLimits, count: int) -> str | None:
    if count > limits.instructions:
        return (
            f"instruction {count} is beyond PIPE_SHADER_CAP_MAX_INSTRUCTIONS: numpipe "
            f"runs programs of at most {limits.instructions} instructions"
        )
    return None


def inlined_error(limits: ShaderLimits, count: int) -> str | None:
    if count > limits.instructions:
        return (
            f"CAL inlines each subroutine where it is called: the program runs more than "
            f"{limits.instructions} instructions inlined, beyond "
            "PIPE_SHADER_CAP_MAX_INSTRUCTIONS"
        )
    return None


def depth_error(limits: ShaderLimits, opcode: str, depth: int) -> str | None:
    if depth > limits.control_flow_depth:
        return (
            f"{opcode} opens control flow {depth} levels deep, beyond "
            f"PIPE_SHADER_CAP_MAX_CONTROL_FLOW_DEPTH ({limits.control_flow_depth})"
        )
    return None


class DeclarationSet:
    """The registers declared so far, per file and dimension: a register
    declared twice is an error (so a file's declarations stay within its
    limit).  Each check costs at most the registers it declares."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int | None], set[int]] = {}

    def add(self, file: str, dimension: int | None, first: int, last: int) -> str | None:
        seen = self._seen.setdefault((file, dimension), set())
        for r in range(first, last + 1):
            if r in seen:
                dim = "" if dimension is None else f"[{dimension}]"
                return f"{file}{dim}[{r}] is declared twice"
        seen.update(range(first, last + 1))
        return None


def check_limits(shader: Shader, limits: ShaderLimits = NUMPIPE) -> None:
    """Raise :class:`ShaderLimitError` unless ``shader`` (a parsed Shader) fits
    ``limits``: its instructions, nesting, declarations, immediates and every
    register it names.  Linear in the program; a declaration's range is checked
    before its registers are counted, so nothing beyond the limits is made."""

    def fail(message: str, line: int = 0) -> ShaderLimitError:
        return ShaderLimitError(f"TGSI line {line}: {message}" if line else message)

    msg = instructions_error(limits, len(shader.instructions))
    if msg:
        raise fail(msg, shader.instructions[limits.instructions].line)
    if len(shader.immediates) > limits.immediates:
        raise fail(
            f"IMM[{limits.immediates}] is beyond numpipe's limit of {limits.immediates} immediates",
            shader.immediates[limits.immediates].line,
        )
    declared = DeclarationSet()
    for d in shader.declarations:
        for index in (d.first, d.last):
            msg = register_error(limits, d.file, index, d.dimension)
            if msg:
                raise fail(msg, d.line)
        msg = declared.add(d.file, d.dimension, d.first, d.last)
        if msg:
            raise fail(msg, d.line)
    depth = 0
    for inst in shader.instructions:
        if inst.opcode in _OPENERS:
            depth += 1
            msg = depth_error(limits, inst.opcode, depth)
            if msg:
                raise fail(msg, inst.line)
        elif inst.opcode in _CLOSERS:
            depth = max(0, depth - 1)
        regs = [o.reg for o in inst.dst] + [o.reg for o in inst.src]
        for reg in regs + [o.reg for o in inst.tex_offsets]:
            msg = operand_error(limits, reg)
            if msg:
                raise fail(msg, inst.line)


def operand_error(limits: ShaderLimits, reg: Register) -> str | None:
    """Why a register operand names a register beyond ``limits``, or None.  An
    indirect index is an offset from an address register: only the address
    register is checked."""
    dimension = reg.dimension if reg.dim_indirect is None else None
    index = reg.index if reg.indirect is None else 0
    msg = register_error(limits, reg.file, index, dimension)
    for ind in (reg.indirect, reg.dim_indirect):
        if msg is None and ind is not None:
            msg = register_error(limits, ind.file, ind.index)
    return msg

"""TGSI: the shader language of the Gallium interface.

``parse(text)`` turns TGSI text (as Mesa's tgsi_text accepts it) into a
:class:`Shader`; ``Shader.to_text()`` prints it back.  ``compile_shader``
turns a shader into a vectorized kernel that runs over many invocations at
once (see :mod:`gallium.tgsi.compiler`).
"""

from .compiler import ExecEnv, GsEvent, Kernel, KernelResult, compile_shader
from .limits import NUMPIPE, ShaderLimitError, ShaderLimits, check_limits
from .memory_api import MemoryRequest, ReferenceMemory
from .parser import TgsiSyntaxError, parse
from .shader import (
    Declaration,
    Dst,
    Immediate,
    Indirect,
    Instruction,
    Property,
    Register,
    Shader,
    Src,
    TexOffset,
)
from .texture_api import TexRequest
from .tokens import OPCODES, OpcodeInfo

__all__ = [
    "NUMPIPE",
    "OPCODES",
    "Declaration",
    "Dst",
    "ExecEnv",
    "GsEvent",
    "Immediate",
    "Indirect",
    "Instruction",
    "Kernel",
    "KernelResult",
    "MemoryRequest",
    "OpcodeInfo",
    "Property",
    "ReferenceMemory",
    "Register",
    "Shader",
    "ShaderLimitError",
    "ShaderLimits",
    "Src",
    "TexOffset",
    "TexRequest",
    "TgsiSyntaxError",
    "check_limits",
    "compile_shader",
    "parse",
]

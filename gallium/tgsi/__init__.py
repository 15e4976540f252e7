"""TGSI: the shader language of the Gallium interface.

``parse(text)`` turns TGSI text (as Mesa's tgsi_text accepts it) into a
:class:`Shader`; ``Shader.to_text()`` prints it back.  ``compile_shader``
turns a shader into a vectorized kernel that runs over many invocations at
once (see :mod:`gallium.tgsi.compiler`).
"""

from .compiler import ExecEnv, GsEvent, Kernel, KernelResult, compile_shader
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
    "Src",
    "TexOffset",
    "TexRequest",
    "TgsiSyntaxError",
    "compile_shader",
    "parse",
]

"""TGSI: the shader language of the Gallium interface.

``parse(text)`` turns TGSI text (as Mesa's tgsi_text accepts it) into a
:class:`Shader`; ``Shader.to_text()`` prints it back.  ``compile_shader``
turns a shader into a vectorized kernel that runs over many invocations at
once (see :mod:`gallium.tgsi.compiler`).
"""

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
from .tokens import OPCODES, OpcodeInfo

__all__ = [
    "OPCODES",
    "Declaration",
    "Dst",
    "Immediate",
    "Indirect",
    "Instruction",
    "OpcodeInfo",
    "Property",
    "Register",
    "Shader",
    "Src",
    "TexOffset",
    "TgsiSyntaxError",
    "parse",
]

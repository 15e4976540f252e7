"""The Gallium interface: enums, state templates, fences and errors.

Everything an application needs to speak ``pipe_screen`` / ``pipe_context``
lives here, named as the spec names it: ``pipe.Format.R8G8B8A8_UNORM`` is also
``pipe.PIPE_FORMAT_R8G8B8A8_UNORM``, ``pipe.RasterizerState`` is
``struct pipe_rasterizer_state``.  The method contract of screens and contexts
is written out in :mod:`gallium.pipe.protocols`.
"""

from . import enums as _enums
from .enums import *  # noqa: F403  (the C names are generated, see enums.C_NAMES)
from .enums import C_NAMES
from .errors import (
    ContextDestroyedError,
    FenceTimeout,
    PipeError,
    PipeTypeError,
    PipeValueError,
    UnsupportedError,
)
from .fence import Fence
from .state import *  # noqa: F403
from .state import __all__ as _state_all

__all__ = [
    *_enums.__all__,
    *_state_all,
    "C_NAMES",
    "ContextDestroyedError",
    "Fence",
    "FenceTimeout",
    "PipeError",
    "PipeTypeError",
    "PipeValueError",
    "UnsupportedError",
]

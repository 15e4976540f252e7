"""The Gallium interface: the contract every driver and frontend shares.

Everything an application needs to speak ``pipe_screen`` / ``pipe_context``
lives here, named as the spec names it: ``pipe.Format.R8G8B8A8_UNORM`` is also
``pipe.PIPE_FORMAT_R8G8B8A8_UNORM``, ``pipe.RasterizerState`` is
``struct pipe_rasterizer_state``.

* :mod:`.enums`, :mod:`.state` -- the enums and state templates;
* :mod:`.objects` -- the driver objects as the contract sees them
  (``pipe.Resource``, ``pipe.Surface``, ... that a driver's objects subclass);
* :mod:`.checks` -- every argument check, the same for every context;
* :mod:`.support` -- what a screen implements, from its caps;
* :mod:`.fence`, :mod:`.errors` -- completion and failure;
* :mod:`.protocols` -- the method contract of screens and contexts, and what
  a frontend wrapping a context (``threaded/``) may rely on.
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
from .objects import (
    CSO,
    BlendCSO,
    ComputeCSO,
    DepthStencilAlphaCSO,
    Query,
    RasterizerCSO,
    Resource,
    SamplerCSO,
    SamplerView,
    ShaderCSO,
    StreamOutputTarget,
    Surface,
    TransferObject,
    VertexElementsCSO,
)
from .state import *  # noqa: F403
from .state import __all__ as _state_all
from .support import Support

__all__ = [
    *_enums.__all__,
    *_state_all,
    "C_NAMES",
    "CSO",
    "BlendCSO",
    "ComputeCSO",
    "ContextDestroyedError",
    "DepthStencilAlphaCSO",
    "Query",
    "RasterizerCSO",
    "Resource",
    "SamplerCSO",
    "SamplerView",
    "ShaderCSO",
    "StreamOutputTarget",
    "Support",
    "Surface",
    "TransferObject",
    "VertexElementsCSO",
    "Fence",
    "FenceTimeout",
    "PipeError",
    "PipeTypeError",
    "PipeValueError",
    "UnsupportedError",
]

"""The method contract of screens and contexts, and what a wrapping frontend uses.

Three interfaces, as Mesa's ``p_screen.h``, ``p_context.h`` and the rules of
``u_threaded_context.h`` split them:

* :class:`Screen` -- ``pipe_screen``.  Every method may be called from any
  thread at any time.
* :class:`Context` -- ``pipe_context`` as applications call it: each method
  checks its arguments with :mod:`gallium.pipe.checks` at the call (a bad
  argument or an unsupported feature raises there, nothing is recorded) and
  is used by one thread at a time.
* :class:`DriverContext` -- what a frontend wrapping a driver's context
  (``threaded/``, a trace recorder) needs besides :class:`Context`: for every
  call it records, an unchecked entry point ``_apply_<what>`` taking exactly
  the values the matching check returns (threaded/access.py lists them), and
  the hooks below.  The wrapper checks at the call with the same checks, so
  the driver never checks twice and both faces raise the same errors.

Threading rules a wrapper relies on (rule 1 of threaded/context.py):

* ``create_*`` and ``destroy_*_state``'s handle checks touch no context state
  and may run on any thread while the context is in use on another.
* ``_apply_transfer_map`` / ``_apply_transfer_unmap`` and
  ``_apply_buffer_subdata`` with ``Transfer.UNSYNCHRONIZED`` touch only the
  resource: any thread, provided no queued work uses it.
* ``get_query_result`` of a query whose ``end_query`` has been flushed waits
  on that flush's fence only: any thread.
* ``take_error`` / ``raise_pending_error`` / ``record_error`` and the reset
  status are thread safe.
* Everything else runs on one thread at a time (the wrapper's driver thread,
  or the application's while the wrapper holds a sync).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from .enums import ResetStatus, Transfer
from .fence import Fence
from .objects import Resource, TransferObject
from .state import Box, DriverQueryInfo, ResourceTemplate
from .support import Support


class Screen(Protocol):
    """``pipe_screen`` (screen.rst)."""

    support: Support  # what the contract's checks consult (caps; see support.py)
    destroyed: bool

    def get_name(self) -> str: ...
    def get_param(self, param: int) -> int: ...
    def get_paramf(self, param: int) -> float: ...
    def get_shader_param(self, shader: int, param: int) -> int: ...
    def get_compute_param(self, ir_type: int, param: int) -> Any: ...
    def is_format_supported(
        self, format: int, target: int, sample_count: int, bindings: int
    ) -> bool: ...
    def can_create_resource(self, templ: ResourceTemplate) -> bool: ...
    def resource_create(self, templ: ResourceTemplate) -> Resource: ...
    def resource_destroy(self, resource: Resource) -> None: ...
    def context_create(self, priv: Any = None, flags: int = 0) -> Context: ...
    def fence_finish(self, ctx: Any, fence: Fence, timeout_ns: int) -> bool: ...
    def get_timestamp(self) -> int: ...
    def get_driver_query_info(self, index: int | None = None) -> Any: ...
    def destroy(self) -> None: ...


class Context(Protocol):
    """``pipe_context`` as applications call it (context.rst); a sample of the
    methods -- every one of context.rst is a method of the same name."""

    screen: Screen

    def set_blend_color(self, color: Any) -> None: ...
    def bind_blend_state(self, cso: Any) -> None: ...
    def set_framebuffer_state(self, state: Any) -> None: ...
    def set_vertex_buffers(self, start_slot: int, buffers: Sequence[Any]) -> None: ...
    def draw_vbo(self, info: Any) -> None: ...
    def clear(self, buffers: int, color: Any, depth: float, stencil: int) -> None: ...
    def flush(self, flags: int = 0) -> Fence: ...
    def transfer_map(self, resource: Resource, level: int, usage: int, box: Box) -> tuple: ...
    async def transfer_map_async(
        self, resource: Resource, level: int, usage: int, box: Box
    ) -> tuple: ...
    def transfer_unmap(self, transfer: TransferObject) -> None: ...
    def buffer_subdata(self, resource: Resource, usage: int, offset: int, data: Any) -> None: ...
    def get_query_result(self, query: Any, wait: bool = True) -> tuple[bool, Any]: ...
    def get_device_reset_status(self) -> ResetStatus: ...
    def set_device_reset_callback(self, callback: Callable[[ResetStatus], None] | None) -> None: ...
    def destroy(self) -> None: ...


class DriverContext(Context, Protocol):
    """A driver's context as a wrapping frontend uses it (see the module docstring).

    Besides the ``_apply_*`` entry points of every recorded call:
    """

    support: Support
    # set by the wrapper: the thread that runs recorded calls (errors raised
    # there wait for the application's next sync point) ...
    driver_thread_id: int | None
    # ... and a function the driver calls between long stages, to let the
    # application's thread (an event loop) have the GIL
    yield_point: Callable[[], None]

    def _apply_transfer_map(
        self, resource: Resource, level: int, usage: Transfer, box: Box
    ) -> tuple: ...
    def _map_steps(self, resource: Resource, level: int, usage: int, box: Box) -> Any:
        """``transfer_map`` as fence steps (see Fence.run): what the context's own
        map does, for a wrapper whose driver thread is idle."""

    def _apply_transfer_unmap(self, transfer: TransferObject) -> None: ...
    def _apply_buffer_subdata(
        self, resource: Resource, usage: Transfer, offset: int, data: Any
    ) -> None: ...
    def _apply_replace_buffer_storage(self, dst: Resource, src: Resource) -> None:
        """Give ``dst`` the storage of ``src`` (a frontend's buffer invalidation)."""

    def record_error(self, exc: BaseException, where: str) -> None:
        """Keep a fault raised on the wrapper's thread: a device reset, reported
        at the application's next sync point."""

    def take_error(self) -> BaseException | None:
        """The oldest fault not reported yet (firing the reset callback once
        per episode), or None."""

    def raise_pending_error(self) -> None:
        """Raise ``take_error()``'s error, if any (a sync point)."""


class ContextFrontend(Protocol):
    """What a screen is handed to wrap the contexts it makes (``threaded.FRONTEND``)."""

    def wrap(self, context: DriverContext) -> Context: ...

    def driver_query_infos(self) -> list[DriverQueryInfo]:
        """The frontend's own driver queries (``get_driver_query_info``)."""

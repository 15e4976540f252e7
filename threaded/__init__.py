"""The threaded frontend: :class:`ThreadedContext` records pipe_context calls
into batches that one driver thread per context executes (see
:mod:`threaded.context` for the theory of operation and the rules)."""

from typing import Any

from ._ring import BATCH_SLOTS, QUEUED_BATCHES, Batch, Ring
from .context import ThreadedContext
from .stats import TcStats, driver_query_infos


class Frontend:
    """The threaded frontend as a screen uses it (gallium.pipe.protocols.ContextFrontend)."""

    def wrap(self, context: Any) -> ThreadedContext:
        return ThreadedContext(context)

    def driver_query_infos(self) -> list:
        return driver_query_infos()


FRONTEND = Frontend()

__all__ = [
    "BATCH_SLOTS",
    "FRONTEND",
    "QUEUED_BATCHES",
    "Batch",
    "Frontend",
    "Ring",
    "TcStats",
    "ThreadedContext",
    "driver_query_infos",
]

"""The threaded frontend: :class:`ThreadedContext` records pipe_context calls
into batches that one driver thread per context executes (see
:mod:`threaded.context` for the theory of operation and the rules)."""

from ._ring import BATCH_SLOTS, QUEUED_BATCHES, Batch, Ring
from .context import ThreadedContext
from .stats import TcStats, driver_query_infos

__all__ = [
    "BATCH_SLOTS",
    "QUEUED_BATCHES",
    "Batch",
    "Ring",
    "TcStats",
    "ThreadedContext",
    "driver_query_infos",
]

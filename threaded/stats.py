"""Threaded-context statistics, also exposed as Gallium driver queries.

``ThreadedContext.stats`` is a :class:`TcStats`.  Counters are updated on the
application's thread only (the recording side), except ``executed_batches``,
``gil_handoffs`` and ``driver_errors``, which the driver thread updates; every
field is a plain int, so reading them is always safe, if momentarily stale.

The same numbers are available through ``screen.get_driver_query_info(i)``
and ``ctx.create_query(pipe.QueryType.DRIVER_SPECIFIC + i)``: a driver
query's result is the counter's growth between ``begin_query`` and
``end_query``.
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass, field

from gallium.pipe.enums import DriverQueryResultType, DriverQueryType, QueryType
from gallium.pipe.state import DriverQueryInfo


@dataclass
class TcStats:
    """What the threaded context did since it was created."""

    batches: int = 0  # batches submitted to the ring
    executed_batches: int = 0  # batches the driver thread has finished
    direct_calls: int = 0  # calls run at once on the caller's thread (create_*, ...)
    syncs: int = 0  # times the caller waited for the driver thread
    sync_reasons: Counter = field(default_factory=Counter)
    bytes_copied: int = 0  # user data copied into batches
    invalidations: int = 0  # buffers given fresh storage instead of waiting
    promoted_unsynchronized: int = 0  # maps turned unsynchronized by valid-range tracking
    staging_uploads: int = 0  # DISCARD_RANGE maps served through a staging copy
    merged_subdata: int = 0  # small buffer_subdata calls merged into the previous one
    ring_full_waits: int = 0  # times a recording call blocked on a full ring
    ready_waits: int = 0  # times ready_async suspended its task until the ring had room
    gil_handoffs: int = 0  # driver-thread pauses inside a batch for GIL waiters
    driver_errors: int = 0  # exceptions raised on the driver thread

    # Counted by the context itself (one integer increment per recorded call);
    # the context installs the reader.
    recorded_calls_source: object = field(default=None, repr=False, compare=False)

    @property
    def recorded_calls(self) -> int:
        """Calls queued for the driver thread."""
        src = self.recorded_calls_source
        return int(src()) if callable(src) else 0

    def sync(self, reason: str) -> None:
        self.syncs += 1
        self.sync_reasons[reason] += 1

    def as_dict(self) -> dict[str, int]:
        d = {k: getattr(self, k) for k in _COUNTERS}
        d.update({f"syncs:{r}": n for r, n in sorted(self.sync_reasons.items())})
        return d


_COUNTERS = (
    "batches",
    "executed_batches",
    "recorded_calls",
    "direct_calls",
    "syncs",
    "bytes_copied",
    "invalidations",
    "promoted_unsynchronized",
    "staging_uploads",
    "merged_subdata",
    "ring_full_waits",
    "ready_waits",
    "gil_handoffs",
    "driver_errors",
)


def driver_query_infos() -> list[DriverQueryInfo]:
    """One ``pipe_driver_query_info`` per counter, numbered from DRIVER_SPECIFIC."""
    out = []
    for i, name in enumerate(_COUNTERS):
        unit = DriverQueryType.BYTES if name == "bytes_copied" else DriverQueryType.UINT64
        out.append(
            DriverQueryInfo(
                name=f"tc-{name.replace('_', '-')}",
                query_type=int(QueryType.DRIVER_SPECIFIC) + i,
                max_value=0,
                type=int(unit),
                result_type=int(DriverQueryResultType.CUMULATIVE),
                group_id=0,
                flags=0,
            )
        )
    return out


def counter_for_query(query_type: object) -> str | None:
    """The counter a driver-specific query type reads (None: not one of ours)."""
    if not isinstance(query_type, numbers.Integral):
        return None
    i = int(query_type) - int(QueryType.DRIVER_SPECIFIC)
    if 0 <= i < len(_COUNTERS):
        return _COUNTERS[i]
    return None

"""Every call an application can make on a context reaches the trace.

The trace context forwards what it does not define to the wrapped context
(``TraceContext.__getattr__``), so a method added to a context later would be
forwarded unrecorded and its effect lost on replay (the bindless handle calls
once were).  This walks the public methods of both contexts: each is defined
by the trace context itself, or only asks or waits.
"""

from __future__ import annotations

from gallium.numpipe.context import NumpipeContext
from gallium.trace.calls import CONTEXT_METHODS
from gallium.trace.context import TraceContext
from threaded.context import ThreadedContext

# Calls that change nothing a frame shows: waits and questions, and the
# driver's own error plumbing (called by the contexts that wrap it).
NOT_RECORDED = {
    "wait_idle",  # waits for the context's work
    "sync",  # (threaded) waits for the driver thread
    "is_busy",  # (threaded) asks
    "ready_async",  # (threaded) awaits the driver thread
    "query_fence",  # asks which fence finalises a query (submits queued work)
    "record_error",
    "take_error",
    "raise_pending_error",
}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def _traced() -> set[str]:
    return {n for c in TraceContext.__mro__ if c is not object for n in vars(c)}


def test_every_public_context_method_is_recorded_or_only_asks():
    traced = _traced()
    for cls in (NumpipeContext, ThreadedContext):
        assert _public(cls) - traced - NOT_RECORDED == set(), cls.__name__


def test_every_recorded_call_has_a_method_and_the_exceptions_exist():
    traced = _traced()
    assert set(CONTEXT_METHODS) - traced == set()
    both = _public(NumpipeContext) | _public(ThreadedContext)
    assert NOT_RECORDED.issubset(both)
    assert not NOT_RECORDED & traced

"""Fences: one completion mechanism with a blocking face and an awaitable face.

Theory of operation
-------------------
A :class:`Fence` stands for "all work submitted before it has completed".  The
thread that completes the work (a context's driver thread, or the worker that
finishes the last tile of a scene) calls :meth:`Fence.signal` exactly once.
Everything else is built on one primitive, a list of done-callbacks guarded by
a lock:

* :meth:`wait` (used by ``screen.fence_finish``) parks the calling thread on a
  ``threading.Event`` that a done-callback sets.
* ``await fence`` registers a done-callback that hands the wake-up to the
  waiting task's own event loop (``loop.call_soon_threadsafe`` under asyncio,
  ``TrioToken.run_sync_soon`` under trio) and then suspends the task.  No
  thread is created per waiter and nothing polls.

Guarantees:

* Callbacks run once, on the signalling thread, outside the lock, in
  registration order.  A callback added after the signal runs immediately on
  the adding thread.  A callback that raises does not stop the others (every
  waiter still wakes, a context's next frame still starts): its exception
  is logged (logger ``gallium.fence``) and dropped, as
  ``concurrent.futures`` does with its done-callbacks.
  :meth:`Fence.in_callback` tells code whether it runs inside a callback,
  where waiting for more work could wait for its own thread (a context's
  ``destroy`` then returns without waiting).
* Cancelling an awaiting task (``asyncio`` cancellation, ``anyio.fail_after``,
  a trio cancel scope) removes only that task's callback: the fence and every
  other waiter are untouched.
* A *deferred* fence (``PIPE_FLUSH_DEFERRED``) carries a submit hook.  The
  first wait of any kind, from any thread or task, calls the hook, which
  submits the work the fence covers; the hook is called at most once.
* A fence may name an *error source*: after the fence is signalled, a wait
  *on the thread that set the source* (the thread that flushed: the context's
  own application thread) asks it for an error raised while executing the
  covered work and raises it.  Waits on other threads (``screen.fence_finish``
  from a watcher) only see completion: a context's error is reported to that
  context's user, once, and never to someone else.

Multi-step waits (a map that waits for the work using its resource) are
written once, as a generator that yields each fence it must wait for and
returns its result; :meth:`Fence.run` runs the steps blocking on each fence,
:meth:`Fence.run_async` awaiting each (the two faces share one mechanism, as
httpcore's sync and async faces do).  Cancelling ``run_async`` abandons the
steps at a wait, which changes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from typing import Any, TypeVar

from .enums import PIPE_TIMEOUT_INFINITE
from .errors import bad_type, check_int

ErrorSource = Callable[[], BaseException | None]
T = TypeVar("T")
_log = logging.getLogger("gallium.fence")
_in_callback = threading.local()


class Fence:
    """Completion of submitted work; awaitable under asyncio and trio.

    ``fence.signalled`` tells without waiting; ``fence.wait(timeout)`` blocks
    the calling thread; ``await fence`` suspends the calling task.
    """

    __slots__ = (
        "__weakref__",
        "_callbacks",
        "_error_owner",
        "_error_source",
        "_event",
        "_lock",
        "_signalled",
        "_submit_hook",
        "label",
    )

    def __init__(
        self,
        *,
        submit_hook: Callable[[], None] | None = None,
        error_source: ErrorSource | None = None,
        label: str = "",
    ) -> None:
        self._lock = threading.Lock()
        self._event: threading.Event | None = None
        self._callbacks: list[Callable[[], None]] | None = []
        self._signalled = False
        self._submit_hook = submit_hook
        self._error_source = error_source
        self._error_owner = threading.get_ident()
        self.label = label

    # -- construction helpers -------------------------------------------------

    @classmethod
    def completed(cls, label: str = "") -> Fence:
        """A fence that is already signalled (a flush with no work pending)."""
        fence = cls(label=label)
        fence.signal()
        return fence

    @classmethod
    def all_of(cls, fences: list[Fence], label: str = "") -> Fence:
        """A fence signalled once every fence in ``fences`` is signalled."""
        pending = [f for f in fences if not f.signalled]
        if not pending:
            return cls.completed(label)
        combined = cls(label=label)
        remaining = [len(pending)]
        lock = threading.Lock()

        def one_done() -> None:
            with lock:
                remaining[0] -= 1
                last = remaining[0] == 0
            if last:
                combined.signal()

        for f in pending:
            f.add_done_callback(one_done)
        return combined

    # -- state ------------------------------------------------------------------

    @property
    def signalled(self) -> bool:
        """True once the covered work has completed."""
        return self._signalled

    def signal(self) -> None:
        """Mark the work complete and run the done-callbacks (once)."""
        with self._lock:
            if self._signalled:
                return
            self._signalled = True
            callbacks, self._callbacks = self._callbacks, None
            event = self._event
        if event is not None:
            event.set()
        for cb in callbacks or ():
            _run_callback(cb, self)

    def set_error_source(self, source: ErrorSource | None) -> None:
        """Report ``source``'s error to waits on the calling thread (see above)."""
        self._error_source = source
        self._error_owner = threading.get_ident()

    def add_done_callback(self, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` when signalled (at once if already).  Returns a handle."""
        with self._lock:
            if not self._signalled:
                assert self._callbacks is not None
                self._callbacks.append(fn)
                return fn
        _run_callback(fn, self)
        return fn

    @staticmethod
    def in_callback() -> bool:
        """Whether the calling thread is running a fence's done-callback."""
        return getattr(_in_callback, "depth", 0) > 0

    def remove_done_callback(self, handle: Callable[[], None]) -> None:
        """Forget a callback that has not run yet; harmless if it already ran."""
        with self._lock:
            if self._callbacks is not None:
                try:
                    self._callbacks.remove(handle)
                except ValueError:
                    pass

    # -- deferred submission and error reporting --------------------------------

    def submit(self) -> None:
        """Submit the covered work if this is a deferred fence (idempotent)."""
        hook = self._submit_hook
        if hook is not None:
            self._submit_hook = None
            hook()

    def _report(self) -> None:
        source = self._error_source
        if source is not None and threading.get_ident() == self._error_owner:
            err = source()
            if err is not None:
                raise err

    # -- blocking face ----------------------------------------------------------

    def wait(self, timeout: float | None = None) -> bool:
        """Block until signalled or ``timeout`` seconds pass; True if signalled.

        Raises the error of the covered work, if there was one.
        """
        self.submit()
        if not self._signalled:
            with self._lock:
                if not self._signalled and self._event is None:
                    self._event = threading.Event()
                event = self._event
            if event is not None and not event.wait(timeout):
                return False
        self._report()
        return True

    def finish(self, timeout_ns: int = PIPE_TIMEOUT_INFINITE) -> bool:
        """``fence_finish`` semantics: timeout in nanoseconds in [0,
        PIPE_TIMEOUT_INFINITE], INFINITE waits forever."""
        timeout_ns = check_int("timeout_ns", timeout_ns, 0, PIPE_TIMEOUT_INFINITE)
        if timeout_ns >= PIPE_TIMEOUT_INFINITE:
            return self.wait(None)
        return self.wait(timeout_ns / 1e9)

    # -- multi-step waits ---------------------------------------------------------

    @staticmethod
    def run(steps: Generator[Fence, None, T]) -> T:
        """Run ``steps`` (see the module docstring), blocking on each fence."""
        try:
            fence = next(steps)
            while True:
                if not isinstance(fence, Fence):
                    raise bad_type("step", "a Fence", fence)
                fence.wait(None)
                fence = steps.send(None)
        except StopIteration as done:
            return done.value
        finally:
            steps.close()

    @staticmethod
    async def run_async(steps: Generator[Fence, None, T]) -> T:
        """Run ``steps``, awaiting each fence (asyncio or trio)."""
        try:
            fence = next(steps)
            while True:
                await fence
                fence = steps.send(None)
        except StopIteration as done:
            return done.value
        finally:
            steps.close()

    # -- awaitable face -----------------------------------------------------------

    def __await__(self) -> Generator[Any, None, None]:
        return self.wait_async().__await__()

    async def wait_async(self) -> None:
        """Suspend the current task until signalled (asyncio or trio)."""
        self.submit()
        if not self._signalled:
            library = _current_async_library()
            if library == "trio":
                await _wait_trio(self)
            else:
                await _wait_asyncio(self)
        self._report()

    def __repr__(self) -> str:
        state = "signalled" if self._signalled else "pending"
        label = f" {self.label}" if self.label else ""
        return f"<Fence{label} {state}>"


def _run_callback(cb: Callable[[], None], fence: Fence) -> None:
    depth = getattr(_in_callback, "depth", 0)
    _in_callback.depth = depth + 1
    try:
        cb()
    except Exception:
        _log.exception("a done-callback of %r raised; the other callbacks still ran", fence)
    finally:
        _in_callback.depth = depth


def _current_async_library() -> str:
    try:
        import sniffio

        return sniffio.current_async_library()
    except Exception:
        return "asyncio"


async def _wait_asyncio(fence: Fence) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[None] = loop.create_future()

    def resolve() -> None:
        if not future.done():
            future.set_result(None)

    def on_signal() -> None:
        try:
            loop.call_soon_threadsafe(resolve)
        except RuntimeError:
            # The waiting loop is closed: nobody is left to wake.
            pass

    handle = fence.add_done_callback(on_signal)
    try:
        await future
    finally:
        fence.remove_done_callback(handle)


async def _wait_trio(fence: Fence) -> None:
    import trio

    token = trio.lowlevel.current_trio_token()
    task = trio.lowlevel.current_task()
    # Both flags are only touched on the trio thread (in_trio and abort_fn).
    state = {"done": False}

    def in_trio() -> None:
        if not state["done"]:
            state["done"] = True
            trio.lowlevel.reschedule(task)

    def on_signal() -> None:
        try:
            token.run_sync_soon(in_trio)
        except trio.RunFinishedError:
            pass

    handle = fence.add_done_callback(on_signal)

    def abort_fn(_raise_cancel: Any) -> Any:
        state["done"] = True
        fence.remove_done_callback(handle)
        return trio.lowlevel.Abort.SUCCEEDED

    await trio.lowlevel.wait_task_rescheduled(abort_fn)
    fence.remove_done_callback(handle)

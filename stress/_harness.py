"""What every suite shares: its report, a thread-safe failure log, and a deadlock watchdog.

Threading: a :class:`Report` is written by many threads at once (counters,
failures, lags), so every mutation takes its lock.  :func:`run_threads` starts
the suite's threads as daemons and joins them against a deadline; a thread
still alive after it is reported as a suspected deadlock, with its stack, and
left behind (a daemon cannot be killed, and one stuck thread must not hang the
whole run).  Every blocking wait inside a suite is bounded by
:data:`WAIT_LIMIT_S`, so a lost wake-up shows up as a named failure rather
than a hang.
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

WAIT_LIMIT_S = 30.0  # no single wait in a healthy run comes near this
JOIN_GRACE_S = 60.0  # time allowed after a suite's end for its threads to finish
MAX_KEPT_FAILURES = 40  # beyond this, failures are counted but not kept


@dataclass
class Report:
    """The outcome of one suite run (printed by ``python -m stress``).

    ``iterations`` counts the suite's unit of work (frames recorded, storm
    rounds, hammer actions, programs); ``frames_checked`` the images (and
    buffer snapshots) compared bit for bit; ``max_lag_ms`` the worst event-loop
    lag a heartbeat saw, where the suite runs event loops.
    """

    name: str
    seed: int
    seconds: float
    iterations: int = 0
    frames_checked: int = 0
    max_lag_ms: float | None = None
    failures: list[str] = field(default_factory=list)
    failure_count: int = 0
    counters: dict[str, Any] = field(default_factory=dict)
    details: list[str] = field(default_factory=list)  # lines printed after the counters
    elapsed_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- written by suite threads ------------------------------------------------

    def fail(self, message: str) -> None:
        with self._lock:
            self.failure_count += 1
            if len(self.failures) < MAX_KEPT_FAILURES:
                self.failures.append(message)

    def add(self, *, iterations: int = 0, frames: int = 0) -> None:
        with self._lock:
            self.iterations += iterations
            self.frames_checked += frames

    def count(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + n

    def maximum(self, name: str, value: float) -> None:
        with self._lock:
            old = self.counters.get(name)
            if old is None or value > old:
                self.counters[name] = value

    def lag(self, ms: float) -> None:
        with self._lock:
            if self.max_lag_ms is None or ms > self.max_lag_ms:
                self.max_lag_ms = ms

    def exception(self, where: str, exc: BaseException) -> None:
        text = "".join(traceback.format_exception(exc)).rstrip()
        self.fail(f"{where}: unexpected {type(exc).__name__}: {exc}\n{text}")

    # -- read by the runner ------------------------------------------------------

    @property
    def ok(self) -> bool:
        return self.failure_count == 0

    def summary(self) -> str:
        lag = "-" if self.max_lag_ms is None else f"{self.max_lag_ms:.1f} ms"
        status = "ok" if self.ok else f"FAILED ({self.failure_count})"
        return (
            f"{self.name:<20} seed={self.seed:<10} {self.elapsed_s:6.1f}s  "
            f"iterations={self.iterations:<6} frames={self.frames_checked:<6} "
            f"max_lag={lag:<10} {status}"
        )


class Deadline:
    """The suite's stop time plus a stop flag any thread may raise."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.stop = threading.Event()

    def running(self) -> bool:
        return not self.stop.is_set() and time.monotonic() < self.end

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())


def stacks_of(threads: list[threading.Thread]) -> str:
    frames = sys._current_frames()
    out = []
    for t in threads:
        frame = frames.get(t.ident or -1)
        if frame is None:
            continue
        out.append(f"--- thread {t.name}\n" + "".join(traceback.format_stack(frame)))
    return "\n".join(out)


def run_threads(
    report: Report,
    deadline: Deadline,
    bodies: list[tuple[str, Callable[[], None]]],
    grace_s: float = JOIN_GRACE_S,
) -> None:
    """Run ``bodies`` on daemon threads until they return (or a deadlock is declared).

    An exception escaping a body is a failure and stops the other threads
    (``deadline.stop``), so a broken suite ends early instead of piling up
    follow-on failures.
    """

    def wrap(name: str, body: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                body()
            except BaseException as exc:
                report.exception(f"thread {name}", exc)
                deadline.stop.set()

        return run

    threads = [
        threading.Thread(target=wrap(name, body), name=f"stress-{name}", daemon=True)
        for name, body in bodies
    ]
    for t in threads:
        t.start()
    limit = deadline.end + grace_s
    for t in threads:
        t.join(max(0.0, limit - time.monotonic()))
    stuck = [t for t in threads if t.is_alive()]
    if stuck:
        deadline.stop.set()
        names = ", ".join(t.name for t in stuck)
        report.fail(
            f"suspected deadlock: {names} still running {grace_s:.0f}s after the suite's end\n"
            + stacks_of(stuck)
        )


def wait_event(
    report: Report, event: threading.Event, what: str, limit_s: float = WAIT_LIMIT_S
) -> bool:
    """Wait for ``event``; a timeout is reported as a suspected deadlock."""
    if event.wait(limit_s):
        return True
    report.fail(f"suspected deadlock: {what} not done after {limit_s:.0f}s")
    return False

"""Suite cross_thread_fences: one thread flushes, other threads and event loops wait.

A producer thread owns a threaded context.  It records frames into a ring of
render targets and flushes each one, about half of them with
PIPE_FLUSH_DEFERRED, and hands the fence (a *ticket*) to a random subset of
waiters:

* blocking threads, each waiting with ``screen.fence_finish(None, fence, t)``
  or ``fence.wait(t)`` and a random timeout (zero, tiny, large or infinite),
  retrying after every timeout;
* an asyncio event loop and a trio event loop, each in its own thread,
  awaiting the fence in a fresh task.

Checks: every chosen waiter wakes (a wait that never returns within
``WAIT_LIMIT_S`` is reported as a suspected deadlock); a wait that reports
success always sees ``fence.signalled``; every waiter, having woken, reads the
render target back through its *own* direct context and finds the frame
bit-exact.  For most deferred frames the producer then parks without waiting
or flushing again, so the frame can only complete if the first waiter, on
whatever thread or loop, submitted it (Rule 6 of threaded/context.py).  The
event loops' worst lag is reported.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import random
import threading
import time
from dataclasses import dataclass, field

import trio

import gallium
from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads, wait_event
from ._scene import (
    Pipeline,
    ReferenceRenderer,
    SceneSpec,
    Target,
    describe_mismatch,
    make_spec,
    read_rgba8,
    record_frame,
)

NAME = "cross_thread_fences"
BLOCKING_WAITERS = 3
TARGETS = 4
TIMEOUTS_S = (0.0, 0.0001, 0.001, 0.01, 0.1, None)  # None: PIPE_TIMEOUT_INFINITE
HEARTBEAT_S = 0.002


@dataclass
class Ticket:
    """One flushed frame and the waiters that must each see it complete."""

    frame: int
    fence: gallium.Fence
    target: Target
    spec: SceneSpec
    deferred: bool
    waiters: tuple[str, ...]
    done: threading.Event = field(default_factory=threading.Event)
    first: str | None = None
    _acks: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def starting(self, waiter: str) -> None:
        with self._lock:
            if self.first is None:
                self.first = waiter

    def ack(self, waiter: str) -> None:
        with self._lock:
            self._acks.add(waiter)
            if self._acks >= set(self.waiters):
                self.done.set()

    def missing(self) -> list[str]:
        with self._lock:
            return sorted(set(self.waiters) - self._acks)


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2, 3)))
        self.reference = ReferenceRenderer()
        w, h = self.rng.choice(((64, 64), (96, 80), (120, 72)))
        self.specs = [make_spec(self.rng.getrandbits(32), w, h) for _ in range(3)]
        self.reference.warm(self.specs)
        self.blocking = [f"thread{i}" for i in range(BLOCKING_WAITERS)]
        self.queues: dict[str, queue.Queue] = {n: queue.Queue() for n in self.blocking}
        self.loops_ready = threading.Event()
        self.asyncio_loop: asyncio.AbstractEventLoop | None = None
        self.asyncio_queue: asyncio.Queue | None = None
        self.trio_token: trio.lowlevel.TrioToken | None = None
        self.trio_send: trio.MemorySendChannel | None = None
        self._ready = 0
        self._ready_lock = threading.Lock()
        self.tickets: list[Ticket] = []
        self.deadline: Deadline | None = None

    # -- shared checks ---------------------------------------------------------------

    def _mark_ready(self) -> None:
        with self._ready_lock:
            self._ready += 1
            if self._ready == 2:
                self.loops_ready.set()

    def _verify(self, who: str, ctx, ticket: Ticket) -> None:
        img = read_rgba8(ctx, ticket.target.rt)
        want = self.reference.image(ticket.spec)
        self.report.add(frames=1)
        if not (img == want).all():
            self.report.fail(
                f"{who}: frame {ticket.frame} (deferred={ticket.deferred}) read back after its "
                f"fence completed differs from the reference: {describe_mismatch(img, want)}"
            )

    def _deliver(self, name: str, ticket: Ticket) -> None:
        if name == "asyncio":
            assert self.asyncio_loop is not None and self.asyncio_queue is not None
            self.asyncio_loop.call_soon_threadsafe(self.asyncio_queue.put_nowait, ticket)
        elif name == "trio":
            assert self.trio_token is not None and self.trio_send is not None
            self.trio_token.run_sync_soon(self.trio_send.send_nowait, ticket)
        else:
            self.queues[name].put(ticket)

    # -- producer ----------------------------------------------------------------------

    def producer(self) -> None:
        assert self.deadline is not None
        rng = random.Random(self.rng.getrandbits(32))
        if not wait_event(self.report, self.loops_ready, "event-loop waiters starting"):
            self.deadline.stop.set()
            return
        ctx = self.screen.context_create(threaded=True)
        try:
            self._produce(ctx, rng)
        finally:
            for t in self.tickets:
                if not t.done.wait(WAIT_LIMIT_S):
                    self.report.fail(
                        f"suspected deadlock: frame {t.frame} (deferred={t.deferred}) never woke "
                        f"{', '.join(t.missing())}"
                    )
                    break
            for name in [*self.blocking, "asyncio", "trio"]:
                self._deliver(name, None)  # type: ignore[arg-type]
            ctx.destroy()

    def _produce(self, ctx, rng: random.Random) -> None:
        assert self.deadline is not None
        p = Pipeline(ctx)
        spec0 = self.specs[0]
        targets = [Target(self.screen, ctx, spec0.width, spec0.height) for _ in range(TARGETS)]
        last: dict[int, Ticket] = {}
        everyone = [*self.blocking, "asyncio", "trio"]
        k = 0
        while self.deadline.running():
            slot = k % TARGETS
            target = targets[slot]
            prev = last.get(slot)
            if prev is not None and not wait_event(
                self.report, prev.done, f"the waiters of frame {prev.frame}"
            ):
                self.deadline.stop.set()
                return
            spec = rng.choice(self.specs)
            record_frame(ctx, p, spec, target)
            deferred = rng.random() < 0.5
            fence = ctx.flush(pipe.Flush.DEFERRED if deferred else 0)
            waiters = tuple(rng.sample(everyone, rng.randint(1, len(everyone))))
            ticket = Ticket(k, fence, target, spec, deferred, waiters)
            self.tickets.append(ticket)
            last[slot] = ticket
            for name in waiters:
                self._deliver(name, ticket)
            self.report.add(iterations=1)
            self.report.count("deferred_frames" if deferred else "plain_frames")
            style = rng.random()
            if deferred and style < 0.7:
                # Park: nothing on this thread submits the frame; only a waiter can.
                self.report.count("parked_on_deferred")
                if not wait_event(
                    self.report,
                    ticket.done,
                    f"deferred frame {k}: no waiter submitted it ({', '.join(ticket.missing())} "
                    "still waiting)",
                ):
                    self.deadline.stop.set()
                    return
                if not fence.signalled:
                    self.report.fail(f"frame {k}: every waiter woke but the fence is pending")
                self.report.count(f"deferred_first_waiter_{_kind(ticket.first)}")
                self._verify("producer", ctx, ticket)
            elif style < 0.85:
                if not fence.wait(WAIT_LIMIT_S):
                    self.report.fail(f"suspected deadlock: producer's own wait on frame {k}")
                    self.deadline.stop.set()
                    return
            k += 1

    # -- blocking waiters ----------------------------------------------------------------

    def blocking_waiter(self, name: str, seed: int) -> None:
        rng = random.Random(seed)
        ctx = self.screen.context_create(threaded=False)
        try:
            while True:
                ticket = self.queues[name].get()
                if ticket is None:
                    return
                self._blocking_wait(name, ctx, ticket, rng)
        finally:
            ctx.destroy()

    def _blocking_wait(self, name: str, ctx, ticket: Ticket, rng: random.Random) -> None:
        use_finish = rng.random() < 0.5
        timeout = rng.choice(TIMEOUTS_S)
        start = time.monotonic()
        ticket.starting(name)
        while True:
            if use_finish:
                ns = pipe.PIPE_TIMEOUT_INFINITE if timeout is None else int(timeout * 1e9)
                ok = self.screen.fence_finish(None, ticket.fence, ns)
            else:
                ok = ticket.fence.wait(timeout)
            if ok:
                break
            self.report.count("blocking_timeouts")
            if time.monotonic() - start > WAIT_LIMIT_S:
                self.report.fail(
                    f"{name}: suspected deadlock: frame {ticket.frame} "
                    f"(deferred={ticket.deferred}) not signalled after {WAIT_LIMIT_S}s"
                )
                ticket.ack(name)
                return
            timeout = rng.choice(TIMEOUTS_S)
        if not ticket.fence.signalled:
            self.report.fail(f"{name}: a wait on frame {ticket.frame} returned True while pending")
        self._verify(name, ctx, ticket)
        ticket.ack(name)
        self.report.count("wakes_blocking")

    # -- asyncio waiter ------------------------------------------------------------------

    def asyncio_waiter(self, seed: int) -> None:
        asyncio.run(self._asyncio_main(random.Random(seed)))

    async def _asyncio_main(self, rng: random.Random) -> None:
        self.asyncio_loop = asyncio.get_running_loop()
        self.asyncio_queue = asyncio.Queue()
        ctx = self.screen.context_create(threaded=False)
        stop = asyncio.Event()
        beat = asyncio.create_task(self._asyncio_heartbeat(stop))
        tasks: set[asyncio.Task] = set()
        self._mark_ready()
        try:
            while True:
                ticket = await self.asyncio_queue.get()
                if ticket is None:
                    break
                task = asyncio.create_task(self._asyncio_wait(ctx, ticket, rng.random() * 0.005))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
            if tasks:
                await asyncio.wait(list(tasks))
        finally:
            stop.set()
            await beat
            ctx.destroy()

    async def _asyncio_heartbeat(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            t0 = time.monotonic()
            await asyncio.sleep(HEARTBEAT_S)
            self.report.lag((time.monotonic() - t0 - HEARTBEAT_S) * 1000)

    async def _asyncio_wait(self, ctx, ticket: Ticket, delay: float) -> None:
        if delay > 0.0025:
            await asyncio.sleep(delay)
        ticket.starting("asyncio")
        try:
            async with asyncio.timeout(WAIT_LIMIT_S):
                await ticket.fence
        except TimeoutError:
            self.report.fail(
                f"asyncio: suspected deadlock: frame {ticket.frame} (deferred={ticket.deferred})"
                f" not signalled after {WAIT_LIMIT_S}s"
            )
        else:
            if not ticket.fence.signalled:
                self.report.fail(f"asyncio: await of frame {ticket.frame} returned while pending")
            self._verify("asyncio", ctx, ticket)
            self.report.count("wakes_asyncio")
        finally:
            ticket.ack("asyncio")

    # -- trio waiter ----------------------------------------------------------------------

    def trio_waiter(self, seed: int) -> None:
        trio.run(self._trio_main, random.Random(seed))

    async def _trio_main(self, rng: random.Random) -> None:
        send, recv = trio.open_memory_channel(float("inf"))
        self.trio_send = send
        self.trio_token = trio.lowlevel.current_trio_token()
        ctx = self.screen.context_create(threaded=False)
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._trio_heartbeat)
                async with trio.open_nursery() as waits:
                    self._mark_ready()
                    async for ticket in recv:
                        if ticket is None:
                            break
                        waits.start_soon(self._trio_wait, ctx, ticket, rng.random() * 0.005)
                outer.cancel_scope.cancel()
        finally:
            ctx.destroy()

    async def _trio_heartbeat(self) -> None:
        while True:
            t0 = time.monotonic()
            await trio.sleep(HEARTBEAT_S)
            self.report.lag((time.monotonic() - t0 - HEARTBEAT_S) * 1000)

    async def _trio_wait(self, ctx, ticket: Ticket, delay: float) -> None:
        if delay > 0.0025:
            await trio.sleep(delay)
        ticket.starting("trio")
        try:
            with trio.fail_after(WAIT_LIMIT_S):
                await ticket.fence
        except trio.TooSlowError:
            self.report.fail(
                f"trio: suspected deadlock: frame {ticket.frame} (deferred={ticket.deferred})"
                f" not signalled after {WAIT_LIMIT_S}s"
            )
        else:
            if not ticket.fence.signalled:
                self.report.fail(f"trio: await of frame {ticket.frame} returned while pending")
            self._verify("trio", ctx, ticket)
            self.report.count("wakes_trio")
        finally:
            ticket.ack("trio")

    # -- run -------------------------------------------------------------------------------

    def run(self) -> Report:
        try:
            self.deadline = Deadline(self.seconds)
            bodies = [("producer", self.producer)]
            for name in self.blocking:
                bodies.append(
                    (name, functools.partial(self.blocking_waiter, name, self.rng.getrandbits(32)))
                )
            s1, s2 = self.rng.getrandbits(32), self.rng.getrandbits(32)
            bodies.append(("asyncio", lambda: self.asyncio_waiter(s1)))
            bodies.append(("trio", lambda: self.trio_waiter(s2)))
            run_threads(self.report, self.deadline, bodies)
            if not self.tickets and self.report.ok:
                self.report.fail("the producer flushed no frame")
        finally:
            self.reference.close()
            self.screen.destroy()
        return self.report


def _kind(name: str | None) -> str:
    if name is None:
        return "none"
    return "thread" if name.startswith("thread") else name


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

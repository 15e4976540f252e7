"""Suite cancellation_storm: awaiting tasks cancelled at random must leave fences intact.

Two event loops run in their own threads, asyncio and trio, each owning a
threaded context.  A coordinator thread drives *rounds*.  In each round:

1. The coordinator creates a few *gate* fences (plain ``gallium.Fence``
   objects nobody else signals) shared by both loops; each loop records and
   flushes one to three frames (some with PIPE_FLUSH_DEFERRED) on its own
   context, whose fences are its *real* fences.
2. Each loop starts dozens of tasks awaiting random fences, each with a fate:
   ``keep`` (never cancelled), or cancelled at a random moment by
   ``Task.cancel()`` / a trio ``CancelScope.cancel()`` (singly or a whole
   group at once), ``anyio.fail_after``, ``asyncio.timeout``,
   ``asyncio.wait_for``, ``trio.fail_after`` or ``trio.move_on_after``.
   Meanwhile the coordinator signals a random subset of the gates from its
   own thread, racing the cancellations.
3. Once every doomed task has finished, each loop checks its pending real
   fences and the coordinator checks the gates still held: the number of
   callbacks left on a fence (``fence._callbacks``, inspected here only)
   must equal the number of ``keep`` tasks still parked on it, so a fence
   whose waiters were all cancelled has none.
4. The coordinator signals the remaining gates; every ``keep`` task must wake
   and see its fence signalled; a cancelled task may have woken instead
   (the signal won the race), but never before its fence was signalled.
   Every real fence completes and its frame reads back bit-exact.

A heartbeat in each loop measures the worst lag (the loop must keep running
through the storm).
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import anyio
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
    record_frame,
)

NAME = "cancellation_storm"
GATES = 6
TASKS_PER_LOOP = 48
MAX_REAL = 3
HEARTBEAT_S = 0.002
ASYNCIO_FATES = ("keep", "cancel", "anyio_fail_after", "asyncio_timeout", "wait_for")
TRIO_FATES = ("keep", "cancel", "group", "anyio_fail_after", "trio_fail_after", "move_on")


@dataclass
class Waiter:
    """One awaiting task: its fence, its fate, and what happened to it."""

    fence: gallium.Fence
    fence_name: str
    fate: str
    delay: float
    outcome: str = "pending"  # woke | cancelled | timeout | pending
    signalled_at_wake: bool = False
    # Set right before the await: from there to the callback's registration
    # nothing yields, so a started, pending waiter owns exactly one callback.
    started: bool = False


@dataclass
class Round:
    number: int
    gates: list[gallium.Fence]
    seeds: dict[str, int]
    parked: dict[str, threading.Event] = field(default_factory=dict)
    finished: dict[str, threading.Event] = field(default_factory=dict)
    keep_on_gate: dict[str, Counter] = field(default_factory=dict)  # loop -> gate index -> n
    go: dict[str, Any] = field(default_factory=dict)  # loop -> its own Event type


class _Loop:
    """What one event-loop thread owns: a threaded context, its targets, its frames."""

    def __init__(self, name: str, suite: _Suite) -> None:
        self.name = name
        self.suite = suite
        self.ctx: Any = None
        self.pipeline: Pipeline | None = None
        self.targets: list[Target] = []
        self.ready = threading.Event()
        self.beats = 0

    def open(self) -> None:
        s = self.suite
        self.ctx = s.screen.context_create(threaded=True)
        self.pipeline = Pipeline(self.ctx)
        spec = s.specs[0]
        self.targets = [
            Target(s.screen, self.ctx, spec.width, spec.height) for _ in range(MAX_REAL)
        ]

    def record_real(self, rng: random.Random) -> list[tuple[gallium.Fence, Target, SceneSpec]]:
        assert self.pipeline is not None
        real = []
        for i in range(rng.randint(1, MAX_REAL)):
            spec = rng.choice(self.suite.specs)
            record_frame(self.ctx, self.pipeline, spec, self.targets[i])
            deferred = rng.random() < 0.5
            fence = self.ctx.flush(pipe.Flush.DEFERRED if deferred else 0)
            real.append((fence, self.targets[i], spec))
        return real

    def check_real_callbacks(self, real, waiters: list[Waiter], rnd: Round) -> None:
        """Runs on the loop's own thread, so none of its tasks can move meanwhile."""
        for j, (fence, _, _) in enumerate(real):
            cbs = fence._callbacks
            if cbs is None:
                continue  # signalled: the list is gone
            live = sum(1 for w in waiters if w.fence is fence and w.outcome == "pending")
            if any(w.fence is fence and not w.started and w.outcome == "pending" for w in waiters):
                self.suite.report.fail(f"{self.name} round {rnd.number}: a waiter never started")
            if len(cbs) != live:
                self.suite.report.fail(
                    f"{self.name} round {rnd.number}: real fence {j} is pending with "
                    f"{len(cbs)} callbacks but {live} live waiters (leaked callbacks)"
                )

    def check_frames(self, real, rnd: Round) -> None:
        s = self.suite
        for j, (fence, target, spec) in enumerate(real):
            if fence._callbacks is not None or not fence.signalled:
                s.report.fail(f"{self.name} round {rnd.number}: real fence {j} not finished")
                continue
            img = target.read(self.ctx)
            want = s.reference.image(spec)
            s.report.add(frames=1)
            if not (img == want).all():
                s.report.fail(
                    f"{self.name} round {rnd.number}: frame {j} differs from the reference "
                    f"after the storm: {describe_mismatch(img, want)}"
                )

    def judge(self, waiters: list[Waiter], rnd: Round) -> None:
        s = self.suite
        for w in waiters:
            s.report.count(f"{self.name}_{w.outcome}")
            where = f"{self.name} round {rnd.number}: a '{w.fate}' waiter on {w.fence_name}"
            if w.outcome == "pending":
                s.report.fail(f"{where} never finished")
            elif w.outcome == "woke" and not w.signalled_at_wake:
                s.report.fail(f"{where} woke while its fence was still pending")
            elif w.fate == "keep" and w.outcome != "woke":
                s.report.fail(f"{where} ended '{w.outcome}' though nothing cancelled it")

    def plan(self, rng: random.Random, rnd: Round, real, fates) -> list[Waiter]:
        fences = [(f"gate {i}", g) for i, g in enumerate(rnd.gates)]
        fences += [(f"real fence {j}", f) for j, (f, _, _) in enumerate(real)]
        out = []
        for _ in range(TASKS_PER_LOOP):
            name, fence = rng.choice(fences)
            out.append(Waiter(fence, name, rng.choice(fates), rng.uniform(0.0, 0.03)))
        return out

    def report_keep(self, waiters: list[Waiter], rnd: Round) -> None:
        counts: Counter = Counter()
        for w in waiters:
            if w.outcome == "pending" and w.fence_name.startswith("gate"):
                counts[int(w.fence_name.split()[1])] += 1
        rnd.keep_on_gate[self.name] = counts


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2)))
        self.reference = ReferenceRenderer()
        self.specs = [make_spec(self.rng.getrandbits(32), 64, 48, triangles=12) for _ in range(2)]
        self.reference.warm(self.specs)
        self.loops = {"asyncio": _Loop("asyncio", self), "trio": _Loop("trio", self)}
        self.asyncio_loop: asyncio.AbstractEventLoop | None = None
        self.asyncio_stop: asyncio.Event | None = None
        self.trio_token: trio.lowlevel.TrioToken | None = None
        self.trio_nursery: trio.Nursery | None = None
        self.trio_stop: trio.Event | None = None
        self.deadline: Deadline | None = None

    # -- the coordinator ---------------------------------------------------------------

    def coordinator(self) -> None:
        assert self.deadline is not None
        for loop in self.loops.values():
            if not wait_event(self.report, loop.ready, f"the {loop.name} loop starting"):
                self.deadline.stop.set()
                return
        number = 0
        try:
            while self.deadline.running():
                if not self._round(number):
                    self.deadline.stop.set()
                    break
                number += 1
                self.report.add(iterations=1)
        finally:
            assert self.asyncio_loop is not None and self.asyncio_stop is not None
            self.asyncio_loop.call_soon_threadsafe(self.asyncio_stop.set)
            assert self.trio_token is not None and self.trio_stop is not None
            self.trio_token.run_sync_soon(self.trio_stop.set)
        for loop in self.loops.values():
            if loop.beats == 0:
                self.report.fail(f"the {loop.name} loop's heartbeat never ran")

    def _round(self, number: int) -> bool:
        gates = [gallium.Fence(label=f"gate {number}.{i}") for i in range(GATES)]
        rnd = Round(number, gates, {n: self.rng.getrandbits(32) for n in self.loops})
        for n in self.loops:
            rnd.parked[n] = threading.Event()
            rnd.finished[n] = threading.Event()
        assert self.asyncio_loop is not None and self.trio_token is not None
        self.asyncio_loop.call_soon_threadsafe(self._start_asyncio_round, rnd)
        self.trio_token.run_sync_soon(self._start_trio_round, rnd)
        # Signal some gates while the storm is under way, from this thread.
        held = list(range(GATES))
        self.rng.shuffle(held)
        for _ in range(self.rng.randint(0, GATES - 1)):
            time.sleep(self.rng.uniform(0.0, 0.01))
            gates[held.pop()].signal()
        for n in self.loops:
            if not wait_event(self.report, rnd.parked[n], f"round {number}: {n} parking"):
                return False
        for i in held:
            cbs = gates[i]._callbacks
            live = sum(rnd.keep_on_gate[n][i] for n in self.loops)
            if cbs is None:
                self.report.fail(f"round {number}: gate {i} looks signalled but nobody did")
            elif len(cbs) != live:
                self.report.fail(
                    f"round {number}: held gate {i} has {len(cbs)} callbacks but {live} live "
                    "waiters: cancelled waiters leaked their callbacks"
                )
            self.report.count("held_gates_checked")
        for i in held:
            gates[i].signal()
        self.asyncio_loop.call_soon_threadsafe(rnd.go["asyncio"].set)
        self.trio_token.run_sync_soon(rnd.go["trio"].set)
        for n in self.loops:
            if not wait_event(self.report, rnd.finished[n], f"round {number}: {n} finishing"):
                return False
        for i, g in enumerate(gates):
            if g._callbacks is not None or not g.signalled:
                self.report.fail(f"round {number}: gate {i} still has a callback list after signal")
        return True

    # -- asyncio ------------------------------------------------------------------------

    def asyncio_thread(self) -> None:
        asyncio.run(self._asyncio_main())

    async def _asyncio_main(self) -> None:
        loop = self.loops["asyncio"]
        self.asyncio_loop = asyncio.get_running_loop()
        self.asyncio_stop = asyncio.Event()
        loop.open()
        self._asyncio_rounds: set[asyncio.Task] = set()
        beat = asyncio.create_task(self._asyncio_heartbeat(loop))
        loop.ready.set()
        try:
            await self.asyncio_stop.wait()
            if self._asyncio_rounds:
                await asyncio.wait(list(self._asyncio_rounds))
        finally:
            beat.cancel()
            try:
                await beat
            except asyncio.CancelledError:
                pass
            loop.ctx.destroy()

    async def _asyncio_heartbeat(self, loop: _Loop) -> None:
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(HEARTBEAT_S)
            loop.beats += 1
            self.report.lag((time.monotonic() - t0 - HEARTBEAT_S) * 1000)

    def _start_asyncio_round(self, rnd: Round) -> None:
        rnd.go["asyncio"] = asyncio.Event()
        task = asyncio.create_task(self._asyncio_round(rnd))
        self._asyncio_rounds.add(task)
        task.add_done_callback(self._asyncio_rounds.discard)

    async def _asyncio_round(self, rnd: Round) -> None:
        loop = self.loops["asyncio"]
        try:
            await self._asyncio_round_body(loop, rnd)
        except Exception as exc:
            self.report.exception(f"asyncio round {rnd.number}", exc)
        finally:
            rnd.parked["asyncio"].set()
            rnd.finished["asyncio"].set()

    async def _asyncio_round_body(self, loop: _Loop, rnd: Round) -> None:
        rng = random.Random(rnd.seeds["asyncio"])
        real = loop.record_real(rng)
        waiters = loop.plan(rng, rnd, real, ASYNCIO_FATES)
        aloop = asyncio.get_running_loop()
        tasks = []
        for w in waiters:
            task = asyncio.create_task(_asyncio_wait(w))
            tasks.append(task)
            if w.fate == "cancel":
                aloop.call_later(w.delay, task.cancel)
        while not all(w.started or t.done() for w, t in zip(waiters, tasks)):
            await asyncio.sleep(0)
        doomed = [t for t, w in zip(tasks, waiters) if w.fate != "keep"]
        if doomed:
            _, pending = await asyncio.wait(doomed, timeout=WAIT_LIMIT_S)
            if pending:
                self.report.fail(
                    f"asyncio round {rnd.number}: {len(pending)} cancelled waiters never finished"
                )
        _settle(waiters, tasks)
        loop.check_real_callbacks(real, waiters, rnd)
        loop.report_keep(waiters, rnd)
        rnd.parked["asyncio"].set()
        await rnd.go["asyncio"].wait()
        _, pending = await asyncio.wait(tasks, timeout=WAIT_LIMIT_S)
        if pending:
            self.report.fail(
                f"asyncio round {rnd.number}: suspected deadlock: {len(pending)} waiters did "
                f"not wake within {WAIT_LIMIT_S}s of every fence being signalled"
            )
            for t in pending:
                t.cancel()
        for fence, _, _ in real:
            try:
                async with asyncio.timeout(WAIT_LIMIT_S):
                    await fence
            except TimeoutError:
                self.report.fail(f"asyncio round {rnd.number}: suspected deadlock on a frame")
        _settle(waiters, tasks)
        loop.judge(waiters, rnd)
        loop.check_frames(real, rnd)

    # -- trio ---------------------------------------------------------------------------

    def trio_thread(self) -> None:
        trio.run(self._trio_main)

    async def _trio_main(self) -> None:
        loop = self.loops["trio"]
        self.trio_token = trio.lowlevel.current_trio_token()
        self.trio_stop = trio.Event()
        loop.open()
        try:
            async with trio.open_nursery() as outer:
                outer.start_soon(self._trio_heartbeat, loop)
                async with trio.open_nursery() as rounds:
                    self.trio_nursery = rounds
                    loop.ready.set()
                    await self.trio_stop.wait()
                outer.cancel_scope.cancel()
        finally:
            loop.ctx.destroy()

    async def _trio_heartbeat(self, loop: _Loop) -> None:
        while True:
            t0 = time.monotonic()
            await trio.sleep(HEARTBEAT_S)
            loop.beats += 1
            self.report.lag((time.monotonic() - t0 - HEARTBEAT_S) * 1000)

    def _start_trio_round(self, rnd: Round) -> None:
        rnd.go["trio"] = trio.Event()
        assert self.trio_nursery is not None
        self.trio_nursery.start_soon(self._trio_round, rnd)

    async def _trio_round(self, rnd: Round) -> None:
        loop = self.loops["trio"]
        try:
            await self._trio_round_body(loop, rnd)
        except Exception as exc:
            self.report.exception(f"trio round {rnd.number}", exc)
        finally:
            rnd.parked["trio"].set()
            rnd.finished["trio"].set()

    async def _trio_round_body(self, loop: _Loop, rnd: Round) -> None:
        rng = random.Random(rnd.seeds["trio"])
        real = loop.record_real(rng)
        waiters = loop.plan(rng, rnd, real, TRIO_FATES)
        doomed_left = [sum(1 for w in waiters if w.fate != "keep")]
        doomed_done = trio.Event()
        if doomed_left[0] == 0:
            doomed_done.set()
        group: list[trio.CancelScope] = []
        group_delay = rng.uniform(0.0, 0.03)

        def finished(w: Waiter) -> None:
            if w.fate != "keep":
                doomed_left[0] -= 1
                if doomed_left[0] == 0:
                    doomed_done.set()

        try:
            with trio.fail_after(WAIT_LIMIT_S * 2):
                async with trio.open_nursery() as nursery:
                    for w in waiters:
                        scope = trio.CancelScope()
                        nursery.start_soon(_trio_wait, w, scope, finished)
                        if w.fate == "cancel":
                            nursery.start_soon(_cancel_later, [scope], w.delay)
                        elif w.fate == "group":
                            group.append(scope)
                    nursery.start_soon(_cancel_later, group, group_delay)
                    while not all(w.started or w.outcome != "pending" for w in waiters):
                        await trio.sleep(0)
                    with trio.move_on_after(WAIT_LIMIT_S) as wait_scope:
                        await doomed_done.wait()
                    if wait_scope.cancelled_caught:
                        self.report.fail(
                            f"trio round {rnd.number}: {doomed_left[0]} cancelled waiters "
                            "never finished"
                        )
                    loop.check_real_callbacks(real, waiters, rnd)
                    loop.report_keep(waiters, rnd)
                    rnd.parked["trio"].set()
                    await rnd.go["trio"].wait()
                for fence, _, _ in real:
                    await fence
        except trio.TooSlowError:
            self.report.fail(
                f"trio round {rnd.number}: suspected deadlock: waiters did not wake within "
                f"{WAIT_LIMIT_S}s of every fence being signalled"
            )
        loop.judge(waiters, rnd)
        loop.check_frames(real, rnd)

    # -- run ------------------------------------------------------------------------------

    def run(self) -> Report:
        try:
            self.deadline = Deadline(self.seconds)
            run_threads(
                self.report,
                self.deadline,
                [
                    ("coordinator", self.coordinator),
                    ("asyncio", self.asyncio_thread),
                    ("trio", self.trio_thread),
                ],
            )
        finally:
            self.reference.close()
            self.screen.destroy()
        return self.report


def _settle(waiters: list[Waiter], tasks: list[asyncio.Task]) -> None:
    """A task cancelled before its first step never ran its body: say so."""
    for w, t in zip(waiters, tasks):
        if t.done() and w.outcome == "pending":
            w.outcome = "cancelled" if t.cancelled() else "error"


async def _asyncio_wait(w: Waiter) -> None:
    try:
        if w.fate == "anyio_fail_after":
            with anyio.fail_after(w.delay):
                w.started = True
                await w.fence
        elif w.fate == "asyncio_timeout":
            async with asyncio.timeout(w.delay):
                w.started = True
                await w.fence
        elif w.fate == "wait_for":
            w.started = True  # registration happens in wait_for's inner task
            await asyncio.wait_for(w.fence.wait_async(), w.delay)
        else:  # keep, cancel (Task.cancel() comes from call_later)
            w.started = True
            await w.fence
    except asyncio.CancelledError:
        w.outcome = "cancelled"
        return
    except TimeoutError:
        w.outcome = "timeout"
        return
    w.signalled_at_wake = w.fence.signalled
    w.outcome = "woke"


async def _trio_wait(w: Waiter, scope: trio.CancelScope, finished) -> None:
    try:
        with scope:
            if w.fate == "anyio_fail_after":
                with anyio.fail_after(w.delay):
                    w.started = True
                    await w.fence
            elif w.fate == "trio_fail_after":
                with trio.fail_after(w.delay):
                    w.started = True
                    await w.fence
            elif w.fate == "move_on":
                with trio.move_on_after(w.delay):
                    w.started = True
                    await w.fence
                    w.signalled_at_wake = w.fence.signalled
                    w.outcome = "woke"
                    return
                w.outcome = "cancelled"
                return
            else:  # keep, cancel, group
                w.started = True
                await w.fence
            w.signalled_at_wake = w.fence.signalled
            w.outcome = "woke"
            return
        w.outcome = "cancelled"  # the scope was cancelled and swallowed the Cancelled
    except (trio.TooSlowError, TimeoutError):
        w.outcome = "timeout"
    finally:
        finished(w)


async def _cancel_later(scopes: list[trio.CancelScope], delay: float) -> None:
    await trio.sleep(delay)
    for scope in scopes:
        scope.cancel()  # a group is cancelled all at once, from one task


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

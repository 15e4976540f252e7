"""A rendering thread whose every frame is checked bit for bit against its reference.

:class:`CheckedRenderer` owns one context (threaded or direct) for the whole
run and is driven by exactly one thread (:meth:`CheckedRenderer.run`), as the
pipe_context contract requires.  It renders its specs in a random order into
a small pool of targets, varying how each frame is flushed and waited for
(plain, deferred, split in two scenes, fence_finish, awaited under asyncio or
trio, or not flushed at all so that the read-back has to sync), and keeps up
to two frames in flight before reading the oldest back.  Several suites run
a few of these as the "everyone else" load next to what they are testing.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable

import trio

from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report
from ._scene import (
    Pipeline,
    ReferenceRenderer,
    SceneSpec,
    Target,
    describe_mismatch,
    make_spec,
    record_frame_start,
    record_opaque_draw,
    record_translucent_draw,
)

FLUSH_MODES = ("wait", "finish", "deferred", "split", "pipelined", "none", "asyncio", "trio")
TARGETS = 3


class CheckedRenderer:
    """Renders ``specs`` on its own context until the deadline, checking every frame."""

    def __init__(
        self,
        name: str,
        report: Report,
        deadline: Deadline,
        screen,
        reference: ReferenceRenderer,
        specs: list[SceneSpec],
        seed: int,
        threaded: bool = True,
        publish: Callable[[object], None] | None = None,
    ) -> None:
        sizes = {(s.width, s.height) for s in specs}
        if len(sizes) != 1:
            raise ValueError("specs must all have the same size (they share targets)")
        self.name = name
        self.report = report
        self.deadline = deadline
        self.screen = screen
        self.reference = reference
        self.specs = specs
        self.rng = random.Random(seed)
        self.threaded = threaded
        self.publish = publish
        self.frames = 0
        self.expected = {s.seed: reference.image(s) for s in specs}

    def run(self) -> None:
        ctx = self.screen.context_create(threaded=self.threaded)
        resets: list[object] = []
        ctx.set_device_reset_callback(resets.append)
        try:
            self._loop(ctx)
            status = ctx.get_device_reset_status()
            if status != pipe.ResetStatus.NO_RESET or resets:
                self.report.fail(
                    f"{self.name}: a context that made no error reports a reset "
                    f"(status {status!r}, callbacks {resets!r})"
                )
        finally:
            ctx.destroy()

    def _loop(self, ctx) -> None:
        spec0 = self.specs[0]
        p = Pipeline(ctx)
        free = [Target(self.screen, ctx, spec0.width, spec0.height) for _ in range(TARGETS)]
        inflight: deque[tuple[Target, SceneSpec, int, str]] = deque()
        n = 0
        while self.deadline.running():
            spec = self.rng.choice(self.specs)
            target = free.pop()
            mode = self.rng.choice(FLUSH_MODES)
            if not self._frame(ctx, p, spec, target, mode):
                return
            inflight.append((target, spec, n, mode))
            n += 1
            keep = self.rng.randint(0, TARGETS - 1)
            while len(inflight) > keep or not free:
                t, s, k, m = inflight.popleft()
                self._check(ctx, t, s, k, m)
                free.append(t)
        while inflight:
            t, s, k, m = inflight.popleft()
            self._check(ctx, t, s, k, m)

    def _wait(self, fence, how: str) -> bool:
        if how == "finish":
            ok = self.screen.fence_finish(None, fence, int(WAIT_LIMIT_S * 1e9))
        else:
            ok = fence.wait(WAIT_LIMIT_S)
        if not ok:
            self.report.fail(
                f"{self.name}: suspected deadlock: {fence!r} not signalled after {WAIT_LIMIT_S}s"
            )
            self.deadline.stop.set()
        elif not fence.signalled:
            self.report.fail(f"{self.name}: wait returned True but {fence!r} is not signalled")
        return ok

    def _frame(self, ctx, p: Pipeline, spec: SceneSpec, target: Target, mode: str) -> bool:
        self.report.add(iterations=1)
        record_frame_start(ctx, p, spec, target)
        for i in range(len(spec.opaque_draws)):
            record_opaque_draw(ctx, p, spec, i)
        if mode == "split":
            fence = ctx.flush()
            if self.publish is not None:
                self.publish(fence)
        record_translucent_draw(ctx, p, spec)
        if mode == "none":
            return True
        flags = pipe.Flush.DEFERRED if mode == "deferred" else 0
        fence = ctx.flush(flags)
        if self.publish is not None:
            self.publish(fence)
        if mode in ("wait", "deferred", "split"):
            return self._wait(fence, "wait")
        if mode == "finish":
            return self._wait(fence, "finish")
        if mode == "asyncio":
            asyncio.run(_await_asyncio(fence))
        elif mode == "trio":
            trio.run(_await_trio, fence)
        if mode in ("asyncio", "trio") and not fence.signalled:
            self.report.fail(f"{self.name}: await under {mode} returned before the signal")
        return True

    def _check(self, ctx, target: Target, spec: SceneSpec, k: int, mode: str) -> None:
        img = target.read(ctx)
        want = self.expected[spec.seed]
        self.frames += 1
        self.report.add(frames=1)
        if not (img == want).all():
            self.report.fail(
                f"{self.name}: frame {k} (spec seed {spec.seed}, flush mode {mode}) differs "
                f"from the direct-context reference: {describe_mismatch(img, want)}"
            )


async def _await_asyncio(fence) -> None:
    async with asyncio.timeout(WAIT_LIMIT_S):
        await fence


async def _await_trio(fence) -> None:
    with trio.fail_after(WAIT_LIMIT_S):
        await fence


def plan_renderers(
    report: Report,
    screen,
    reference,
    rng: random.Random,
    sizes,
    threads: int,
    triangles: tuple[int, int],
    scenes: tuple[int, int],
    seconds: float,
) -> tuple[Deadline, list[CheckedRenderer]]:
    """``threads`` contexts' seeded scenes (``scenes`` of ``triangles`` each, ranges
    inclusive) at the given sizes, their reference images made up front; then the
    deadline (started after that) and one CheckedRenderer per context."""
    plans = []
    for i in range(threads):
        w, h = sizes[i % len(sizes)]
        specs = [
            make_spec(rng.getrandbits(32), w, h, triangles=rng.randint(*triangles))
            for _ in range(rng.randint(*scenes))
        ]
        plans.append((f"ctx{i}", specs, rng.getrandbits(32)))
    reference.warm([s for _, specs, _ in plans for s in specs])
    deadline = Deadline(seconds)
    renderers = [
        CheckedRenderer(name, report, deadline, screen, reference, specs, s)
        for name, specs, s in plans
    ]
    return deadline, renderers


def count_frames(report: Report, renderers: list[CheckedRenderer], seconds: float) -> None:
    """Each renderer's frames as a counter; a renderer that drew none is a failure."""
    for r in renderers:
        report.counters[f"{r.name}_frames"] = r.frames
        if r.frames == 0 and report.ok:
            report.fail(f"{r.name}: rendered no frame in {seconds}s")

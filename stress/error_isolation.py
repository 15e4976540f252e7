"""Suite error_isolation: one context's errors stay its own and are reported exactly once.

A *bad* thread owns a threaded context and alternates clean frames with bad
frames: a frame of its scene with one to three deliberately bad calls slipped
in at random points.  Three kinds:

* *immediate* ones: bad arguments and unsupported requests (a CSO of the
  wrong kind or a non-CSO bound, a shader of the wrong stage, a vertex shader
  reading an input the vertex elements lack, an index size of 3, an
  out-of-range constant buffer slot, a sample mask that is not a number, a
  ``resource_copy_region`` or ``clear_render_target`` box outside its
  resource, malformed TGSI, a negative vertex stride, a transfer box outside
  the texture, a ``buffer_subdata`` past the end, a draw with no fragment
  shader bound, a draw with something that is not a DrawInfo).  They must
  raise at the call, with the error of the right type naming the argument,
  and cause no reset at all: nothing of them is recorded (issue 21).
* a *deferred* fault on the driver thread (injected: a recorded callback
  raises, since no argument makes the driver thread fail).  It must raise on
  the bad thread at its next sync point, with a note saying it happened on
  the driver thread, after which ``get_device_reset_status()`` says
  GUILTY_CONTEXT_RESET once and NO_RESET the next time, and the reset
  callback has fired exactly once (one reset per episode, however many
  faults it had).
* a *worker* fault: one band of the frame's scene fails on a rasterizer worker
  (injected: the suite wraps the band entry point, since no valid input makes a
  worker raise).  Its error comes after the driver thread's, with a note naming
  the worker; the band's rows are neither cleared nor drawn, every other row
  must match the reference.

None of the bad calls may change any state, so the bad frame itself must read
back bit-exact, and so must the clean frame after it.  Two threaded contexts
and a direct one render bit-exact frames on the same screen meanwhile and
must never see an error or a reset.  A *watcher* thread, owning no context,
calls ``screen.fence_finish(None, fence, t)`` on fences every context
publishes, the bad one's included (screen methods may be called from any
thread): it must get True or False, never another context's error, which
would then be missing from that context's own sync points.
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import gallium
from gallium import pipe
from gallium.tgsi import TgsiSyntaxError

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
from ._renderer import CheckedRenderer
from ._scene import (
    Pipeline,
    ReferenceRenderer,
    SceneSpec,
    Target,
    describe_mismatch,
    make_spec,
    record_frame,
    record_frame_start,
    record_opaque_draw,
    record_translucent_draw,
)

NAME = "error_isolation"

VS_NEEDS_3 = """VERT
DCL IN[0]
DCL IN[1]
DCL IN[2]
DCL OUT[0], POSITION
DCL OUT[1], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: ADD OUT[1], IN[1], IN[2]
  2: END
"""
BAD_TGSI = "FRAG\nDCL OUT[0], COLOR\n  0: MOV OUT[0], IMM[0].xyz\n  1: END\n"


@dataclass
class Env:
    """What the bad calls work with (all created on the bad context)."""

    ctx: Any
    screen: Any
    p: Pipeline
    target: Target
    vs_needs_3: Any
    buf_a: Any
    buf_b: Any
    arm_fault: Callable[[], None]  # make one band of this target's next scene fail


class InjectedWorkerFault(RuntimeError):
    """Raised by a rasterizer worker on purpose (see _Suite's fault injector)."""


@dataclass(frozen=True)
class BadCall:
    name: str
    # "immediate" (at the call, no reset), "deferred" (a fault on the driver
    # thread: next sync point, a reset) or "worker" (a rasterizer worker fails
    # one band of the frame's scene)
    kind: str
    error: type[BaseException] | tuple[type[BaseException], ...]
    says: str  # text the error message must contain
    call: Callable[[Env], None]


def _draw3(env: Env, **kw: Any) -> None:
    env.ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3, **kw))


def _wrong_stage(env: Env) -> None:
    env.ctx.bind_fs_state(env.p.vs)
    env.ctx.bind_fs_state(env.p.fs)  # restores the shadow binding; the driver never changed


def _short_velems(env: Env) -> None:
    env.ctx.bind_vs_state(env.vs_needs_3)
    try:
        _draw3(env)
    finally:
        env.ctx.bind_vs_state(env.p.vs)


class InjectedDriverFault(RuntimeError):
    """Raised by a recorded callback on the driver thread on purpose."""


def _driver_fault(_data: Any) -> None:
    raise InjectedDriverFault("injected driver-thread fault")


def _no_fs_draw(env: Env) -> None:
    env.ctx.bind_fs_state(None)
    try:
        _draw3(env)
    finally:
        env.ctx.bind_fs_state(env.p.fs)


BAD_CALLS = (
    BadCall(
        "bind_blend_state(object())",
        "immediate",
        gallium.PipeTypeError,
        "cso must be a blend CSO",
        lambda e: e.ctx.bind_blend_state(object()),
    ),
    BadCall(
        "bind_rasterizer_state(42)",
        "immediate",
        gallium.PipeTypeError,
        "cso must be a CSO from create_rasterizer_state",
        lambda e: e.ctx.bind_rasterizer_state(42),
    ),
    BadCall(
        "bind_depth_stencil_alpha_state('dsa')",
        "immediate",
        gallium.PipeTypeError,
        "create_depth_stencil_alpha_state",
        lambda e: e.ctx.bind_depth_stencil_alpha_state("dsa"),
    ),
    BadCall(
        "bind_vertex_elements_state(blend CSO)",
        "immediate",
        gallium.PipeTypeError,
        "create_vertex_elements_state",
        lambda e: e.ctx.bind_vertex_elements_state(e.p.blend_alpha),
    ),
    BadCall(
        "bind_fs_state(a vertex shader)",
        "immediate",
        gallium.PipeTypeError,
        "fragment shader CSO",
        _wrong_stage,
    ),
    BadCall(
        "draw with a VS reading IN[2] and two vertex elements",
        "immediate",
        gallium.PipeValueError,
        "must provide IN[2]",
        _short_velems,
    ),
    BadCall(
        "draw_vbo(index_size=3)",
        "immediate",
        gallium.PipeValueError,
        "index_size",
        lambda e: _draw3(e, index_size=3, index=np.arange(9, dtype=np.uint8)),
    ),
    BadCall(
        "set_constant_buffer(FRAGMENT, 99, ...)",
        "immediate",
        gallium.PipeValueError,
        "index must be in",
        lambda e: e.ctx.set_constant_buffer(
            pipe.ShaderType.FRAGMENT, 99, pipe.ConstantBuffer(user_buffer=np.zeros(4, np.float32))
        ),
    ),
    BadCall(
        "set_vertex_buffers(stride=-32)",
        "immediate",
        gallium.PipeValueError,
        "buffers[0].stride must be an integer >= 0",
        lambda e: e.ctx.set_vertex_buffers(
            0, [pipe.VertexBuffer(-32, 0, np.zeros(24, np.float32))]
        ),
    ),
    BadCall(
        "set_sample_mask('not a mask')",
        "immediate",
        gallium.PipeTypeError,
        "mask",
        lambda e: e.ctx.set_sample_mask("not a mask"),
    ),
    BadCall(
        "resource_copy_region(src_box past the end)",
        "immediate",
        gallium.PipeValueError,
        "src_box must lie inside",
        lambda e: e.ctx.resource_copy_region(
            e.buf_b, 0, 0, 0, 0, e.buf_a, 0, pipe.Box(48, 0, 0, 32, 1, 1)
        ),
    ),
    BadCall(
        "clear_render_target(box past the edge)",
        "immediate",
        gallium.PipeValueError,
        "dstx/dsty/width/height must lie inside",
        lambda e: e.ctx.clear_render_target(
            e.target.cbuf, (1, 0, 1, 1), 0, 0, e.target.width + 3, e.target.height
        ),
    ),
    BadCall(
        "create_fs_state(malformed TGSI)",
        "immediate",
        TgsiSyntaxError,
        "TGSI line 3",
        lambda e: e.ctx.create_fs_state(pipe.ShaderState(tokens=BAD_TGSI)),
    ),
    BadCall(
        "transfer_map(box past the edge)",
        "immediate",
        gallium.PipeValueError,
        "box must lie inside",
        lambda e: e.ctx.transfer_map(
            e.target.rt,
            0,
            pipe.Transfer.READ,
            pipe.Box(0, 0, 0, e.target.width + 1, e.target.height, 1),
        ),
    ),
    BadCall(
        "buffer_subdata(past the end)",
        "immediate",
        gallium.PipeValueError,
        "must lie inside",
        lambda e: e.ctx.buffer_subdata(e.buf_a, 0, 60, bytes(16)),
    ),
    BadCall(
        "draw_vbo with no fragment shader",
        "immediate",
        gallium.PipeValueError,
        "fragment shader must be bound",
        _no_fs_draw,
    ),
    BadCall(
        "draw_vbo('not a DrawInfo')",
        "immediate",
        gallium.PipeTypeError,
        "info must be a pipe.DrawInfo",
        lambda e: e.ctx.draw_vbo("not a DrawInfo"),
    ),
    BadCall(
        "a recorded callback that raises (an injected driver-thread fault)",
        "deferred",
        InjectedDriverFault,
        "injected driver-thread fault",
        lambda e: e.ctx.callback(_driver_fault),
    ),
)
WORKER_FAULT = BadCall(
    "a rasterizer worker failing one band (injected)",
    "worker",
    InjectedWorkerFault,
    "injected worker fault",
    lambda e: e.arm_fault(),
)
BAD_CALLS = (*BAD_CALLS, WORKER_FAULT)
SYNC_POINTS = ("flush_wait", "fence_finish", "transfer_map")


class _BadThread:
    def __init__(self, suite: _Suite, seed: int) -> None:
        self.suite = suite
        self.report = suite.report
        self.rng = random.Random(seed)
        self.resets: list[Any] = []
        self.frames = 0

    def run(self) -> None:
        s = self.suite
        ctx = s.screen.context_create(threaded=True)
        ctx.set_device_reset_callback(self.resets.append)
        try:
            spec = s.bad_spec
            p = Pipeline(ctx)
            target = Target(s.screen, ctx, spec.width, spec.height)
            buffers = []
            for _ in range(2):
                buffers.append(
                    s.screen.resource_create(
                        pipe.ResourceTemplate(
                            target=pipe.TextureTarget.BUFFER, format=pipe.Format.NONE, width0=64
                        )
                    )
                )
            env = Env(
                ctx,
                s.screen,
                p,
                target,
                ctx.create_vs_state(pipe.ShaderState(tokens=VS_NEEDS_3)),
                *buffers,
                lambda: s.arm_fault(target.rt, self.rng.randrange(1 << 16)),
            )
            assert s.deadline is not None
            while s.deadline.running():
                self.report.add(iterations=1)
                if self.rng.random() < 0.6:
                    if not self._bad_frame(env, spec):
                        return
                record_frame(ctx, p, spec, target)
                fence = ctx.flush()
                s.publish(fence)
                if not fence.wait(WAIT_LIMIT_S):
                    self.report.fail("bad context: suspected deadlock on a clean frame")
                    return
                self._check(env, spec, "the clean frame after")
                status = ctx.get_device_reset_status()
                if status != pipe.ResetStatus.NO_RESET:
                    self.report.fail(f"bad context: a clean frame reported {status!r}")
        finally:
            try:
                ctx.destroy()  # flushes: an error nobody reported would surface here
            except Exception as exc:
                self.report.fail(
                    f"bad context: destroy() raised an error its sync points never reported: "
                    f"{type(exc).__name__}: {exc}"
                )

    def _check(
        self, env: Env, spec: SceneSpec, what: str, lost: tuple[int, int] | None = None
    ) -> None:
        img = env.target.read(env.ctx)
        want = self.suite.reference.image(spec)
        self.frames += 1
        self.report.add(frames=1)
        if lost is not None:  # a failed band was neither cleared nor drawn: judge the rest
            keep = np.ones(img.shape[0], bool)
            keep[lost[0] : lost[1]] = False
            img, want = img[keep], want[keep]
            self.report.count("frames_with_a_lost_band")
        if not (img == want).all():
            self.report.fail(
                f"bad context: {what} differs from the reference: {describe_mismatch(img, want)}"
            )

    def _bad_frame(self, env: Env, spec: SceneSpec) -> bool:
        rng = self.rng
        ctx = env.ctx
        calls = rng.sample(BAD_CALLS, rng.randint(1, 3))
        steps = ["start"] + [f"opaque{i}" for i in range(len(spec.opaque_draws))] + ["blend"]
        # where each bad call goes: after step k (after "start" at the earliest, so
        # the framebuffer and shaders are bound)
        places = sorted((rng.randrange(len(steps)), i) for i in range(len(calls)))
        expected: list[BadCall] = []
        callbacks_before = len(self.resets)
        pi = 0
        for k, step in enumerate(steps):
            if step == "start":
                record_frame_start(ctx, env.p, spec, env.target)
            elif step == "blend":
                record_translucent_draw(ctx, env.p, spec)
            else:
                record_opaque_draw(ctx, env.p, spec, int(step[6:]))
            while pi < len(places) and places[pi][0] == k:
                bad = calls[places[pi][1]]
                pi += 1
                self.report.count(f"bad_{bad.kind}")
                try:
                    bad.call(env)
                except Exception as exc:
                    self._judge_immediate(bad, exc)
                    if bad.kind != "immediate":
                        self.report.fail(f"bad context: {bad.name} raised at the call: {exc}")
                    continue
                if bad.kind == "immediate":
                    self.report.fail(f"bad context: {bad.name} did not raise at the call")
                else:
                    expected.append(bad)
        # the driver thread's errors come first, the scene's worker fault when it has run
        expected.sort(key=lambda b: b.kind == "worker")
        got = self._drain(env, len(expected))
        if got is None:
            return False
        names = [b.name for b in expected]
        if len(got) != len(expected):
            self.report.fail(
                f"bad context: {len(expected)} deferred errors ({names}) but the sync points "
                f"raised {len(got)}: {[f'{type(e).__name__}: {e}' for e in got]}"
            )
            got = []  # no pairing to judge: the count already failed
        for bad, exc in zip(expected, got):
            if not isinstance(exc, bad.error) or bad.says not in str(exc):
                self.report.fail(
                    f"bad context: {bad.name} should raise {_names(bad.error)} saying "
                    f"{bad.says!r}; got {type(exc).__name__}: {exc}"
                )
            notes = " ".join(getattr(exc, "__notes__", []))
            where = "a rasterizer worker" if bad.kind == "worker" else "driver thread"
            if where not in notes:
                self.report.fail(
                    f"bad context: the error of {bad.name} does not say it was raised on "
                    f"{where} (notes: {notes!r})"
                )
        first = ctx.get_device_reset_status()
        second = ctx.get_device_reset_status()
        fired = len(self.resets) - callbacks_before
        if expected:
            self.report.count("reset_episodes")
            if (first, second) != (
                pipe.ResetStatus.GUILTY_CONTEXT_RESET,
                pipe.ResetStatus.NO_RESET,
            ):
                self.report.fail(
                    f"bad context: after {names} the reset status read {first!r} then "
                    f"{second!r}; want GUILTY_CONTEXT_RESET once, then NO_RESET"
                )
            if fired != 1:  # one reset per episode, however many errors it had
                self.report.fail(
                    f"bad context: the reset callback fired {fired} times for {len(expected)} "
                    "errors of one reset episode; want once"
                )
            self.report.maximum("max_reset_callbacks_per_episode", fired)
        elif (first, second, fired) != (pipe.ResetStatus.NO_RESET, pipe.ResetStatus.NO_RESET, 0):
            self.report.fail(
                f"bad context: immediate errors only, yet status {first!r}/{second!r} and "
                f"{fired} reset callbacks"
            )
        lost = self.suite.fault_fired(env.target.rt)
        if any(b.kind == "worker" for b in expected) and lost is None:
            self.report.fail("bad context: an armed worker fault never fired")
        self._check(env, spec, "a frame with bad calls in it", lost)
        return True

    def _judge_immediate(self, bad: BadCall, exc: BaseException) -> None:
        if not isinstance(exc, bad.error) or bad.says not in str(exc):
            self.report.fail(
                f"bad context: {bad.name} should raise {_names(bad.error)} saying "
                f"{bad.says!r} at the call; got {type(exc).__name__}: {exc}"
            )

    def _drain(self, env: Env, n: int) -> list[BaseException] | None:
        """Reach sync points until one passes; the errors they raised, in order."""
        errors: list[BaseException] = []
        ctx = env.ctx
        for _ in range(n + 3):
            how = self.rng.choice(SYNC_POINTS)
            try:
                if how == "transfer_map":
                    _, xfer = ctx.transfer_map(
                        env.target.rt, 0, pipe.Transfer.READ, pipe.Box(0, 0, 0, 1, 1, 1)
                    )
                    ctx.transfer_unmap(xfer)
                    ok = True
                else:
                    fence = ctx.flush()
                    self.suite.publish(fence)
                    if how == "fence_finish":
                        ok = env.screen.fence_finish(None, fence, int(WAIT_LIMIT_S * 1e9))
                    else:
                        ok = fence.wait(WAIT_LIMIT_S)
            except Exception as exc:
                errors.append(exc)
                continue
            if not ok:
                self.report.fail("bad context: suspected deadlock at a sync point")
                return None
            return errors
        self.report.fail(f"bad context: {n + 3} sync points in a row raised: {errors}")
        return errors


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2, 3)))
        self.reference = ReferenceRenderer()
        self.bad_spec = make_spec(self.rng.getrandbits(32), 72, 72)
        self.deadline: Deadline | None = None
        self.fences: deque = deque(maxlen=16)
        self.fence_lock = threading.Lock()
        self.fault_lock = threading.Lock()
        self.armed: dict[int, int] = {}  # id(resource) -> band pick
        self.fired: dict[int, tuple[int, int]] = {}  # id(resource) -> failed rows
        self._execute_band: Callable[[Any, int], None] | None = None

    def publish(self, fence) -> None:
        with self.fence_lock:
            self.fences.append(fence)

    # -- fault injection: a rasterizer worker that fails one band of a scene ------------
    # No valid input makes a worker raise, so the suite wraps the band entry point
    # while it runs: a scene rendering into an armed resource fails one band, once.

    def arm_fault(self, resource: Any, pick: int) -> None:
        with self.fault_lock:
            self.armed[id(resource)] = pick

    def fault_fired(self, resource: Any) -> tuple[int, int] | None:
        """The rows of the band that failed for ``resource`` since the last call."""
        with self.fault_lock:
            return self.fired.pop(id(resource), None)

    def _faulty_execute_band(self, scene: Any, unit: int) -> None:
        target = scene.cbufs[0] if scene.cbufs else None
        key = id(target.resource) if target is not None else None
        with self.fault_lock:
            pick = self.armed.get(key)
            fail = pick is not None and unit == pick % scene.nbands
            if fail:
                del self.armed[key]
                y0 = unit * scene.band_rows
                self.fired[key] = (y0, min(scene.height, y0 + scene.band_rows))
        if fail:
            raise InjectedWorkerFault(f"injected worker fault in band {unit}")
        self._execute_band(scene, unit)

    def watcher(self, seed: int) -> None:
        """A thread with no context waiting on everyone's fences."""
        assert self.deadline is not None
        rng = random.Random(seed)
        while self.deadline.running():
            with self.fence_lock:
                recent = list(self.fences)
            if not recent:
                time.sleep(0.001)
                continue
            fence = rng.choice(recent[-4:])
            timeout_ns = rng.choice((0, 1_000_000, 10_000_000, int(WAIT_LIMIT_S * 1e9)))
            try:
                ok = self.screen.fence_finish(None, fence, timeout_ns)
            except Exception as exc:
                self.report.fail(
                    f"watcher: screen.fence_finish(None, {fence!r}) on a thread owning no "
                    f"context raised {type(exc).__name__}: {exc} -- the error left the context "
                    "it belongs to, whose own next sync point will not raise it"
                )
                continue
            self.report.count("watcher_waits")
            if ok and not fence.signalled:
                self.report.fail("watcher: fence_finish returned True on a pending fence")
            if not ok and timeout_ns == int(WAIT_LIMIT_S * 1e9):
                self.report.fail(f"watcher: suspected deadlock waiting on {fence!r}")
            time.sleep(0.0005)

    def run(self) -> Report:
        import workers.band as band_mod

        self._execute_band = band_mod.execute_band
        band_mod.execute_band = self._faulty_execute_band
        try:
            plans = []
            for i, (w, h) in enumerate(((96, 80), (64, 100), (80, 48))):
                specs = [make_spec(self.rng.getrandbits(32), w, h) for _ in range(2)]
                plans.append((f"good{i}", specs, self.rng.getrandbits(32), i != 2))
            self.reference.warm([self.bad_spec] + [s for _, sp, _, _ in plans for s in sp])
            self.deadline = Deadline(self.seconds)
            good = [
                CheckedRenderer(
                    n,
                    self.report,
                    self.deadline,
                    self.screen,
                    self.reference,
                    specs,
                    s,
                    threaded=threaded,
                    publish=self.publish,
                )
                for n, specs, s, threaded in plans
            ]
            bad = _BadThread(self, self.rng.getrandbits(32))
            watch_seed = self.rng.getrandbits(32)
            run_threads(
                self.report,
                self.deadline,
                [("bad", bad.run), ("watcher", lambda: self.watcher(watch_seed))]
                + [(g.name, g.run) for g in good],
            )
            self.report.counters["bad_frames_checked"] = bad.frames
            for g in good:
                self.report.counters[f"{g.name}_frames"] = g.frames
            if bad.frames == 0 and self.report.ok:
                self.report.fail("the bad context checked no frame")
        finally:
            band_mod.execute_band = self._execute_band
            self.reference.close()
            self.screen.destroy()
        return self.report


def _names(error: type[BaseException] | tuple[type[BaseException], ...]) -> str:
    if isinstance(error, tuple):
        return " or ".join(e.__name__ for e in error)
    return error.__name__


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

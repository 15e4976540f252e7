"""Suite screen_hammer: screen methods from many threads while contexts render.

screen.rst says screen methods are thread safe and may be called while
contexts of the screen are in use on other threads.  Hammer threads call, at
random and as fast as they can:

* every cap query (``get_param`` over all of ``pipe.Cap``, ``get_paramf``,
  ``get_shader_param`` over every stage and ``pipe.ShaderCap``,
  ``get_compute_param``), ``get_name``/``get_vendor``, driver-query info,
  ``is_format_supported`` over a seeded sample of format x target x sample
  count x bind combinations, ``can_create_resource``, and a few calls that
  must fail (an unknown cap, a non-fence to ``fence_finish``);
* ``resource_create`` / ``resource_destroy`` of buffers and textures of every
  target (and of invalid templates, which must fail the same way each time);
* ``get_timestamp`` (never decreasing on one thread);
* ``fence_finish`` with random timeouts on fences the rendering contexts
  publish (including deferred ones, which the hammer thread then submits);
* ``context_create`` + ``destroy`` of short-lived contexts.

Every answer is compared with the answer the same question got once, up
front, on a quiet screen: values, created resources' layouts, and the type
and message of errors must not change.  Meanwhile two threaded contexts and a
direct one render frames that must stay bit-exact.
"""

from __future__ import annotations

import random
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import gallium
from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
from ._renderer import CheckedRenderer
from ._scene import ReferenceRenderer, make_spec

NAME = "screen_hammer"
HAMMERS = 3
FORMAT_SAMPLE = 3000
BINDS = (
    0,
    int(pipe.Bind.RENDER_TARGET),
    int(pipe.Bind.DEPTH_STENCIL),
    int(pipe.Bind.SAMPLER_VIEW),
    int(pipe.Bind.VERTEX_BUFFER | pipe.Bind.INDEX_BUFFER),
    int(pipe.Bind.RENDER_TARGET | pipe.Bind.BLENDABLE),
    int(pipe.Bind.CONSTANT_BUFFER),
)
TT = pipe.TextureTarget
F = pipe.Format


def _templates() -> list[pipe.ResourceTemplate]:
    """Valid templates of every target, then invalid ones (which must always fail)."""
    T = pipe.ResourceTemplate
    return [
        T(target=TT.BUFFER, format=F.NONE, width0=64, bind=pipe.Bind.VERTEX_BUFFER),
        T(target=TT.BUFFER, format=F.NONE, width0=100_000, bind=pipe.Bind.CONSTANT_BUFFER),
        T(target=TT.TEXTURE_1D, format=F.R8G8B8A8_UNORM, width0=200, last_level=3),
        T(
            target=TT.TEXTURE_2D,
            format=F.R8G8B8A8_UNORM,
            width0=130,
            height0=67,
            last_level=4,
            bind=pipe.Bind.RENDER_TARGET,
        ),
        T(target=TT.TEXTURE_2D, format=F.Z24_UNORM_S8_UINT, width0=64, height0=64, bind=1),
        T(target=TT.TEXTURE_3D, format=F.R32G32B32A32_FLOAT, width0=16, height0=8, depth0=5),
        T(target=TT.TEXTURE_CUBE, format=F.B8G8R8A8_UNORM, width0=32, height0=32, array_size=6),
        T(target=TT.TEXTURE_2D_ARRAY, format=F.R32_FLOAT, width0=20, height0=10, array_size=7),
        T(target=TT.TEXTURE_RECT, format=F.R8G8B8A8_UNORM, width0=33, height0=17),
        # invalid from here on
        T(target=TT.TEXTURE_2D, format=F.R8G8B8A8_UNORM, width0=0, height0=4),
        T(target=TT.TEXTURE_2D, format=F.R8G8B8A8_UNORM, width0=4, height0=4, nr_samples=8),
        T(target=TT.TEXTURE_2D, format=F.NONE, width0=4, height0=4),
        T(target=TT.TEXTURE_2D, format=F.R8G8B8A8_UNORM, width0=20000, height0=4),
    ]


def _answer(fn: Callable[[], Any]) -> Any:
    """A call's answer, with an error standing for itself by type and message."""
    try:
        return ("value", fn())
    except Exception as exc:
        return ("raises", type(exc).__name__, str(exc))


def _layout(res) -> tuple:
    return (
        res.target,
        res.format,
        res.width0,
        res.height0,
        res.depth0,
        res.array_size,
        res.last_level,
        res.size,
        tuple(res.levels),
        res.storage.size,
    )


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2, 3)))
        self.reference = ReferenceRenderer()
        self.questions = self._questions()
        # The answers of a quiet screen: nothing else is running yet.
        self.baseline = [_answer(fn) for _, fn in self.questions]
        self.templates = _templates()
        self.template_baseline = [self._create_answer(t) for t in self.templates]
        if not any(a[0] == "value" for a in self.template_baseline[:9]):
            raise RuntimeError("no valid template could be created: the suite would be vacuous")
        self.fences: deque = deque(maxlen=64)
        self.fence_lock = threading.Lock()
        self.deadline: Deadline | None = None

    def _questions(self) -> list[tuple[str, Callable[[], Any]]]:
        s = self.screen
        q: list[tuple[str, Callable[[], Any]]] = []
        for cap in pipe.Cap:
            q.append((f"get_param({cap.name})", lambda c=cap: s.get_param(c)))
        for cap in pipe.CapF:
            q.append((f"get_paramf({cap.name})", lambda c=cap: s.get_paramf(c)))
        for stage in pipe.ShaderType:
            for cap in pipe.ShaderCap:
                q.append(
                    (
                        f"get_shader_param({stage.name}, {cap.name})",
                        lambda st=stage, c=cap: s.get_shader_param(st, c),
                    )
                )
        for ir in pipe.ShaderIR:
            for cap in pipe.ComputeCap:
                q.append(
                    (
                        f"get_compute_param({ir.name}, {cap.name})",
                        lambda i=ir, c=cap: s.get_compute_param(i, c),
                    )
                )
        n = s.get_driver_query_info()
        for i in range(n + 1):
            q.append((f"get_driver_query_info({i})", lambda i=i: s.get_driver_query_info(i)))
        q.append(("get_driver_query_info()", lambda: s.get_driver_query_info()))
        q.append(("get_name()", s.get_name))
        q.append(("get_vendor()", s.get_vendor))
        q.append(("get_device_vendor()", s.get_device_vendor))
        q.append(("get_param(99999)", lambda: s.get_param(99999)))
        q.append(("fence_finish(None, 'x', 0)", lambda: s.fence_finish(None, "x", 0)))
        formats = list(pipe.Format)
        targets = [t for t in TT if t != TT.MAX_TEXTURE_TYPES]
        for _ in range(FORMAT_SAMPLE):
            f = self.rng.choice(formats)
            t = self.rng.choice(targets)
            n_s = self.rng.choice((0, 1, 4))
            b = self.rng.choice(BINDS)
            q.append(
                (
                    f"is_format_supported({f.name}, {t.name}, {n_s}, {b:#x})",
                    lambda f=f, t=t, n_s=n_s, b=b: s.is_format_supported(f, t, n_s, b),
                )
            )
        for i, templ in enumerate(_templates()):
            q.append(
                (f"can_create_resource(template {i})", lambda t=templ: s.can_create_resource(t))
            )
        return q

    def _create_answer(self, templ) -> Any:
        try:
            res = self.screen.resource_create(templ)
        except Exception as exc:
            return ("raises", type(exc).__name__, str(exc))
        try:
            return ("value", _layout(res))
        finally:
            self.screen.resource_destroy(res)

    # -- threads -----------------------------------------------------------------------

    def publish(self, fence) -> None:
        with self.fence_lock:
            self.fences.append(fence)

    def hammer(self, name: str, seed: int) -> None:
        assert self.deadline is not None
        rng = random.Random(seed)
        last_ts = 0
        kept: list[Any] = []
        actions = ("ask", "ask", "ask", "resource", "timestamp", "fence", "fence", "context")
        while self.deadline.running():
            action = rng.choice(actions)
            self.report.add(iterations=1)
            if action == "ask":
                for _ in range(40):
                    i = rng.randrange(len(self.questions))
                    label, fn = self.questions[i]
                    got = _answer(fn)
                    self.report.count("answers")
                    if got != self.baseline[i]:
                        self.report.fail(
                            f"{name}: {label} answered {got!r} under load; "
                            f"a quiet screen answered {self.baseline[i]!r}"
                        )
            elif action == "resource":
                self._resource(name, rng, kept)
            elif action == "timestamp":
                for _ in range(20):
                    ts = self.screen.get_timestamp()
                    if ts <= 0 or ts < last_ts:
                        self.report.fail(f"{name}: get_timestamp went from {last_ts} to {ts}")
                    last_ts = ts
                self.report.count("timestamps", 20)
            elif action == "fence":
                self._fence(name, rng)
            else:
                ctx = self.screen.context_create(threaded=rng.random() < 0.5)
                fence = ctx.flush()
                if not fence.wait(WAIT_LIMIT_S):
                    self.report.fail(f"{name}: an empty context's flush never signalled")
                ctx.destroy()
                self.report.count("contexts_created")
        for res in kept:
            self.screen.resource_destroy(res)

    def _resource(self, name: str, rng: random.Random, kept: list) -> None:
        i = rng.randrange(len(self.templates))
        templ = self.templates[i]
        want = self.template_baseline[i]
        try:
            res = self.screen.resource_create(templ)
        except Exception as exc:
            got = ("raises", type(exc).__name__, str(exc))
            if got != want:
                self.report.fail(
                    f"{name}: resource_create(template {i}) gave {got!r}, not {want!r}"
                )
            self.report.count("resource_errors")
            return
        got = ("value", _layout(res))
        if got != want:
            self.report.fail(f"{name}: resource_create(template {i}) gave {got!r}, not {want!r}")
        self.report.count("resources_created")
        kept.append(res)
        while len(kept) > rng.randint(0, 4):
            victim = kept.pop(rng.randrange(len(kept)))
            self.screen.resource_destroy(victim)
            if rng.random() < 0.2:
                self.screen.resource_destroy(victim)  # destroying twice is harmless

    def _fence(self, name: str, rng: random.Random) -> None:
        with self.fence_lock:
            if not self.fences:
                return
            fence = rng.choice(list(self.fences))
        timeout_ns = rng.choice((0, 1_000, 1_000_000, int(WAIT_LIMIT_S * 1e9)))
        t0 = time.monotonic()
        ok = self.screen.fence_finish(None, fence, timeout_ns)
        self.report.count("fence_waits")
        if ok and not fence.signalled:
            self.report.fail(f"{name}: fence_finish returned True on a pending fence")
        if not ok and timeout_ns == int(WAIT_LIMIT_S * 1e9):
            self.report.fail(
                f"{name}: suspected deadlock: fence_finish of a rendering context's fence timed "
                f"out after {time.monotonic() - t0:.0f}s"
            )
        if not ok:
            self.report.count("fence_timeouts")

    # -- run ------------------------------------------------------------------------------

    def run(self) -> Report:
        try:
            plans = []
            for i, (w, h) in enumerate(((96, 80), (64, 130), (120, 40))):
                specs = [make_spec(self.rng.getrandbits(32), w, h) for _ in range(2)]
                plans.append((f"render{i}", specs, self.rng.getrandbits(32), i != 2))
            self.reference.warm([s for _, specs, _, _ in plans for s in specs])
            self.deadline = Deadline(self.seconds)
            renderers = [
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
            bodies = [(r.name, r.run) for r in renderers]
            for i in range(HAMMERS):
                seed = self.rng.getrandbits(32)
                bodies.append((f"hammer{i}", lambda i=i, s=seed: self.hammer(f"hammer{i}", s)))
            run_threads(self.report, self.deadline, bodies)
            for r in renderers:
                self.report.counters[f"{r.name}_frames"] = r.frames
        finally:
            self.reference.close()
            self.screen.destroy()
        return self.report


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

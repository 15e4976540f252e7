"""Suite query_storm: query results equal independently counted pixels.

Each of several contexts (three threaded, one direct) renders its own scene in
which every draw has a LESS depth test *and* writes depth (the translucent
draw too, blended), so a fragment passes exactly when it changes the depth
buffer.  Up front, on a direct context of a separate one-worker screen, each
scene is drawn one triangle at a time with the depth buffer read back after
every triangle; the number of depth words a triangle changed is the number of
its fragments that were covered and passed, counted without any query.  (The
triangle-at-a-time image must also equal the whole-draw image.)

The reference pass also draws each triangle alone over a depth buffer
cleared to 1.0 and counts the words it changes: its covered fragments.

Then, per frame, a random set of queries (OCCLUSION_COUNTER,
OCCLUSION_PREDICATE and PIPELINE_STATISTICS, drawn from a pool of reused
query objects) is begun and ended around random spans of the frame's draw
calls: overlapping, nested,
empty, spanning flushes inserted mid-frame (plain and deferred).  After the
frame the results are fetched in a random order with
``get_query_result(q, wait=True)``, by polling with ``wait=False``, or with
``get_query_result_async`` under asyncio.  A counter must equal the sum of its
draws' counted pixels, a predicate whether that sum is non-zero, the
statistics' ps_invocations the sum of its draws' covered fragments, and the
frame must read back bit-exact; a fetch that raises is a failure too.  Some
frames skip fetching some results, so the next frame reuses a query object
whose previous result was never read; many flushes are surrounded by
*padding*, draws whose triangles are all culled (no fragment, so no count
and no pixel changes) that keep the driver thread busy, so the flush executes
well after it was recorded and results are asked for (sometimes after a
short pause) while the calls they depend on are still queued.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

import numpy as np

import gallium
from gallium import pipe

from ._harness import WAIT_LIMIT_S, Deadline, Report, run_threads
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
    triangles_of_draws,
)

NAME = "query_storm"
POOL = 6
QT = pipe.QueryType
PADDING_VERTS = 3 * 400  # triangles per padding draw (all culled)


def draw_counts(
    reference: ReferenceRenderer, spec: SceneSpec
) -> tuple[list[int], list[int], np.ndarray]:
    """Passing fragments per draw call, counted from depth read-backs; covered
    fragments per draw call, each triangle drawn alone over a depth buffer
    cleared to 1.0 (every fragment of the scenes' depths in [0.025, 0.975]
    passes LESS and changes its word; the fragment shader never kills); and
    the image."""
    screen = reference.screen
    ctx = screen.context_create(threaded=False)
    try:
        p = Pipeline(ctx)
        target = Target(screen, ctx, spec.width, spec.height)
        alone = Target(screen, ctx, spec.width, spec.height)
        record_frame_start(ctx, p, spec, target)
        ctx.flush().wait(None)
        depth = target.read_depth(ctx)
        counts, covered = [], []
        parts = triangles_of_draws(spec)
        for d, tris in enumerate(parts):
            total = cover = 0
            for part in tris:
                for t in (target, alone):
                    t.bind(ctx)
                    if t is alone:
                        ctx.clear(pipe.Clear.DEPTH, depth=1.0)
                        ctx.flush().wait(None)
                        cleared = alone.read_depth(ctx)
                    if d < len(spec.opaque_draws):
                        record_opaque_draw(ctx, p, spec, d, part)
                    else:
                        record_translucent_draw(ctx, p, spec, part)
                    ctx.flush().wait(None)
                    if t is alone:
                        cover += int(np.count_nonzero(alone.read_depth(ctx) != cleared))
                after = target.read_depth(ctx)
                total += int(np.count_nonzero(after != depth))
                depth = after
            counts.append(total)
            covered.append(cover)
        return counts, covered, target.read(ctx)
    finally:
        ctx.destroy()


@dataclass
class Plan:
    query: object
    kind: QT
    first: int  # draw calls [first, last) are inside the query
    last: int
    fetch: str  # wait | poll | async | skip


class QueryRenderer:
    """One context's thread: frames with random queries, every result checked."""

    def __init__(
        self,
        name: str,
        suite: _Suite,
        spec: SceneSpec,
        counts: list[int],
        covered: list[int],
        image: np.ndarray,
        seed: int,
        threaded: bool,
    ) -> None:
        self.name = name
        self.suite = suite
        self.report = suite.report
        self.spec = spec
        self.counts = counts
        self.covered = covered
        self.image = image
        self.rng = random.Random(seed)
        self.threaded = threaded
        self.frames = 0

    def run(self) -> None:
        ctx = self.suite.screen.context_create(threaded=self.threaded)
        try:
            p = Pipeline(ctx)
            target = Target(self.suite.screen, ctx, self.spec.width, self.spec.height)
            cull_all = ctx.create_rasterizer_state(
                pipe.RasterizerState(cull_face=pipe.Face.FRONT_AND_BACK)
            )
            pad_rng = np.random.default_rng(self.rng.getrandbits(32))
            padding = np.zeros((PADDING_VERTS, 8), np.float32)
            padding[:, 0:3] = pad_rng.uniform(-1, 1, (PADDING_VERTS, 3))
            padding[:, 3] = 1.0
            self.pad = (cull_all, padding)
            kinds = [QT.OCCLUSION_COUNTER] * POOL + [QT.OCCLUSION_PREDICATE, QT.PIPELINE_STATISTICS]
            pool = [(ctx.create_query(kind), kind) for kind in kinds]
            assert self.suite.deadline is not None
            n = 0
            while self.suite.deadline.running():
                self.report.add(iterations=1)
                if not self._frame(ctx, p, target, pool, n):
                    return
                n += 1
            for q, _ in pool:
                ctx.destroy_query(q)
        finally:
            ctx.destroy()

    def _frame(self, ctx, p: Pipeline, target: Target, pool, n: int) -> bool:
        rng = self.rng
        spec = self.spec
        ndraws = len(self.counts)
        chosen = rng.sample(pool, rng.randint(1, len(pool)))
        plans = []
        for q, kind in chosen:
            a = rng.randint(0, ndraws)
            b = rng.randint(a, ndraws)
            fetch = rng.choice(("wait", "wait", "poll", "async", "skip"))
            plans.append(Plan(q, kind, a, b, fetch))
        # events at each position between draws: ends, then begins (empty spans begin first)
        events: dict[int, list[tuple[int, str, Plan]]] = {}
        for pl in plans:
            events.setdefault(pl.first, []).append((1, "begin", pl))
            events.setdefault(pl.last, []).append((2 if pl.first == pl.last else 0, "end", pl))
        record_frame_start(ctx, p, spec, target)
        for pos in range(ndraws + 1):
            for _, what, pl in sorted(events.get(pos, []), key=lambda e: e[0]):
                if what == "begin":
                    ctx.begin_query(pl.query)
                else:
                    ctx.end_query(pl.query)
            if pos < ndraws and rng.random() < 0.3:
                # Padding around the flush keeps the driver thread busy on both sides of
                # it, so it executes long after being recorded and results are asked for
                # while the calls after it are still queued.
                padded = rng.random() < 0.5
                if padded:
                    self._padding(ctx, rng.randint(2, 8))
                ctx.flush(pipe.Flush.DEFERRED if rng.random() < 0.5 else 0)
                self.report.count("mid_frame_flushes")
                if padded:
                    self._padding(ctx, rng.randint(20, 60))
            elif pos < ndraws and rng.random() < 0.05:
                self._padding(ctx, rng.randint(10, 60))
            if pos < len(spec.opaque_draws):
                record_opaque_draw(ctx, p, spec, pos)
            elif pos < ndraws:
                record_translucent_draw(ctx, p, spec)
        ending = rng.choice(("none", "flush", "flush", "deferred", "wait"))
        if ending != "none":
            fence = ctx.flush(pipe.Flush.DEFERRED if ending == "deferred" else 0)
            if ending == "wait" and not fence.wait(WAIT_LIMIT_S):
                self.report.fail(f"{self.name}: suspected deadlock: frame {n}'s flush")
                return False
        rng.shuffle(plans)
        for pl in plans:
            if pl.fetch == "skip":
                self.report.count("results_skipped")
                continue
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0.0, 0.006))  # the application does other work first
            try:
                got = self._result(ctx, pl)
            except gallium.PipeError as exc:
                self.report.fail(
                    f"{self.name}: frame {n}: fetching {pl.kind.name} over draws "
                    f"[{pl.first}, {pl.last}) by {pl.fetch}, after its end_query was recorded, "
                    f"raised {type(exc).__name__}: {exc}"
                )
                continue
            if got is None:
                return False
            want_count = sum(self.counts[pl.first : pl.last])
            want = want_count if pl.kind == QT.OCCLUSION_COUNTER else want_count > 0
            if pl.kind == QT.PIPELINE_STATISTICS:
                # fragment shader invocations: the covered fragments (padding draws cover none)
                got = got.ps_invocations
                want = sum(self.covered[pl.first : pl.last])
                self.report.count("ps_invocations_checked")
            self.report.count("results_checked")
            if got != want or type(got) is not type(want):
                self.report.fail(
                    f"{self.name}: frame {n}: {pl.kind.name} over draws [{pl.first}, {pl.last}) "
                    f"(fetched by {pl.fetch}) gave {got!r}; counted pixels say {want!r}"
                )
        img = target.read(ctx)
        self.frames += 1
        self.report.add(frames=1)
        if not (img == self.image).all():
            self.report.fail(
                f"{self.name}: frame {n} with queries differs from the reference: "
                f"{describe_mismatch(img, self.image)}"
            )
        return True

    def _padding(self, ctx, n: int) -> None:
        """Draws that cost the driver thread time but produce no fragment."""
        cull_all, verts = self.pad
        ctx.bind_rasterizer_state(cull_all)
        ctx.set_vertex_buffers(0, [pipe.VertexBuffer(32, 0, verts)])
        for _ in range(n):
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=verts.shape[0]))
        self.report.count("padding_draws", n)

    def _result(self, ctx, pl: Plan) -> object | None:
        if pl.fetch == "wait":
            ok, value = ctx.get_query_result(pl.query, True)
            if not ok:
                self.report.fail(f"{self.name}: get_query_result(wait=True) returned not ready")
            return value
        if pl.fetch == "async":

            async def fetch():
                async with asyncio.timeout(WAIT_LIMIT_S):
                    return await ctx.get_query_result_async(pl.query)

            return asyncio.run(fetch())
        start = time.monotonic()
        while True:
            ok, value = ctx.get_query_result(pl.query, False)
            if ok:
                return value
            if value is not None:
                self.report.fail(f"{self.name}: a not-ready query result carries {value!r}")
            self.report.count("polls_not_ready")
            if time.monotonic() - start > WAIT_LIMIT_S:
                self.report.fail(f"{self.name}: suspected deadlock: a query never became ready")
                return None
            time.sleep(0.0005)


class _Suite:
    def __init__(self, seconds: float, seed: int) -> None:
        self.report = Report(NAME, seed, seconds)
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.screen = gallium.create_screen(num_threads=self.rng.choice((1, 2, 3)))
        self.reference = ReferenceRenderer()
        self.deadline: Deadline | None = None

    def run(self) -> Report:
        try:
            renderers = []
            for i, (w, h, threaded) in enumerate(
                ((64, 48, True), (48, 80, True), (72, 40, True), (56, 56, False))
            ):
                spec = make_spec(
                    self.rng.getrandbits(32),
                    w,
                    h,
                    triangles=self.rng.randint(6, 12),
                    translucent_writes_depth=True,
                )
                counts, covered, image = draw_counts(self.reference, spec)
                whole = self.reference.image(spec)
                if not np.array_equal(image, whole):
                    self.report.fail(
                        f"ctx{i}: drawing the scene one triangle at a time gives another image "
                        f"than drawing it whole: {describe_mismatch(image, whole)}"
                    )
                if sum(counts) == 0:
                    raise RuntimeError("a query scene covers no pixel: the suite would be vacuous")
                self.report.counters[f"ctx{i}_pixels_per_draw"] = "/".join(map(str, counts))
                self.report.counters[f"ctx{i}_covered_per_draw"] = "/".join(map(str, covered))
                renderers.append(
                    QueryRenderer(
                        f"ctx{i}",
                        self,
                        spec,
                        counts,
                        covered,
                        whole,
                        self.rng.getrandbits(32),
                        threaded,
                    )
                )
            self.deadline = Deadline(self.seconds)
            run_threads(self.report, self.deadline, [(r.name, r.run) for r in renderers])
        finally:
            self.reference.close()
            self.screen.destroy()
        return self.report


def run(seconds: float, seed: int) -> Report:
    return _Suite(seconds, seed).run()

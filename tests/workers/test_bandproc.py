"""Band processes (workers/bandproc.py) over shared blocks (workers/shared.py).

A heavy scene's bands run in each worker's child process: the same bytes,
query results and timestamps as worker threads and as the submitting
thread; shared blocks are found from any view and released with their last
array; a child that cannot load a scene leaves the band to the thread (and
the pool to threads), a child that dies is replaced, an exception in a band
reaches the application.
"""

from __future__ import annotations

import gc
import os
import signal
import threading
import time
import weakref

import numpy as np
import pytest
from helpers import (
    FS_TEX,
    PASS_VS,
    bind_depth_test,
    bind_passthrough,
    make_target,
    read_rgba8,
    record_tied_layers,
    set_vertices,
)

import gallium
import gallium.numpipe.scene as scene_mod
from gallium import pipe
from workers import bandproc, shared

W, H = 160, 128  # RGBA8 and Z24S8 targets of 80 KiB: shared blocks
RGBA8 = pipe.Format.R8G8B8A8_UNORM

# a general TGSI kernel (compiled in the child from its shader)
FS_ALU = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
DCL TEMP[0]
IMM[0] FLT32 { 0.5000, 0.2500, 2.0000, 1.0000}
  0: MUL TEMP[0], IN[0], IMM[0]
  1: SIN TEMP[0].x, TEMP[0].xxxx
  2: MAD OUT[0], TEMP[0], IMM[0].zzzz, IMM[0].yyyy
  3: END
"""


@pytest.fixture(autouse=True)
def every_scene_is_heavy(monkeypatch):
    """The test scenes are small: send them to the band processes anyway."""
    monkeypatch.setattr(bandproc, "MIN_WORK_MS", 0.0)


@pytest.fixture(scope="module")
def screens():
    """Band processes on, off, and rasterizing on the submitting thread."""
    made = {
        "processes": gallium.create_screen(num_threads=2, processes=True),
        "threads": gallium.create_screen(num_threads=2, processes=False),
        "direct": gallium.create_screen(num_threads=0),
    }
    yield made
    for s in made.values():
        s.destroy()


def _texture(screen, ctx, size: int, seed: int):
    rng = np.random.default_rng(seed)
    texels = rng.integers(0, 256, (size, size, 4), dtype=np.uint8)
    tex = screen.resource_create(
        pipe.ResourceTemplate(
            target=pipe.TextureTarget.TEXTURE_2D,
            format=RGBA8,
            width0=size,
            height0=size,
            bind=pipe.Bind.SAMPLER_VIEW,
        )
    )
    box = pipe.Box(0, 0, 0, size, size, 1)
    ctx.texture_subdata(tex, 0, pipe.Transfer.WRITE, box, texels, size * 4, texels.nbytes)
    return tex, ctx.create_sampler_view(tex, pipe.SamplerViewTemplate(format=RGBA8))


def _quad(x0, y0, x1, y1, z):
    v = [[x, y, z, 1.0, s, t, 0.0, 1.0] for (x, y), (s, t) in zip(
        [(x0, y0), (x1, y0), (x0, y1), (x1, y1)], [(0, 1), (1, 1), (0, 0), (1, 0)]
    )]  # fmt: skip
    return np.array([v[0], v[1], v[2], v[2], v[1], v[3]], np.float32)


def render(screen, threaded: bool = False):
    """One scene (one flush): clears, an occlusion query around 2,600 depth-
    tested triangles, a timestamp, blended triangles, quads sampling a
    texture in a shared block (256x256) and one copied with the scene (8x8),
    and a quad through a general TGSI kernel.
    Returns colour and depth bytes, the occlusion count, the timestamp and
    the timestamps just before and after."""
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, zs = make_target(screen, ctx, W, H, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
        _big, big_view = _texture(screen, ctx, 256, 1)
        _small, small_view = _texture(screen, ctx, 8, 2)
        samp = ctx.create_sampler_state(
            pipe.SamplerState(
                min_img_filter=pipe.TexFilter.LINEAR,
                mag_img_filter=pipe.TexFilter.LINEAR,
                min_mip_filter=pipe.MipFilter.NONE,
            )
        )
        ctx.flush().wait(None)
        before = screen.get_timestamp()
        occ, stamp = record_tied_layers(ctx, (3, 2600, 0.05), (4, 300, 0.1), tie_levels=7)
        ctx.bind_blend_state(ctx.create_blend_state(pipe.BlendState()))
        bind_depth_test(ctx, pipe.CompareFunc.ALWAYS)
        bind_passthrough(ctx, vs=PASS_VS, fs=FS_TEX)
        ctx.bind_sampler_states(pipe.ShaderType.FRAGMENT, 0, [samp])
        for view, rect in ((big_view, (-0.9, -0.9, 0.1, 0.3)), (small_view, (0.2, -0.5, 0.9, 0.9))):
            ctx.set_sampler_views(pipe.ShaderType.FRAGMENT, 0, [view])
            set_vertices(ctx, _quad(*rect, z=0.0))
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        bind_passthrough(ctx, vs=PASS_VS, fs=FS_ALU)
        set_vertices(ctx, _quad(-0.3, 0.4, 0.6, 0.95, z=0.0))
        ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=6))
        ctx.flush().wait(None)
        after = screen.get_timestamp()
        colour, depth = read_rgba8(ctx, rt), read_rgba8(ctx, zs)
        count = ctx.get_query_result(occ)[1]
        ts = ctx.get_query_result(stamp)[1]
        return colour.tobytes(), depth.tobytes(), count, (before, ts, after)
    finally:
        ctx.destroy()


def render_direct():
    """render() on a fresh screen that rasterizes on the submitting thread."""
    reference = gallium.create_screen(num_threads=0)
    try:
        return render(reference)
    finally:
        reference.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct-ctx", "threaded-ctx"])
def test_processes_draw_the_same_bytes_and_queries(screens, threaded):
    pool = screens["processes"].pool
    units = sum(pool.process_units)
    got = render(screens["processes"], threaded)
    assert sum(pool.process_units) == units + 2  # both bands of the scene, in processes
    assert len(pool.process_pids()) == 2 and pool.process_failure is None
    threads = render(screens["threads"], threaded)
    direct = render(screens["direct"], threaded)
    assert sum(screens["threads"].pool.process_units) == 0
    assert got[:3] == threads[:3] == direct[:3]
    assert got[2] > 10_000  # the occlusion query counted the first draw's samples
    before, ts, after = got[3]
    assert before < ts < after  # the timestamp the child took, on the screen's clock
    colour = np.frombuffer(got[0], np.uint8).reshape(H, W, 4)
    assert len(np.unique(colour.reshape(-1, 4), axis=0)) > 1000  # a real scene


def test_scenes_below_the_threshold_stay_on_threads(screens, monkeypatch):
    pool = screens["processes"].pool
    units = sum(pool.process_units)
    monkeypatch.setattr(bandproc, "MIN_WORK_MS", 1e9)
    got = render(screens["processes"])
    assert sum(pool.process_units) == units
    assert got[:3] == render(screens["threads"])[:3]


def test_a_dead_band_process_is_replaced(screens):
    pool = screens["processes"].pool
    render(screens["processes"])
    pids = pool.process_pids()
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    for pid in pids:  # (reaped by the handle; wait until they are gone)
        for _ in range(200):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            if any(p.proc is not None and p.proc.poll() is not None for p in pool._procs if p):
                break
            time.sleep(0.01)
    got = render(screens["processes"])
    new = pool.process_pids()
    assert len(new) == 2 and not set(new) & set(pids)
    assert got[:3] == render(screens["threads"])[:3]


class _Unloadable:
    """Pickles to a call that fails in the child (a scene it cannot load)."""

    def __reduce__(self):
        return (int, ("not a number",))


class _ExitOnLoad:
    """Pickles to a call that ends the child while it loads the scene."""

    def __reduce__(self):
        return (os._exit, (3,))


_FINISH = scene_mod.Scene.finish_recording


def _with_command(monkeypatch, obj):
    """Every scene recorded from now on carries ``obj`` among its commands
    (which the bands skip: not a clear, draw or marker)."""

    def finish_with(self):
        _FINISH(self)
        self.commands.append(obj)

    monkeypatch.setattr(scene_mod.Scene, "finish_recording", finish_with)


def test_a_scene_the_child_cannot_load_runs_on_the_threads(monkeypatch):
    screen = gallium.create_screen(num_threads=2, processes=True)
    try:
        _with_command(monkeypatch, _Unloadable())
        got = render(screen)
        pool = screen.pool
        assert not pool.processes and "could not load the scene" in pool.process_failure
        assert "ValueError" in pool.process_failure
        assert sum(pool.process_units) == 0
        monkeypatch.setattr(scene_mod.Scene, "finish_recording", _FINISH)
        assert got[:3] == render_direct()[:3]
    finally:
        screen.destroy()


def test_a_child_dying_in_a_band_is_an_error_of_that_scene(monkeypatch, screens):
    screen = gallium.create_screen(num_threads=2, processes=True)
    try:
        _with_command(monkeypatch, _ExitOnLoad())
        with pytest.raises(RuntimeError, match="band process rasterizing band"):
            render(screen)
        monkeypatch.setattr(scene_mod.Scene, "finish_recording", _FINISH)
        got = render(screen)  # new children; the screen and its contexts carry on
        assert screen.pool.processes and screen.pool.process_failure is None
        assert got[:3] == render(screens["threads"])[:3]
    finally:
        screen.destroy()


def test_an_exception_in_a_band_comes_back_with_the_childs_traceback(screens):
    screen = screens["processes"]
    ctx = screen.context_create(threaded=False)
    try:
        rt, _ = make_target(screen, ctx, W, H)
    finally:
        ctx.destroy()
    target = scene_mod.make_color_target(rt, 0, 0, rt.storage)
    scene = scene_mod.Scene(W, H, [target], None)
    # a clear of colour buffer 3 of a one-buffer framebuffer fails in the band
    scene.commands.append(scene_mod.ClearCmd([(3, np.zeros(4, np.uint8))], None, None, 0))
    proc = bandproc.BandProcess()
    try:
        with pytest.raises(IndexError) as info:
            proc.run(scene, 0)
        assert any("in a band process" in note for note in info.value.__notes__)
        assert any("execute_band" in note for note in info.value.__notes__)
        # the child is still there and takes the next band
        scene2 = scene_mod.Scene(W, H, [target], None)
        scene2.commands.append(scene_mod.ClearCmd([(0, np.full(4, 7, np.uint8))], None, None, 0))
        proc.run(scene2, 1)
        assert (np.asarray(target.raw)[64:128] == 7).all()
    finally:
        proc.close()


@pytest.mark.parametrize("decoy_on", ["cwd", "sys.path"])
def test_the_child_runs_the_librarys_own_modules(screens, tmp_path, monkeypatch, decoy_on):
    """Decoy ``workers`` and ``gallium`` packages in the working directory (where
    ``python -m`` looks first) or first on sys.path never run in the child."""
    marker = tmp_path / "decoy-ran"
    for pkg in ("workers", "gallium"):
        (tmp_path / pkg).mkdir()
        for mod in ("__init__.py", "bandproc.py"):
            (tmp_path / pkg / mod).write_text(
                f"open({str(marker)!r}, 'a').write('{pkg}/{mod}\\n')\n"
            )
    monkeypatch.chdir(tmp_path)
    if decoy_on == "sys.path":
        monkeypatch.syspath_prepend(str(tmp_path))
    screen = screens["processes"]
    ctx = screen.context_create(threaded=False)
    try:
        rt, _ = make_target(screen, ctx, W, H)
    finally:
        ctx.destroy()
    target = scene_mod.make_color_target(rt, 0, 0, rt.storage)
    scene = scene_mod.Scene(W, H, [target], None)
    scene.commands.append(scene_mod.ClearCmd([(0, np.full(4, 9, np.uint8))], None, None, 0))
    proc = bandproc.BandProcess()
    try:
        proc.run(scene, 1)  # rows 64..127
    finally:
        proc.close()
    assert not marker.exists(), marker.read_text()
    raw = np.asarray(target.raw)
    assert (raw[64:128] == 9).all() and not raw[:64].any()


def test_resources_of_a_screen_with_processes_live_in_shared_blocks(screens):
    for name, expect in (("processes", True), ("threads", False)):
        screen = screens[name]
        big = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=RGBA8, width0=256, height0=256
            )
        )
        small = screen.resource_create(
            pipe.ResourceTemplate(
                target=pipe.TextureTarget.TEXTURE_2D, format=RGBA8, width0=16, height0=16
            )
        )
        assert (shared.locate(big.storage) is not None) == expect
        assert shared.locate(small.storage) is None
        assert not big.storage.any()  # zero-filled, as private storage is


def test_shared_blocks_are_found_from_views_and_released_with_their_last_array():
    shared.take_dropped()
    a = shared.allocate(1 << 20)
    serial, fd, nbytes, offset = shared.locate(a)
    assert nbytes == 1 << 20 and offset == 0
    v = a[4096:].view(np.uint32).reshape(-1, 64)[3:, 8:]
    assert shared.locate(v)[0] == serial
    assert shared.locate(v)[3] == 4096 + 3 * 256 + 32
    assert shared.locate(np.zeros(10)) is None
    assert shared.locate(np.concatenate([a[:8], a[:8]])) is None  # a copy is private
    os.fstat(fd)
    del a, v
    gc.collect()
    assert serial in shared.take_dropped()
    with pytest.raises(OSError):
        os.fstat(fd)
    # blocks freed and made again at the same addresses keep the index right
    for _ in range(50):
        b = shared.allocate(1 << 16)
        c = shared.allocate(1 << 16)
        assert shared.locate(b)[0] != shared.locate(c)[0]
        del b
        assert shared.locate(c) is not None


def test_a_child_maps_the_parents_blocks_and_unmaps_dropped_ones(screens):
    """The serials of freed blocks reach the children with the next band."""
    screen = screens["processes"]
    render(screen)
    handles = [p for p in screen.pool._procs if p is not None]
    assert handles
    junk = shared.allocate(1 << 16)
    serial = shared.locate(junk)[0]
    del junk
    gc.collect()
    bandproc._note_dropped()
    assert all(serial in h.pending_drops for h in handles)
    # a child learns the drops with its next band; which child takes which
    # band is the pool's choice, so render until each has taken one
    before = {id(h): h.bands for h in handles}
    for _ in range(50):
        render(screen)
        if all(h.bands > before[id(h)] for h in handles):
            break
    assert all(h.bands > before[id(h)] for h in handles)
    assert not any(serial in h.pending_drops for h in handles)


def _draw(count, box, per_triangle_px=None, *, passthrough=True, instructions=0, blend=False):
    from types import SimpleNamespace as NS

    x0, y0, x1, y1 = box
    bbox = np.tile(np.array([[x0, y0, x1, y1]], np.int32), (count, 1))
    kernel = NS(shader=NS(instructions=[None] * instructions))
    state = NS(
        passthrough={0: 0} if passthrough else None,
        texpass=None,
        kernel=kernel,
        blend_enabled=blend,
    )
    return scene_mod.DrawCmd(state, [], tris=NS(count=count, bbox=bbox))


@pytest.mark.parametrize(
    "draws, heavy",
    [
        # the fill: two triangles over 1024x1024 with a pass-through shader, and at 4096x4096
        ([_draw(2, (0, 0, 1023, 1023))], False),
        ([_draw(2, (0, 0, 4095, 4095))], False),
        # 16 blended full-screen quads
        ([_draw(32, (0, 0, 1023, 1023), blend=True)], True),
        # one full-screen triangle pair through a 40-instruction shader
        ([_draw(2, (0, 0, 1023, 1023), passthrough=False, instructions=40)], True),
        # 10,000 triangles of ~25x25 px, and 100,000 of ~4x4
        ([_draw(10_000, (0, 0, 24, 24))], True),
        ([_draw(100_000, (0, 0, 3, 3))], True),
        # 2,600 small triangles (the tests' scene here)
        ([_draw(2600, (0, 0, 9, 9))], False),
    ],
    ids=["fill", "fill-4096", "blend", "alu40", "medium", "small", "small-test-scene"],
)
def test_the_work_estimate_sends_heavy_scenes_only(monkeypatch, draws, heavy):
    monkeypatch.undo()  # the real threshold
    scene = scene_mod.Scene(1024, 1024, [], None)
    scene.commands.extend(draws)
    assert (bandproc.estimated_work_ms(scene) >= bandproc.MIN_WORK_MS) == heavy


def test_a_band_process_that_does_not_start_in_time_leaves_the_pool_to_threads(monkeypatch):
    monkeypatch.setattr(bandproc, "START_TIMEOUT_S", 1e-4)  # (no interpreter starts that fast)
    screen = gallium.create_screen(num_threads=2, processes=True)
    try:
        got = render(screen)
        pool = screen.pool
        assert not pool.processes and "did not start" in pool.process_failure
        assert sum(pool.process_units) == 0 and pool.process_pids() == []
        assert got[:3] == render_direct()[:3]
    finally:
        screen.destroy()


def test_scene_arenas_are_reused_and_scenes_stay_exact(screens, monkeypatch):
    """A finished scene's arena serves the next scenes (the children read it
    through the mapping they have); scenes of different contents through the
    same arena give the threads' bytes every time."""
    serials = []
    real = bandproc.SceneBlob.__init__

    def spy(self, scene):
        real(self, scene)
        serials.append(self.arena_ref[0])

    monkeypatch.setattr(bandproc.SceneBlob, "__init__", spy)
    frames = {}
    for name in ("processes", "threads"):
        screen = screens[name]
        ctx = screen.context_create()
        try:
            rt, zs = make_target(screen, ctx, W, H, zs_format=pipe.Format.Z24_UNORM_S8_UINT)
            got = []
            for seed in (11, 12, 11, 13):
                record_tied_layers(ctx, (seed, 2600, 0.05), (seed + 100, 300, 0.1), tie_levels=7)
                ctx.flush().wait(None)
                got.append((read_rgba8(ctx, rt).tobytes(), read_rgba8(ctx, zs).tobytes()))
        finally:
            ctx.destroy()
        frames[name] = got
    assert frames["processes"] == frames["threads"]
    assert frames["processes"][0] != frames["processes"][1]  # the scenes differ
    assert len(serials) == 4 and len(set(serials)) < 4  # a block served several scenes


def test_the_arena_pool_keeps_a_few_blocks(monkeypatch):
    pool = bandproc._ArenaPool()
    a = pool.take(100_000)
    assert a.nbytes == 131_072  # a quarter more, whole 64 KiB
    pool.give(a)
    assert pool.take(90_000) is a  # the smallest that fits
    assert pool.take(90_000) is not a  # (taken)
    pool.give(a)
    big = pool.take(200_000)
    assert big is not a and big.nbytes == 262_144
    blocks = [pool.take(70_000) for _ in range(5)]
    assert blocks[0] is a
    for b in [big, *blocks]:
        pool.give(b)  # (collected by the next take)
    kept = pool.take(1)
    # six came back, four kept (the longest kept went first), one taken now
    assert len(pool._free) == pool.KEEP - 1
    assert all(x is not big and x is not a for x in [kept, *pool._free])
    monkeypatch.setattr(pool, "KEEP_BYTES", 300_000)
    pool.give(kept)
    pool.take(10)
    assert sum(x.nbytes for x in pool._free) <= 300_000
    pool.give(big)
    pool.release()
    assert pool._free == [] and not pool._returned


def test_blocks_given_back_during_a_take_do_not_deadlock():
    """A blob can be freed (its finaliser gives its block back) by a garbage
    collection that runs inside take(), on the thread that holds its lock."""
    pool = bandproc._ArenaPool()
    block = pool.take(1000)

    class Cycle:
        pass

    c = Cycle()
    c.me = c  # freed by the cyclic collector only
    weakref.finalize(c, pool.give, block)
    del c
    gc.disable()
    try:
        real = pool._collect

        def collect_with_gc():
            gc.collect()  # the finaliser runs here, the lock held
            real()

        pool._collect = collect_with_gc
        got = []
        t = threading.Thread(target=lambda: got.append(pool.take(1000)), daemon=True)
        t.start()
        t.join(10.0)
        assert not t.is_alive(), "take() deadlocked on a block given back inside it"
        assert got[0] is block
    finally:
        gc.enable()


def test_a_screen_shut_down_frees_the_kept_arenas():
    screen = gallium.create_screen(num_threads=2, processes=True)
    try:
        render(screen)
        assert sum(screen.pool.process_units) > 0
        gc.collect()
        assert bandproc._ARENAS._free  # the finished scene's arena, kept
    finally:
        screen.destroy()
    assert bandproc._ARENAS._free == []


def test_an_arena_given_back_after_the_release_is_freed():
    """A scene still alive when its pool is released (a screen destroyed
    without waiting: its workers finish their bands after) gives its arena
    back later; before, the arena was kept then -- a shared block and its
    file descriptor held by no pool, for good (the stress soak: two open
    files more after its screens were gone)."""
    pool = bandproc._ArenaPool()
    generation = pool.generation
    block = pool.take(1000)
    pool.release()
    pool.give(block, generation)
    pool.take(1)  # (collects what came back)
    assert pool._free == [] and not pool._returned
    live = shared.live_blocks()
    del block
    gc.collect()
    assert shared.live_blocks() == live - 1  # its block, unmapped and closed


def test_a_scene_outliving_its_screen_leaves_no_arena(monkeypatch):
    blobs = []

    class Kept(bandproc.SceneBlob):
        def __init__(self, scene):
            super().__init__(scene)
            blobs.append(self)  # alive after the screen is destroyed

    monkeypatch.setattr(bandproc, "SceneBlob", Kept)
    screen = gallium.create_screen(num_threads=2, processes=True)
    try:
        render(screen)
        assert blobs and sum(screen.pool.process_units) > 0
    finally:
        screen.destroy()
    blobs.clear()
    gc.collect()
    assert bandproc._ARENAS._free == [] and not bandproc._ARENAS._returned

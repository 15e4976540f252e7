"""Band processes: heavy scenes' bands rasterized outside the interpreter's GIL.

Theory of operation
-------------------
Worker *threads* share one interpreter lock: numpy releases it inside long
loops, but calls such as ``np.minimum.at`` and ``np.repeat`` and the Python
between calls hold it, and on a scene of thousands of small triangles two
worker threads each spend ~10% of a band waiting for the other (measured;
see bench/README.md).  With band processes each worker thread of the pool
owns one child process (started on its first heavy scene) and hands it the
bands it takes; the thread waits on a socket, which leaves the GIL free.

What a band reads and writes must be memory both processes see: a screen
with band processes allocates its larger resources' storage in shared blocks
(workers/shared.py).  A scene is serialised once, on the first of its bands
to run in a process, into a shared *arena* block: the pickle stream with its
arrays as out-of-band buffers, which the children unpickle in place.  Views
of shared blocks (render targets, large textures) travel as references;
compiled kernels as their shaders (the child compiles each once); occlusion
counters and the timestamp clock as tokens.  Each child keeps its last
scene, so a scene's second band on the same child costs no second load.

A child's reply carries what the band produced besides pixels: the
occlusion counters' increments and the timestamps of markers; the worker
thread merges them as
if it had run the band itself.  An exception in the band comes back to the
thread and is raised there (so the scene reports it like any other band
failure); a child that dies is replaced on the next band.

When a child cannot serve a band before touching any pixel (it cannot be
started, or cannot load the scene -- no /proc, an object it cannot rebuild)
the thread runs the band itself and the pool stops using processes
(:attr:`WorkerPool.process_failure` says why).  Scenes whose targets are
not all in shared blocks, or whose estimated band work is under
``MIN_WORK_MS``, never go to a process: for a light frame the transfer costs
more than the GIL waits it saves (measured: the one-triangle fill 47% slower,
medium 13%, blend 12% and the 40-instruction shader 24% faster), and work
whose numpy calls are few and long (big pass-through triangles) gains
nothing.  Results are bit-identical either way: the child runs the same
code on the same memory.
"""

from __future__ import annotations

import io
import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from types import SimpleNamespace
from typing import Any

import numpy as np

from . import shared

# A scene goes to band processes when its bands' estimated GIL-bound work
# (all bands, one worker, ms) reaches this: the transfer then costs far less
# than the GIL waits it saves.  Measured here with two workers, processes
# against threads: the 1024x1024 fill 47% slower and at 4096x4096 the same
# (its big unmasked stores release the GIL), the texture scene 26% slower;
# blend 12% faster, medium 13%, the 40-instruction shader 24%.
MIN_WORK_MS = 40.0


def estimated_work_ms(scene: Any) -> float:
    """A scene's band work that holds or contends for the GIL, in ms, roughly
    (fitted to the bench scenes on one worker): ~5 ns a pixel of the bounding
    boxes of small triangles (the sparse path: scatters, repeats and many
    calls) and ~1.5 us a triangle; over big triangles 2 ns a pixel per TGSI
    instruction of a shader that runs its kernel, and 5 ns a pixel for
    blending.  Big unblended triangles through a pass-through or one-TEX
    shader count nothing: a few long numpy calls per band."""
    ns = 0.0
    for cmd in scene.commands:
        ts = getattr(cmd, "tris", None)
        if ts is None or ts.count == 0:
            continue
        state = cmd.state
        small_px, _, big_px = cmd.box_pixels()
        per_pixel = 0.0
        if state.passthrough is None and state.texpass is None:
            per_pixel += 2.0 * len(state.kernel.shader.instructions)
        if state.blend_enabled:
            per_pixel += 5.0
        ns += 5.0 * small_px + per_pixel * (small_px + big_px) + 1500.0 * ts.count
    return ns / 1e6


_HEADER = struct.Struct("<Q")

# How long a new band process may take to import numpy and the rasterizer.
START_TIMEOUT_S = 60.0


class Unavailable(Exception):
    """A band process could not take the band; nothing was drawn."""


class NotPortable(Exception):
    """This scene cannot be sent to a band process (an object in it does not
    pickle); its bands run on the worker threads."""


# -- messages ---------------------------------------------------------------------------


def _send(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("the other end closed the connection")
        got += k
    return buf


def _recv(sock: socket.socket) -> Any:
    (n,) = _HEADER.unpack(_recv_exact(sock, _HEADER.size))
    return pickle.loads(_recv_exact(sock, n))


# -- scenes, parent side ------------------------------------------------------------------


class _ScenePickler(pickle.Pickler):
    """Pickles a scene's commands and targets with shared views, kernels,
    counters and the clock as persistent ids."""

    def __init__(self, file, buffers: list, counters: dict) -> None:
        super().__init__(file, protocol=5, buffer_callback=buffers.append)
        self.counters = counters

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, np.ndarray):
            where = shared.locate(obj)
            if where is not None:
                return ("shm", *where, obj.shape, obj.strides, obj.dtype.str)
            return None
        kind = type(obj).__name__
        if kind == "Kernel":
            return ("kernel", obj.shader)
        if kind == "OcclusionCounter":
            self.counters[id(obj)] = obj
            return ("counter", id(obj))
        if kind == "method" and getattr(obj, "__name__", "") == "get_timestamp":
            return ("clock", obj.__self__._epoch)
        return None


class _ArenaPool:
    """Shared blocks that served scenes already finished, kept for the next
    scenes' blobs: a block reused is written without new pages (a 3.7 MB blob
    ~0.3 ms instead of ~1.8 with a new block), and a child that mapped it
    reads it through its mapping at once instead of mapping and faulting in
    a new block per frame.  A blob returns its block when it is freed, which
    is after the scene's last band: no child reads it any more.

    Blocks come back from a finaliser, on whatever thread frees the blob
    and possibly while another thread (or a garbage collection inside
    ``take`` itself) is in here: ``give`` only appends to a deque, and
    ``take`` collects what came back under its lock.  A blob that outlives
    a ``release`` (a pool shut down without waiting for its bands) gives
    its block back to a later *generation*: then it is dropped, not kept,
    so no block outlives the pools that would use it."""

    KEEP = 4  # blocks at most
    KEEP_BYTES = 64 << 20  # and bytes at most

    def __init__(self) -> None:
        self._free: list[np.ndarray] = []
        self._returned: deque[np.ndarray] = deque()
        self._lock = threading.Lock()
        self.generation = 0  # releases so far

    def take(self, nbytes: int) -> np.ndarray:
        with self._lock:
            self._collect()
            fits = [a for a in self._free if a.nbytes >= nbytes]
            if fits:
                arena = min(fits, key=lambda a: a.nbytes)
                self._free = [a for a in self._free if a is not arena]
                return arena
        # a quarter more than asked, whole 64 KiB: the next frames fit too
        return shared.allocate(-(-(nbytes + nbytes // 4) // 65536) * 65536)

    def give(self, arena: np.ndarray, generation: int | None = None) -> None:
        """Take ``arena`` back for the next scenes, unless it was taken in an
        earlier ``generation`` than now (then it is freed with its last view)."""
        if generation is None or generation == self.generation:
            self._returned.append(arena)

    def _collect(self) -> None:
        """The blocks given back join the free ones, the longest kept going
        first beyond KEEP blocks or KEEP_BYTES bytes (the lock held)."""
        while self._returned:
            self._free.append(self._returned.popleft())
        while len(self._free) > self.KEEP or sum(a.nbytes for a in self._free) > self.KEEP_BYTES:
            self._free.pop(0)

    def release(self) -> None:
        """Free the blocks kept (a worker pool with band processes shut down)."""
        with self._lock:
            self.generation += 1
            self._returned.clear()
            self._free = []


_ARENAS = _ArenaPool()


class SceneBlob:
    """A scene serialised into a shared arena, ready for any band process."""

    _keys = iter(range(1, 1 << 62))
    _key_lock = threading.Lock()

    def __init__(self, scene: Any) -> None:
        buffers: list = []
        self.counters: dict[int, Any] = {}
        f = io.BytesIO()
        light = SimpleNamespace(
            width=scene.width,
            height=scene.height,
            cbufs=scene.cbufs,
            zsbuf=scene.zsbuf,
            commands=scene.commands,
            band_rows=scene.band_rows,
            nbands=scene.nbands,
            samples=scene.samples,
            sample_cbufs=scene.sample_cbufs,
            sample_zs=scene.sample_zs,
            layers=scene.layers,
        )
        _ScenePickler(f, buffers, self.counters).dump(light)
        parts = [f.getbuffer()] + [b.raw() for b in buffers]
        sizes = [p.nbytes for p in parts]
        offsets, pos = [], 0
        for n in sizes:
            offsets.append(pos)
            pos += -(-n // 64) * 64
        generation = _ARENAS.generation
        self.arena = _ARENAS.take(pos)
        weakref.finalize(self, _ARENAS.give, self.arena, generation)
        for part, off, n in zip(parts, offsets, sizes):
            self.arena[off : off + n] = np.frombuffer(part, np.uint8)
        where = shared.locate(self.arena)
        assert where is not None
        self.arena_ref = where[:3]  # serial, fd, nbytes
        self.parts = list(zip(offsets, sizes))
        with SceneBlob._key_lock:
            self.key = next(SceneBlob._keys)


def scene_blob(scene: Any) -> SceneBlob:
    """The scene's blob, made by the first band that asks (under the scene's lock)."""
    blob = scene.__dict__.get("_proc_blob")
    if blob is None:
        with scene._proc_lock:
            blob = scene.__dict__.get("_proc_blob")
            if blob is None:
                try:
                    blob = SceneBlob(scene)
                except Exception as exc:
                    blob = NotPortable(f"{type(exc).__name__}: {exc}")
                scene._proc_blob = blob
    if isinstance(blob, NotPortable):
        raise blob
    return blob


# -- the parent's handle on one child --------------------------------------------------------

_handles: weakref.WeakSet = weakref.WeakSet()
_handles_lock = threading.Lock()


def _note_dropped() -> None:
    """Pass the serials of freed shared blocks to every live child handle."""
    dropped = shared.take_dropped()
    if dropped:
        with _handles_lock:
            for h in list(_handles):
                h.pending_drops.extend(dropped)


# The child runs this library's own packages, whatever its working directory
# or sys.path holds: ``python -m workers.bandproc`` would run the first
# ``workers`` package on the path (the working directory's, with -m).  So the
# child starts from ``-c`` under -P (nothing prepended to sys.path) and
# registers ``gallium`` and ``workers`` from the files this process imported
# before anything can import them; every later import of their modules (and
# the scenes' unpickling) resolves inside those packages.
_CHILD_BOOTSTRAP = """
import importlib.util, sys
names = ("gallium", "workers")
mods = []
for name, init in zip(names, sys.argv[1:3]):
    spec = importlib.util.spec_from_file_location(name, init)
    mods.append((spec, importlib.util.module_from_spec(spec)))
    sys.modules[name] = mods[-1][1]
for spec, mod in mods:
    spec.loader.exec_module(mod)
from workers.bandproc import child_main
child_main(int(sys.argv[3]), int(sys.argv[4]))
"""


def _package_inits() -> list[str]:
    """The ``__init__.py`` of the gallium and workers packages this process runs."""
    import gallium
    import workers

    return [os.path.abspath(gallium.__file__), os.path.abspath(workers.__file__)]


class BandProcess:
    """One child process serving the bands of one worker thread."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.sock: socket.socket | None = None
        self.scene_key: int | None = None
        self.pending_drops: list[int] = []
        self.bands = 0
        self.idle_rss_kib = 0  # the child's resident set once started (imports done)
        with _handles_lock:
            _handles.add(self)

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def _start(self) -> None:
        parent, child = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # numpy and the rest
        argv = [*_package_inits(), str(child.fileno()), str(os.getpid())]
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-c", _CHILD_BOOTSTRAP, *argv],
                pass_fds=(child.fileno(),),
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            parent.close()
            raise Unavailable(f"cannot start a band process: {exc}") from exc
        finally:
            child.close()
        self.sock = parent
        self.scene_key = None
        with _handles_lock:
            self.pending_drops = []  # (a new child has mapped nothing)
        try:
            parent.settimeout(START_TIMEOUT_S)  # (imports only; a band may take any time)
            hello = _recv(parent)
            parent.settimeout(None)
        except (EOFError, OSError) as exc:  # (socket.timeout is an OSError)
            self.close(kill=True)
            raise Unavailable(f"the band process did not start: {exc!r}") from exc
        if not (isinstance(hello, tuple) and hello[:1] == ("ready",)):
            self.close()
            raise Unavailable(f"the band process could not start: {hello!r}")
        self.idle_rss_kib = hello[1]

    def run(self, scene: Any, band: int) -> None:
        """Rasterize ``band`` of ``scene`` in the child; merge what it produced."""
        blob = scene_blob(scene)
        if self.proc is None or self.proc.poll() is not None:
            self.close()
            self._start()
        _note_dropped()
        with _handles_lock:
            drops, self.pending_drops = self.pending_drops, []
        load = None if self.scene_key == blob.key else (blob.arena_ref, blob.parts)
        try:
            _send(self.sock, ("band", blob.key, band, load, drops))
            reply = _recv(self.sock)
        except (EOFError, OSError) as exc:
            self.close()
            raise RuntimeError(
                f"the band process rasterizing band {band} exited (exit status "
                f"{self.proc.returncode if self.proc else '?'})"
            ) from exc
        self.scene_key = blob.key
        kind = reply[0]
        if kind == "load-error":
            self.scene_key = None
            raise Unavailable(f"the band process could not load the scene: {reply[1]}")
        if kind == "error":
            _, exc, text = reply
            if isinstance(exc, BaseException):
                exc.add_note(f"in a band process:\n{text}")
                raise exc
            raise RuntimeError(f"in a band process: {text}")
        _, counts, marks = reply
        self.bands += 1
        for cid, n in counts.items():
            blob.counters[cid].add(n)
        for i, ns in marks:
            scene.commands[i].band_ns[band] = ns

    def close(self, kill: bool = False) -> None:
        if kill and self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.scene_key = None


# -- the child ----------------------------------------------------------------------------


class _Counter:
    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def add(self, n: int) -> None:
        self.count += n


class _SceneUnpickler(pickle.Unpickler):
    def __init__(self, file, buffers, attached: shared.Attached, counters: dict) -> None:
        super().__init__(file, buffers=buffers)
        self.attached = attached
        self.counters = counters

    def persistent_load(self, pid: Any) -> Any:
        kind = pid[0]
        if kind == "shm":
            return self.attached.view(*pid[1:])
        if kind == "kernel":
            from gallium.tgsi.compiler import compile_shader

            return compile_shader(pid[1])
        if kind == "counter":
            return self.counters.setdefault(pid[1], _Counter())
        if kind == "clock":
            epoch = pid[1]
            return lambda: time.perf_counter_ns() - epoch + 1
        raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")


def _load(attached: shared.Attached, arena_ref, parts) -> tuple:
    serial, fd, nbytes = arena_ref
    mem = attached.view(serial, fd, nbytes, 0, (nbytes,), (1,), "|u1")
    views = [memoryview(mem[off : off + n]) for off, n in parts]
    counters: dict[int, _Counter] = {}
    scene = _SceneUnpickler(io.BytesIO(views[0]), views[1:], attached, counters).load()
    markers = [i for i, c in enumerate(scene.commands) if type(c).__name__ == "MarkerCmd"]
    return scene, counters, markers


def _rss_kib() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def child_main(fd: int, parent_pid: int) -> None:
    import signal

    # Ctrl-C reaches the whole process group: the parent handles it, and the
    # child ends when the parent closes its socket (or exits)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=fd)
    from workers.memory import tune_allocator

    tune_allocator()  # as the parent's screen did (band-sized temporaries stay in the heap)
    np.seterr(all="ignore")  # inf and NaN are values (gallium/util/ieee.py); this process is ours
    try:
        import numexpr

        numexpr.set_num_threads(1)
    except Exception:  # numexpr is optional for correctness
        pass
    from workers.band import execute_band

    _send(sock, ("ready", _rss_kib()))
    attached = shared.Attached(parent_pid)
    scene = counters = markers = None
    while True:
        try:
            _, _key, band, load, drops = _recv(sock)
        except EOFError:
            return
        if load is not None:
            scene = counters = markers = None
            attached.drop(drops)
            try:
                scene, counters, markers = _load(attached, *load)
            except BaseException as exc:  # nothing drawn: the parent runs the band
                _send(sock, ("load-error", f"{type(exc).__name__}: {exc}"))
                continue
        else:
            attached.drop(drops)
        try:
            execute_band(scene, band)
        except BaseException as exc:
            import traceback

            text = traceback.format_exc()
            try:
                pickle.dumps(exc)
            except Exception:
                exc = None
            _send(sock, ("error", exc, text))
            continue
        counts = {cid: c.count for cid, c in counters.items() if c.count}
        for c in counters.values():
            c.count = 0
        marks = [(i, int(scene.commands[i].band_ns[band])) for i in markers]
        _send(sock, ("ok", counts, marks))

"""What runs on a Dask worker: one numpipe screen per process, each trace opened once.

A worker process keeps, in this module, the numpipe screen its tasks render
with (made on first use, or at start by :class:`ScreenPlugin`) and the traces
it has opened (by path, or by the token of bytes the client scattered), so a
task pays only for its frame.  Tasks run one at a time per worker thread;
each makes its own contexts (a Replayer's) and destroys them when done, so
nothing of one task's state reaches the next.
"""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_screens: dict[int | None, Any] = {}
_traces: dict[Any, Any] = {}
_replayers: dict[Any, Any] = {}
MAX_TRACES = 4  # traces kept open per worker (least recently used closed first)


def worker_screen(num_threads: int | None = 0) -> Any:
    """This process's numpipe screen (never recorded, even under GALLIUM_TRACE)."""
    with _lock:
        screen = _screens.get(num_threads)
        if screen is None:
            import gallium

            screen = _screens[num_threads] = gallium.create_screen(num_threads, trace=False)
        return screen


def open_trace(source: tuple, data: bytes | None = None) -> Any:
    """The worker's reader of a trace: ``("path", path, size, mtime)`` or ``("bytes", token)``
    (``data``: the scattered bytes, resolved by Dask on this worker)."""
    from gallium.trace import TraceReader

    with _lock:
        reader = _traces.pop(source, None)
        if reader is None:
            reader = TraceReader(source[1] if source[0] == "path" else data)
        _traces[source] = reader  # most recently used last
        while len(_traces) > MAX_TRACES:
            old_key = next(iter(_traces))
            _traces.pop(old_key).close()
            _replayers.pop(old_key, None)
        return reader


def _replayer(
    source: tuple, data: bytes | None, threaded: bool, targets: bool, threads: int | None
):
    from gallium.trace import Replayer

    key = (source, threaded, targets, threads)
    with _lock:
        r = _replayers.get(key)
    if r is None:
        r = Replayer(open_trace(source, data), worker_screen(threads), threaded, targets=targets)
        with _lock:
            _replayers[key] = r
    return r


def render_frames(
    source: tuple,
    data: bytes | None,
    first: int,
    count: int,
    threaded: bool = True,
    targets: bool = False,
    encode: bool = True,
    threads: int | None = 0,
    out_dir: str | None = None,
) -> list[tuple[int, Any]]:
    """Replay frames ``first .. first + count - 1`` (the first from its own start,
    the rest in sequence) and return ``[(index, result)]``: PNG bytes per image
    (``encode``), or the :class:`~gallium.trace.FrameImage`; with ``out_dir`` (a
    directory this worker shares with the client) the PNGs are written there
    and the result is the number of files written."""
    from pathlib import Path

    from gallium.trace.images import frame_files, target_pngs

    r = _replayer(source, data, threaded, targets, threads)
    names = frame_files(r.frame_count) if out_dir is not None else None
    out = []
    for img in r.frames(range(first, first + count)):
        if not encode:
            out.append((img.index, img))
            continue
        pngs = target_pngs(img)
        if names is None:
            out.append((img.index, pngs))
            continue
        for suffix, png in pngs.items():
            (Path(out_dir) / f"{names(img.index)}{suffix}.png").write_bytes(png)
        out.append((img.index, len(pngs)))
    return out


def run_function(fn: Any, item: Any, threads: int | None = 0) -> Any:
    """``fn(screen, item)`` with this worker's screen."""
    return fn(worker_screen(threads), item)


def release_all() -> None:
    """Destroy this process's screens and close its traces (a worker stopping)."""
    with _lock:
        for r in _replayers.values():
            r._drop()
        _replayers.clear()
        for reader in _traces.values():
            reader.close()
        _traces.clear()
        screens = list(_screens.values())
        _screens.clear()
    for s in screens:
        s.destroy()

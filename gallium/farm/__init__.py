"""Rendering on many processes or machines with Dask distributed.

``replay(trace, cluster="local:2")`` renders a trace's frames on Dask
workers and yields them in frame order (as :func:`gallium.trace.replay`
does); ``replay_to_files`` writes them as PNGs (``python -m gallium replay
FILE --out DIR --dask ...``); ``map(fn, items)`` runs ``fn(screen, item)``
for each item on the workers, with each worker process's own numpipe screen.

How it works: each worker process keeps one numpipe screen (by default
rasterizing on the thread that flushes: the process is the unit of
parallelism) and each trace it has opened (gallium/farm/worker.py).  The
trace reaches every worker once: as a path the workers read (a LocalCluster
shares this machine's files), or scattered to all of them as bytes
(``scatter=True``, the default for a ``tcp://`` scheduler, whose workers may
not see the client's files).  Frames are submitted in small runs with
``client.submit``, dealt in one contiguous lane per worker so that a worker's
next run continues its replay (a run that lands elsewhere replays its first
frame from the state stored at its start), and gathered with ``as_completed``; a
worker lost mid-run (killed, crashed) has its runs retried elsewhere by the
scheduler, and a task that raises is retried ``retries`` times.  Workers that
share the output directory (a local cluster) write the PNGs themselves;
others send them back.  Replay is deterministic, so every frame is
bit-identical to a local replay wherever it ran.

``cluster`` is ``"local:N"`` (a ``distributed.LocalCluster`` of N worker
processes, one thread each, made and closed around the call), an address
like ``"tcp://host:8786"`` (a running scheduler), or a ``distributed.Client``.
Needs the ``farm`` extra: ``pip install 'numpipe[farm]'``.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .worker import render_frames, run_function, worker_screen

__all__ = ["cluster_client", "map", "replay", "replay_to_files", "worker_screen"]


def _distributed():
    try:
        import distributed
    except ImportError:  # pragma: no cover - the farm extra is installed by make test
        raise ImportError(
            "gallium.farm needs Dask distributed: pip install 'numpipe[farm]'"
        ) from None
    return distributed


@contextlib.contextmanager
def cluster_client(cluster: Any = "local:2", threads: int | None = 0) -> Iterator[Any]:
    """A ``distributed.Client`` for ``cluster`` (see module doc), closed afterwards
    if it was made here; every worker gets a numpipe screen of ``threads`` workers."""
    distributed = _distributed()
    if isinstance(cluster, distributed.Client):
        _register(cluster, threads)
        yield cluster
        return
    if not isinstance(cluster, str):
        raise TypeError(
            f"cluster must be 'local:N', a scheduler address or a Client; got {cluster!r}"
        )
    if cluster.startswith("local:"):
        try:
            n = int(cluster.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"cluster {cluster!r}: local:N needs a number of workers") from None
        if n < 1:
            raise ValueError(f"cluster {cluster!r}: local:N needs at least one worker")
        with (
            distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # the scheduler's HTTP server: any free port
                silence_logs=logging.ERROR,
            ) as lc,
            distributed.Client(lc) as client,
        ):
            _register(client, threads)
            yield client
        return
    with distributed.Client(cluster) as client:
        _register(client, threads)
        yield client


def _is_local(cluster: Any) -> bool:
    """Whether the workers run on this machine (a LocalCluster): they see its files."""
    if isinstance(cluster, str):
        return cluster.startswith("local:")
    distributed = _distributed()
    return isinstance(getattr(cluster, "cluster", None), distributed.LocalCluster)


def _register(client: Any, threads: int | None, own: bool = False) -> None:
    from .plugin import ScreenPlugin

    plugin = ScreenPlugin(threads, quiet=own)
    try:
        client.register_plugin(plugin, name=f"{ScreenPlugin.name}-{threads}")
    except AttributeError:  # older distributed
        client.register_worker_plugin(plugin, name=f"{ScreenPlugin.name}-{threads}")


def _source(client: Any, trace: Any, scatter: bool | None, local: bool) -> tuple[tuple, Any]:
    """What tasks receive to open the trace: a path, or a token and scattered bytes."""
    if isinstance(trace, (bytes, bytearray)):
        scatter, data = True, bytes(trace)
    else:
        path = Path(trace).resolve()
        if scatter is None:
            scatter = not local
        if not scatter:
            st = path.stat()
            return ("path", str(path), st.st_size, st.st_mtime_ns), None
        data = path.read_bytes()
    from ..trace.format import digest

    token = ("bytes", digest(data).hex())
    return token, client.scatter(data, broadcast=True, hash=False)


START_COST = 0.2  # a run's start from its snapshot, in frames (the demo: ~4.5 of ~21 ms)


def _lane(i: int, count: int, addresses: list[str]) -> dict[str, Any]:
    """Which worker run ``i`` of ``count`` prefers: the runs are dealt in contiguous
    lanes, one per worker, so that a worker's next run starts where its last one ended
    and continues its replay (no start from a snapshot: ~4.5 ms of a ~21 ms frame's
    CPU, measured), the runs given falling priorities so that a worker takes its lane's
    in order (submitted alike, they ran last first).  Only a preference: a lost worker's
    runs, or the runs an idle worker steals at the end, go elsewhere."""
    if not addresses:
        return {}
    lane = min(len(addresses) - 1, i * len(addresses) // max(count, 1))
    return {"workers": [addresses[lane]], "allow_other_workers": True}


def _runs(frames: list[int], workers: int, run: int | None) -> list[tuple[int, int]]:
    """Consecutive frames grouped into runs of up to ``run`` frames.

    The default balances the runs' starts (``START_COST`` of a frame each, F / run of
    them shared by W workers) against the tail (the last runs end on some workers while
    the others are idle: half a run on average): the total is least at
    run = sqrt(2 F START_COST / W), kept within 1..8 (100 frames on 2 workers: 4).  (Runs
    in a worker's lane continue each other, but a run an idle worker steals starts anew.)
    """
    if run is None:
        best = (2 * len(frames) * START_COST / max(1, workers)) ** 0.5
        run = max(1, min(8, round(best)))
    out: list[tuple[int, int]] = []
    for k in frames:
        if out and k == out[-1][0] + out[-1][1] and out[-1][1] < run:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((k, 1))
    return out


def _farm(
    trace: Any,
    frames: Any,
    cluster: Any,
    threaded: bool,
    targets: bool,
    encode: bool,
    scatter: bool | None,
    progress: bool,
    retries: int,
    run: int | None,
    threads: int | None,
    out_dir: str | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(frame index, result)`` in frame order."""
    from ..trace import TraceReader
    from ..trace.cli import Progress
    from ..trace.replay import parse_frames

    distributed = _distributed()
    if isinstance(trace, (bytes, bytearray)):
        count = len(TraceReader(bytes(trace)).frames)
    else:
        with TraceReader(trace) as reader:  # checked here once: a bad file fails early
            count = len(reader.frames)
    wanted = sorted(set(parse_frames(frames, count)))
    local = _is_local(cluster)
    with cluster_client(cluster, threads) as client:
        source, data = _source(client, trace, scatter, local)
        addresses = sorted(client.scheduler_info().get("workers", {}))
        workers = max(1, len(addresses))
        runs = _runs(wanted, workers, run)
        futures = [
            client.submit(
                render_frames, source, data, first, n, threaded, targets, encode, threads, out_dir,
                key=f"numpipe-frames-{source[1][-16:]}-{first}-{n}-{int(threaded)}{int(targets)}",
                retries=retries, pure=False, priority=-i, **_lane(i, len(runs), addresses),
            )
            for i, (first, n) in enumerate(runs)
        ]  # fmt: skip
        bar = Progress(len(wanted), enabled=progress)
        done: dict[int, Any] = {}
        nxt = 0
        try:
            for fut in distributed.as_completed(futures):
                for index, result in fut.result():
                    done[index] = result
                    bar.step()
                while nxt < len(wanted) and wanted[nxt] in done:
                    yield wanted[nxt], done.pop(wanted[nxt])
                    nxt += 1
        finally:
            bar.done()
            client.cancel(futures)


def replay(
    trace: str | os.PathLike | bytes,
    frames: Any = None,
    *,
    cluster: Any = "local:2",
    threaded: bool = True,
    scatter: bool | None = None,
    progress: bool = False,
    retries: int = 3,
    run: int | None = None,
    threads: int | None = 0,
) -> Iterator[Any]:
    """Like :func:`gallium.trace.replay`, on Dask workers: each selected frame's colour
    buffer, (H, W, 4) RGBA8, in frame order."""
    for _, img in _farm(
        trace, frames, cluster, threaded, False, False, scatter, progress, retries, run, threads
    ):
        yield img.color


def replay_to_files(
    trace: str | os.PathLike,
    out: str | os.PathLike,
    frames: Any = None,
    *,
    cluster: Any = "local:2",
    threaded: bool = True,
    targets: bool = False,
    scatter: bool | None = None,
    progress: bool = False,
    retries: int = 3,
    run: int | None = None,
    threads: int | None = 0,
    shared_out: bool | None = None,
) -> int:
    """Render frames on Dask workers (which encode the PNGs) and write them under
    ``out`` with the names a local replay gives; returns the number of frames.

    ``shared_out``: the workers write the files themselves (``out`` must be a
    directory they see under the same path: the default on a local cluster);
    otherwise they send the PNGs back and this process writes them."""
    from ..trace import TraceReader
    from ..trace.images import frame_files

    with TraceReader(trace) as reader:
        names = frame_files(len(reader.frames))
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if shared_out is None:
        shared_out = _is_local(cluster)
    n = 0
    for index, pngs in _farm(
        trace, frames, cluster, threaded, targets, True, scatter, progress, retries, run, threads,
        str(out) if shared_out else None,
    ):  # fmt: skip
        if not shared_out:
            for suffix, data in pngs.items():
                (out / f"{names(index)}{suffix}.png").write_bytes(data)
        n += 1
    return n


def map(
    fn: Any,
    items: Iterable[Any],
    *,
    cluster: Any = "local:2",
    out: str | os.PathLike | None = None,
    progress: bool = False,
    retries: int = 3,
    threads: int | None = 0,
) -> list[Any]:
    """Run ``fn(screen, item)`` for every item on the workers, ``screen`` being the
    worker process's numpipe screen; results in item order.  With ``out``, each
    result (an (H, W, 4) RGBA8 array read back from numpipe, row 0 = NDC y -1) is
    written as ``out/item_NNNNNN.png``, flipped as the replay's frames are (NDC y +1
    at the top), and the paths are returned instead.  ``fn`` travels to the workers
    by pickle (cloudpickle): a function defined in a script needs the script's
    ``if __name__ == "__main__":`` guard, as for any multiprocessing."""
    from ..trace.cli import Progress
    from ..trace.images import png_bytes

    distributed = _distributed()
    items = list(items)
    with cluster_client(cluster, threads) as client:
        futures = client.map(
            run_function, [fn] * len(items), items, [threads] * len(items),
            retries=retries, pure=False,
        )  # fmt: skip
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(items)
        bar = Progress(len(items), enabled=progress, label="items")
        try:
            for fut in distributed.as_completed(futures):
                results[index[fut.key]] = fut.result()
                bar.step()
        finally:
            bar.done()
            client.cancel(futures)
    if out is None:
        return results
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    digits = max(6, len(str(max(len(items) - 1, 0))))
    paths = []
    for i, img in enumerate(results):
        p = out / f"item_{i:0{digits}d}.png"
        p.write_bytes(png_bytes(img))
        paths.append(p)
    return paths

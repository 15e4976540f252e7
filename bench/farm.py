"""Issue 22's farm figure: replaying a trace of the demo locally and on Dask workers.

``python -m bench.farm [--quick] [--frames N] [--size S] [--reps R]`` prints one
JSON object.  Steps:

1. Record: the demo (gallium/demo.py, ``--frames`` frames at ``--size``) under
   ``GALLIUM_TRACE``, and the same demo unrecorded, alternating: the frame
   rate with and without recording (recording reads back what a frame's first
   draw needs when something wrote it since: the demo's vertex buffer once).
2. Replay, alternating ``--reps`` times: the whole trace on 1 local process
   (a Replayer on a default numpipe screen, frames in sequence) and on a
   LocalCluster of 2 worker processes (one numpipe worker thread each, made
   and warmed up once, outside the timing), both to PNG files (what
   ``python -m gallium replay`` does) and to arrays in memory.  Frames per
   second are medians; ``ratio`` is the farm's over the local one.

Every farmed frame is compared with the local replay's (bytes of the PNGs):
``identical`` must be true.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _record(path: Path, frames: int, size: int, tmp: Path) -> float:
    from gallium import demo

    os.environ["GALLIUM_TRACE"] = str(path)
    try:
        res = asyncio.run(demo.render(frames, size, tmp / "rec", None))
    finally:
        del os.environ["GALLIUM_TRACE"]
    return res["fps"]


def _plain(frames: int, size: int, tmp: Path) -> float:
    from gallium import demo

    return asyncio.run(demo.render(frames, size, tmp / "plain", None))["fps"]


def measure(frames: int, size: int, reps: int) -> dict:
    import gallium
    from gallium import farm, trace
    from gallium.trace.cli import replay_local

    tmp = Path(tempfile.mkdtemp(prefix="numpipe-farm-bench-"))
    out: dict = {"frames": frames, "size": size, "reps": reps, "cpus": os.cpu_count()}
    try:
        import io
        from contextlib import redirect_stdout

        path = tmp / "demo.trace"
        rec_fps, plain_fps = [], []
        with redirect_stdout(io.StringIO()):  # the demo's progress lines
            for i in range(max(2, reps)):
                p = path if i == 0 else tmp / f"demo{i}.trace"
                rec_fps.append(_record(p, frames, size, tmp))
                plain_fps.append(_plain(frames, size, tmp))
        out["demo_fps_recording"] = statistics.median(rec_fps)
        out["demo_fps_plain"] = statistics.median(plain_fps)
        out["recording_frame_cost"] = out["demo_fps_plain"] / out["demo_fps_recording"]
        out["trace_bytes"] = path.stat().st_size
        with trace.TraceReader(path) as r:
            out["trace_frames"] = len(r.frames)
        local_files, farm_files, local_arrays, farm_arrays = [], [], [], []
        screen = gallium.create_screen(trace=False)
        with farm.cluster_client("local:2") as client:
            client.wait_for_workers(2)
            list(farm.replay(path, "0:4", cluster=client))  # workers open the trace
            for rep in range(reps):
                for which in ("local", "farm") if rep % 2 == 0 else ("farm", "local"):
                    d = tmp / f"{which}{rep}"
                    t0 = time.perf_counter()
                    if which == "local":
                        replay_local(str(path), d, None, True, False, False, False)
                        local_files.append(frames / (time.perf_counter() - t0))
                    else:
                        farm.replay_to_files(path, d, cluster=client)
                        farm_files.append(frames / (time.perf_counter() - t0))
                    t0 = time.perf_counter()
                    if which == "local":
                        n = sum(1 for _ in trace.replay(path, screen=screen))
                        local_arrays.append(n / (time.perf_counter() - t0))
                    else:
                        n = sum(1 for _ in farm.replay(path, cluster=client))
                        farm_arrays.append(n / (time.perf_counter() - t0))
            identical = all(
                (tmp / "local0" / p.name).read_bytes() == p.read_bytes()
                for p in (tmp / "farm0").iterdir()
            )
        screen.destroy()
        out["files"] = {
            "local_fps": statistics.median(local_files),
            "farm_fps": statistics.median(farm_files),
            "runs_local": local_files,
            "runs_farm": farm_files,
        }
        out["files"]["ratio"] = out["files"]["farm_fps"] / out["files"]["local_fps"]
        out["arrays"] = {
            "local_fps": statistics.median(local_arrays),
            "farm_fps": statistics.median(farm_arrays),
            "runs_local": local_arrays,
            "runs_farm": farm_arrays,
        }
        out["arrays"]["ratio"] = out["arrays"]["farm_fps"] / out["arrays"]["local_fps"]
        out["ratio"] = out["files"]["ratio"]
        out["identical"] = identical and len(list((tmp / "farm0").iterdir())) == frames
        out["load_before"] = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.farm")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--frames", type=int, default=None)
    p.add_argument("--size", type=int, default=512)
    p.add_argument("--reps", type=int, default=None)
    a = p.parse_args(argv)
    frames = a.frames or (24 if a.quick else 100)
    reps = a.reps or (1 if a.quick else 3)
    load = os.getloadavg()
    result = measure(frames, a.size, reps)
    result["load_at_start"] = load
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

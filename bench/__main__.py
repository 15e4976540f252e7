"""``python -m bench``: numpipe side by side with Mesa's llvmpipe and softpipe.

Usage::

    python -m bench [--scene NAME ...] [--reps N] [--quick] [--json PATH]
                    [--no-mesa] [--no-scaling] [--no-memory] [--mesa-python PY]

How a run goes: one server process per driver configuration (numpipe with its
default worker pool, numpipe with one worker for the scaling figure, Mesa's
llvmpipe and softpipe; see :mod:`bench.procs`).  For each scene every server
sets the scene up and renders warm-up frames; then ``reps`` rounds follow, and
in each round every driver renders a block of frames in turn (numpipe,
numpipe 1 worker, llvmpipe, softpipe), so slow drift of the machine hits all
drivers alike.  Figures are medians over all timed frames.  Finally each
driver's image is read back and numpipe's is compared with llvmpipe's.  Peak
memory and the threaded-context figures run in one-shot processes of their own.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import report
from .procs import Runner, RunnerError, base_env, mesa_env, one_shot
from .scenes import SCENES

TC_FIGURES = ("tc-calls", "tc-overlap", "tc-lag", "tc-trace")
FARM_FIGURES = ("farm",)
ALL_NAMES = (*SCENES, *TC_FIGURES, *FARM_FIGURES)
MEMORY_EXTRA = {"fill": (4096,)}  # scenes also measured at these sizes for peak RSS


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench",
        description="numpipe benchmarks, side by side with Mesa's llvmpipe and softpipe.",
    )
    p.add_argument(
        "--scene",
        action="append",
        metavar="NAME",
        help=f"scene or figure to run (repeatable; 'tc' = all tc-*): {', '.join(ALL_NAMES)}",
    )
    p.add_argument("--reps", type=int, default=None, help="rounds per scene (default 5; quick 2)")
    p.add_argument("--quick", action="store_true", help="a fast smoke run: fewer, shorter rounds")
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--no-mesa", action="store_true", help="run numpipe alone")
    p.add_argument("--no-scaling", action="store_true", help="skip the 1-worker runs")
    p.add_argument("--no-memory", action="store_true", help="skip the peak-RSS processes")
    p.add_argument(
        "--mesa-python",
        default=sys.executable,
        metavar="PY",
        help="interpreter with moderngl for the Mesa processes (default: this one)",
    )
    p.add_argument("--size", type=int, default=1024, help="framebuffer size (default 1024)")
    args = p.parse_args(argv)
    names: list[str] = []
    for n in args.scene or list(ALL_NAMES):
        group = TC_FIGURES if n == "tc" else (n,)
        for g in group:
            if g not in ALL_NAMES:
                p.error(f"--scene: unknown name {g!r}; choose from {', '.join(ALL_NAMES)}, tc")
            if g not in names:
                names.append(g)
    args.names = names
    if args.reps is None:
        args.reps = 2 if args.quick else 5
    if args.reps < 1:
        p.error("--reps must be >= 1")
    return args


# ---------------------------------------------------------------------------- runners


def start_runners(args: argparse.Namespace, log) -> tuple[dict[str, Runner], dict[str, Any]]:
    """Start the driver servers; returns them by label, plus notes for the header."""
    notes: dict[str, Any] = {"mesa": None}
    runners: dict[str, Runner] = {}
    # start every process first: their imports and Mesa's start-up overlap
    runners["numpipe"] = Runner("numpipe", ["numpipe"], base_env(), sys.executable)
    if any(SCENES[n].kind == "many" for n in args.names if n in SCENES):
        # the many-draws scenes compare the threaded context with the direct one
        runners["numpipe-direct"] = Runner(
            "numpipe-direct", ["numpipe", "--direct"], base_env(), sys.executable
        )
    if not args.no_scaling:
        runners["numpipe-1w"] = Runner(
            "numpipe-1w", ["numpipe", "--threads", "1"], base_env(), sys.executable
        )
    mesa: dict[str, Runner] = {}
    if args.no_mesa:
        notes["mesa"] = "not run (--no-mesa): numpipe runs alone"
    else:
        for driver in ("llvmpipe", "softpipe"):
            try:
                mesa[driver] = Runner(driver, ["mesa"], mesa_env(driver), args.mesa_python)
            except OSError as exc:
                notes["mesa"] = f"Mesa processes could not start ({exc}): numpipe runs alone"
    info = runners["numpipe"].call(op="info")
    notes["numpipe"] = info["renderer"]
    workers = int(info["workers"])
    notes["numpipe_workers"] = workers
    if not args.no_scaling and workers != 2:
        runners["numpipe-2w"] = Runner(
            "numpipe-2w", ["numpipe", "--threads", "2"], base_env(), sys.executable
        )
    try:
        for driver, r in mesa.items():
            info = r.call(op="info")
            notes[driver] = info["renderer"]
            notes[f"{driver}_env"] = info["env"]
        runners.update(mesa)
    except RunnerError as exc:
        for r in mesa.values():
            r.close()
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        notes["mesa"] = f"Mesa/moderngl not available ({reason}): numpipe runs alone"
    if notes["mesa"] and not args.no_mesa:
        log(notes["mesa"])
    return runners, notes


def _block_frames(ms: float, quick: bool) -> int:
    """Frames per round for a driver whose frame takes ``ms``: ~0.3 s blocks."""
    target = 100.0 if quick else 300.0
    return max(1, min(5 if quick else 25, math.ceil(target / max(ms, 1e-3))))


def run_scene(
    name: str, runners: dict[str, Runner], args: argparse.Namespace, tmp: Path, log
) -> dict[str, Any]:
    scene = SCENES[name]
    res: dict[str, Any] = {"title": scene.title, "description": scene.description}
    size = scene.size or args.size
    data = scene.build(size)
    res["size"] = size
    res["triangles"] = data.triangles
    res["fragments"] = data.fragments
    res["invocations"] = data.invocations
    res["draws"] = data.draws
    live: dict[str, int] = {}  # label -> frames per block
    for label, r in runners.items():
        if not _runs(scene, label):
            continue
        try:
            reply = r.call(op="setup", scene=name, size=size)
        except RunnerError as exc:
            res[label] = {"status": "error", "message": str(exc)[-800:]}
            continue
        if "unsupported" in reply:
            res[label] = {"status": "unsupported", "message": reply["unsupported"]}
            continue
        if "error" in reply:
            res[label] = {"status": "error", "message": reply["error"][-800:]}
            continue
        # a second untimed frame: the first one paid for compiling shaders
        est = r.call(op="frames", n=1)["ms"][0]
        live[label] = _block_frames(est, args.quick)
        res[label] = {"status": "ok", "warmup_ms": reply["warmup_ms"], "ms": []}
        if "workers" in reply:
            res[label]["workers"] = reply["workers"]
    if "numpipe" not in live and ("numpipe-1w" in live or "numpipe-2w" in live):
        live.pop("numpipe-1w", None)
        live.pop("numpipe-2w", None)
    for rep in range(args.reps):
        for label, n in list(live.items()):
            try:
                reply = runners[label].call(op="frames", n=n)
            except RunnerError as exc:
                res[label] = {"status": "error", "message": str(exc)[-800:]}
                live.pop(label)
                continue
            if "error" in reply:
                res[label] = {"status": "error", "message": reply["error"][-800:]}
                live.pop(label)
                continue
            res[label]["ms"].extend(reply["ms"])
        log(f"  {name}: round {rep + 1}/{args.reps}")
    for label in live:
        d = res[label]
        d["median_ms"] = statistics.median(d["ms"])
        d["frames"] = len(d["ms"])
    # images: numpipe against llvmpipe (compute buffers depend on the frame count: skipped)
    if scene.kind != "compute" and "numpipe" in live:
        ref = "llvmpipe" if "llvmpipe" in live else None
        if ref is not None:
            res["match"] = _compare(runners, "numpipe", ref, tmp / f"{name}")
    for label, r in runners.items():
        if not _runs(scene, label):
            continue
        try:
            r.call(op="close")
        except RunnerError:
            pass
    return res


def _runs(scene: Any, label: str) -> bool:
    """Whether driver configuration ``label`` runs ``scene``."""
    if label in ("llvmpipe", "softpipe"):
        return label in scene.peers
    if label == "numpipe-direct":
        return scene.kind == "many"
    if label in ("numpipe-1w", "numpipe-2w"):  # (the worker scaling: single-draw scenes)
        return scene.kind != "many"
    return True


def _compare(runners: dict[str, Runner], a: str, b: str, stem: Path) -> dict[str, Any]:
    import numpy as np

    paths = {}
    for label in (a, b):
        p = f"{stem}-{label}.npy"
        reply = runners[label].call(op="read", path=p)
        if "error" in reply:
            return {"error": reply["error"][-300:]}
        paths[label] = p
    ia = np.load(paths[a]).astype(np.int16)
    ib = np.load(paths[b]).astype(np.int16)
    diff = np.abs(ia - ib).max(axis=-1)
    return {
        "against": b,
        "identical_px": float((diff == 0).mean()),
        "within1_px": float((diff <= 1).mean()),
        "max_diff": int(diff.max()),
    }


# ---------------------------------------------------------------------------- memory, tc


def run_memory(names: list[str], args: argparse.Namespace, log) -> dict[str, Any]:
    """Peak RSS of one numpipe process per scene, minus a baseline process."""
    out: dict[str, Any] = {}
    for name in names:
        if SCENES[name].kind != "draw":
            continue
        extra = [s for s in MEMORY_EXTRA.get(name, ()) if s != args.size]
        if args.quick:
            sizes = extra  # only the sizes a target is checked at
        else:
            sizes = [args.size, *extra]
        for size in sizes:
            key = f"{name}@{size}"
            log(f"  memory: {key}")
            base = one_shot("bench.runner", ["memory", name, str(size), "--baseline"])
            peak = one_shot("bench.runner", ["memory", name, str(size)])
            if "error" in base or "error" in peak:
                out[key] = {"status": "error", "message": base.get("error") or peak.get("error")}
                continue
            if peak["status"] != "ok":
                out[key] = {"status": "unsupported", "message": peak["status"]}
                continue
            fb_bytes = size * size * (4 + 4)  # RGBA8 + Z24S8
            # band processes: what each grew by past its started interpreter (the shared
            # framebuffer's pages count where they were touched: by the bands)
            kids = peak.get("children_vmhwm_kib", [])
            kids_above = sum(max(0, k - idle) for k, idle in kids) * 1024
            above = (peak["vmhwm_kib"] - base["vmhwm_kib"]) * 1024 + kids_above
            out[key] = {
                "status": "ok",
                "scene": name,
                "size": size,
                "baseline_mib": base["vmhwm_kib"] / 1024,
                "peak_mib": peak["vmhwm_kib"] / 1024,
                "band_processes_above_mib": kids_above / 2**20,
                "above_baseline_mib": above / 2**20,
                "framebuffer_mib": fb_bytes / 2**20,
                "ratio_to_framebuffer": above / fb_bytes,
                "band_processes_mib": [k / 1024 for k, _ in kids],  # peaks, interpreters included
            }
    return out


def run_tc(names: list[str], args: argparse.Namespace, log) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in names:
        figure = name.split("-", 1)[1]
        log(f"  threaded context: {figure}")
        out[figure] = one_shot("bench.tc", [figure, *(["--quick"] if args.quick else [])])
    return out


# ---------------------------------------------------------------------------- main


def machine() -> dict[str, Any]:
    import numpy as np

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        rev = subprocess.run(
            ["git", "describe", "--always", "--dirty"],
            cwd=str(Path(__file__).resolve().parents[1]),
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return {
        "revision": rev or "unknown",
        "cpus": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
    }


def _machine_state(quick: bool) -> dict[str, Any]:
    """Load average and the parallel-numpy calibration (bench.calib), now."""
    state: dict[str, Any] = {"loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None}
    state["numpy_2thread"] = one_shot("bench.calib", ["--quick"] if quick else [], timeout=120)
    return state


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f} s] {msg}", file=sys.stderr, flush=True)

    scene_names = [n for n in args.names if n in SCENES]
    tc_names = [n for n in args.names if n in TC_FIGURES]
    farm_names = [n for n in args.names if n in FARM_FIGURES]
    results: dict[str, Any] = {
        "machine": machine(),
        "config": {
            "size": args.size,
            "reps": args.reps,
            "quick": args.quick,
            "names": args.names,
        },
        "scenes": {},
    }
    log("machine state (load average, 2-thread numpy speed-up)")
    results["machine"]["start"] = _machine_state(args.quick)
    if scene_names:
        log("starting driver processes")
        runners, notes = start_runners(args, log)
        results["drivers"] = notes
        try:
            with tempfile.TemporaryDirectory(prefix="numpipe-bench-") as tmp:
                for name in scene_names:
                    log(f"scene {name}")
                    results["scenes"][name] = run_scene(name, runners, args, Path(tmp), log)
        finally:
            for r in runners.values():
                r.close()
        if not args.no_memory:
            log("peak memory")
            results["memory"] = run_memory(scene_names, args, log)
    if tc_names:
        results["tc"] = run_tc(tc_names, args, log)
    if farm_names:
        log("farm: a 100-frame trace of the demo, 1 local process vs a LocalCluster of 2")
        results["farm"] = one_shot("bench.farm", ["--quick"] if args.quick else [])
    results["machine"]["end"] = _machine_state(args.quick)
    results["targets"] = report.evaluate(results)
    results["seconds"] = time.perf_counter() - t_start
    print(report.render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

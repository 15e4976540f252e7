"""The benchmark's subprocess side: one process per driver configuration.

``python -m bench.runner serve numpipe [--threads N] [--direct]`` or ``serve mesa``
answers JSON commands, one per line on stdin, with one JSON line each on the
*original* stdout; fd 1 is pointed at stderr first, so whatever a C library
prints cannot corrupt the protocol.  Commands:

* ``{"op": "info"}`` -> ``{"renderer": ..., "env": {...}}``
* ``{"op": "setup", "scene": NAME, "size": N}`` -> builds the scene and runs
  one warm-up frame: ``{"ok": true, "warmup_ms": ...}``, or
  ``{"unsupported": MESSAGE}`` when the driver raises
  ``gallium.UnsupportedError`` (numpipe) or cannot compile/run it (Mesa), or
  ``{"error": TRACEBACK}``.
* ``{"op": "frames", "n": K}`` -> ``{"ms": [K frame times]}``
* ``{"op": "read", "path": P}`` -> saves the colour buffer (or the compute
  output) to ``P`` (.npy): ``{"ok": true}``
* ``{"op": "close"}`` releases the current scene; ``{"op": "quit"}`` exits.

The driver is chosen by the parent through the environment
(``GALLIUM_DRIVER``, ``LP_NUM_THREADS``), so Mesa sees it before it loads.
Each process keeps its context for the whole run, as an application would;
scenes are set up and released in turn.

``python -m bench.runner memory SCENE SIZE [--baseline]`` is a one-shot
process for the RSS figures: it imports numpy, numpipe and the bench scenes,
builds the scene's input data and, unless ``--baseline``, sets the scene up on
numpipe and runs two frames; then it prints ``{"vmhwm_kib": ...}`` (peak RSS
of this process, /proc/self/status VmHWM).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from typing import Any

from .scenes import SCENES


def _protocol_stream():
    """Keep the real stdout for JSON replies; send fd 1 to stderr."""
    sys.stdout.flush()
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1)


class _Server:
    def __init__(self, backend: str, threads: int | None, direct: bool = False) -> None:
        self.backend = backend
        self.threads = threads
        self.direct = direct
        self.current: Any = None
        self.gl = None
        if backend == "mesa":
            from .mesa_backend import create_context

            self.gl = create_context()

    def info(self) -> dict:
        env = {
            k: os.environ.get(k, "")
            for k in ("GALLIUM_DRIVER", "LP_NUM_THREADS", "LP_PERF", "MESA_GL_VERSION_OVERRIDE")
        }
        if self.gl is not None:
            return {"renderer": self.gl.info["GL_RENDERER"], "env": env}
        import gallium

        screen = gallium.create_screen(self.threads)
        try:
            n = screen.pool.num_threads
            return {"renderer": f"numpipe ({n} workers)", "workers": n, "env": env}
        finally:
            screen.destroy()

    def setup(self, name: str, size: int) -> dict:
        self.close()
        scene = SCENES[name]
        data = scene.build(size)
        if self.backend == "mesa":
            from .mesa_backend import MesaScene

            try:
                self.current = MesaScene(self.gl, scene, data, size)
            except Exception as exc:  # a GLSL/GL feature this driver lacks
                return {"unsupported": f"{type(exc).__name__}: {exc}".strip()[:300]}
        else:
            import gallium

            from .numpipe_backend import NumpipeScene

            try:
                self.current = NumpipeScene(
                    scene, data, size, num_threads=self.threads, threaded=not self.direct
                )
            except gallium.UnsupportedError as exc:
                return {"unsupported": str(exc)}
        t0 = time.perf_counter()
        try:
            self.current.frame()
        except Exception as exc:
            if self.backend != "mesa":
                import gallium

                if isinstance(exc, gallium.UnsupportedError):
                    cur, self.current = self.current, None
                    cur.close(discard_errors=True)
                    return {"unsupported": str(exc).splitlines()[0]}
            raise
        reply = {"ok": True, "warmup_ms": (time.perf_counter() - t0) * 1e3}
        if self.backend != "mesa":
            reply["workers"] = self.current.workers
        return reply

    def frames(self, n: int) -> dict:
        out = []
        frame = self.current.frame
        for _ in range(n):
            t0 = time.perf_counter()
            frame()
            out.append((time.perf_counter() - t0) * 1e3)
        return {"ms": out}

    def read(self, path: str) -> dict:
        import numpy as np

        np.save(path, self.current.read())
        return {"ok": True}

    def close(self) -> dict:
        if self.current is not None:
            cur, self.current = self.current, None
            cur.close()
        return {"ok": True}


def serve(backend: str, threads: int | None, direct: bool = False) -> int:
    out = _protocol_stream()
    try:
        server = _Server(backend, threads, direct)
    except Exception as exc:
        out.write(json.dumps({"fatal": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        op = cmd.get("op")
        try:
            if op == "quit":
                server.close()
                out.write(json.dumps({"ok": True}) + "\n")
                return 0
            if op == "info":
                reply = server.info()
            elif op == "setup":
                reply = server.setup(cmd["scene"], int(cmd["size"]))
            elif op == "frames":
                reply = server.frames(int(cmd["n"]))
            elif op == "read":
                reply = server.read(cmd["path"])
            elif op == "close":
                reply = server.close()
            else:
                reply = {"error": f"unknown op {op!r}"}
        except Exception:
            reply = {"error": traceback.format_exc()[-3000:]}
        out.write(json.dumps(reply) + "\n")
    return 0


def vmhwm_kib(pid: int | str = "self") -> int:
    """Peak resident set size of a process (this one by default) in KiB (Linux
    VmHWM; else this process's ru_maxrss)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


# Imported by both memory processes, so the baseline holds numpipe's code too and
# the difference is what numpipe allocates (a module missing after a rename is skipped).
_MEMORY_IMPORTS = (
    "numpy",
    "numexpr",
    "gallium.numpipe.context",
    "gallium.tgsi.compiler",
    "threaded",
    "workers.pool",
    "workers.raster",
    "workers.fragment",
)


def memory(name: str, size: int, baseline: bool) -> int:
    import importlib

    for mod in _MEMORY_IMPORTS:
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    import gallium

    from .numpipe_backend import NumpipeScene

    scene = SCENES[name]
    data = scene.build(size)
    frames = 0
    status = "ok"
    children: list[list[int]] = []  # [peak, started] KiB of each band process (bandproc.py)
    if not baseline:
        try:
            s = NumpipeScene(scene, data, size)
            for _ in range(2):
                s.frame()
                frames += 1
            children = [[vmhwm_kib(pid), idle] for pid, idle in s.screen.pool.band_processes()]
            s.close()
        except gallium.UnsupportedError as exc:
            status = f"unsupported: {exc}"
    reply = {"vmhwm_kib": vmhwm_kib(), "children_vmhwm_kib": children}
    print(json.dumps({**reply, "frames": frames, "status": status}))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"]:
        threads = None
        if "--threads" in argv:
            threads = int(argv[argv.index("--threads") + 1])
        return serve(argv[1], threads, "--direct" in argv)
    if argv[:1] == ["memory"]:
        return memory(argv[1], int(argv[2]), "--baseline" in argv)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

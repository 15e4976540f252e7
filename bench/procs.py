"""Subprocesses of the benchmark: runner servers and one-shot measurements.

The parent never renders: every driver configuration lives in its own
process (:mod:`bench.runner`), so each one gets its environment before its
libraries load (Mesa reads ``GALLIUM_DRIVER`` and ``LP_NUM_THREADS`` at
context creation) and no two share a GIL.  A runner's stderr goes to a
temporary file, shown only when something fails.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_DROP = ("GALLIUM_DRIVER", "LP_NUM_THREADS", "LP_PERF", "SOFTPIPE_DEBUG", "GALLIUM_THREAD")


def base_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP}
    env["PYTHONPATH"] = str(ROOT) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    return env


def mesa_env(driver: str) -> dict[str, str]:
    """llvmpipe as it ships (LP_PERF unset, linear rasterizer allowed), 2 threads."""
    env = base_env()
    env["GALLIUM_DRIVER"] = driver
    env["LP_NUM_THREADS"] = "2"
    if driver == "softpipe":
        # softpipe advertises GL 3.3 but implements compute; the compute scene needs 4.3
        env["MESA_GL_VERSION_OVERRIDE"] = "4.5"
        env["MESA_GLSL_VERSION_OVERRIDE"] = "450"
    return env


class RunnerError(RuntimeError):
    pass


class Runner:
    """A ``python -m bench.runner serve ...`` process and its JSON-lines protocol.

    The constructor only starts the process, so several can start at once;
    ``wait_ready`` (or the first ``call``) waits for it to be up.
    """

    def __init__(self, label: str, argv: list[str], env: dict[str, str], python: str) -> None:
        self.label = label
        # closed in close(): it outlives this call, so no context manager
        self._err = tempfile.TemporaryFile(mode="w+b")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [python, "-m", "bench.runner", "serve", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
            cwd=str(ROOT),
            text=True,
            bufsize=1,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True, name=f"bench-{label}").start()
        self.ready = False

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait for the process's first line (its imports and context are done)."""
        if self.ready:
            return
        first = self._reply(timeout)
        if "fatal" in first or not first.get("ready"):
            self.close()
            raise RunnerError(first.get("fatal") or f"{self.label}: unexpected reply {first}")
        self.ready = True

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _reply(self, timeout: float) -> dict[str, Any]:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            self.kill()
            raise RunnerError(f"{self.label}: no reply within {timeout:.0f} s") from None
        if line is None:
            raise RunnerError(f"{self.label}: process exited\n{self.stderr_tail()}")
        return json.loads(line)

    def call(self, timeout: float = 900.0, **cmd: Any) -> dict[str, Any]:
        self.wait_ready()
        if self.proc.poll() is not None:
            raise RunnerError(f"{self.label}: process is gone\n{self.stderr_tail()}")
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._reply(timeout)

    def stderr_tail(self, n: int = 2000) -> str:
        self._err.flush()
        self._err.seek(0)
        return self._err.read().decode(errors="replace")[-n:]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.call(timeout=60.0, op="quit")
            except (RunnerError, OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._err.close()


def one_shot(module: str, args: list[str], timeout: float = 900.0) -> dict[str, Any]:
    """Run ``python -m module args`` in a fresh numpipe process; parse its last JSON line."""
    r = subprocess.run(
        [sys.executable, "-m", module, *args],
        env=base_env(),
        cwd=str(ROOT),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    for line in reversed(r.stdout.splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {"error": f"{module} {' '.join(args)} exited {r.returncode}: {r.stderr[-1500:]}"}

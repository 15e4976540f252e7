"""How much parallel numpy work this machine allows right now.

``python -m bench.calib`` prints ``{"serial_ms", "threads_ms", "speedup"}``:
the same elementwise ufunc work (sqrt/multiply/add over two 4M-float32
arrays) done twice on one thread, then once on each of two threads.  numpy
releases the GIL inside these calls, so on two idle cores the speed-up is
close to 2; when other processes load the machine it drops, and numpipe's
worker-scaling figure cannot exceed it.  ``python -m bench`` runs this at the
start and at the end of a run and prints both beside the load average.
"""

from __future__ import annotations

import json
import statistics
import sys
import threading
import time

import numpy as np


def _work(x: np.ndarray, y: np.ndarray, rounds: int) -> None:
    for _ in range(rounds):
        np.sqrt(x, out=y)
        np.multiply(y, 1.5, out=y)
        np.add(x, y, out=y)


def measure(rounds: int = 10, reps: int = 3) -> dict[str, float]:
    rng = np.random.default_rng(1)
    a = [rng.uniform(1, 2, 1 << 22).astype(np.float32) for _ in range(2)]
    b = [np.empty_like(x) for x in a]
    _work(a[0], b[0], 2)
    serial, threads = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        _work(a[0], b[0], rounds)
        _work(a[1], b[1], rounds)
        serial.append(time.perf_counter() - t0)
        ts = [threading.Thread(target=_work, args=(a[i], b[i], rounds)) for i in range(2)]
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        threads.append(time.perf_counter() - t0)
    s, t = statistics.median(serial), statistics.median(threads)
    return {"serial_ms": s * 1e3, "threads_ms": t * 1e3, "speedup": s / t}


if __name__ == "__main__":
    quick = "--quick" in sys.argv[1:]
    print(json.dumps(measure(rounds=4, reps=1) if quick else measure()))
    sys.exit(0)

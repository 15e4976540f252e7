"""The allocator tuning (workers/memory.py): freed memory is reused, not multiplied by threads.

The tuning keeps freed numpy temporaries in the C heap (no trim).  With
glibc's default of one heap (*arena*) per thread, up to 8 per core, every
arena then keeps the largest working set any thread using it ever had:
threads that come and go (one driver thread per threaded context, the
application's threads) made a process's resident memory climb towards
arenas x peak -- 130 MiB in 20 s of the stress soak, and on.  These tests
run in a fresh interpreter (the tuning is process-wide and happens once).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Six threads alive at once, each in turn filling and freeing a 16 MiB array;
# prints the resident MiB before and after, and the tuning's result.
SCRIPT = textwrap.dedent(
    """
    import gc, threading
    import numpy as np
    from workers.memory import tune_allocator

    def rss():
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024

    tuned = tune_allocator()
    np.ones(1 << 20)  # numpy's own first-use allocations, before the baseline
    gc.collect()
    before = rss()
    turn = threading.Lock()
    started = threading.Barrier(6)

    def work():
        started.wait()  # all six alive: each has a heap of its own, if any
        with turn:
            a = np.ones(4 << 20, np.float32)  # 16 MiB, every page touched
            del a

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    print(tuned, round(before, 1), round(rss(), 1))
    """
)


def _run(env_extra: dict[str, str]) -> tuple[bool, float, float]:
    import os

    env = {**os.environ, **env_extra}
    cmd = [sys.executable, "-c", SCRIPT]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    words = out.stdout.split()
    return words[0] == "True", float(words[1]), float(words[2])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_threads_share_one_heap_so_freed_memory_is_kept_once():
    tuned, before, after = _run({})
    if not tuned:
        pytest.skip("glibc's mallopt is not available: nothing is tuned")
    # The 16 MiB block freed by each thread in turn is reused by the next: the
    # heap keeps one block's worth (plus allocator slack), not six (~96 MiB).
    assert after - before < 28, (before, after)


def test_the_tuning_can_be_turned_off():
    tuned, _, _ = _run({"NUMPIPE_MALLOPT": "0"})
    assert tuned is False

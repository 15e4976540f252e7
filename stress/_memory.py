"""Resident memory of a long run: sampling, quiescent checkpoints and the verdict.

A process's resident set (``VmRSS`` in ``/proc/<pid>/status``) mixes three
things: memory the program still holds, memory the allocators keep for
reuse, and pages of shared libraries and shared blocks.  Only the first can
leak.  numpipe tunes glibc's allocator (workers/memory.py) so that freed
numpy temporaries stay in the heap: the raw resident set of a rendering
process is the high-water mark of its working set and does not fall when
the work stops.  So a *checkpoint* is taken at a quiescent moment (no load
running, every object of the load destroyed) as ``gc.collect()``, the raw
resident set, then ``malloc_trim(0)`` -- glibc hands the free pages of the
heap back to the system -- and the *trimmed* resident set.  What that
still holds is live memory plus the fragmentation around it (a pymalloc
arena stays while any object in it lives; a heap page while any chunk on
it is used).  :func:`rss_breakdown` says which kind of mapping grew.

:func:`judge` compares the checkpoints with the baseline (the checkpoint
taken after the warm-up, once caches, pools and interned objects are full):

* *return*: the end checkpoint must lie within ``tolerance_mib`` of the
  baseline;
* *slope*: over the checkpoints of the last half of the run, the Theil-Sen
  slope (the median of the pairwise slopes: one stray checkpoint cannot
  move it) must stay under ``slope_limit`` MiB a minute, unless the rise it
  implies over that half stays under ``rise_floor_mib`` (below that the
  checkpoints' own scatter dominates a short run).  A leak too small to
  leave the tolerance in a ten-minute run still climbs steadily, and that
  is what the slope sees.

:func:`steady_growth` counts live objects by type instead of bytes: a type
whose count rises at every checkpoint of the last half leaks, however few
bytes that is yet.

Band processes cannot be trimmed from outside: their raw resident sets are
judged the same way (the return and the slope).  That is sound because a
child's working set is its band's temporaries and the last scene it keeps,
which the warm-up has brought to their high-water mark.

Nothing here is thread-aware except :class:`RssSampler`, whose thread only
reads ``/proc`` and appends to its own list (read after :meth:`stop`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import os
import statistics
import threading
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field

KIB_PER_MIB = 1024.0


def rss_mib(pid: int | str = "self") -> float | None:
    """``VmRSS`` of ``pid`` in MiB, or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / KIB_PER_MIB
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def _libc_trim():
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None


_TRIM = _libc_trim()


def trim() -> bool:
    """Return the C heap's free pages to the system (glibc); False if unavailable."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True


def open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def object_census() -> dict[str, int]:
    """Live gc-tracked objects by type (``module.qualname``; after a collection),
    the soak's own (the ``stress`` package's) left out.  (A dict of str and
    int is not tracked itself: the censuses kept do not count in the next.)"""
    gc.collect()
    out: Counter[str] = Counter()
    for o in gc.get_objects():
        t = type(o)
        out[f"{t.__module__}.{t.__qualname__}"] += 1
    return {k: n for k, n in out.items() if not k.startswith("stress.")}


class CensusLog:
    """The censuses of a long run, kept compactly: each type name once, each
    census an array of counts.  (A census as a dict of fresh strings takes
    ~95 KiB; kept every checkpoint, such records grew the soak's own process
    by ~13 MiB an hour, which its memory verdict then measured.)"""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._rows: list[tuple[float, array]] = []

    def add(self, t: float, census: dict[str, int]) -> None:
        index = self._index
        for name in census:
            if name not in index:
                index[name] = len(index)
        row = array("q", bytes(8 * len(index)))
        for name, n in census.items():
            row[index[name]] = n
        self._rows.append((t, row))

    def __len__(self) -> int:
        return len(self._rows)

    def censuses(self) -> list[tuple[float, dict[str, int]]]:
        """The censuses as ``object_census`` made them: (time, {type: count})."""
        names = list(self._index)
        return [(t, {names[i]: n for i, n in enumerate(row) if n}) for t, row in self._rows]


def steady_growth(
    censuses: list[tuple[float, dict[str, int]]], floor: int
) -> list[tuple[str, int, int]]:
    """Types whose count rose at every checkpoint of the last half, by at least
    ``floor`` in all: ``(type, count at the half, count at the end)``.

    A cache grows while it fills and then holds still; what rises at every
    checkpoint of five minutes is not filling a cache.  This finds a leak of
    small objects that no resident-memory tolerance would see for hours.
    """
    if len(censuses) < 2:
        return []
    mid = (censuses[0][0] + censuses[-1][0]) / 2
    half = [c for t, c in censuses if t >= mid]
    if len(half) < 5:  # four steps at least, or a short run's filling looks steady
        return []
    out = []
    for name in half[-1]:
        counts = [c.get(name, 0) for c in half]
        if counts[-1] - counts[0] >= floor and all(b > a for a, b in itertools.pairwise(counts)):
            out.append((name, counts[0], counts[-1]))
    return sorted(out, key=lambda x: x[1] - x[2])


@dataclass
class Checkpoint:
    """The process at a quiescent moment, ``t`` seconds into the run."""

    t: float
    raw_mib: float  # resident before malloc_trim
    mib: float  # resident after gc and malloc_trim: the figure judged
    threads: int
    fds: int
    children: dict[int, float] = field(default_factory=dict)  # band process pid -> raw MiB
    kinds: dict[str, float] = field(default_factory=dict)  # rss_breakdown()


def checkpoint(t: float, child_pids: list[int] = ()) -> Checkpoint:
    """Collect garbage, trim the heap and measure (call only when quiescent)."""
    for _ in range(3):  # cycles freed by one pass can hold the next ones' referents
        if not gc.collect():
            break
    raw = rss_mib() or 0.0
    trim()
    children = {pid: m for pid in child_pids if (m := rss_mib(pid)) is not None}
    return Checkpoint(
        t=t,
        raw_mib=raw,
        mib=rss_mib() or 0.0,
        threads=threading.active_count(),
        fds=open_fds(),
        children=children,
        kinds=rss_breakdown(),
    )


SETTLE_S = 10.0  # how long worker threads and band processes may take to go


def settled(before: Checkpoint, t: float, child_pids=()) -> Checkpoint:
    """The checkpoint after a teardown, once the threads, open files and band
    processes are down to ``before``'s (a destroyed screen's workers and
    band processes finish on their own), or after SETTLE_S."""
    give_up = time.monotonic() + SETTLE_S
    while True:
        cp = checkpoint(t, child_pids)
        done = cp.threads <= before.threads and cp.fds <= before.fds and not cp.children
        if done or time.monotonic() > give_up:
            return cp
        time.sleep(0.2)


class RssSampler:
    """Samples this process's raw resident set (and its band processes') every
    ``period_s`` on a daemon thread, for the peak and the report."""

    def __init__(self, period_s: float = 0.5, child_pids=lambda: ()) -> None:
        self.period_s = period_s
        self.child_pids = child_pids
        self.samples: list[tuple[float, float, float]] = []  # (t, own MiB, children MiB)
        self._t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-rss", daemon=True)

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            own = rss_mib() or 0.0
            kids = sum(m for pid in self.child_pids() if (m := rss_mib(pid)) is not None)
            self.samples.append((time.monotonic() - self._t0, own, kids))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def peak_mib(self) -> float:
        return max((s[1] for s in self.samples), default=0.0)

    @property
    def children_peak_mib(self) -> float:
        return max((s[2] for s in self.samples), default=0.0)


def theil_sen(ts: list[float], ys: list[float]) -> float:
    """The median of the slopes between every two points (robust to outliers)."""
    slopes = [
        (ys[j] - ys[i]) / (ts[j] - ts[i])
        for i in range(len(ts))
        for j in range(i + 1, len(ts))
        if ts[j] > ts[i]
    ]
    return statistics.median(slopes) if slopes else 0.0


@dataclass(frozen=True)
class Limits:
    """What :func:`judge` allows (see the module docstring and stress/soak.py)."""

    tolerance_mib: float
    slope_limit: float  # MiB a minute over the last half
    rise_floor_mib: float  # a last-half rise below this is scatter, whatever its slope


@dataclass
class Trend:
    slope: float  # MiB a minute, Theil-Sen, over the last half
    rise_mib: float  # slope times the last half's span
    rising_steps: int  # checkpoint-to-checkpoint increases in the last half
    steps: int


def trend(points: list[tuple[float, float]]) -> Trend:
    """The trend of ``(t seconds, MiB)`` points over the last half of their span."""
    if len(points) < 2:
        return Trend(0.0, 0.0, 0, 0)
    mid = (points[0][0] + points[-1][0]) / 2
    half = [p for p in points if p[0] >= mid]
    if len(half) < 3:
        half = points[-3:]
    ts = [t for t, _ in half]
    ys = [y for _, y in half]
    slope = theil_sen(ts, ys) * 60.0
    rising = sum(b > a for a, b in itertools.pairwise(ys))
    return Trend(slope, slope * (ts[-1] - ts[0]) / 60.0, rising, len(ys) - 1)


def judge(
    what: str, baseline: float, points: list[tuple[float, float]], end: float, limits: Limits
) -> list[str]:
    """Failures (empty if none) of one memory series: ``baseline`` and ``end``
    in MiB, ``points`` the checkpoints from the baseline on as ``(t, MiB)``."""
    failures = []
    growth = end - baseline
    if growth > limits.tolerance_mib:
        failures.append(
            f"{what}: resident memory did not return to its baseline: "
            f"{baseline:.1f} MiB after the warm-up, {end:.1f} MiB at the end "
            f"(+{growth:.1f} MiB; tolerance {limits.tolerance_mib:.1f} MiB)"
        )
    tr = trend(points)
    if tr.slope > limits.slope_limit and tr.rise_mib > limits.rise_floor_mib:
        failures.append(
            f"{what}: resident memory climbs over the last half of the run: "
            f"{tr.slope:+.2f} MiB/min (Theil-Sen; limit {limits.slope_limit:.2f}), "
            f"+{tr.rise_mib:.1f} MiB over the half (floor {limits.rise_floor_mib:.1f}), "
            f"{tr.rising_steps} of {tr.steps} checkpoint steps rising"
        )
    return failures


TRACE_ENV = "SOAK_TRACEMALLOC"


def start_tracing():
    """With ``SOAK_TRACEMALLOC=N`` set: start tracemalloc (N frames a traceback)
    and return the first snapshot, else None.  For finding a leak, not for
    judging one: tracing slows the process several times."""
    frames = int(os.environ.get(TRACE_ENV, "0") or 0)
    if frames <= 0:
        return None
    import tracemalloc

    tracemalloc.start(frames)
    return tracemalloc.take_snapshot()


def tracing() -> bool:
    return int(os.environ.get(TRACE_ENV, "0") or 0) > 0


def traced_growth(first, top: int = 12) -> list[str]:
    """The allocation sites that grew most since ``first`` (report lines)."""
    import tracemalloc

    gc.collect()
    now = tracemalloc.take_snapshot()
    tracemalloc.stop()
    lines = ["tracemalloc: the sites that grew most since the baseline"]
    for stat in now.compare_to(first, "traceback")[:top]:
        lines.append(f"  {stat.size_diff / 1024:+.1f} KiB in {stat.count_diff:+d} blocks")
        frames = [line.strip() for line in stat.traceback.format()[-12:]]
        lines.extend(f"      {line}" for line in frames if line)
    return lines


def rss_breakdown() -> dict[str, float]:
    """This process's resident MiB by kind of mapping (``/proc/self/smaps``).

    Kinds: ``heap`` (glibc's main heap), ``pymalloc`` (1 MiB anonymous
    mappings: Python's object arenas), ``stacks`` (8 MiB anonymous: thread
    stacks), ``anon`` (other anonymous memory: glibc's per-thread heaps,
    large mappings), ``shared`` (shared memory: band-process blocks and scene
    arenas), ``files`` (libraries, mapped files).  Which kind grew says where
    to look for a leak; it is reported, not judged.
    """
    out: dict[str, float] = {}
    kind = "files"
    try:
        with open("/proc/self/smaps", encoding="ascii", errors="replace") as f:
            lines = f.readlines()
    except OSError:
        return out
    for line in lines:
        head = line.split(None, 1)[0]
        if head == "Rss:":
            out[kind] = out.get(kind, 0.0) + int(line.split()[1]) / KIB_PER_MIB
        elif not head.endswith(":"):  # a mapping's first line: "lo-hi perms ... path"
            kind = _mapping_kind(line.split())
    return dict(sorted(out.items()))


def _mapping_kind(fields: list[str]) -> str:
    lo, hi = (int(x, 16) for x in fields[0].split("-"))
    path = " ".join(fields[5:])
    if path == "[heap]":
        return "heap"
    if path.startswith(("/memfd:", "/dev/shm")):
        return "shared"
    if path:
        return "files"
    return {8 << 20: "stacks", 1 << 20: "pymalloc"}.get(hi - lo, "anon")

"""The soak's memory verdict (stress/_memory.py) on made-up series, and its machinery.

The verdict must catch a slow leak that stays inside the tolerance, a jump
that does not come back, and not fail on a flat series with the scatter
seen in leak-free runs.  The soak itself runs for a few seconds
(``make soak`` runs it for ten minutes).
"""

from __future__ import annotations

import os
import random

import pytest

from stress import _memory, soak
from stress._memory import Limits, judge, theil_sen, trend

LIMITS = Limits(tolerance_mib=8.0, slope_limit=0.5, rise_floor_mib=2.0)


def _series(minutes: float, rounds: int, level, scatter: float = 0.0, seed: int = 0):
    rng = random.Random(seed)
    step = minutes * 60 / rounds
    return [(k * step, level(k * step) + rng.uniform(-scatter, scatter)) for k in range(rounds + 1)]


def test_theil_sen_ignores_one_stray_point():
    ts = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    ys = [10.0, 11.0, 12.0, 40.0, 14.0, 15.0]  # slope 1 but for one spike
    assert theil_sen(ts, ys) == 1.0


def test_a_flat_run_with_scatter_passes():
    # ten minutes, 20 checkpoints scattering by +-1.5 MiB (a leak-free run's)
    points = _series(10, 20, lambda t: 66.0, scatter=1.5, seed=3)
    assert judge("p", points[0][1], points, points[-1][1], LIMITS) == []


def test_a_leak_inside_the_tolerance_is_caught_by_its_slope():
    # 0.7 MiB a minute: +7 MiB in ten minutes, inside the 8 MiB tolerance
    points = _series(10, 20, lambda t: 66.0 + 0.7 * t / 60, scatter=0.3, seed=4)
    failures = judge("p", points[0][1], points, points[-1][1], LIMITS)
    assert len(failures) == 1 and "climbs over the last half" in failures[0]
    tr = trend(points)
    assert 0.5 < tr.slope < 0.9 and tr.rising_steps >= 7


def test_a_jump_that_stays_fails_the_return():
    points = _series(10, 20, lambda t: 66.0 + (12.0 if t > 60 else 0.0))
    failures = judge("p", points[0][1], points, points[-1][1], LIMITS)
    assert len(failures) == 1 and "did not return to its baseline" in failures[0]
    assert "+12.0 MiB" in failures[0]


def test_a_short_run_reads_no_slope_into_scatter():
    # 20 s: a 1 MiB wobble is a steep slope over seconds, but under the rise floor
    points = [(0.0, 66.0), (5.0, 66.0), (10.0, 66.5), (15.0, 67.0), (20.0, 66.8)]
    assert judge("p", 66.0, points, 66.8, LIMITS) == []


def test_objects_rising_at_every_checkpoint_are_a_leak_and_a_filling_cache_is_not():
    from collections import Counter

    censuses = []
    for k in range(11):  # checkpoints a minute apart, the baseline first
        censuses.append(
            (
                60.0 * k,
                Counter(
                    {
                        "m.Leaked": 1000 + 23 * k,  # a few a round, every round
                        "m.Cache": 100 + min(k, 7) * 40,  # fills, then holds
                        "m.Scatter": 500 + (k % 3) * 90,  # comes and goes
                        "m.Slow": 10 + k,  # steady, but 5 in the last half
                    }
                ),
            )
        )
    assert _memory.steady_growth(censuses, floor=50) == [("m.Leaked", 1115, 1230)]
    assert _memory.steady_growth(censuses[:4], floor=50) == []  # too few steps to tell


def test_the_plan_warms_up_then_judges():
    assert soak.plan(600) == (25.0, 24, 4)
    assert soak.plan(20) == (1.0, 20, 3)
    assert soak.plan(3) == (1.0, 3, 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_rss_is_read_from_proc():
    mib = _memory.rss_mib()
    assert mib is not None and 5 < mib < 100_000
    assert _memory.rss_mib(2**22 + 12345) is None  # no such process


SEED = int(os.environ.get("NUMPIPE_STRESS_SEED", "20240611"))


@pytest.mark.slow
def test_a_few_seconds_of_soak_drive_every_kind_of_work():
    """Three one-second rounds: every actor works and every result is checked
    (the memory verdict needs minutes, and is tested on the series above);
    afterwards the threads and open files of before the run are back."""
    report = soak.run(3.0, SEED, bands=False, judge_memory=False)
    detail = "\n".join(report.failures)
    assert report.failure_count == 0, f"{report.summary()}\n{detail}"
    c = report.counters
    for recipe in ("scene_a", "scene_b", "small_draws_a", "primitives", "textured"):
        assert c.get(f"frames_{recipe}", 0) > 0, recipe
    for name in (
        "grids", "maps", "buffer_writes", "texture_writes", "copies", "queries_checked",
        "fences_awaited", "fences_waited", "contexts_created", "resources_created",
        "shaders_compiled", "bad_calls_raised",
    ):  # fmt: skip
        assert c.get(name, 0) > 0, name
    assert report.details[0].startswith("rounds: 3 of 1.0s, the first 1 warming up")
    assert any(line.startswith("memory (MiB") for line in report.details)
    threads = next(line for line in report.details if line.startswith("threads before/after"))
    before, after = threads.split(": ")[1].split(";")[0].split("/")
    assert before == after


def test_census_log_gives_back_the_censuses_it_keeps():
    log = _memory.CensusLog()
    series = [
        (0.0, {"a.A": 3, "b.B": 1}),
        (25.0, {"b.B": 2, "c.C": 7}),  # (a type gone, a new one)
        (50.0, {"a.A": 300, "c.C": 2**40}),
    ]
    for t, census in series:
        log.add(t, census)
    assert len(log) == 3
    assert log.censuses() == series
    rising = [(t, {"x.X": 10 * k, "y.Y": 5}) for k, t in enumerate(range(0, 400, 25))]
    log = _memory.CensusLog()
    for t, census in rising:
        log.add(float(t), census)
    assert _memory.steady_growth(log.censuses(), 5) == _memory.steady_growth(rising, 5)
    assert [name for name, _, _ in _memory.steady_growth(log.censuses(), 5)] == ["x.X"]

"""A short run of every stress suite (stress/), plus the command line around them.

Each suite runs for a couple of seconds with a fixed seed (override it with
NUMPIPE_STRESS_SEED); a failure message carries the suite's own report and the
command that replays it at length.  The full-length runs are ``make stress``.
"""

from __future__ import annotations

import os

import pytest

import stress
from stress import SUITES, run_suite
from stress.__main__ import main

SEED = int(os.environ.get("NUMPIPE_STRESS_SEED", "20240611"))
SECONDS = 2.0


@pytest.mark.slow
@pytest.mark.parametrize("name", [s for s in SUITES if s != "soak"])  # (tests/test_soak_memory.py)
def test_suite_runs_clean(name):
    report = run_suite(name, SECONDS, SEED)
    detail = "\n".join(report.failures)
    assert report.failure_count == 0, (
        f"{report.summary()}\n{detail}\n"
        f"replay: python -m stress --suite {name} --seed {SEED} --seconds 20"
    )
    # Not vacuous: the suite did real work and checked real results.
    assert report.iterations > 0
    assert report.frames_checked > 0


def test_list_names_every_suite(capsys):
    assert main(["--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(SUITES)


def test_unknown_suite_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--suite", "no_such_suite"])
    assert info.value.code == 2
    assert "no_such_suite" in capsys.readouterr().err


def test_exit_status_is_one_when_a_suite_fails(monkeypatch, capsys):
    def failing(name, seconds, seed):
        report = stress.Report(name, seed, seconds)
        report.fail("pixel (3, 4) differs")
        return report

    monkeypatch.setattr("stress.__main__.run_suite", failing)
    assert main(["--suite", "many_contexts", "--seconds", "1", "--seed", "7"]) == 1
    out = capsys.readouterr().out
    assert "FAIL: pixel (3, 4) differs" in out
    assert "--suite many_contexts --seed 7" in out


def test_an_escaping_exception_fails_the_suite(monkeypatch):
    def broken(seconds, seed):
        raise RuntimeError("boom")

    monkeypatch.setattr(stress.suite_module("query_storm"), "run", broken)
    report = run_suite("query_storm", 1.0, 3)
    assert report.failure_count == 1
    assert "RuntimeError: boom" in report.failures[0]

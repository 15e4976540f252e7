"""``python -m stress [--list] [--suite NAME ...] [--seconds N] [--soak-seconds N] [--seed S]``.

Runs the chosen suites (all by default, the soak last) one after another,
prints one summary line per suite and the failures in full, and exits with
status 1 if any suite failed (2 for bad arguments).  The soak runs for
``--soak-seconds`` (default: ``--seconds``, like every suite).
"""

from __future__ import annotations

import argparse
import random
import sys

from . import SUITES, run_suite, suite_module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stress", description=__doc__)
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    parser.add_argument(
        "--suite",
        action="append",
        choices=SUITES,
        metavar="NAME",
        help="run this suite (repeatable; default: all)",
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="how long each suite runs (default 20)"
    )
    parser.add_argument(
        "--soak-seconds",
        type=float,
        default=None,
        help="how long the soak runs (default: --seconds); make stress gives it 600",
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="seed for every random choice (default: random)"
    )
    args = parser.parse_args(argv)
    if args.list:
        for name in SUITES:
            doc = (suite_module(name).__doc__ or "").strip().splitlines()
            print(f"{name:<20} {doc[0] if doc else ''}")
        return 0
    if args.seconds <= 0:
        parser.error(f"--seconds must be > 0; got {args.seconds}")
    soak_seconds = args.seconds if args.soak_seconds is None else args.soak_seconds
    if soak_seconds <= 0:
        parser.error(f"--soak-seconds must be > 0; got {soak_seconds}")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    names = args.suite or list(SUITES)
    soak = ""
    if "soak" in names and soak_seconds != args.seconds:
        soak = f" (the soak {soak_seconds:g}s)"
    print(f"stress: {len(names)} suite(s), {args.seconds:g}s each{soak}, seed {seed}", flush=True)
    reports = []
    for name in names:
        report = run_suite(name, soak_seconds if name == "soak" else args.seconds, seed)
        reports.append(report)
        print(report.summary(), flush=True)
        extra = ", ".join(f"{k}={_fmt(v)}" for k, v in sorted(report.counters.items()))
        if extra:
            print(f"    {extra}", flush=True)
        for line in report.details:
            print(f"    {line}", flush=True)
        for failure in report.failures:
            print("    FAIL: " + failure.replace("\n", "\n          "), flush=True)
        if report.failure_count > len(report.failures):
            print(f"    ... and {report.failure_count - len(report.failures)} more", flush=True)
    failed = [r for r in reports if not r.ok]
    if failed:
        print(
            f"stress: {len(failed)} suite(s) failed; replay with: python -m stress "
            + " ".join(f"--suite {r.name}" for r in failed)
            + f" --seed {seed}"
            + (f" --soak-seconds {soak_seconds:g}" if soak else ""),
            flush=True,
        )
        return 1
    print("stress: all suites passed", flush=True)
    return 0


def _fmt(v: object) -> str:
    return f"{v:.1f}" if isinstance(v, float) else str(v)


if __name__ == "__main__":
    sys.exit(main())

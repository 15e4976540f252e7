"""The benchmark suite still runs (no timing is asserted: speed lives in ``make bench``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_quick_fill_runs_and_reports(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--scene", "fill", "--no-mesa",
         "--no-scaling", "--no-memory", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert list(report["scenes"]) == ["fill"]
    fill = report["scenes"]["fill"]
    assert fill["triangles"] == 1
    assert fill["fragments"] == 1024 * 1024
    run = fill["numpipe"]
    assert run["status"] == "ok"
    assert len(run["ms"]) == run["frames"] > 0
    assert all(ms > 0 for ms in run["ms"])
    assert report["drivers"]["mesa"].startswith("not run")
    assert "fill" in proc.stdout


def test_bench_rejects_unknown_scene():
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--scene", "no-such-scene", "--no-mesa"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "no-such-scene" in proc.stderr

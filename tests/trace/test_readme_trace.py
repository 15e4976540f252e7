"""The README's gallium.trace example runs as written (and prints what it says)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_trace_example_runs(tmp_path, monkeypatch):
    text = README.read_text()
    section = text.split("## Recording, inspecting and replaying", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GALLIUM_TRACE", raising=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    assert out.getvalue() == "3 (64, 64, 4)\n"
    assert (tmp_path / "spin.trace").stat().st_size > 0

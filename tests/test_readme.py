"""The README's Quick start examples run as written (and print what they say)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def quick_start_blocks() -> list[str]:
    text = README.read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_quick_start_examples_run():
    blocks = quick_start_blocks()
    assert len(blocks) == 2
    outputs = []
    for code in blocks:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
        outputs.append(out.getvalue())
    assert outputs == ["", "[1. 3. 5. 7.]\n"]

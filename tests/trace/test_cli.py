"""``python -m gallium trace info|dump`` and ``python -m gallium replay``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gallium.__main__ import main

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from recordings import record_cubes  # noqa: E402


@pytest.fixture(scope="module")
def cubes(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "cubes.trace"
    images = record_cubes(path, 3, size=24, clear_every=2)
    return path, images


def test_info(cubes, capsys):
    path, _ = cubes
    assert main(["gallium", "trace", "info", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == (
        "frames:      3 (marked by END_OF_FRAME flushes); 3 replayable alone from their own start"
    )
    # 21 calls to set up (the screen's @screen included), per frame 6 calls (its map and
    # unmap for reading back included) and its @content records, 2 to tear down, and the
    # transfers' three @release records
    assert out[4] == "calls:       51 on 1 context(s)"
    assert out[5] == "objects:     10 created (3 resources)"
    per_kind = dict(line.split() for line in out[out.index("calls per kind:") + 1 :])
    assert per_kind["draw_vbo"] == "3" and per_kind["flush"] == "3"
    # the target and depth buffer cleared whole in frames 0 and 2, the depth buffer in 1
    # ("whole": a replay may start there), the vertex buffer read in frames 1 and 2, the
    # target read in frame 1 (it does not clear its colour)
    assert per_kind["@content"] == "8"
    assert per_kind["transfer_map"] == per_kind["transfer_unmap"] == per_kind["@release"] == "3"


def test_dump_of_one_frame(cubes, capsys):
    path, _ = cubes
    assert main(["gallium", "trace", "dump", str(path), "--frame", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "# frame 1: segments 1..1"
    assert lines[1] == "# state at the start of segment 1: 11 live objects"  # the screen too
    calls = [line for line in lines if not line.startswith("#")]
    names = [line.split(".", 1)[1].split("(")[0] for line in calls]
    assert names == [
        "transfer_map", "transfer_unmap", "@release", "@content", "clear",
        "set_constant_buffer", "@content", "@content", "draw_vbo", "flush",
    ]  # fmt: skip
    assert (
        calls[0]
        == "26: #2.transfer_map(#3, 0, Transfer.READ, Box(width=24, height=24, depth=1)) -> #13"
    )
    assert calls[2] == "28: #0.@release(#13)"  # the application let go of the transfer
    assert calls[3] == "29: #2.@content(#4, 'whole')"  # the depth buffer, cleared whole
    assert calls[-1] == "35: #2.flush(Flush.END_OF_FRAME) -> #14"
    assert lines[-1] == "# --- end of frame 1 (END_OF_FRAME flush on context #2, segment 1) ---"


def test_replay_writes_sorted_pngs(cubes, tmp_path, capsys):
    path, images = cubes
    out = tmp_path / "out"
    assert main(["gallium", "replay", str(path), "--out", str(out), "--frames", "1:3"]) == 0
    assert capsys.readouterr().out == f"wrote 2 frame(s) to {out}\n"
    assert sorted(p.name for p in out.iterdir()) == ["frame_000001.png", "frame_000002.png"]
    for k in (1, 2):
        png = np.asarray(Image.open(out / f"frame_{k:06d}.png").convert("RGBA"))
        assert np.array_equal(png[::-1], images[k])  # written with NDC +y at the top
    assert main(["gallium", "replay", str(path), "--out", str(out), "--direct", "--targets"]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names[:2] == ["frame_000000.png", "frame_000000_depth.png"] and len(names) == 6
    depth = np.asarray(Image.open(out / "frame_000002_depth.png"))
    assert depth.dtype == np.uint16 and depth.max() == 65535 and depth.min() < 65535


def test_bad_input_is_one_line_and_status_1(cubes, tmp_path, capsys):
    path, _ = cubes
    data = bytearray(path.read_bytes())
    data[200] ^= 0x40
    bad = tmp_path / "bad.trace"
    bad.write_bytes(bytes(data))
    assert main(["gallium", "trace", "info", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: at offset ") and "checksum" in err and err.count("\n") == 1
    assert main(["gallium", "trace", "info", str(tmp_path / "missing.trace")]) == 1
    assert capsys.readouterr().err.startswith("error: cannot open ")
    assert main(["gallium", "replay", str(path), "--out", str(tmp_path), "--frames", "x"]) == 1
    assert capsys.readouterr().err == "error: frames 'x' must be A:B as a Python slice, or N\n"
    cut = tmp_path / "cut.trace"
    cut.write_bytes(path.read_bytes()[:-7])
    run = subprocess.run(
        [sys.executable, "-m", "gallium", "replay", str(cut), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("error: at offset ") and "truncated" in run.stderr


def test_png_files_decode_to_the_frames():
    """Frame PNGs are written by gallium.trace.images (not Pillow): Pillow reads them back."""
    import io

    from gallium.trace.images import png_bytes

    rgba = np.random.default_rng(1).integers(0, 256, (5, 7, 4), dtype=np.uint8)
    back = np.asarray(Image.open(io.BytesIO(png_bytes(rgba))).convert("RGBA"))
    assert np.array_equal(back[::-1], rgba)  # stored with NDC +y (the last row) at the top
    depth = (np.arange(35).reshape(5, 7) * 1871).astype(np.uint16)
    back = np.asarray(Image.open(io.BytesIO(png_bytes(depth, "I;16"))))
    assert np.array_equal(back[::-1].astype(np.uint16), depth)

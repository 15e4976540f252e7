"""Regenerate the TGSI under ``bench/shaders/`` from Mesa's softpipe.

Usage (needs moderngl and Mesa; see ../shared/REFERENCE.md and
/work/notes/mesa_conventions.md section 8)::

    python -m bench.dump_tgsi            # every program
    python -m bench.dump_tgsi alu40      # one program

Every bench scene runs the *same* shaders on every driver: GLSL for Mesa
(``<name>.vert`` / ``<name>.frag`` / ``<name>.comp``) and, for numpipe, the TGSI
that Mesa itself compiled from that GLSL.  This module gets that TGSI the way
the conventions note describes: a child process runs softpipe with
``SOFTPIPE_DEBUG=vs,fs,cs,use_tgsi``, writes a marker on fd 2 after the
context's internal shaders have been dumped, compiles and draws with the
program, and the parent cuts the first ``VERT``/``FRAG``/``COMP`` block after
the marker out of the child's stderr.  The result is written to
``<name>.vs.tgsi`` / ``<name>.fs.tgsi`` / ``<name>.cs.tgsi``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SHADERS = Path(__file__).resolve().parent / "shaders"

# program name -> (vertex GLSL, fragment GLSL) or ("", compute GLSL)
PROGRAMS: dict[str, tuple[str, str]] = {
    "color": ("color.vert", "color.frag"),
    "texture": ("texture.vert", "texture.frag"),
    "alu40": ("color.vert", "alu40.frag"),
    "mvp": ("mvp.vert", "color.frag"),
    "mvp-tint": ("mvp.vert", "tint.frag"),
    "saxpy": ("", "saxpy.comp"),
}
_MARKER = "@@@@ bench program @@@@"
_END = re.compile(r"^\s*\d+: END\s*$")


def _child(name: str) -> None:
    """Runs in the softpipe child: compile ``name`` and use it once."""
    import moderngl
    import numpy as np

    ctx = moderngl.create_context(standalone=True, backend="egl")
    vert, frag = PROGRAMS[name]
    os.write(2, (_MARKER + "\n").encode())
    if not vert:
        cs = ctx.compute_shader((SHADERS / frag).read_text())
        buf = ctx.buffer(np.zeros(64, np.float32).tobytes())
        buf.bind_to_storage_buffer(0)
        buf.bind_to_storage_buffer(1)
        cs.run(1)
        ctx.finish()
        return
    prog = ctx.program(
        vertex_shader=(SHADERS / vert).read_text(), fragment_shader=(SHADERS / frag).read_text()
    )
    fbo = ctx.framebuffer(color_attachments=[ctx.renderbuffer((8, 8), 4)])
    fbo.use()
    verts = np.array(
        [[-1, -1, 0, 1, 0, 0, 0, 1], [3, -1, 0, 1, 1, 0, 0, 1], [-1, 3, 0, 1, 0, 1, 0, 1]]
    )
    vbo = ctx.buffer(verts.astype("f4").tobytes())
    names = [n for n in ("in_pos", "in_color", "in_uv") if n in prog]
    vao = ctx.vertex_array(prog, [(vbo, "4f 4f", *names)])
    if "u_mvp" in prog:
        prog["u_mvp"].write(np.eye(4, dtype="f4").tobytes())
    if "tex" in prog:
        tex = ctx.texture((2, 2), 4)
        tex.use(0)
    vao.render()  # softpipe dumps when the variant is created, at the first draw
    fbo.read()
    ctx.finish()


def extract(stderr: str) -> dict[str, str]:
    """The first VERT/FRAG/COMP block after the marker, keyed by stage."""
    _, _, text = stderr.partition(_MARKER + "\n")
    blocks: dict[str, str] = {}
    current: list[str] | None = None
    kind = ""
    for line in text.splitlines():
        if current is None:
            if line.strip() in ("VERT", "FRAG", "COMP"):
                kind = line.strip()
                current = [line]
            continue
        current.append(line)
        if _END.match(line):
            blocks.setdefault(kind, "\n".join(current) + "\n")
            current = None
    return blocks


def dump(name: str, python: str = sys.executable) -> dict[str, str]:
    env = dict(
        os.environ,
        GALLIUM_DRIVER="softpipe",
        SOFTPIPE_DEBUG="vs,fs,cs,use_tgsi",
        # softpipe advertises GL 3.3; compute needs 4.3 (softpipe implements it)
        MESA_GL_VERSION_OVERRIDE="4.5",
        MESA_GLSL_VERSION_OVERRIDE="450",
    )
    r = subprocess.run(
        [python, "-m", "bench.dump_tgsi", "--child", name],
        env=env,
        capture_output=True,
        text=True,
        cwd=str(SHADERS.parents[1]),
        check=False,
    )
    if r.returncode != 0:
        raise RuntimeError(f"softpipe child for {name!r} failed:\n{r.stderr[-2000:]}")
    blocks = extract(r.stderr)
    suffix = {"VERT": "vs", "FRAG": "fs", "COMP": "cs"}
    vert, _ = PROGRAMS[name]
    wanted = ("COMP",) if not vert else ("VERT", "FRAG")
    out = {}
    for kind in wanted:
        if kind not in blocks:
            raise RuntimeError(f"no {kind} block in softpipe's dump of {name!r}")
        path = SHADERS / f"{name}.{suffix[kind]}.tgsi"
        path.write_text(blocks[kind])
        out[kind] = blocks[kind]
    return out


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        _child(argv[1])
        return 0
    for name in argv or list(PROGRAMS):
        blocks = dump(name)
        for kind, text in blocks.items():
            n = sum(1 for ln in text.splitlines() if re.match(r"^\s*\d+: ", ln)) - 1
            print(f"{name} {kind}: {n} instructions (+END)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

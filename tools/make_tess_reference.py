"""Tessellate the scenes of tests/reference/tess/tess_scenes.py with Mesa's llvmpipe.

Usage (needs Mesa's EGL/llvmpipe and moderngl; see ../shared/REFERENCE.md)::

    python tools/make_tess_reference.py [case ...]

Each case runs in its own child process (``LP_NUM_THREADS=0``,
``LP_PERF=no_rast_linear``): the GLSL program draws two patches into a 64x64 RGBA8
framebuffer while transform feedback captures the evaluation shader's outputs and a
PRIMITIVES_GENERATED query counts the primitives.  ``<name>.json`` gets the captured
bytes (hex) and the count, ``<name>.png`` the image (row 0 = NDC y -1).
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "reference" / "tess"
sys.path.insert(0, str(OUT))
sys.path.insert(0, str(ROOT / "tools"))

import tess_scenes as scenes  # type: ignore[import-not-found]  # noqa: E402

CAPTURE_BYTES = 1 << 16


def run(name: str) -> dict:
    import glcalls as G  # type: ignore[import-not-found]
    import moderngl
    import numpy as np
    from PIL import Image

    case = scenes.case_by_name(name)
    ctx = moderngl.create_context(standalone=True, backend="egl")
    color = ctx.renderbuffer((scenes.WIDTH, scenes.HEIGHT), 4, dtype="f1")
    fbo = ctx.framebuffer(color_attachments=[color])
    fbo.use()
    ctx.viewport = (0, 0, scenes.WIDTH, scenes.HEIGHT)
    fbo.clear(0.0, 0.0, 0.0, 1.0)
    gl = G.GLCalls()
    src = case.glsl()
    stages = {G.VERTEX_SHADER: src["vs"], G.TESS_EVALUATION_SHADER: src["tes"]}
    stages[G.FRAGMENT_SHADER] = src["fs"]
    if "tcs" in src:
        stages[G.TESS_CONTROL_SHADER] = src["tcs"]
    prog = gl.program(stages, case.varyings())
    gl.glUseProgram(prog)
    if "tcs" in src:
        for uname, values in (
            ("u_outer", case.outer),
            ("u_outer_step", case.outer_step),
        ):
            gl.glUniform4f(gl.glGetUniformLocation(prog, uname.encode()), *values)
        for uname, values in (("u_inner", case.inner), ("u_inner_step", case.inner_step)):
            gl.glUniform2f(gl.glGetUniformLocation(prog, uname.encode()), *values)
    else:
        outer = (ctypes.c_float * 4)(*case.outer)
        inner = (ctypes.c_float * 2)(*case.inner)
        gl.glPatchParameterfv(G.PATCH_DEFAULT_OUTER_LEVEL, outer)
        gl.glPatchParameterfv(G.PATCH_DEFAULT_INNER_LEVEL, inner)
    vao = gl.gen("glGenVertexArrays")
    gl.glBindVertexArray(vao)
    gl.buffer(G.ARRAY_BUFFER, case.control_points().astype("<f4").tobytes())
    gl.glEnableVertexAttribArray(0)
    gl.glVertexAttribPointer(0, 4, G.FLOAT, 0, 16, None)
    capture = gl.buffer(G.TRANSFORM_FEEDBACK_BUFFER, bytes([0xAB]) * CAPTURE_BYTES)
    gl.glBindBufferBase(G.TRANSFORM_FEEDBACK_BUFFER, 0, capture)
    q = gl.gen("glGenQueries")
    gl.glPatchParameteri(G.PATCH_VERTICES, case.vertices_per_patch)
    gl.glBeginQuery(G.PRIMITIVES_GENERATED, q)
    gl.glBeginTransformFeedback(G.MODES[case.output().upper()])
    gl.glDrawArrays(G.PATCHES, 0, 2 * case.vertices_per_patch)
    gl.glEndTransformFeedback()
    gl.glEndQuery(G.PRIMITIVES_GENERATED)
    gl.check("draw")
    gl.glFinish()
    data = gl.read_buffer(G.TRANSFORM_FEEDBACK_BUFFER, capture, CAPTURE_BYTES)
    count = gl.query_result(q)
    words = 4 * len(case.varyings())
    per = {"points": 1, "lines": 2, "triangles": 3}[case.output()]
    used = count * per * words * 4
    if used > CAPTURE_BYTES or data[used : used + 4] != bytes([0xAB]) * 4:
        raise RuntimeError(f"{name}: {count} primitives do not fit the capture buffer")
    img = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8)
    Image.fromarray(img.reshape(scenes.HEIGHT, scenes.WIDTH, 4), "RGBA").save(OUT / f"{name}.png")
    return {
        "name": name,
        "renderer": ctx.info["GL_RENDERER"],
        "primitives_generated": count,
        "captured": data[:used].hex(),
    }


def generate(name: str) -> None:
    env = dict(os.environ, GALLIUM_DRIVER="llvmpipe", LP_NUM_THREADS="0")
    env["LP_PERF"] = "no_rast_linear"
    r = subprocess.run(
        [sys.executable, __file__, "--child", name], env=env, capture_output=True, text=True
    )
    if r.returncode != 0:
        raise RuntimeError(f"{name}: child failed ({r.returncode}):\n{r.stderr[-4000:]}")
    result = json.loads(r.stdout.strip().splitlines()[-1])
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] == "--child":
        print(json.dumps(run(argv[2])))
        return 0
    names = argv[1:] or [c.name for c in scenes.CASES]
    failed = []
    for name in names:
        try:
            generate(name)
            print(f"{name}: written")
        except Exception as exc:
            failed.append(name)
            print(f"{name}: FAILED: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

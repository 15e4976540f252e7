"""Render the multisampled reference scenes with Mesa (llvmpipe) and store them.

Usage (needs Mesa's EGL/llvmpipe and moderngl; see ../shared/REFERENCE.md)::

    python tools/make_msaa_reference.py [scene ...]

For every scene of ``tests/reference/msaa_scenes.py`` this draws the scene's
triangles into a 4-sample renderbuffer (and a 4-sample depth buffer when
asked), resolves it with ``glBlitFramebuffer`` into an RGBA8 texture and
writes the texture as ``tests/reference/msaa/<name>.npy`` (row 0 first:
NDC y = -1, numpipe's row 0 too), plus ``<name>.json`` with the renderer.
Each scene runs in a fresh subprocess (``LP_PERF=no_rast_linear`` before
Mesa loads).  Sample masks, alpha-to-coverage and alpha-to-one go through
``eglGetProcAddress``: moderngl does not expose them.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference"
sys.path.insert(0, str(REF))

GL_SAMPLE_ALPHA_TO_COVERAGE = 0x809E
GL_SAMPLE_ALPHA_TO_ONE = 0x809F
GL_SAMPLE_MASK = 0x8E51
GL_READ_FRAMEBUFFER = 0x8CA8
GL_DRAW_FRAMEBUFFER = 0x8CA9
GL_COLOR_BUFFER_BIT = 0x4000
GL_NEAREST = 0x2600


def _gl():  # type: ignore[no-untyped-def]
    egl = ctypes.CDLL("libEGL.so.1")
    egl.eglGetProcAddress.restype = ctypes.c_void_p
    egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]

    def fn(name, *args):  # type: ignore[no-untyped-def]
        ptr = egl.eglGetProcAddress(name.encode())
        if not ptr:
            raise RuntimeError(f"{name} not found")
        return ctypes.CFUNCTYPE(None, *args)(ptr)

    u, i = ctypes.c_uint, ctypes.c_int
    return {
        "Enable": fn("glEnable", u),
        "Disable": fn("glDisable", u),
        "SampleMaski": fn("glSampleMaski", u, u),
        "BindFramebuffer": fn("glBindFramebuffer", u, u),
        "BlitFramebuffer": fn("glBlitFramebuffer", i, i, i, i, i, i, i, i, u, u),
    }


def render(name: str) -> None:
    import moderngl
    import numpy as np
    from msaa_scenes import DATA, FS_GLSL, VS_GLSL, scene_by_name  # type: ignore[import-not-found]

    scene = scene_by_name(name)
    ctx = moderngl.create_context(standalone=True, backend="egl")
    gl = _gl()
    w, h = scene.width, scene.height
    prog = ctx.program(
        vertex_shader=VS_GLSL.format(flat=scene.qualifier),
        fragment_shader=FS_GLSL[scene.shader],
    )
    color = ctx.renderbuffer((w, h), 4, samples=scene.samples)
    depth = ctx.depth_renderbuffer((w, h), samples=scene.samples) if scene.depth else None
    fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
    out = ctx.texture((w, h), 4)
    resolved = ctx.framebuffer([out])
    fbo.use()
    ctx.viewport = (0, 0, w, h)
    fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
    if scene.depth:
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.depth_func = "<"
    if scene.alpha_to_coverage:
        gl["Enable"](GL_SAMPLE_ALPHA_TO_COVERAGE)
    if scene.alpha_to_one:
        gl["Enable"](GL_SAMPLE_ALPHA_TO_ONE)
    if scene.sample_mask is not None:
        gl["Enable"](GL_SAMPLE_MASK)
        gl["SampleMaski"](0, scene.sample_mask)
    tris = scene.triangles().reshape(-1, 7)
    data = np.concatenate([tris[:, 0:3], tris[:, 3:7]], axis=1).astype(np.float32)
    vbo = ctx.buffer(data.tobytes())
    vao = ctx.vertex_array(prog, [(vbo, "3f 4f", "in_pos", "in_color")])
    vao.render(moderngl.TRIANGLES)
    gl["Disable"](GL_SAMPLE_MASK)
    gl["Disable"](GL_SAMPLE_ALPHA_TO_COVERAGE)
    gl["Disable"](GL_SAMPLE_ALPHA_TO_ONE)
    gl["BindFramebuffer"](GL_READ_FRAMEBUFFER, fbo.glo)
    gl["BindFramebuffer"](GL_DRAW_FRAMEBUFFER, resolved.glo)
    gl["BlitFramebuffer"](0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST)
    ctx.finish()
    img = np.frombuffer(out.read(), np.uint8).reshape(h, w, 4)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / f"{name}.npy", img)
    meta = {
        "renderer": ctx.info["GL_RENDERER"],
        "version": ctx.info["GL_VERSION"],
        "env": {k: os.environ.get(k, "") for k in ("LP_PERF", "LP_NUM_THREADS")},
    }
    (DATA / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{name}: {w}x{h}, {int((img[..., 3] > 0).sum())} pixels with alpha")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--one":
        render(argv[1])
        return 0
    from msaa_scenes import scenes  # type: ignore[import-not-found]

    names = argv or [s.name for s in scenes()]
    env = dict(os.environ, LP_PERF="no_rast_linear", LP_NUM_THREADS="2")
    for name in names:
        subprocess.run([sys.executable, __file__, "--one", name], check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

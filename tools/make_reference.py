"""Render the reference scenes with Mesa (llvmpipe) and store them under tests/reference/.

Usage (needs Mesa's EGL/llvmpipe and moderngl; see ../shared/REFERENCE.md)::

    make reference          # or: python tools/make_reference.py [scene ...]

For every scene in ``tests/reference/scenes.py`` this writes
``tests/reference/<name>.png`` (the RGBA8 colour buffer exactly as moderngl
reads it back: row 0 first, which is NDC y = -1 and numpipe's row 0 too) and
``tests/reference/<name>.json`` (the renderer string and the GL state used).
Each scene runs in a fresh subprocess so the environment switches
(``LP_PERF=no_rast_linear``, ``LP_NUM_THREADS``) take effect before Mesa loads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference"
sys.path.insert(0, str(REF))
sys.path.insert(0, str(ROOT))


def render(name: str) -> None:
    import moderngl
    import numpy as np
    from PIL import Image
    from scenes import draw_mode, scene_by_name  # type: ignore[import-not-found]

    scene = scene_by_name(name)
    ctx = moderngl.create_context(standalone=True, backend="egl")
    vs, fs = scene.glsl()
    prog = ctx.program(vertex_shader=vs, fragment_shader=fs, geometry_shader=scene.gs_glsl)
    color = ctx.renderbuffer((scene.width, scene.height), 4, dtype="f1")
    depth = ctx.depth_renderbuffer((scene.width, scene.height)) if scene.depth else None
    fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
    fbo.use()
    ctx.viewport = (0, 0, scene.width, scene.height)
    fbo.clear(*scene.clear_color, depth=scene.clear_depth)
    if scene.depth:
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.depth_func = {"less": "<", "lequal": "<=", "greater": ">", "always": "1"}[scene.depth]
    if scene.blend:
        ctx.enable(moderngl.BLEND)
        ctx.blend_func = (
            moderngl.SRC_ALPHA,
            moderngl.ONE_MINUS_SRC_ALPHA,
            moderngl.ONE,
            moderngl.ONE_MINUS_SRC_ALPHA,
        )
    if scene.cull_back:
        ctx.enable(moderngl.CULL_FACE)
        ctx.front_face = "ccw"
        ctx.cull_face = "back"
    vertex_data, layout = scene.vertex_data()
    vbo = ctx.buffer(vertex_data.tobytes())
    ibo = ctx.buffer(scene.indices.tobytes()) if scene.indices is not None else None
    vao = ctx.vertex_array(
        prog,
        [(vbo, layout, "in_pos", "in_color", *(["in_size"] if scene.sizes is not None else []))],
        index_buffer=ibo,
        index_element_size=scene.indices.itemsize if scene.indices is not None else 4,
    )
    modes = {
        "triangles": moderngl.TRIANGLES,
        "triangle_strip": moderngl.TRIANGLE_STRIP,
        "triangle_fan": moderngl.TRIANGLE_FAN,
        "points": moderngl.POINTS,
        "lines": moderngl.LINES,
        "line_strip": moderngl.LINE_STRIP,
        "line_loop": moderngl.LINE_LOOP,
        "lines_adjacency": moderngl.LINES_ADJACENCY,
        "line_strip_adjacency": moderngl.LINE_STRIP_ADJACENCY,
        "triangles_adjacency": moderngl.TRIANGLES_ADJACENCY,
        "triangle_strip_adjacency": moderngl.TRIANGLE_STRIP_ADJACENCY,
    }
    ctx.line_width = scene.line_width
    if scene.sizes is not None:
        ctx.enable(moderngl.PROGRAM_POINT_SIZE)
    for i, (first, count) in enumerate(scene.draw_list()):
        vao.render(modes[draw_mode(scene, i)], vertices=count, first=first)
    data = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8)
    img = data.reshape(scene.height, scene.width, 4)
    Image.fromarray(img, "RGBA").save(REF / f"{name}.png")
    meta = {
        "renderer": ctx.info["GL_RENDERER"],
        "version": ctx.info["GL_VERSION"],
        "env": {k: os.environ.get(k, "") for k in ("LP_PERF", "LP_NUM_THREADS", "GALLIUM_DRIVER")},
        "rows": "row 0 is NDC y=-1 (moderngl read-back order)",
    }
    (REF / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{name}: {meta['renderer']}")


def main(argv: list[str]) -> int:
    if len(argv) > 1 and argv[1] == "--one":
        render(argv[2])
        return 0
    from scenes import all_scenes  # type: ignore[import-not-found]

    names = argv[1:] or [s.name for s in all_scenes()]
    env = dict(os.environ, LP_PERF="no_rast_linear", LP_NUM_THREADS="2")
    env.pop("GALLIUM_DRIVER", None)
    for name in names:
        subprocess.run([sys.executable, __file__, "--one", name], env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Render the fixed-function reference scenes (tests/reference/ff_scenes.py)
with Mesa's llvmpipe through a GL 4.5 compatibility profile and store them
under tests/reference/ff/.

Usage (needs Mesa's EGL and llvmpipe: libegl1, libgl1-mesa-dri)::

    python tools/make_ff_reference.py [scene ...]

Each scene runs in a fresh subprocess with ``LP_PERF=no_rast_linear`` and two
rasterizer threads.  Writes ``<name>.png`` (RGBA8 colour, row 0 = NDC y -1)
or ``<name>.color.npy`` (other colour formats), ``<name>.depth.npy`` (the
depth buffer's words) and ``<name>.json`` (renderer and environment).
"""

from __future__ import annotations

import ctypes as C
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "reference" / "ff"
sys.path.insert(0, str(ROOT / "tests" / "reference"))
sys.path.insert(0, str(ROOT / "tools"))

GL_FIRST_VERTEX_CONVENTION = 0x8E4D
GL_LAST_VERTEX_CONVENTION = 0x8E4E
GL_FLAT, GL_SMOOTH = 0x1D00, 0x1D01
GL_CLAMP_VERTEX_COLOR, GL_CLAMP_FRAGMENT_COLOR = 0x891A, 0x891B
GL_EDGE_FLAG_ARRAY = 0x8079
GL_CCW, GL_CW = 0x0901, 0x0900


def render(name: str) -> None:
    import numpy as np
    from ff_scenes import (  # type: ignore[import-not-found]
        FRAGMENT_SHADERS,
        scene_by_name,
        vertex_shaders,
    )
    from gl_compat import CAPS, DEPTH_FUNCS, FACES, GL, LOGIC_OPS, POLYGON_MODES, PRIMS
    from PIL import Image

    s = scene_by_name(name)
    gl = GL()
    gl.framebuffer(s.width, s.height, s.color_format, s.depth)
    vs = vertex_shaders(s.program_point_size)[0]
    gl.program(vs, FRAGMENT_SHADERS[s.fs][0], ["in_pos", "in_color", "in_back"])
    data = s.vertex_data()
    gl.vertices(data[:, :12], [4, 4, 4])
    if s.edges is not None:  # the fixed-function edge-flag array, one byte a vertex
        flags = np.ascontiguousarray(s.edges.astype(np.uint8))
        buf = (C.c_uint * 1)()
        gl.GenBuffers(1, buf)
        gl.BindBuffer(0x8892, buf[0])
        gl.BufferData(0x8892, flags.nbytes, flags.ctypes.data, 0x88E4)
        edge_ptr = gl.fn("glEdgeFlagPointer", None, C.c_int, C.c_void_p)
        edge_ptr(0, None)
        gl.fn("glEnableClientState", None, C.c_uint)(GL_EDGE_FLAG_ARRAY)
        gl._keep_flags = flags
    gl.ClampColor(GL_CLAMP_VERTEX_COLOR, 1 if s.clamp_vertex_color else 0)
    gl.ClampColor(GL_CLAMP_FRAGMENT_COLOR, 1 if s.clamp_fragment_color else 0)
    gl.ClearDepth(s.clear_depth)
    if s.color_format in ("rgba8", "rgba32f"):
        gl.ClearColor(*s.clear_color)
        gl.Clear(0x4000 | (0x0500 if s.depth else 0))
    else:  # integer targets: the clear colour's integer values
        signed = s.color_format.endswith("i") and not s.color_format.endswith("ui")
        vals = (C.c_int * 4)(*[int(v) for v in s.clear_color])
        (gl.ClearBufferiv if signed else gl.ClearBufferuiv)(0x1800, 0, vals)  # GL_COLOR
        if s.depth:
            gl.Clear(0x0500)
    if s.logic_op is not None:
        gl.Enable(CAPS["color_logic_op"])
        gl.LogicOp(LOGIC_OPS[s.logic_op])
    if s.blend:
        gl.Enable(CAPS["blend"])
        gl.fn("glBlendFuncSeparate", None, C.c_uint, C.c_uint, C.c_uint, C.c_uint)(
            0x0302,
            0x0303,
            1,
            0x0303,  # SRC_ALPHA, ONE_MINUS_SRC_ALPHA, ONE, ONE_MINUS_SRC_ALPHA
        )
    if s.depth:
        gl.Enable(CAPS["depth_test"])
        gl.DepthFunc(DEPTH_FUNCS[s.depth_func])
    gl.DepthRange(*s.depth_range)
    if s.depth_clamp:
        gl.Enable(CAPS["depth_clamp"])
    if s.offset is not None:
        factor, units, clamp = (*s.offset, 0.0)[:3]
        gl.PolygonOffsetClamp(factor, units, clamp)
        for m in s.offset_modes:
            gl.Enable(CAPS[f"polygon_offset_{m}"])
    front, back = s.polygon_mode
    gl.PolygonMode(FACES["front"], POLYGON_MODES[front])
    gl.PolygonMode(FACES["back"], POLYGON_MODES[back])
    if s.cull:
        gl.Enable(CAPS["cull_face"])
        gl.CullFace(FACES[s.cull])
    gl.FrontFace(GL_CCW if s.front_face == "ccw" else GL_CW)
    if s.twoside:
        gl.Enable(CAPS["vertex_program_two_side"])
    gl.ShadeModel(GL_FLAT if s.flat else GL_SMOOTH)
    gl.ProvokingVertex(
        GL_FIRST_VERTEX_CONVENTION if s.provoking == "first" else GL_LAST_VERTEX_CONVENTION
    )
    if s.poly_stipple is not None:
        import struct

        pattern = b"".join(struct.pack(">I", row) for row in s.poly_stipple)
        gl.PolygonStipple(C.c_char_p(pattern))
        gl.Enable(CAPS["polygon_stipple"])
    if s.line_stipple is not None:
        gl.LineStipple(*s.line_stipple)
        gl.Enable(CAPS["line_stipple"])
    for flag in ("point_smooth", "line_smooth", "poly_smooth"):
        if getattr(s, flag):
            gl.Enable(CAPS[flag.replace("poly", "polygon")])
    if s.program_point_size is not None:
        gl.Enable(CAPS["program_point_size"])
    if s.viewport is not None:
        gl.fn("glViewport", None, C.c_int, C.c_int, C.c_int, C.c_int)(*s.viewport)
    gl.LineWidth(s.line_width)
    gl.PointSize(s.point_size)
    for first, count in s.draw_list():
        gl.DrawArrays(PRIMS[s.mode], first, count)
    gl.Finish()
    gl.check()
    OUT.mkdir(parents=True, exist_ok=True)
    color = gl.read_color()
    if s.color_format == "rgba8":
        Image.fromarray(color, "RGBA").save(OUT / f"{name}.png")
    else:
        np.save(OUT / f"{name}.color.npy", color)
    if s.depth:
        np.save(OUT / f"{name}.depth.npy", gl.read_depth())
    meta = {
        "renderer": gl.renderer,
        "version": gl.version,
        "env": {k: os.environ.get(k, "") for k in ("LP_PERF", "LP_NUM_THREADS", "GALLIUM_DRIVER")},
        "rows": "row 0 is NDC y=-1 (GL's bottom row of a user FBO)",
    }
    (OUT / f"{name}.json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{name}: {gl.renderer}")


def main(argv: list[str]) -> int:
    if len(argv) > 1 and argv[1] == "--one":
        render(argv[2])
        return 0
    from ff_scenes import all_scenes  # type: ignore[import-not-found]

    names = argv[1:] or [s.name for s in all_scenes()]
    env = dict(os.environ, LP_PERF="no_rast_linear", LP_NUM_THREADS="2")
    env.pop("GALLIUM_DRIVER", None)
    for name in names:
        subprocess.run([sys.executable, __file__, "--one", name], env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

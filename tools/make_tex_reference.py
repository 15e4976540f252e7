"""Render the textured reference scenes with Mesa and store them under tests/reference/.

Usage (needs Mesa's EGL/llvmpipe/softpipe and moderngl; see ../shared/REFERENCE.md)::

    python tools/make_tex_reference.py [scene ...]

For every scene in ``tests/reference/tex_scenes.py`` this writes

* ``tests/reference/tex_<name>.tgsi`` — the vertex and fragment TGSI that Mesa
  compiles the scene's GLSL to, printed by softpipe
  (``GALLIUM_DRIVER=softpipe SOFTPIPE_DEBUG=vs,fs,use_tgsi``; softpipe accepts
  GLSL 3.30 plus extensions, so the scenes stay within that);
* ``tests/reference/tex_<name>.png`` — the RGBA8 colour buffer rendered by
  llvmpipe (``LP_PERF=no_rast_linear``), exactly as moderngl reads it back (row
  0 first, which is NDC y = -1 and numpipe's row 0 too);
* ``tests/reference/tex_<name>.json`` — renderer string and environment.

Each render runs in a fresh subprocess so the environment switches take effect
before Mesa loads.  Textures are created with raw GL calls (through
``eglGetProcAddress``) because moderngl does not expose every sampler
parameter (mirrored wrapping, lod bias, per-level uploads of cube maps and
arrays); moderngl enables GL_TEXTURE_CUBE_MAP_SEAMLESS globally, so cube maps
are filtered seamlessly.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference"
sys.path.insert(0, str(REF))

MARKER = "@@@@ TEX SCENE PROGRAM @@@@"

GL = {
    "TEXTURE_1D": 0x0DE0,
    "TEXTURE_2D": 0x0DE1,
    "TEXTURE_3D": 0x806F,
    "TEXTURE_CUBE_MAP": 0x8513,
    "TEXTURE_CUBE_MAP_POSITIVE_X": 0x8515,
    "TEXTURE_2D_ARRAY": 0x8C1A,
    "TEXTURE0": 0x84C0,
    "TEXTURE_MAG_FILTER": 0x2800,
    "TEXTURE_MIN_FILTER": 0x2801,
    "TEXTURE_WRAP_S": 0x2802,
    "TEXTURE_WRAP_T": 0x2803,
    "TEXTURE_WRAP_R": 0x8072,
    "TEXTURE_BORDER_COLOR": 0x1004,
    "TEXTURE_LOD_BIAS": 0x8501,
    "TEXTURE_MIN_LOD": 0x813A,
    "TEXTURE_MAX_LOD": 0x813B,
    "TEXTURE_BASE_LEVEL": 0x813C,
    "TEXTURE_MAX_LEVEL": 0x813D,
    "TEXTURE_COMPARE_MODE": 0x884C,
    "TEXTURE_COMPARE_FUNC": 0x884D,
    "COMPARE_REF_TO_TEXTURE": 0x884E,
    "UNPACK_ALIGNMENT": 0x0CF5,
    "RGBA": 0x1908,
    "RGBA8": 0x8058,
    "RGBA32F": 0x8814,
    "RGBA8_SNORM": 0x8F97,
    "RGBA8UI": 0x8D7C,
    "RGBA_INTEGER": 0x8D99,
    "BYTE": 0x1400,
    "UNSIGNED_BYTE": 0x1401,
    "RGB": 0x1907,
    "RGB565": 0x8D62,
    "UNSIGNED_SHORT_5_6_5": 0x8363,
    "RED": 0x1903,
    "R8": 0x8229,
    "TEXTURE_CUBE_MAP_SEAMLESS": 0x884F,
    "TEXTURE_SWIZZLE_R": 0x8E42,
    "FLOAT": 0x1406,
    "DEPTH_STENCIL": 0x84F9,
    "DEPTH24_STENCIL8": 0x88F0,
    "UNSIGNED_INT_24_8": 0x84FA,
}
FILTERS = {
    "nearest": 0x2600,
    "linear": 0x2601,
    "nearest_mipmap_nearest": 0x2700,
    "linear_mipmap_nearest": 0x2701,
    "nearest_mipmap_linear": 0x2702,
    "linear_mipmap_linear": 0x2703,
}
WRAPS = {
    "repeat": 0x2901,
    "clamp_to_edge": 0x812F,
    "clamp_to_border": 0x812D,
    "mirrored_repeat": 0x8370,
    "mirror_clamp_to_edge": 0x8743,
}
SWIZZLES = {"r": 0x1903, "g": 0x1904, "b": 0x1905, "a": 0x1906, "zero": 0, "one": 1}
FUNCS = {
    "never": 0x0200,
    "less": 0x0201,
    "equal": 0x0202,
    "lequal": 0x0203,
    "greater": 0x0204,
    "notequal": 0x0205,
    "gequal": 0x0206,
    "always": 0x0207,
}


class _GL:
    """The few GL entry points the scenes need, looked up through EGL."""

    def __init__(self) -> None:
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
        self._egl = egl
        u, i, f, p = ctypes.c_uint, ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        self.GenTextures = self._fn("glGenTextures", None, i, ctypes.POINTER(u))
        self.BindTexture = self._fn("glBindTexture", None, u, u)
        self.ActiveTexture = self._fn("glActiveTexture", None, u)
        self.TexParameteri = self._fn("glTexParameteri", None, u, u, i)
        self.TexParameterf = self._fn("glTexParameterf", None, u, u, f)
        self.TexParameterfv = self._fn("glTexParameterfv", None, u, u, ctypes.POINTER(f))
        self.PixelStorei = self._fn("glPixelStorei", None, u, i)
        self.TexImage1D = self._fn("glTexImage1D", None, u, i, i, i, i, u, u, p)
        self.TexImage2D = self._fn("glTexImage2D", None, u, i, i, i, i, i, u, u, p)
        self.TexImage3D = self._fn("glTexImage3D", None, u, i, i, i, i, i, i, u, u, p)
        self.GetError = self._fn("glGetError", u)
        self.Disable = self._fn("glDisable", None, u)

    def _fn(self, name: str, restype, *args):  # type: ignore[no-untyped-def]
        ptr = self._egl.eglGetProcAddress(name.encode())
        if not ptr:
            raise RuntimeError(f"{name} not found")
        return ctypes.CFUNCTYPE(restype, *args)(ptr)

    def check(self, what: str) -> None:
        err = self.GetError()
        if err:
            raise RuntimeError(f"GL error 0x{err:x} after {what}")


def _upload(gl: _GL, tex) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    target = {
        "1d": GL["TEXTURE_1D"],
        "2d": GL["TEXTURE_2D"],
        "3d": GL["TEXTURE_3D"],
        "cube": GL["TEXTURE_CUBE_MAP"],
        "2d_array": GL["TEXTURE_2D_ARRAY"],
    }[tex.target]
    name = ctypes.c_uint(0)
    gl.GenTextures(1, ctypes.byref(name))
    gl.ActiveTexture(GL["TEXTURE0"] + tex.unit)
    gl.BindTexture(target, name.value)
    gl.PixelStorei(GL["UNPACK_ALIGNMENT"], 1)
    ifmt, fmt, typ = {
        "rgba8": (GL["RGBA8"], GL["RGBA"], GL["UNSIGNED_BYTE"]),
        "rgba8_snorm": (GL["RGBA8_SNORM"], GL["RGBA"], GL["BYTE"]),
        "rgba8ui": (GL["RGBA8UI"], GL["RGBA_INTEGER"], GL["UNSIGNED_BYTE"]),
        "rgba32f": (GL["RGBA32F"], GL["RGBA"], GL["FLOAT"]),
        "rgb565": (GL["RGB565"], GL["RGB"], GL["UNSIGNED_SHORT_5_6_5"]),
        "r8": (GL["R8"], GL["RED"], GL["UNSIGNED_BYTE"]),
        "depth24": (GL["DEPTH24_STENCIL8"], GL["DEPTH_STENCIL"], GL["UNSIGNED_INT_24_8"]),
    }[tex.fmt]
    for level, img in enumerate(tex.levels):
        if tex.fmt == "depth24":
            # GL_UNSIGNED_INT_24_8: depth in the high 24 bits, stencil 0.
            data = np.ascontiguousarray((img.astype(np.uint32) << 8).astype(np.uint32))
        else:
            data = np.ascontiguousarray(img)
        layers, h, w = img.shape[:3]
        if tex.target == "1d":
            gl.TexImage1D(target, level, ifmt, w, 0, fmt, typ, data.ctypes.data)
        elif tex.target == "2d":
            gl.TexImage2D(target, level, ifmt, w, h, 0, fmt, typ, data.ctypes.data)
        elif tex.target == "cube":
            for face in range(6):
                gl.TexImage2D(
                    GL["TEXTURE_CUBE_MAP_POSITIVE_X"] + face,
                    level,
                    ifmt,
                    w,
                    h,
                    0,
                    fmt,
                    typ,
                    np.ascontiguousarray(data[face]).ctypes.data,
                )
        else:
            gl.TexImage3D(target, level, ifmt, w, h, layers, 0, fmt, typ, data.ctypes.data)
        gl.check(f"upload of level {level}")
    gl.TexParameteri(target, GL["TEXTURE_BASE_LEVEL"], 0)
    gl.TexParameteri(target, GL["TEXTURE_MAX_LEVEL"], len(tex.levels) - 1)
    gl.TexParameteri(target, GL["TEXTURE_MIN_FILTER"], FILTERS[tex.min_filter])
    gl.TexParameteri(target, GL["TEXTURE_MAG_FILTER"], FILTERS[tex.mag_filter])
    for key, wrap in zip(("TEXTURE_WRAP_S", "TEXTURE_WRAP_T", "TEXTURE_WRAP_R"), tex.wrap):
        gl.TexParameteri(target, GL[key], WRAPS[wrap])
    border = (ctypes.c_float * 4)(*tex.border)
    gl.TexParameterfv(target, GL["TEXTURE_BORDER_COLOR"], border)
    gl.TexParameterf(target, GL["TEXTURE_LOD_BIAS"], tex.lod_bias)
    gl.TexParameterf(target, 0x84FE, tex.max_anisotropy)  # GL_TEXTURE_MAX_ANISOTROPY
    gl.TexParameterf(target, GL["TEXTURE_MIN_LOD"], tex.min_lod)
    gl.TexParameterf(target, GL["TEXTURE_MAX_LOD"], tex.max_lod)
    for i, swz in enumerate(tex.swizzle):
        gl.TexParameteri(target, GL["TEXTURE_SWIZZLE_R"] + i, SWIZZLES[swz])
    if tex.compare is not None:
        gl.TexParameteri(target, GL["TEXTURE_COMPARE_MODE"], GL["COMPARE_REF_TO_TEXTURE"])
        gl.TexParameteri(target, GL["TEXTURE_COMPARE_FUNC"], FUNCS[tex.compare])
    gl.check("sampler parameters")


def render(name: str, capture_tgsi: bool) -> None:
    import moderngl
    import numpy as np
    from PIL import Image
    from tex_scenes import scene_by_name  # type: ignore[import-not-found]

    scene = scene_by_name(name)
    ctx = moderngl.create_context(standalone=True, backend="egl")
    gl = _GL()
    if capture_tgsi:
        sys.stderr.flush()
        os.write(2, f"\n{MARKER}\n".encode())
    prog = ctx.program(vertex_shader=scene.vs_glsl, fragment_shader=scene.fs_glsl)
    if not scene.seamless:
        gl.Disable(GL["TEXTURE_CUBE_MAP_SEAMLESS"])
    for tex in scene.textures:
        _upload(gl, tex)
        uname = f"tex{tex.unit}"
        if uname in prog:
            prog[uname].value = tex.unit
    color = ctx.renderbuffer((scene.width, scene.height), 4, dtype="f1")
    fbo = ctx.framebuffer(color_attachments=[color])
    fbo.use()
    ctx.viewport = (0, 0, scene.width, scene.height)
    fbo.clear(*scene.clear_color)
    vbo = ctx.buffer(scene.vertices.astype("f4").tobytes())
    attrs = [a for a in ("in_pos", "in_tc") if a in prog]
    layout = " ".join("4f" if a in attrs else "16x" for a in ("in_pos", "in_tc"))
    vao = ctx.vertex_array(prog, [(vbo, layout, *attrs)])
    vao.render(moderngl.TRIANGLES, vertices=len(scene.vertices))
    data = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8)
    ctx.finish()
    if capture_tgsi:
        return
    img = data.reshape(scene.height, scene.width, 4)
    Image.fromarray(img, "RGBA").save(scene.png_path)
    meta = {
        "renderer": ctx.info["GL_RENDERER"],
        "version": ctx.info["GL_VERSION"],
        "env": {k: os.environ.get(k, "") for k in ("LP_PERF", "LP_NUM_THREADS", "GALLIUM_DRIVER")},
        "rows": "row 0 is NDC y=-1 (moderngl read-back order)",
        "tgsi": f"{scene.tgsi_path.name} (softpipe, SOFTPIPE_DEBUG=vs,fs,use_tgsi)",
    }
    scene.png_path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    print(f"{name}: {meta['renderer']}")


_BLOCK = re.compile(r"^(VERT|FRAG)\n.*?^\s*\d+: END$", re.S | re.M)


def extract_tgsi(stderr: str) -> str:
    """The first vertex and fragment shader printed after the marker."""
    text = stderr.split(MARKER, 1)[1]
    blocks: dict[str, str] = {}
    for m in _BLOCK.finditer(text):
        blocks.setdefault(m.group(1), m.group(0))
    if set(blocks) != {"VERT", "FRAG"}:
        raise RuntimeError(f"softpipe printed no VERT/FRAG pair after the marker: {sorted(blocks)}")
    return blocks["VERT"].rstrip() + "\n" + blocks["FRAG"].rstrip() + "\n"


def main(argv: list[str]) -> int:
    if len(argv) > 2 and argv[1] in ("--one", "--tgsi"):
        render(argv[2], capture_tgsi=argv[1] == "--tgsi")
        return 0
    from tex_scenes import all_scenes, scene_by_name  # type: ignore[import-not-found]

    names = argv[1:] or [s.name for s in all_scenes()]
    base = {k: v for k, v in os.environ.items() if k not in ("GALLIUM_DRIVER", "SOFTPIPE_DEBUG")}
    soft = dict(base, GALLIUM_DRIVER="softpipe", SOFTPIPE_DEBUG="vs,fs,use_tgsi")
    llvm = dict(base, LP_PERF="no_rast_linear", LP_NUM_THREADS="2")
    for name in names:
        proc = subprocess.run(
            [sys.executable, __file__, "--tgsi", name],
            env=soft,
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            sys.stderr.write(proc.stderr[-4000:])
            raise SystemExit(f"{name}: softpipe run failed")
        scene_by_name(name).tgsi_path.write_text(extract_tgsi(proc.stderr))
        subprocess.run([sys.executable, __file__, "--one", name], env=llvm, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

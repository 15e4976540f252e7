"""Run the blit and mipmap cases on Mesa's llvmpipe and store the results.

Usage (needs Mesa's EGL/llvmpipe and moderngl; see ../shared/REFERENCE.md)::

    python tools/make_blit_reference.py [family ...]

For every family of ``tests/reference/blit_cases.py`` (``blit_color``,
``blit_depth``, ``blit_layers``, ``mipmap``, ``clear_texture``) this writes
``tests/reference/blit/<family>.npz``: for each case, the destination
texture's level (every layer) after ``glBlitFramebuffer``, or every level of
the texture after ``glGenerateMipmap`` (``<case>/<level>``), or the level
after ``glClearTexSubImage``, as the GL
texture's bytes read back with ``glGetTexImage`` in the upload's own format
and type, and ``<family>.json`` with the renderer string.

One subprocess per family, so that ``LP_PERF=no_rast_linear`` (and
``LP_NUM_THREADS``) take effect before Mesa loads.  The GL calls go through
``eglGetProcAddress`` (moderngl makes the context but exposes neither
``glBlitFramebuffer`` rectangles nor layer attachments).
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

GL = {
    "TEXTURE_2D": 0x0DE1,
    "TEXTURE_3D": 0x806F,
    "TEXTURE_2D_ARRAY": 0x8C1A,
    "TEXTURE_CUBE_MAP": 0x8513,
    "TEXTURE_CUBE_MAP_POSITIVE_X": 0x8515,
    "TEXTURE_BASE_LEVEL": 0x813C,
    "TEXTURE_MAX_LEVEL": 0x813D,
    "TEXTURE_MIN_FILTER": 0x2801,
    "NEAREST": 0x2600,
    "LINEAR": 0x2601,
    "UNPACK_ALIGNMENT": 0x0CF5,
    "PACK_ALIGNMENT": 0x0D05,
    "READ_FRAMEBUFFER": 0x8CA8,
    "DRAW_FRAMEBUFFER": 0x8CA9,
    "COLOR_ATTACHMENT0": 0x8CE0,
    "DEPTH_ATTACHMENT": 0x8D00,
    "DEPTH_STENCIL_ATTACHMENT": 0x821A,
    "FRAMEBUFFER_COMPLETE": 0x8CD5,
    "NONE": 0,
    "FRAMEBUFFER_SRGB": 0x8DB9,
    "COLOR_BUFFER_BIT": 0x4000,
    "DEPTH_BUFFER_BIT": 0x0100,
    "STENCIL_BUFFER_BIT": 0x0400,
}
# format -> (internal format, format, type)
FORMATS = {
    "rgba8": (0x8058, 0x1908, 0x1401),
    "r8": (0x8229, 0x1903, 0x1401),
    "rg8": (0x822B, 0x8227, 0x1401),
    "rgba16f": (0x881A, 0x1908, 0x140B),
    "rgba32f": (0x8814, 0x1908, 0x1406),
    "r32f": (0x822E, 0x1903, 0x1406),
    "rg32f": (0x8230, 0x8227, 0x1406),
    "r16": (0x822A, 0x1903, 0x1403),
    "rgba16": (0x805B, 0x1908, 0x1403),
    "rgba8_snorm": (0x8F97, 0x1908, 0x1400),
    "rgb10a2": (0x8059, 0x1908, 0x8368),
    "rgb565": (0x8D62, 0x1907, 0x8363),
    "srgb8_a8": (0x8C43, 0x1908, 0x1401),
    "rgba8ui": (0x8D7C, 0x8D99, 0x1401),
    "rgba16ui": (0x8D76, 0x8D99, 0x1403),
    "rgba8i": (0x8D8E, 0x8D99, 0x1400),
    "r32ui": (0x8236, 0x8D94, 0x1405),
    "depth16": (0x81A5, 0x1902, 0x1403),
    "depth24s8": (0x88F0, 0x84F9, 0x84FA),
    "depth32f": (0x8CAC, 0x1902, 0x1406),
}
TARGETS = {
    "2d": GL["TEXTURE_2D"],
    "3d": GL["TEXTURE_3D"],
    "2d_array": GL["TEXTURE_2D_ARRAY"],
    "cube": GL["TEXTURE_CUBE_MAP"],
}


class _GL:
    """The GL entry points the cases need, looked up through EGL."""

    def __init__(self) -> None:
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = ctypes.c_void_p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
        self._egl = egl
        u, i, p = ctypes.c_uint, ctypes.c_int, ctypes.c_void_p
        up = ctypes.POINTER(u)
        self.GenTextures = self._fn("glGenTextures", None, i, up)
        self.DeleteTextures = self._fn("glDeleteTextures", None, i, up)
        self.BindTexture = self._fn("glBindTexture", None, u, u)
        self.TexParameteri = self._fn("glTexParameteri", None, u, u, i)
        self.PixelStorei = self._fn("glPixelStorei", None, u, i)
        self.TexImage2D = self._fn("glTexImage2D", None, u, i, i, i, i, i, u, u, p)
        self.TexImage3D = self._fn("glTexImage3D", None, u, i, i, i, i, i, i, u, u, p)
        self.GetTexImage = self._fn("glGetTexImage", None, u, i, u, u, p)
        self.GenFramebuffers = self._fn("glGenFramebuffers", None, i, up)
        self.DeleteFramebuffers = self._fn("glDeleteFramebuffers", None, i, up)
        self.BindFramebuffer = self._fn("glBindFramebuffer", None, u, u)
        self.FramebufferTexture2D = self._fn("glFramebufferTexture2D", None, u, u, u, u, i)
        self.FramebufferTextureLayer = self._fn("glFramebufferTextureLayer", None, u, u, u, i, i)
        self.CheckFramebufferStatus = self._fn("glCheckFramebufferStatus", u, u)
        self.DrawBuffer = self._fn("glDrawBuffer", None, u)
        self.ReadBuffer = self._fn("glReadBuffer", None, u)
        self.BlitFramebuffer = self._fn("glBlitFramebuffer", None, i, i, i, i, i, i, i, i, u, u)
        self.GenerateMipmap = self._fn("glGenerateMipmap", None, u)
        self.ClearTexSubImage = self._fn(
            "glClearTexSubImage", None, u, i, i, i, i, i, i, i, u, u, p
        )
        self.Finish = self._fn("glFinish", None)
        self.Enable = self._fn("glEnable", None, u)
        self.Disable = self._fn("glDisable", None, u)
        self.GetError = self._fn("glGetError", u)

    def _fn(self, name: str, restype, *args):  # type: ignore[no-untyped-def]
        ptr = self._egl.eglGetProcAddress(name.encode())
        if not ptr:
            raise RuntimeError(f"{name} not found")
        return ctypes.CFUNCTYPE(restype, *args)(ptr)

    def check(self, what: str) -> None:
        err = self.GetError()
        if err:
            raise RuntimeError(f"GL error 0x{err:x} after {what}")


def _texture(gl: _GL, img, levels: int | None = None) -> int:  # type: ignore[no-untyped-def]
    """Create and fill ``img`` (every level, or only the base one)."""
    import numpy as np

    name = ctypes.c_uint(0)
    gl.GenTextures(1, ctypes.byref(name))
    target = TARGETS[img.target]
    gl.BindTexture(target, name.value)
    gl.PixelStorei(GL["UNPACK_ALIGNMENT"], 1)
    ifmt, fmt, typ = FORMATS[img.fmt]
    count = img.levels if levels is None else levels
    for level in range(img.levels):
        w, h, d = img.level_size(level)
        data = img.level_data(level) if level < count else np.zeros_like(img.level_data(level))
        data = np.ascontiguousarray(data)
        if img.target == "2d":
            gl.TexImage2D(target, level, ifmt, w, h, 0, fmt, typ, data.ctypes.data)
        elif img.target == "cube":
            for face in range(6):
                gl.TexImage2D(
                    GL["TEXTURE_CUBE_MAP_POSITIVE_X"] + face, level, ifmt, w, h, 0, fmt, typ,
                    np.ascontiguousarray(data[face]).ctypes.data,
                )  # fmt: skip
        else:
            gl.TexImage3D(target, level, ifmt, w, h, d, 0, fmt, typ, data.ctypes.data)
        gl.check(f"upload of {img.fmt} level {level}")
    gl.TexParameteri(target, GL["TEXTURE_BASE_LEVEL"], 0)
    gl.TexParameteri(target, GL["TEXTURE_MAX_LEVEL"], img.levels - 1)
    gl.TexParameteri(target, GL["TEXTURE_MIN_FILTER"], GL["NEAREST"])
    return name.value


def _read(gl: _GL, tex: int, img, level: int):  # type: ignore[no-untyped-def]
    """The level as the case's numpy layout (every layer)."""
    import numpy as np

    target = TARGETS[img.target]
    gl.BindTexture(target, tex)
    gl.PixelStorei(GL["PACK_ALIGNMENT"], 1)
    _, fmt, typ = FORMATS[img.fmt]
    out = np.zeros_like(img.level_data(level))
    if img.target == "cube":
        for face in range(6):
            buf = np.zeros_like(out[face])
            gl.GetTexImage(GL["TEXTURE_CUBE_MAP_POSITIVE_X"] + face, level, fmt, typ,
                           buf.ctypes.data)  # fmt: skip
            out[face] = buf
    else:
        gl.GetTexImage(target, level, fmt, typ, out.ctypes.data)
    gl.check("glGetTexImage")
    return out


def _attach(gl: _GL, fb_target: int, tex: int, img, level: int, layer: int) -> None:  # type: ignore[no-untyped-def]
    attachment = {
        "depth16": GL["DEPTH_ATTACHMENT"],
        "depth32f": GL["DEPTH_ATTACHMENT"],
        "depth24s8": GL["DEPTH_STENCIL_ATTACHMENT"],
    }.get(img.fmt, GL["COLOR_ATTACHMENT0"])
    if img.target == "2d":
        gl.FramebufferTexture2D(fb_target, attachment, GL["TEXTURE_2D"], tex, level)
    elif img.target == "cube":
        gl.FramebufferTexture2D(
            fb_target, attachment, GL["TEXTURE_CUBE_MAP_POSITIVE_X"] + layer, tex, level
        )
    else:
        gl.FramebufferTextureLayer(fb_target, attachment, tex, level, layer)
    status = gl.CheckFramebufferStatus(fb_target)
    if status != GL["FRAMEBUFFER_COMPLETE"]:
        raise RuntimeError(f"framebuffer incomplete: 0x{status:x}")


def _run_blit(gl: _GL, case):  # type: ignore[no-untyped-def]
    src = _texture(gl, case.src)
    dst = _texture(gl, case.dst)
    fbs = (ctypes.c_uint * 2)()
    gl.GenFramebuffers(2, fbs)
    gl.BindFramebuffer(GL["READ_FRAMEBUFFER"], fbs[0])
    _attach(gl, GL["READ_FRAMEBUFFER"], src, case.src, case.src_level, case.src_layer)
    gl.BindFramebuffer(GL["DRAW_FRAMEBUFFER"], fbs[1])
    _attach(gl, GL["DRAW_FRAMEBUFFER"], dst, case.dst, case.dst_level, case.dst_layer)
    if case.buffer != "color":
        gl.DrawBuffer(GL["NONE"])
        gl.ReadBuffer(GL["NONE"])
    mask = {
        "color": GL["COLOR_BUFFER_BIT"],
        "depth": GL["DEPTH_BUFFER_BIT"],
        "stencil": GL["STENCIL_BUFFER_BIT"],
        "depth_stencil": GL["DEPTH_BUFFER_BIT"] | GL["STENCIL_BUFFER_BIT"],
    }[case.buffer]
    filt = GL["LINEAR"] if case.filter == "linear" else GL["NEAREST"]
    if case.srgb:
        gl.Enable(GL["FRAMEBUFFER_SRGB"])
    gl.BlitFramebuffer(*case.s, *case.d, mask, filt)
    gl.Disable(GL["FRAMEBUFFER_SRGB"])
    gl.check(f"glBlitFramebuffer of {case.name}")
    gl.Finish()
    out = _read(gl, dst, case.dst, case.dst_level)
    gl.BindFramebuffer(GL["READ_FRAMEBUFFER"], 0)
    gl.BindFramebuffer(GL["DRAW_FRAMEBUFFER"], 0)
    gl.DeleteFramebuffers(2, fbs)
    names = (ctypes.c_uint * 2)(src, dst)
    gl.DeleteTextures(2, names)
    return out


def _run_mipmap(gl: _GL, case) -> dict:  # type: ignore[no-untyped-def]
    img = case.image
    tex = _texture(gl, img, levels=1)
    gl.GenerateMipmap(TARGETS[img.target])
    gl.check(f"glGenerateMipmap of {case.name}")
    gl.Finish()
    out = {f"{case.name}/{level}": _read(gl, tex, img, level) for level in range(img.levels)}
    names = (ctypes.c_uint * 1)(tex)
    gl.DeleteTextures(1, names)
    return out


def _run_clear(gl: _GL, case):  # type: ignore[no-untyped-def]
    import numpy as np

    img = case.image
    tex = _texture(gl, img)
    _, fmt, typ = FORMATS[img.fmt]
    texel = np.ascontiguousarray(case.texel)
    gl.ClearTexSubImage(tex, case.level, *case.box, fmt, typ, texel.ctypes.data)
    gl.check(f"glClearTexSubImage of {case.name}")
    gl.Finish()
    out = _read(gl, tex, img, case.level)
    names = (ctypes.c_uint * 1)(tex)
    gl.DeleteTextures(1, names)
    return out


def render(family: str) -> None:
    import moderngl
    import numpy as np
    from blit_cases import DATA, FAMILIES, clear_cases, mipmap_cases  # type: ignore[import-not-found]

    ctx = moderngl.create_context(standalone=True, backend="egl")
    gl = _GL()
    results: dict = {}
    if family == "mipmap":
        for case in mipmap_cases():
            results.update(_run_mipmap(gl, case))
    elif family == "clear_texture":
        for case in clear_cases():
            results[case.name] = _run_clear(gl, case)
    else:
        for case in FAMILIES[family]():
            results[case.name] = _run_blit(gl, case)
    DATA.mkdir(exist_ok=True)
    np.savez_compressed(DATA / f"{family}.npz", **results)
    meta = {
        "renderer": ctx.info["GL_RENDERER"],
        "version": ctx.info["GL_VERSION"],
        "env": {k: os.environ.get(k, "") for k in ("LP_PERF", "LP_NUM_THREADS")},
        "cases": sorted(results),
    }
    (DATA / f"{family}.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"{family}: {len(results)} results ({meta['renderer']})")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--one":
        render(argv[1])
        return 0
    from blit_cases import FAMILIES  # type: ignore[import-not-found]

    families = argv or [*FAMILIES, "mipmap", "clear_texture"]
    env = dict(os.environ, LP_PERF="no_rast_linear", LP_NUM_THREADS="2")
    for family in families:
        subprocess.run([sys.executable, __file__, "--one", family], check=True, env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A small OpenGL binding (ctypes) over EGL, surfaceless, in a compatibility
profile -- enough to render reference scenes with Mesa's llvmpipe where
moderngl's core-profile context cannot reach: polygon and line stipple,
two-sided colour, point smoothing, exact depth-word read-back (Z16, Z24S8,
Z32F) and the other fixed-function state of tools/make_raster_reference.py.

Only used by the tools that regenerate goldens (never by the tests).
"""

from __future__ import annotations

import ctypes as C
from typing import Any

import numpy as np

_egl = C.CDLL("libEGL.so.1")
_gl = C.CDLL("libGL.so.1")
_egl.eglGetProcAddress.restype = C.c_void_p
_egl.eglGetProcAddress.argtypes = [C.c_char_p]

# enums used here (GL 4.5 compatibility and EGL 1.5 headers)
GL_FLOAT = 0x1406
GL_UNSIGNED_BYTE = 0x1401
GL_UNSIGNED_SHORT = 0x1403
GL_UNSIGNED_INT = 0x1405
GL_UNSIGNED_INT_24_8 = 0x84FA
GL_FLOAT_32_UNSIGNED_INT_24_8_REV = 0x8DAD
GL_RGBA = 0x1908
GL_RGBA_INTEGER = 0x8D99
GL_DEPTH_COMPONENT = 0x1902
GL_DEPTH_STENCIL = 0x84F9
GL_FRAMEBUFFER = 0x8D40
GL_RENDERBUFFER = 0x8D41
GL_COLOR_ATTACHMENT0 = 0x8CE0
GL_DEPTH_ATTACHMENT = 0x8D00
GL_DEPTH_STENCIL_ATTACHMENT = 0x821A
GL_FRAMEBUFFER_COMPLETE = 0x8CD5
GL_ARRAY_BUFFER = 0x8892
GL_STATIC_DRAW = 0x88E4
GL_VERTEX_SHADER = 0x8B31
GL_FRAGMENT_SHADER = 0x8B30
GL_COMPILE_STATUS = 0x8B81
GL_LINK_STATUS = 0x8B82
GL_COLOR_BUFFER_BIT = 0x4000
GL_DEPTH_BUFFER_BIT = 0x0100
GL_STENCIL_BUFFER_BIT = 0x0400
GL_PACK_ALIGNMENT = 0x0D05
GL_UNPACK_ALIGNMENT = 0x0CF5

CAPS = {
    "depth_test": 0x0B71,
    "blend": 0x0BE2,
    "cull_face": 0x0B44,
    "polygon_offset_fill": 0x8037,
    "polygon_offset_line": 0x2A02,
    "polygon_offset_point": 0x2A01,
    "polygon_stipple": 0x0B42,
    "line_stipple": 0x0B24,
    "point_smooth": 0x0B10,
    "line_smooth": 0x0B20,
    "polygon_smooth": 0x0B41,
    "color_logic_op": 0x0BF2,
    "vertex_program_two_side": 0x8643,
    "program_point_size": 0x8642,
    "depth_clamp": 0x864F,
    "rasterizer_discard": 0x8C89,
    "scissor_test": 0x0C11,
    "multisample": 0x809D,
}
PRIMS = {
    "points": 0x0000,
    "lines": 0x0001,
    "line_loop": 0x0002,
    "line_strip": 0x0003,
    "triangles": 0x0004,
    "triangle_strip": 0x0005,
    "triangle_fan": 0x0006,
    "quads": 0x0007,
    "quad_strip": 0x0008,
    "polygon": 0x0009,
}
POLYGON_MODES = {"point": 0x1B00, "line": 0x1B01, "fill": 0x1B02}
FACES = {"front": 0x0404, "back": 0x0405, "front_and_back": 0x0408}
DEPTH_FUNCS = {
    name: 0x0200 + i
    for i, name in enumerate(
        ("never", "less", "equal", "lequal", "greater", "notequal", "gequal", "always")
    )
}
# GL's logic ops by name (GL numbers them by their truth table, Gallium otherwise)
LOGIC_OPS = {
    name: 0x1500 + i
    for i, name in enumerate(
        ("clear", "and", "and_reverse", "copy", "and_inverted", "noop", "xor", "or", "nor",
         "equiv", "invert", "or_reverse", "copy_inverted", "or_inverted", "nand", "set")
    )
}  # fmt: skip
COLOR_FORMATS = {"rgba8": 0x8058, "rgba8ui": 0x8D7C, "rgba8i": 0x8D8E, "r32ui": 0x8236,
                 "rgba32f": 0x8814}  # fmt: skip
DEPTH_FORMATS = {"z16": 0x81A5, "z24s8": 0x88F0, "z32f": 0x8CAC}


def _fn(name: str, restype: Any, *argtypes: Any) -> Any:
    addr = _egl.eglGetProcAddress(name.encode())
    if not addr:
        raise RuntimeError(f"no GL entry point {name}")
    return C.CFUNCTYPE(restype, *argtypes)(addr)


class GL:
    """One surfaceless EGL context, current on the calling thread."""

    def __init__(self) -> None:
        egl = _egl
        egl.eglGetPlatformDisplay.restype = C.c_void_p
        egl.eglGetPlatformDisplay.argtypes = [C.c_uint, C.c_void_p, C.c_void_p]
        egl.eglInitialize.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p]
        egl.eglCreateContext.restype = C.c_void_p
        egl.eglCreateContext.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]
        egl.eglMakeCurrent.argtypes = [C.c_void_p, C.c_void_p, C.c_void_p, C.c_void_p]
        dpy = egl.eglGetPlatformDisplay(0x31DD, None, None)  # EGL_PLATFORM_SURFACELESS_MESA
        if not dpy or not egl.eglInitialize(dpy, None, None):
            raise RuntimeError("EGL: no surfaceless display")
        egl.eglBindAPI(0x30A2)  # EGL_OPENGL_API
        # GL 4.5, EGL_CONTEXT_OPENGL_COMPATIBILITY_PROFILE_BIT
        attribs = (C.c_int * 7)(0x3098, 4, 0x30FB, 5, 0x30FD, 0x2, 0x3038)
        ctx = egl.eglCreateContext(dpy, None, None, attribs)
        if not ctx or not egl.eglMakeCurrent(dpy, None, None, ctx):
            raise RuntimeError("EGL: no compatibility-profile context")
        _gl.glGetString.restype = C.c_char_p
        self.renderer = _gl.glGetString(0x1F01).decode()
        self.version = _gl.glGetString(0x1F02).decode()
        v = C.c_void_p
        u, i, f = C.c_uint, C.c_int, C.c_float
        self.GenFramebuffers = _fn("glGenFramebuffers", None, i, v)
        self.BindFramebuffer = _fn("glBindFramebuffer", None, u, u)
        self.GenRenderbuffers = _fn("glGenRenderbuffers", None, i, v)
        self.BindRenderbuffer = _fn("glBindRenderbuffer", None, u, u)
        self.RenderbufferStorage = _fn("glRenderbufferStorage", None, u, u, i, i)
        self.FramebufferRenderbuffer = _fn("glFramebufferRenderbuffer", None, u, u, u, u)
        self.CheckFramebufferStatus = _fn("glCheckFramebufferStatus", u, u)
        self.CreateShader = _fn("glCreateShader", u, u)
        self.ShaderSource = _fn("glShaderSource", None, u, i, v, v)
        self.CompileShader = _fn("glCompileShader", None, u)
        self.GetShaderiv = _fn("glGetShaderiv", None, u, u, v)
        self.GetShaderInfoLog = _fn("glGetShaderInfoLog", None, u, i, v, C.c_char_p)
        self.CreateProgram = _fn("glCreateProgram", u)
        self.AttachShader = _fn("glAttachShader", None, u, u)
        self.BindAttribLocation = _fn("glBindAttribLocation", None, u, u, C.c_char_p)
        self.LinkProgram = _fn("glLinkProgram", None, u)
        self.GetProgramiv = _fn("glGetProgramiv", None, u, u, v)
        self.GetProgramInfoLog = _fn("glGetProgramInfoLog", None, u, i, v, C.c_char_p)
        self.UseProgram = _fn("glUseProgram", None, u)
        self.GetUniformLocation = _fn("glGetUniformLocation", i, u, C.c_char_p)
        self.Uniform1i = _fn("glUniform1i", None, i, i)
        self.GenBuffers = _fn("glGenBuffers", None, i, v)
        self.BindBuffer = _fn("glBindBuffer", None, u, u)
        self.BufferData = _fn("glBufferData", None, u, C.c_ssize_t, v, u)
        self.GenVertexArrays = _fn("glGenVertexArrays", None, i, v)
        self.BindVertexArray = _fn("glBindVertexArray", None, u)
        self.VertexAttribPointer = _fn("glVertexAttribPointer", None, u, i, u, C.c_ubyte, i, v)
        self.EnableVertexAttribArray = _fn("glEnableVertexAttribArray", None, u)
        self.DrawArrays = _fn("glDrawArrays", None, u, i, i)
        self.Enable = _fn("glEnable", None, u)
        self.Disable = _fn("glDisable", None, u)
        self.Viewport = _fn("glViewport", None, i, i, i, i)
        self.Scissor = _fn("glScissor", None, i, i, i, i)
        self.ClearColor = _fn("glClearColor", None, f, f, f, f)
        self.ClearDepth = _fn("glClearDepth", None, C.c_double)
        self.Clear = _fn("glClear", None, u)
        self.ClearBufferuiv = _fn("glClearBufferuiv", None, u, i, v)
        self.ClearBufferiv = _fn("glClearBufferiv", None, u, i, v)
        self.DepthFunc = _fn("glDepthFunc", None, u)
        self.DepthMask = _fn("glDepthMask", None, C.c_ubyte)
        self.DepthRange = _fn("glDepthRange", None, C.c_double, C.c_double)
        self.PolygonOffset = _fn("glPolygonOffset", None, f, f)
        self.PolygonOffsetClamp = _fn("glPolygonOffsetClamp", None, f, f, f)
        self.PolygonMode = _fn("glPolygonMode", None, u, u)
        self.CullFace = _fn("glCullFace", None, u)
        self.FrontFace = _fn("glFrontFace", None, u)
        self.PolygonStipple = _fn("glPolygonStipple", None, v)
        self.LineStipple = _fn("glLineStipple", None, i, C.c_ushort)
        self.LineWidth = _fn("glLineWidth", None, f)
        self.PointSize = _fn("glPointSize", None, f)
        self.LogicOp = _fn("glLogicOp", None, u)
        self.ShadeModel = _fn("glShadeModel", None, u)
        self.ProvokingVertex = _fn("glProvokingVertex", None, u)
        self.ClampColor = _fn("glClampColor", None, u, u)
        self.ReadPixels = _fn("glReadPixels", None, i, i, i, i, u, u, v)
        self.PixelStorei = _fn("glPixelStorei", None, u, i)
        self.Finish = _fn("glFinish", None)
        self.GetError = _fn("glGetError", u)
        self.PixelStorei(GL_PACK_ALIGNMENT, 1)
        self.PixelStorei(GL_UNPACK_ALIGNMENT, 1)

    @staticmethod
    def fn(name: str, restype: Any, *argtypes: Any) -> Any:
        """Any other entry point, by name."""
        return _fn(name, restype, *argtypes)

    # -- objects ---------------------------------------------------------------

    def framebuffer(self, width: int, height: int, color: str = "rgba8",
                    depth: str | None = None) -> None:  # fmt: skip
        """A framebuffer object of one colour and (optionally) one depth renderbuffer, bound."""
        ids = (C.c_uint * 1)()
        self.GenFramebuffers(1, ids)
        self.BindFramebuffer(GL_FRAMEBUFFER, ids[0])
        rb = (C.c_uint * 2)()
        self.GenRenderbuffers(2, rb)
        self.BindRenderbuffer(GL_RENDERBUFFER, rb[0])
        self.RenderbufferStorage(GL_RENDERBUFFER, COLOR_FORMATS[color], width, height)
        self.FramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, rb[0])
        if depth is not None:
            self.BindRenderbuffer(GL_RENDERBUFFER, rb[1])
            self.RenderbufferStorage(GL_RENDERBUFFER, DEPTH_FORMATS[depth], width, height)
            att = GL_DEPTH_STENCIL_ATTACHMENT if depth == "z24s8" else GL_DEPTH_ATTACHMENT
            self.FramebufferRenderbuffer(GL_FRAMEBUFFER, att, GL_RENDERBUFFER, rb[1])
        status = self.CheckFramebufferStatus(GL_FRAMEBUFFER)
        if status != GL_FRAMEBUFFER_COMPLETE:
            raise RuntimeError(f"framebuffer incomplete: {status:#x}")
        self.Viewport(0, 0, width, height)
        self.size = (width, height)
        self.color_format = color
        self.depth_format = depth

    def program(self, vs: str, fs: str, attribs: list[str]) -> int:
        prog = self.CreateProgram()
        for kind, src in ((GL_VERTEX_SHADER, vs), (GL_FRAGMENT_SHADER, fs)):
            sh = self.CreateShader(kind)
            text = C.c_char_p(src.encode())
            self.ShaderSource(sh, 1, C.byref(text), None)
            self.CompileShader(sh)
            ok = C.c_int()
            self.GetShaderiv(sh, GL_COMPILE_STATUS, C.byref(ok))
            if not ok.value:
                log = C.create_string_buffer(4096)
                self.GetShaderInfoLog(sh, 4096, None, log)
                raise RuntimeError(f"GLSL: {log.value.decode()}\n{src}")
            self.AttachShader(prog, sh)
        for i, name in enumerate(attribs):
            self.BindAttribLocation(prog, i, name.encode())
        self.LinkProgram(prog)
        ok = C.c_int()
        self.GetProgramiv(prog, GL_LINK_STATUS, C.byref(ok))
        if not ok.value:
            log = C.create_string_buffer(4096)
            self.GetProgramInfoLog(prog, 4096, None, log)
            raise RuntimeError(f"GLSL link: {log.value.decode()}")
        self.UseProgram(prog)
        return prog

    def vertices(self, data: np.ndarray, sizes: list[int]) -> None:
        """Bind float32 rows of interleaved attributes (``sizes`` floats each)."""
        data = np.ascontiguousarray(data, np.float32)
        vao = (C.c_uint * 1)()
        self.GenVertexArrays(1, vao)
        self.BindVertexArray(vao[0])
        buf = (C.c_uint * 1)()
        self.GenBuffers(1, buf)
        self.BindBuffer(GL_ARRAY_BUFFER, buf[0])
        self.BufferData(GL_ARRAY_BUFFER, data.nbytes, data.ctypes.data, GL_STATIC_DRAW)
        stride = 4 * sum(sizes)
        off = 0
        for i, n in enumerate(sizes):
            self.VertexAttribPointer(i, n, GL_FLOAT, 0, stride, C.c_void_p(off))
            self.EnableVertexAttribArray(i)
            off += 4 * n
        self._keep = data

    # -- read-back ---------------------------------------------------------------

    def read_color(self) -> np.ndarray:
        w, h = self.size
        if self.color_format == "rgba8":
            out = np.empty((h, w, 4), np.uint8)
            self.ReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, out.ctypes.data)
        elif self.color_format == "rgba32f":
            out = np.empty((h, w, 4), np.float32)
            self.ReadPixels(0, 0, w, h, GL_RGBA, GL_FLOAT, out.ctypes.data)
        else:  # integer targets: read as 32-bit integers
            signed = self.color_format.endswith("i") and not self.color_format.endswith("ui")
            out = np.empty((h, w, 4), np.int32 if signed else np.uint32)
            kind = 0x1404 if signed else GL_UNSIGNED_INT  # GL_INT
            self.ReadPixels(0, 0, w, h, GL_RGBA_INTEGER, kind, out.ctypes.data)
        return out

    def read_depth(self) -> np.ndarray:
        """The depth buffer's words: uint16 (Z16), the 24-bit depth of Z24S8
        (uint32), or float32 (Z32F)."""
        w, h = self.size
        if self.depth_format == "z16":
            out = np.empty((h, w), np.uint16)
            self.ReadPixels(0, 0, w, h, GL_DEPTH_COMPONENT, GL_UNSIGNED_SHORT, out.ctypes.data)
            return out
        if self.depth_format == "z24s8":
            out = np.empty((h, w), np.uint32)
            self.ReadPixels(0, 0, w, h, GL_DEPTH_STENCIL, GL_UNSIGNED_INT_24_8, out.ctypes.data)
            return out >> 8
        out = np.empty((h, w), np.float32)
        self.ReadPixels(0, 0, w, h, GL_DEPTH_COMPONENT, GL_FLOAT, out.ctypes.data)
        return out

    def check(self) -> None:
        err = self.GetError()
        if err:
            raise RuntimeError(f"GL error {err:#x}")

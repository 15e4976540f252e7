"""Raw OpenGL calls through ctypes, for the reference tools (Mesa over EGL).

moderngl makes the headless context (``moderngl.create_context(standalone=True,
backend="egl")``); the calls moderngl does not offer (transform feedback
objects, indexed queries, draws from transform feedback, patches, indirect
draws, image units) go through :class:`GL`, which looks every entry point up
with ``eglGetProcAddress``.  Only the tools use this module; tests never need
Mesa.
"""

from __future__ import annotations

import ctypes
from typing import Any

# enums (GL 4.5 core)
POINTS, LINES, LINE_LOOP, LINE_STRIP = 0x0000, 0x0001, 0x0002, 0x0003
TRIANGLES, TRIANGLE_STRIP, TRIANGLE_FAN = 0x0004, 0x0005, 0x0006
LINES_ADJACENCY, LINE_STRIP_ADJACENCY = 0x000A, 0x000B
TRIANGLES_ADJACENCY, TRIANGLE_STRIP_ADJACENCY = 0x000C, 0x000D
PATCHES = 0x000E
MODES = {
    "POINTS": POINTS,
    "LINES": LINES,
    "LINE_LOOP": LINE_LOOP,
    "LINE_STRIP": LINE_STRIP,
    "TRIANGLES": TRIANGLES,
    "TRIANGLE_STRIP": TRIANGLE_STRIP,
    "TRIANGLE_FAN": TRIANGLE_FAN,
    "LINES_ADJACENCY": LINES_ADJACENCY,
    "LINE_STRIP_ADJACENCY": LINE_STRIP_ADJACENCY,
    "TRIANGLES_ADJACENCY": TRIANGLES_ADJACENCY,
    "TRIANGLE_STRIP_ADJACENCY": TRIANGLE_STRIP_ADJACENCY,
    "PATCHES": PATCHES,
}
VERTEX_SHADER, FRAGMENT_SHADER, GEOMETRY_SHADER = 0x8B31, 0x8B30, 0x8DD9
TESS_EVALUATION_SHADER, TESS_CONTROL_SHADER, COMPUTE_SHADER = 0x8E87, 0x8E88, 0x91B9
COMPILE_STATUS, LINK_STATUS = 0x8B81, 0x8B82
ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER = 0x8892, 0x8893
TRANSFORM_FEEDBACK_BUFFER = 0x8C8E
TRANSFORM_FEEDBACK = 0x8E22
INTERLEAVED_ATTRIBS, SEPARATE_ATTRIBS = 0x8C8C, 0x8C8D
STATIC_DRAW, DYNAMIC_COPY = 0x88E4, 0x88EA
FLOAT, UNSIGNED_BYTE, UNSIGNED_SHORT, UNSIGNED_INT, INT = 0x1406, 0x1401, 0x1403, 0x1405, 0x1404
RASTERIZER_DISCARD = 0x8C89
PRIMITIVE_RESTART = 0x8F9D
PRIMITIVE_RESTART_FIXED_INDEX = 0x8D69
PRIMITIVES_GENERATED = 0x8C87
TRANSFORM_FEEDBACK_PRIMITIVES_WRITTEN = 0x8C88
TRANSFORM_FEEDBACK_OVERFLOW = 0x82EC
TRANSFORM_FEEDBACK_STREAM_OVERFLOW = 0x82ED
QUERY_RESULT = 0x8866
FIRST_VERTEX_CONVENTION, LAST_VERTEX_CONVENTION = 0x8E4D, 0x8E4E
PATCH_VERTICES = 0x8E72
PATCH_DEFAULT_INNER_LEVEL, PATCH_DEFAULT_OUTER_LEVEL = 0x8E73, 0x8E74
DRAW_INDIRECT_BUFFER = 0x8F3F
PARAMETER_BUFFER = 0x80EE
SHADER_STORAGE_BUFFER = 0x90D2
ATOMIC_COUNTER_BUFFER = 0x92C0
QUERY_BUFFER = 0x9192
ALL_BARRIER_BITS = 0xFFFFFFFF
TEXTURE_2D = 0x0DE1
TEXTURE_3D, TEXTURE_2D_ARRAY, TEXTURE_2D_MULTISAMPLE_ARRAY = 0x806F, 0x8C1A, 0x9102
FRAMEBUFFER, READ_FRAMEBUFFER, DRAW_FRAMEBUFFER = 0x8D40, 0x8CA8, 0x8CA9
FRAMEBUFFER_COMPLETE = 0x8CD5
COLOR_ATTACHMENT0, DEPTH_ATTACHMENT = 0x8CE0, 0x8D00
COLOR, DEPTH = 0x1800, 0x1801
RGBA, DEPTH_COMPONENT, DEPTH_COMPONENT32F = 0x1908, 0x1902, 0x8CAC
SCISSOR_TEST, NEAREST, COLOR_BUFFER_BIT = 0x0C11, 0x2600, 0x4000
DEPTH_CLAMP, FRONT_AND_BACK = 0x864F, 0x0408
POLYGON_MODES = {"point": 0x1B00, "line": 0x1B01, "fill": 0x1B02}
READ_WRITE, WRITE_ONLY = 0x88BA, 0x88B9
R32UI, R32F, RGBA8, RGBA32F = 0x8236, 0x822E, 0x8058, 0x8814
DEPTH_TEST, CULL_FACE = 0x0B71, 0x0B44
VERTICES_SUBMITTED = 0x82EE
PRIMITIVES_SUBMITTED = 0x82EF
VERTEX_SHADER_INVOCATIONS = 0x82F0
TESS_CONTROL_SHADER_PATCHES = 0x82F1
TESS_EVALUATION_SHADER_INVOCATIONS = 0x82F2
CLIPPING_INPUT_PRIMITIVES = 0x82F6
CLIPPING_OUTPUT_PRIMITIVES = 0x82F7

_u = ctypes.c_uint
_i = ctypes.c_int
_f = ctypes.c_float
_p = ctypes.c_void_p
_sz = ctypes.c_ssize_t
_PROTOS: dict[str, tuple[Any, ...]] = {
    "glGetError": (_u,),
    "glFinish": (None,),
    "glEnable": (None, _u),
    "glDisable": (None, _u),
    "glCreateShader": (_u, _u),
    "glShaderSource": (None, _u, _i, ctypes.POINTER(ctypes.c_char_p), _p),
    "glCompileShader": (None, _u),
    "glGetShaderiv": (None, _u, _u, ctypes.POINTER(_i)),
    "glGetShaderInfoLog": (None, _u, _i, _p, ctypes.c_char_p),
    "glCreateProgram": (_u,),
    "glAttachShader": (None, _u, _u),
    "glLinkProgram": (None, _u),
    "glGetProgramiv": (None, _u, _u, ctypes.POINTER(_i)),
    "glGetProgramInfoLog": (None, _u, _i, _p, ctypes.c_char_p),
    "glUseProgram": (None, _u),
    "glBindAttribLocation": (None, _u, _u, ctypes.c_char_p),
    "glTransformFeedbackVaryings": (None, _u, _i, ctypes.POINTER(ctypes.c_char_p), _u),
    "glGenBuffers": (None, _i, ctypes.POINTER(_u)),
    "glBindBuffer": (None, _u, _u),
    "glBufferData": (None, _u, _sz, _p, _u),
    "glBufferSubData": (None, _u, _sz, _sz, _p),
    "glGetBufferSubData": (None, _u, _sz, _sz, _p),
    "glBindBufferBase": (None, _u, _u, _u),
    "glBindBufferRange": (None, _u, _u, _u, _sz, _sz),
    "glGenVertexArrays": (None, _i, ctypes.POINTER(_u)),
    "glBindVertexArray": (None, _u),
    "glEnableVertexAttribArray": (None, _u),
    "glDisableVertexAttribArray": (None, _u),
    "glVertexAttribPointer": (None, _u, _i, _u, ctypes.c_ubyte, _i, _p),
    "glVertexAttribIPointer": (None, _u, _i, _u, _i, _p),
    "glVertexAttribDivisor": (None, _u, _u),
    "glDrawArrays": (None, _u, _i, _i),
    "glDrawArraysInstanced": (None, _u, _i, _i, _i),
    "glDrawElements": (None, _u, _i, _u, _p),
    "glDrawElementsInstanced": (None, _u, _i, _u, _p, _i),
    "glDrawArraysIndirect": (None, _u, _p),
    "glDrawElementsIndirect": (None, _u, _u, _p),
    "glMultiDrawArraysIndirect": (None, _u, _p, _i, _i),
    "glMultiDrawElementsIndirect": (None, _u, _u, _p, _i, _i),
    "glMultiDrawArraysIndirectCount": (None, _u, _p, _sz, _i, _i),
    "glMultiDrawElementsIndirectCount": (None, _u, _u, _p, _sz, _i, _i),
    "glPrimitiveRestartIndex": (None, _u),
    "glProvokingVertex": (None, _u),
    "glGenTransformFeedbacks": (None, _i, ctypes.POINTER(_u)),
    "glBindTransformFeedback": (None, _u, _u),
    "glBeginTransformFeedback": (None, _u),
    "glEndTransformFeedback": (None,),
    "glPauseTransformFeedback": (None,),
    "glResumeTransformFeedback": (None,),
    "glDrawTransformFeedback": (None, _u, _u),
    "glDrawTransformFeedbackStream": (None, _u, _u, _u),
    "glDrawTransformFeedbackInstanced": (None, _u, _u, _i),
    "glGenQueries": (None, _i, ctypes.POINTER(_u)),
    "glBeginQuery": (None, _u, _u),
    "glEndQuery": (None, _u),
    "glBeginQueryIndexed": (None, _u, _u, _u),
    "glEndQueryIndexed": (None, _u, _u),
    "glGetQueryObjectui64v": (None, _u, _u, ctypes.POINTER(ctypes.c_uint64)),
    "glPatchParameteri": (None, _u, _i),
    "glPatchParameterfv": (None, _u, ctypes.POINTER(_f)),
    "glGetUniformLocation": (_i, _u, ctypes.c_char_p),
    "glUniform1f": (None, _i, _f),
    "glUniform2f": (None, _i, _f, _f),
    "glUniform4f": (None, _i, _f, _f, _f, _f),
    "glUniform1i": (None, _i, _i),
    "glMemoryBarrier": (None, _u),
    "glGenTextures": (None, _i, ctypes.POINTER(_u)),
    "glBindTexture": (None, _u, _u),
    "glTexStorage2D": (None, _u, _i, _u, _i, _i),
    "glTexSubImage2D": (None, _u, _i, _i, _i, _i, _i, _u, _u, _p),
    "glGetTexImage": (None, _u, _i, _u, _u, _p),
    "glBindImageTexture": (None, _u, _u, _i, ctypes.c_ubyte, _i, _u, _u),
    "glDepthFunc": (None, _u),
    "glCullFace": (None, _u),
    # viewport arrays and layered framebuffers (tools/make_layer_reference.py)
    "glViewportIndexedf": (None, _u, _f, _f, _f, _f),
    "glScissorIndexed": (None, _u, _i, _i, _i, _i),
    "glDepthRangeIndexed": (None, _u, ctypes.c_double, ctypes.c_double),
    "glTexStorage3D": (None, _u, _i, _u, _i, _i, _i),
    "glTexStorage3DMultisample": (None, _u, _i, _u, _i, _i, _i, ctypes.c_ubyte),
    "glGenFramebuffers": (None, _i, ctypes.POINTER(_u)),
    "glBindFramebuffer": (None, _u, _u),
    "glFramebufferTexture": (None, _u, _u, _u, _i),
    "glFramebufferTextureLayer": (None, _u, _u, _u, _i, _i),
    "glCheckFramebufferStatus": (_u, _u),
    "glDrawBuffers": (None, _i, ctypes.POINTER(_u)),
    "glClearBufferfv": (None, _u, _i, ctypes.POINTER(_f)),
    "glBlitFramebuffer": (None, _i, _i, _i, _i, _i, _i, _i, _i, _u, _u),
    "glPointSize": (None, _f),
    "glLineWidth": (None, _f),
    "glPolygonMode": (None, _u, _u),
}


class GLError(RuntimeError):
    pass


class GLCalls:
    """The GL entry points of the current context, by name (``gl.glDrawArrays``)."""

    def __init__(self) -> None:
        egl = ctypes.CDLL("libEGL.so.1")
        egl.eglGetProcAddress.restype = _p
        egl.eglGetProcAddress.argtypes = [ctypes.c_char_p]
        self._egl = egl
        for name, (restype, *args) in _PROTOS.items():
            addr = egl.eglGetProcAddress(name.encode())
            if not addr:
                raise GLError(f"{name} is not available")
            fn = ctypes.CFUNCTYPE(restype, *args)(addr)
            setattr(self, name, fn)

    def check(self, what: str) -> None:
        err = self.glGetError()
        if err:
            raise GLError(f"{what}: GL error 0x{err:04x}")

    # -- conveniences ----------------------------------------------------------------

    def shader(self, kind: int, source: str) -> int:
        s = self.glCreateShader(kind)
        src = ctypes.c_char_p(source.encode())
        self.glShaderSource(s, 1, ctypes.byref(src), None)
        self.glCompileShader(s)
        ok = _i()
        self.glGetShaderiv(s, COMPILE_STATUS, ctypes.byref(ok))
        if not ok.value:
            log = ctypes.create_string_buffer(8192)
            self.glGetShaderInfoLog(s, 8192, None, log)
            raise GLError(f"shader compile failed:\n{log.value.decode()}\n{source}")
        return s

    def program(
        self,
        stages: dict[int, str],
        varyings: list[str] | None = None,
        separate: bool = False,
        attribs: dict[str, int] | None = None,
    ) -> int:
        p = self.glCreateProgram()
        for kind, src in stages.items():
            self.glAttachShader(p, self.shader(kind, src))
        for name, loc in (attribs or {}).items():
            self.glBindAttribLocation(p, loc, name.encode())
        if varyings:
            arr = (ctypes.c_char_p * len(varyings))(*[v.encode() for v in varyings])
            mode = SEPARATE_ATTRIBS if separate else INTERLEAVED_ATTRIBS
            self.glTransformFeedbackVaryings(p, len(varyings), arr, mode)
        self.glLinkProgram(p)
        ok = _i()
        self.glGetProgramiv(p, LINK_STATUS, ctypes.byref(ok))
        if not ok.value:
            log = ctypes.create_string_buffer(8192)
            self.glGetProgramInfoLog(p, 8192, None, log)
            raise GLError(f"link failed:\n{log.value.decode()}")
        return p

    def gen(self, fn: str) -> int:
        out = _u()
        getattr(self, fn)(1, ctypes.byref(out))
        return out.value

    def buffer(self, target: int, data: bytes) -> int:
        b = self.gen("glGenBuffers")
        self.glBindBuffer(target, b)
        self.glBufferData(target, len(data), data, DYNAMIC_COPY)
        return b

    def read_buffer(self, target: int, buf: int, size: int) -> bytes:
        out = ctypes.create_string_buffer(size)
        self.glBindBuffer(target, buf)
        self.glGetBufferSubData(target, 0, size, out)
        return out.raw

    def query_result(self, q: int) -> int:
        v = ctypes.c_uint64()
        self.glGetQueryObjectui64v(q, QUERY_RESULT, ctypes.byref(v))
        return int(v.value)

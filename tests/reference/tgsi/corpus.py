"""The softpipe TGSI corpus: GLSL programs, their inputs, and what Mesa made of them.

Each :class:`Entry` is one GLSL 3.30 program (vertex + fragment shader) drawn as a
single triangle whose edges all lie outside a 64x64 RGBA8 target (clip coordinates
(-1,-1), (3,-1), (-1,3)), so every pixel is covered whatever the fill rule and only the
shader arithmetic decides the image.  ``tools/make_tgsi_corpus.py`` compiles each
program with Mesa's softpipe (``SOFTPIPE_DEBUG=vs,fs,use_tgsi``), stores the printed
TGSI as ``<name>.vert.tgsi`` / ``<name>.frag.tgsi``, softpipe's image as ``<name>.png``
(row 0 = NDC y -1) and the constant buffers softpipe was given as ``<name>.json``.
``tests/tgsi/test_corpus.py`` runs the stored TGSI on numpipe and compares.

Inputs are chosen so that a wrong opcode changes pixels while legitimate float
differences do not: the default vertex shader passes ``v_pix``, the pixel centre in
window coordinates (x + 0.5, y + 0.5), which every rasterizer interpolates exactly
(all plane coefficients are powers of two), so discontinuous functions (floor,
comparisons, integer conversions) only ever see exact values.  ``v_attr`` is a
smoothly interpolated per-vertex vec4 for the smooth functions.  Where GL leaves the
result to the implementation (which row of a quad a coarse DDX reads, the face of a
cube-map direction whose largest components tie, LINEAR filtering of shadow compares,
the scale factor and log2 behind a texture lod, out-of-range texelFetch) the inputs
stay clear of it; so do they of softpipe's one known TGSI bug (an indirect TEMP store
uses the address of the quad's first lane for all four).  With these rules llvmpipe's
images of the corpus equal softpipe's within 1 on every entry but one:
``derivatives_coarse_rows`` pins tgsi_exec's coarse-derivative quad rows on purpose.

Uniform layout (measured on Mesa 22.3 softpipe, see the module's ``pack_constants``):
each stage has its own constant buffer 0 holding, in declaration order, the uniforms
that stage uses, every uniform (and every array element and matrix column) starting a
new vec4 slot; int/uint values are stored as their 32-bit patterns.  Samplers are not
in the buffer: sampler uniform ``unit`` k is Gallium sampler/view slot k.

The opcode record at the end of this file (``OPCODES``) is written by the generator
from the dumps; the test checks that the stored TGSI still uses exactly those opcodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

WIDTH = HEIGHT = 64
CLEAR_COLOR = (0.25, 0.5, 0.75, 1.0)

# The one triangle, in clip space: the viewport square is its lower-left half.
FULLSCREEN_POSITIONS = ((-1.0, -1.0, 0.0, 1.0), (3.0, -1.0, 0.0, 1.0), (-1.0, 3.0, 0.0, 1.0))
DEFAULT_ATTRS = ((1.0, 0.0, 0.25, 1.0), (0.0, 1.0, 0.5, 0.5), (0.5, 0.25, 1.0, 0.0))

DEFAULT_VS = """#version 330
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_attr;
out vec2 v_pix;
out vec4 v_attr;
void main() {
    gl_Position = in_pos;
    v_pix = in_pos.xy * 32.0 + 32.0;
    v_attr = in_attr;
}
"""

# Shared fragment shader prologue: v_pix = pixel centre, uv in (0,1), ip = pixel index.
FS_HEAD = """#version 330
in vec2 v_pix;
in vec4 v_attr;
out vec4 o;
"""

GS5 = "#extension GL_ARB_gpu_shader5 : require\n"


def fs(body: str, head: str = "", ext: str = "") -> str:
    """A fragment shader from the common prologue, extra declarations and main's body."""
    src = FS_HEAD if not ext else FS_HEAD.replace("#version 330\n", "#version 330\n" + ext)
    return src + head + "void main() {\n" + body + "}\n"


@dataclass(frozen=True)
class Texture:
    """A deterministic texture bound to sampler uniform ``uniform`` on unit ``unit``.

    ``kind``: ``2d``, ``2d_array``, ``3d``, ``cube`` or ``depth`` (a 2D
    GL_DEPTH_COMPONENT24 texture).  ``fmt``: ``rgba8``, ``rgba8i``, ``rgba8ui`` (ignored
    for depth).  ``size`` is (w, h) or (w, h, depth/layers).  Filters are ``nearest`` or
    ``linear``; ``mip`` is ``none``, ``nearest`` or ``linear``; ``wrap`` is ``repeat``
    or ``clamp`` (CLAMP_TO_EDGE); ``compare`` is a GL compare function for shadow
    samplers (``<=`` ...) or None.
    """

    uniform: str
    unit: int
    kind: str
    size: tuple[int, ...]
    fmt: str = "rgba8"
    levels: int = 1
    min_filter: str = "nearest"
    mag_filter: str = "nearest"
    mip: str = "none"
    wrap: str = "repeat"
    compare: str | None = None
    seed: int = 0
    stage: str = "fragment"

    def level_size(self, level: int) -> tuple[int, int, int]:
        w, h = self.size[0], self.size[1]
        d = self.size[2] if len(self.size) > 2 else 1
        w, h = max(1, w >> level), max(1, h >> level)
        if self.kind == "3d":
            d = max(1, d >> level)
        elif self.kind == "cube":
            d = 6
        return w, h, d

    def level_data(self, level: int) -> np.ndarray:
        """Texels of ``level`` as (depth/layers/faces, h, w, 4) uint8/int8, or float32 depth."""
        w, h, d = self.level_size(level)
        z, y, x = np.meshgrid(np.arange(d), np.arange(h), np.arange(w), indexing="ij")
        if self.kind == "depth":
            return (((x * 5 + y * 3 + self.seed) % 16) / 15.0).astype(np.float32)[0]
        c = np.arange(4).reshape(1, 1, 1, 4)
        v = (x[..., None] * 73 + y[..., None] * 151 + z[..., None] * 41 + c * 97) + (
            level * 59 + self.seed * 13
        )
        v = ((v ^ (v >> 3)) * 29 + 7) & 255
        if self.fmt == "rgba8i":
            return (v - 128).astype(np.int8)
        return v.astype(np.uint8)


@dataclass(frozen=True)
class Entry:
    """One corpus program.  ``uniforms`` maps a uniform name to its value:
    a number, a tuple for vectors, a column-major tuple for matrices, a list for arrays.
    ``fs_state`` lists the vec4 state constants Mesa appends after the fragment
    shader's uniforms (see ``WPOS_YTRANSFORM``)."""

    name: str
    fs: str
    vs: str = DEFAULT_VS
    uniforms: dict[str, Any] = field(default_factory=dict)
    textures: tuple[Texture, ...] = ()
    attrs: tuple[tuple[float, float, float, float], ...] = DEFAULT_ATTRS
    fs_state: tuple[tuple[float, float, float, float], ...] = ()
    note: str = ""

    def vertices(self) -> np.ndarray:
        """(3, 8) float32: clip position then ``in_attr`` per vertex."""
        return np.array(
            [p + a for p, a in zip(FULLSCREEN_POSITIONS, self.attrs, strict=True)], np.float32
        )


# ------------------------------------------------------------------ uniform packing

_SCALAR = {"float": "f", "int": "i", "uint": "u", "bool": "b"}
_VEC = re.compile(r"^(|i|u|b)vec([234])$")
_MAT = re.compile(r"^mat([234])(?:x([234]))?$")
_UNIFORM = re.compile(
    r"\buniform\s+(?:(?:lowp|mediump|highp)\s+)?(\w+)\s+(\w+)\s*(?:\[(\d+)\])?\s*;"
)


def glsl_type(name: str) -> tuple[str, int, int]:
    """(base 'f'/'i'/'u', components per column, columns) of a non-opaque GLSL type."""
    if name in _SCALAR:
        return _SCALAR[name], 1, 1
    m = _VEC.match(name)
    if m:
        return {"": "f", "i": "i", "u": "u", "b": "b"}[m.group(1)], int(m.group(2)), 1
    m = _MAT.match(name)
    if m:
        cols = int(m.group(1))
        rows = int(m.group(2) or m.group(1))
        return "f", rows, cols
    raise ValueError(f"unsupported uniform type {name!r}")


def declared_uniforms(source: str) -> list[tuple[str, str, int]]:
    """(type, name, array length or 0) of the non-sampler uniforms, in declaration order."""
    text = re.sub(r"//[^\n]*", "", source)
    out = []
    for typ, name, arr in _UNIFORM.findall(text):
        if "sampler" in typ:
            continue
        out.append((typ, name, int(arr) if arr else 0))
    return out


def uniform_elements(typ: str, arr: int, value: Any) -> list[np.ndarray]:
    """The vec4 slots (as 4 x uint32) of one uniform value."""
    base, comps, cols = glsl_type(typ)
    values = list(value) if arr else [value]
    if arr and len(values) != arr:
        raise ValueError(f"array uniform needs {arr} values, got {len(values)}")
    slots = []
    for v in values:
        flat = np.atleast_1d(np.asarray(v, np.float64)).ravel()
        if flat.size != comps * cols:
            raise ValueError(f"{typ} needs {comps * cols} values, got {flat.size}")
        for c in range(cols):
            col = flat[c * comps : (c + 1) * comps]
            slot = np.zeros(4, np.uint32)
            if base == "f":
                slot[:comps] = col.astype(np.float32).view(np.uint32)
            elif base == "i":
                slot[:comps] = col.astype(np.int64).astype(np.int32).view(np.uint32)
            elif base == "u":
                slot[:comps] = col.astype(np.int64).astype(np.uint32)
            else:
                raise ValueError("bool uniforms are not used by the corpus")
            slots.append(slot)
    return slots


# Mesa's STATE_FB_WPOS_Y_TRANSFORM for a user framebuffer object (not flipped): the
# fragment shader gets it as one more vec4 after its uniforms when it reads
# gl_FragCoord (y' = y * z + w under FS_COORD_ORIGIN LOWER_LEFT) or takes dFdy
# (multiplied by x).
WPOS_YTRANSFORM = (1.0, 0.0, -1.0, float(HEIGHT))


def pack_constants(
    source: str, uniforms: dict[str, Any], state: tuple[tuple[float, ...], ...] = ()
) -> bytes:
    """Constant buffer 0 of one stage, as softpipe receives it (see module docstring)."""
    slots: list[np.ndarray] = []
    for typ, name, arr in declared_uniforms(source):
        slots += uniform_elements(typ, arr, uniforms[name])
    for vec in state:
        slots.append(np.asarray(vec, np.float32).view(np.uint32))
    if not slots:
        return b""
    return np.concatenate(slots).astype("<u4").tobytes()


def gl_uniform_bytes(typ: str, arr: int, value: Any) -> bytes:
    """The value as glUniform*v takes it (tightly packed), for the generator."""
    base = glsl_type(typ)[0]
    flat = np.asarray(value, np.float64).ravel()
    dtype = {"f": "<f4", "i": "<i4", "u": "<u4"}[base]
    if base == "f":
        return flat.astype(dtype).tobytes()
    return flat.astype(np.int64).astype(dtype).tobytes()


# ------------------------------------------------------------------ the corpus

_E: list[Entry] = []


def _add(name: str, fs_src: str, **kw: Any) -> None:
    _E.append(Entry(name=name, fs=fs_src, **kw))


IP = "    ivec2 ip = ivec2(v_pix);\n    vec2 uv = v_pix / 64.0;\n"

# ---- float arithmetic

_add(
    "passthrough",
    fs("    o = vec4(v_pix / 64.0, v_attr.z, v_attr.w);\n"),
    note="interpolated inputs reach the output unchanged",
)
_add(
    "mad_dot",
    fs(
        IP + "    vec4 c = v_attr * scale + bias;\n"
        "    float l = dot(c.rgb, weights);\n"
        "    float d4 = dot(c, vec4(0.25, 0.125, 0.5, 0.125));\n"
        "    float d2 = dot(uv, vec2(0.5, 0.25));\n"
        "    o = vec4(l, d4, d2, c.w * 0.5);\n",
        head="uniform vec4 scale;\nuniform vec4 bias;\nuniform vec3 weights;\n",
    ),
    uniforms={
        "scale": (0.75, 1.25, 0.5, 2.0),
        "bias": (0.125, -0.25, 0.3, 0.1),
        "weights": (0.299, 0.587, 0.114),
    },
    note="MAD/DP2/DP3/DP4 with uniforms",
)
_add(
    "cross_normalize",
    fs(
        IP + "    vec3 p = vec3(uv * 2.0 - 1.0, 0.5);\n"
        "    vec3 c = cross(p, axis);\n"
        "    vec3 n = normalize(c);\n"
        "    o = vec4(n * 0.5 + 0.5, length(c) * 0.5);\n",
        head="uniform vec3 axis;\n",
    ),
    uniforms={"axis": (0.3, 0.5, 0.8)},
)
_add(
    "distance_length",
    fs(
        IP + "    float d = distance(v_pix, center) / 45.0;\n"
        "    float l = length(vec3(uv, 0.5));\n"
        "    o = vec4(d, l * 0.6, length(v_attr.xy), length(v_attr) * 0.5);\n",
        head="uniform vec2 center;\n",
    ),
    uniforms={"center": (20.0, 41.0)},
)
_add(
    "pow_exp2_log2",
    fs(
        IP + "    float a = pow(uv.x + 0.01, 2.2);\n"
        "    float b = exp2(uv.y * 3.0 - 2.0) * 0.25;\n"
        "    float c = log2(uv.x * 7.0 + 1.0) / 3.0;\n"
        "    float d = pow(v_attr.y + 0.05, gamma);\n"
        "    o = vec4(a, b, c, d);\n",
        head="uniform float gamma;\n",
    ),
    uniforms={"gamma": 1.0 / 2.2},
)
_add(
    "exp_log_hyperbolic",
    fs(
        IP + "    float a = (exp(uv.x) - 1.0) / 1.8;\n"
        "    float b = log(1.0 + uv.y * 1.71828);\n"
        "    float c = tanh(uv.x * 4.0 - 2.0) * 0.5 + 0.5;\n"
        "    float d = (sinh(uv.y * 2.0 - 1.0) + cosh(uv.x)) * 0.35;\n"
        "    o = vec4(a, b, c, d);\n"
    ),
)
_add(
    "sqrt_rsq",
    fs(
        IP + "    o = vec4(sqrt(uv.x), inversesqrt(uv.y + 1.0), sqrt(v_attr.x),\n"
        "             inversesqrt(dot(uv, uv) + 0.25) * 0.5);\n"
    ),
)
_add(
    "min_max_clamp",
    fs(
        IP + "    vec4 c = vec4(uv, 1.0 - uv.x, uv.x * uv.y);\n"
        "    vec4 k = clamp(c * 2.0 - 0.5, lo, hi);\n"
        "    o = vec4(min(c.x, c.y), max(c.z, c.w), k.x * k.y + k.z, max(k.w, min(c.y, 0.7)));\n",
        head="uniform vec4 lo;\nuniform vec4 hi;\n",
    ),
    uniforms={"lo": (0.1, 0.2, 0.0, 0.25), "hi": (0.9, 0.6, 0.5, 0.75)},
)
_add(
    "mix_step_smoothstep",
    fs(
        IP + "    float e = step(32.0, v_pix.x);\n"
        "    float s = smoothstep(16.0, 48.0, v_pix.y);\n"
        "    vec3 m = mix(vec3(1.0, 0.0, 0.2), vec3(0.0, 0.3, 1.0), uv.x);\n"
        "    vec2 st = step(vec2(20.0, 40.0), v_pix.yx);\n"
        "    o = vec4(m * (0.5 + 0.5 * e), s * 0.5 + st.x * 0.25 + st.y * 0.25);\n"
    ),
)
_add(
    "abs_sign",
    fs(
        IP + "    vec2 c = v_pix - 32.0;\n"
        "    o = vec4(abs(c) / 32.0, sign(c) * 0.4 + 0.5 + sign(c.yx - 10.0) * 0.05);\n"
    ),
)
_add(
    "floor_ceil_fract",
    fs(
        IP + "    vec2 t = (v_pix - 32.0) * 0.15;\n"
        "    o = vec4(floor(t.x) / 10.0 + 0.5, ceil(t.y) / 10.0 + 0.5, fract(t.x), fract(t.y));\n"
    ),
)
_add(
    "mod_trunc_round",
    fs(
        IP + "    vec2 c = v_pix - 32.0;\n"
        "    o = vec4(mod(c.x, 5.0) / 5.0, (trunc(c.y * 0.3) + 10.0) / 20.0,\n"
        "             (round(c.x) + 32.0) / 64.0, (roundEven(c.y) + 32.0) / 64.0);\n"
    ),
    note="round/roundEven on exact .5 values: ties go to even",
)
_add(
    "trig_sin_cos",
    fs(
        IP + "    float a = uv.x * 6.2831853;\n"
        "    o = vec4(sin(a) * 0.5 + 0.5, cos(a * 2.0 + uv.y) * 0.5 + 0.5,\n"
        "             sin(v_pix.y * 0.3) * 0.5 + 0.5, cos(v_attr.x * 3.0) * 0.5 + 0.5);\n"
    ),
)
_add(
    "trig_tan_atan",
    fs(
        IP + "    float t = tan((uv.x - 0.5) * 2.4);\n"
        "    float a = atan(v_pix.y - 32.0, v_pix.x - 32.0);\n"
        "    float b = atan(uv.y * 4.0 - 2.0);\n"
        "    o = vec4(t * 0.2 + 0.5, a / 6.2832 + 0.5, b / 3.1416 + 0.5, 1.0);\n"
    ),
)
_add(
    "trig_asin_acos",
    fs(
        IP
        + "    o = vec4(asin(uv.x * 2.0 - 1.0) / 3.1416 + 0.5, acos(uv.y * 2.0 - 1.0) / 3.1416,\n"
        "             asin(v_attr.x * 0.9) + 0.2, acos(v_attr.y * 0.8) * 0.3);\n"
    ),
)
_add(
    "fma_frexp_ldexp",
    fs(
        IP + "    int e;\n"
        "    float m = frexp(v_pix.x * 3.7 + 1.0, e);\n"
        "    float l = ldexp(uv.y, -(ip.x & 3));\n"
        "    o = vec4(m, float(e) / 10.0, fma(uv.x, uv.y, 0.25) * 0.8, l);\n",
        ext=GS5,
    ),
)
_add(
    "special_values",
    fs(
        IP + "    float z = fract(v_pix.x) - 0.5;\n"
        "    float pinf = 1.0 / z;\n"
        "    float ninf = -1.0 / z;\n"
        "    float qnan = pinf + ninf;\n"
        "    o = vec4(isinf(pinf) ? 0.75 : 0.0, isnan(qnan) ? 0.5 : 0.1,\n"
        "             clamp(pinf, 0.0, 1.0) * 0.5 + clamp(ninf, 0.0, 1.0),\n"
        "             isnan(uv.x) || isinf(uv.y) ? 0.0 : uv.x);\n"
    ),
    note="1/0 = inf, inf - inf = NaN, isinf/isnan, saturate of inf",
)

# ---- integer arithmetic

_add(
    "int_arith",
    fs(
        IP + "    ivec2 c = ip - 32;\n"
        "    int a = c.x * c.y;\n"
        "    int q = a / 7;\n"
        "    int r = a % 7;\n"
        "    int m = max(c.x, c.y) + min(c.x, -c.y);\n"
        "    o = vec4(float(q + 150) / 300.0, float(r + 7) / 14.0, float(m + 64) / 128.0,\n"
        "             float(abs(c.x) + sign(c.y) * 16 + 16) / 64.0);\n"
    ),
    note="signed multiply/divide/remainder with negative operands, IABS, ISSG, IMIN/IMAX",
)
_add(
    "uint_arith",
    fs(
        IP + "    uvec2 u = uvec2(v_pix);\n"
        "    uint a = u.x * 2654435761u + u.y * 40503u;\n"
        "    uint b = a / (u.y + 1u);\n"
        "    uint c = a % 97u;\n"
        "    uint d = a >> 27;\n"
        "    o = vec4(float(b % 256u) / 255.0, float(c) / 96.0, float(d) / 31.0,\n"
        "             float(min(u.x, u.y) + max(u.x, 3u)) / 128.0);\n"
    ),
    note="wrapping unsigned multiply, UDIV/UMOD/USHR/UMIN/UMAX",
)
_add(
    "int_shift_bitops",
    fs(
        IP + "    ivec2 c = ip - 32;\n"
        "    int s = c.x << 3;\n"
        "    int t = c.y >> 2;\n"
        "    int x = (c.x & 0x15) | (c.y ^ 0x2a);\n"
        "    int n = ~c.x;\n"
        "    uint h = uint(c.y) >> 28;\n"
        "    o = vec4(float(s & 255) / 255.0, float(t + 8) / 16.0, float(x & 63) / 63.0,\n"
        "             float((n & 31) ^ int(h)) / 31.0);\n"
    ),
    note="arithmetic shift of negative values, NOT/AND/OR/XOR",
)
_add(
    "int_float_conversions",
    fs(
        IP + "    float f = (v_pix.x - 32.0) * 1.7;\n"
        "    int i = int(f);\n"
        "    uint u = uint(abs(f) * 1000.0);\n"
        "    int bits = floatBitsToInt(uv.y);\n"
        "    uint ub = floatBitsToUint(uv.x);\n"
        "    float g = intBitsToFloat(bits + 8388608);\n"
        "    float hx = uintBitsToFloat(ub & 0xfffc0000u);\n"
        "    o = vec4(float(i + 60) / 120.0, float(u % 1000u) / 999.0, g * 0.5, hx);\n"
    ),
)
_add(
    "bitfield_extract_insert",
    fs(
        IP + "    uint u = uint(ip.x) * 0x9E3779B9u ^ uint(ip.y) * 0x85EBCA6Bu;\n"
        "    int si = int(u);\n"
        "    uint e1 = bitfieldExtract(u, 5, 6);\n"
        "    int e2 = bitfieldExtract(si, 10, 5);\n"
        "    uint ins = bitfieldInsert(u, uint(ip.y), 8, 6);\n"
        "    int e3 = bitfieldExtract(si, ip.x & 15, ip.y & 7);\n"
        "    o = vec4(float(e1) / 63.0, float(e2 + 16) / 31.0, float(ins & 0x3fffu) / 16383.0,\n"
        "             float(e3 + 64) / 127.0);\n",
        ext=GS5,
    ),
)
_add(
    "bit_count_find_reverse",
    fs(
        IP + "    uint u = uint(ip.x) * 0x9E3779B9u ^ uint(ip.y) * 0x85EBCA6Bu;\n"
        "    int si = int(u);\n"
        "    int pc = bitCount(u);\n"
        "    int lsb = findLSB(u >> uint(ip.x & 7));\n"
        "    int msb = findMSB(si >> (ip.y & 15));\n"
        "    int umsb = findMSB(u >> uint(ip.y));\n"
        "    uint rev = bitfieldReverse(u);\n"
        "    o = vec4(float(pc) / 32.0, float(lsb + 1) / 33.0, float(msb + umsb + 2) / 66.0,\n"
        "             float(rev >> 24) / 255.0);\n",
        ext=GS5,
    ),
)
_add(
    "mul_extended_carry",
    fs(
        IP + "    uint a = uint(ip.x) * 0x9E3779B9u + 12345u;\n"
        "    uint b = uint(ip.y) * 0x85EBCA6Bu + 777u;\n"
        "    uint hi, lo, carry, borrow;\n"
        "    umulExtended(a, b, hi, lo);\n"
        "    int ihi, ilo;\n"
        "    imulExtended(int(a), int(b), ihi, ilo);\n"
        "    uint s = uaddCarry(a, b, carry);\n"
        "    uint d = usubBorrow(a, b, borrow);\n"
        "    o = vec4(float(hi >> 24) / 255.0, float(uint(ihi) >> 24) / 255.0,\n"
        "             float((s ^ lo) >> 24) / 255.0, float(carry * 2u + borrow) / 3.0 +\n"
        "             float(d & 1u) * 0.01);\n",
        ext=GS5,
    ),
)

# ---- comparisons and selection

_add(
    "compare_bvec",
    fs(
        IP + "    vec4 a = vec4(uv, uv.yx * 0.75);\n"
        "    bvec4 lt = lessThan(a, vec4(0.5, 0.3, 0.5, 0.2));\n"
        "    bvec4 ge = greaterThanEqual(a.yxwz, vec4(0.25));\n"
        "    bvec4 eq = equal(ivec4(ip.xyxy) & ivec4(3), ivec4(1, 2, 3, 0));\n"
        "    bvec4 ne = notEqual(uvec4(ip.xyyx) % 5u, uvec4(0u, 1u, 2u, 3u));\n"
        "    o = vec4(any(lt) ? 1.0 : 0.25, all(ge) ? 0.8 : 0.1,\n"
        "             float(any(not(eq))) * 0.5 + float(all(ne)) * 0.5,\n"
        "             dot(vec4(lt), vec4(0.1, 0.2, 0.3, 0.4)));\n"
    ),
)
_add(
    "select_ternary",
    fs(
        IP + "    bvec2 b = greaterThan(v_pix, vec2(24.0, 40.0));\n"
        "    vec2 s = mix(uv, 1.0 - uv, b);\n"
        "    int k = ip.x > ip.y ? ip.x - ip.y : ip.y * 2;\n"
        "    uint w = (ip.x & 1) == 0 ? 0xffu : uint(ip.y) * 3u;\n"
        "    o = vec4(s, float(k) / 128.0, float(w) / 255.0);\n"
    ),
)

# ---- control flow

_add(
    "if_else_chain",
    fs(
        IP + "    vec2 c = v_pix - vec2(32.0, 30.0);\n"
        "    float r2 = dot(c, c);\n"
        "    vec4 col;\n"
        "    if (r2 < 100.0) {\n"
        "        col = vec4(1.0, uv.x, 0.0, 1.0);\n"
        "    } else if (r2 < 400.0) {\n"
        "        if (c.x > 0.0)\n"
        "            col = vec4(0.0, 1.0, uv.y, 1.0);\n"
        "        else\n"
        "            col = vec4(0.2, 0.4, 0.6, 0.8);\n"
        "    } else if (ip.y > 50) {\n"
        "        col = vec4(uv, 1.0, 0.5);\n"
        "    } else {\n"
        "        col = vec4(0.1, 0.1, uv.x, 1.0);\n"
        "    }\n"
        "    o = col;\n"
    ),
)
_add(
    "for_break_continue",
    fs(
        IP + "    float acc = 0.0;\n"
        "    int steps = 0;\n"
        "    for (int i = 0; i < 64; i++) {\n"
        "        if ((i & 3) == (ip.y & 3))\n"
        "            continue;\n"
        "        acc += float(i) * 0.01;\n"
        "        if (i >= ip.x)\n"
        "            break;\n"
        "        steps++;\n"
        "    }\n"
        "    o = vec4(acc / 16.0, float(steps) / 64.0, float(steps & 7) / 7.0, 1.0);\n"
    ),
)
_add(
    "while_loop",
    fs(
        IP + "    uint n = uint(ip.x * 64 + ip.y + 1);\n"
        "    int steps = 0;\n"
        "    while (n != 1u && steps < 200) {\n"
        "        if ((n & 1u) == 0u)\n"
        "            n = n / 2u;\n"
        "        else\n"
        "            n = 3u * n + 1u;\n"
        "        steps++;\n"
        "    }\n"
        "    o = vec4(float(steps) / 200.0, float(steps & 15) / 15.0, uv.x, 1.0);\n"
    ),
    note="Collatz step counts: data-dependent trip counts up to 200",
)
_add(
    "switch_fallthrough",
    fs(
        IP + "    int k = (ip.x / 8 + ip.y / 8) % 6;\n"
        "    vec4 col = vec4(0.0, 0.0, 0.0, 1.0);\n"
        "    switch (k) {\n"
        "    case 0:\n"
        "        col.r += 0.5;\n"
        "    case 1:\n"
        "        col.g += 0.5;\n"
        "        break;\n"
        "    case 2:\n"
        "        col.b = 1.0;\n"
        "    case 3:\n"
        "        col.r += 0.25;\n"
        "        break;\n"
        "    default:\n"
        "        col = vec4(0.3, 0.3, uv.x, 1.0);\n"
        "    }\n"
        "    o = col;\n"
    ),
)
_add(
    "function_early_return",
    fs(
        "    o = vec4(shade(v_pix), shade(v_pix.yx), shade(64.0 - v_pix) * 0.5, 1.0);\n",
        head="float shade(vec2 p) {\n"
        "    if (p.x < 10.0)\n"
        "        return 0.2;\n"
        "    if (p.y > 50.0)\n"
        "        return 0.9;\n"
        "    float s = 0.0;\n"
        "    for (int i = 0; i < 16; i++) {\n"
        "        s += 0.05;\n"
        "        if (float(i * 4) > p.x)\n"
        "            return s;\n"
        "    }\n"
        "    return s * 0.5;\n"
        "}\n",
    ),
)
_add(
    "nested_loops",
    fs(
        IP + "    int count = 0;\n"
        "    for (int i = 0; i < 8; i++) {\n"
        "        for (int j = 0; j < 8; j++) {\n"
        "            if (i * j > ip.x)\n"
        "                break;\n"
        "            if (((i + j) & 1) == 0)\n"
        "                continue;\n"
        "            count += i ^ j;\n"
        "        }\n"
        "        if (count > ip.y * 2)\n"
        "            break;\n"
        "    }\n"
        "    o = vec4(float(count) / 120.0, float(count & 7) / 7.0, uv.y, 1.0);\n"
    ),
)
_add(
    "discard",
    fs(
        IP + "    if (((ip.x ^ ip.y) & 4) != 0)\n"
        "        discard;\n"
        "    float acc = 0.0;\n"
        "    for (int i = 0; i < 4; i++) {\n"
        "        if (i == (ip.x & 3) && ip.y > 40)\n"
        "            discard;\n"
        "        acc += 0.2;\n"
        "    }\n"
        "    o = vec4(uv, acc, 1.0);\n"
    ),
    note="discarded pixels keep the clear colour",
)
_add(
    "loop_float_iteration",
    fs(
        IP + "    vec2 c = uv * vec2(2.5, 2.0) - vec2(2.0, 1.0);\n"
        "    vec2 z = vec2(0.0);\n"
        "    int n = 0;\n"
        "    for (int i = 0; i < 24; i++) {\n"
        "        z = vec2(z.x * z.x - z.y * z.y, 2.0 * z.x * z.y) + c;\n"
        "        if (dot(z, z) > 4.0)\n"
        "            break;\n"
        "        n++;\n"
        "    }\n"
        "    o = vec4(float(n) / 24.0, fract(float(n) * 0.37),\n"
        "             clamp(dot(z, z) * 0.1, 0.0, 1.0), 1.0);\n"
    ),
    note="Mandelbrot: float rounding of every MUL/ADD/MAD decides the iteration count",
)

# ---- derivatives

_add(
    "derivatives",
    fs(
        IP + "    float f = v_pix.x * v_pix.x * 0.0005 + v_pix.y * v_pix.y * 0.0003;\n"
        "    o = vec4(dFdx(f) * 10.0, dFdy(f) * 10.0, fwidth(f) * 5.0,\n"
        "             dFdx(v_attr.x) * 50.0 + 0.5);\n"
    ),
    fs_state=(WPOS_YTRANSFORM,),
    note="coarse DDX/DDY over 2x2 quads.  f is separable (no x*y term) because which row"
    " of a quad a coarse DDX reads is implementation-defined: softpipe reads the odd row,"
    " llvmpipe differentiates per row (as DDX_FINE)",
)
_add(
    "derivatives_fine",
    fs(
        IP + "    float f = v_pix.x * v_pix.y * 0.001 + v_pix.y * v_pix.y * 0.0007;\n"
        "    float g = v_pix.x * v_pix.x * 0.0004 + v_pix.y * v_pix.y * 0.0006;\n"
        "    o = vec4(dFdxFine(f) * 10.0, dFdyFine(f) * 10.0, dFdxCoarse(g) * 10.0,\n"
        "             dFdyCoarse(g) * 10.0);\n",
        ext="#extension GL_ARB_derivative_control : require\n",
    ),
    fs_state=(WPOS_YTRANSFORM,),
    note="fine derivatives of a function with an x*y term (per row / per column of the quad)",
)

_add(
    "derivatives_coarse_rows",
    fs(
        IP + "    float f = v_pix.x * v_pix.y * 0.001 + v_pix.x * v_pix.x * 0.0005;\n"
        "    float g = v_pix.x * v_pix.y * 0.0012 + v_pix.y * v_pix.y * 0.0004;\n"
        "    o = vec4(dFdx(f) * 10.0, dFdy(g) * 10.0, fwidth(f + g) * 4.0, 1.0);\n"
    ),
    fs_state=(WPOS_YTRANSFORM,),
    note="pins tgsi_exec's coarse DDX/DDY (GL leaves it open): DDX of the quad's second"
    " row, DDY of its left column, for all four pixels; llvmpipe differs here (per row)",
)

# ---- indirect addressing

_PAL = [
    (0.1, 0.2, 0.3, 1.0),
    (0.9, 0.1, 0.1, 0.8),
    (0.1, 0.8, 0.2, 0.6),
    (0.2, 0.3, 0.9, 0.4),
    (0.7, 0.7, 0.1, 0.2),
    (0.6, 0.1, 0.7, 1.0),
    (0.1, 0.6, 0.6, 0.5),
    (0.95, 0.95, 0.95, 0.3),
]
_add(
    "uniform_array_index",
    fs(
        IP + "    int i = (ip.x / 8 + ip.y / 16) & 7;\n"
        "    o = pal[i] * 0.75 + pal[7 - i] * 0.25 * uv.x;\n",
        head="uniform vec4 pal[8];\n",
    ),
    uniforms={"pal": _PAL},
    note="CONST[ADDR] indexed by a per-pixel value",
)
_add(
    "uniform_float_array_index",
    fs(
        IP + "    int i = (ip.x * 3 + ip.y) % 5;\n"
        "    int j = ip.y % 3;\n"
        "    o = vec4(w[i], w[4 - i] * uv.x, offs[j].x + offs[j].y * uv.y, 1.0);\n",
        head="uniform float w[5];\nuniform vec2 offs[3];\n",
    ),
    uniforms={"w": [0.1, 0.3, 0.5, 0.7, 0.9], "offs": [(0.1, 0.2), (0.4, 0.5), (0.7, -0.3)]},
)
_add(
    "local_array_index",
    fs(
        IP + "    vec4 arr[6];\n"
        "    for (int k = 0; k < 6; k++)\n"
        "        arr[k] = vec4(float(k) * 0.2, uv.x * float(k) * 0.15, 0.5, 1.0);\n"
        "    int i = (ip.x + ip.y * 3) % 6;\n"
        "    ivec2 q = ip >> 1;\n"
        "    arr[(q.x + q.y * 5 + 2) % 6].w = uv.y;\n"
        "    arr[q.y % 6].z = uv.x;\n"
        "    o = arr[i] * 0.5 + arr[(i + 4) % 6] * 0.5;\n"
    ),
    note="TEMP array, indirect reads per pixel, indirect writes per 2x2 quad: softpipe's"
    " tgsi_exec stores through the address of the quad's first lane only",
)

# ---- matrices

_M4 = (0.9, 0.1, 0.0, 0.05, -0.2, 0.8, 0.1, 0.0, 0.1, 0.2, 0.7, 0.1, 0.05, -0.1, 0.2, 0.9)
_N4 = (0.5, 0.2, 0.1, 0.0, 0.1, 0.6, 0.0, 0.2, 0.3, 0.0, 0.4, 0.1, 0.0, 0.1, 0.2, 0.7)
_add(
    "mat4_mul_transpose",
    fs(
        IP + "    vec4 p = vec4(uv, v_attr.x, 1.0);\n"
        "    vec4 q = m * p;\n"
        "    vec4 r = transpose(n) * p;\n"
        "    vec4 s = p * (m * n);\n"
        "    o = q * 0.4 + r * 0.3 + s * 0.2;\n",
        head="uniform mat4 m;\nuniform mat4 n;\n",
    ),
    uniforms={"m": _M4, "n": _N4},
)
_add(
    "mat3_inverse_determinant",
    fs(
        IP + "    mat3 a = b + mat3(uv.x * 0.1, 0.0, 0.0, 0.0, uv.y * 0.1, 0.0, 0.0, 0.0, 0.0);\n"
        "    mat3 inv = inverse(a);\n"
        "    vec3 v = inv * vec3(uv, 0.5);\n"
        "    mat2 c = mat2(a[0].xy, a[1].xy);\n"
        "    o = vec4(v * 0.5 + 0.25, determinant(a) * 0.5 + inverse(c)[1][0] * 0.1);\n",
        head="uniform mat3 b;\n",
    ),
    uniforms={"b": (1.0, 0.2, 0.1, -0.1, 0.9, 0.3, 0.2, 0.1, 1.1)},
)
_add(
    "outer_product_matrix_ops",
    fs(
        IP + "    mat3x2 op = outerProduct(uv, vec3(0.5, uv.y, 0.25));\n"
        "    mat3x2 cm = matrixCompMult(op, k);\n"
        "    vec3 r = vec2(0.6, 0.4) * cm;\n"
        "    vec2 s = cm * vec3(1.0, 0.5, 0.25);\n"
        "    o = vec4(r, s.x + s.y);\n",
        head="uniform mat3x2 k;\n",
    ),
    uniforms={"k": (1.0, 0.5, 0.25, 2.0, 1.5, 0.75)},
)

# ---- packing

_add(
    "pack_unorm_snorm",
    fs(
        IP + "    uint p = packUnorm4x8(vec4(uv, uv.yx * 0.5));\n"
        "    vec4 a = unpackUnorm4x8(p ^ 0x0f0f0f0fu);\n"
        "    uint q = packSnorm2x16(uv * 2.0 - 1.0);\n"
        "    vec2 b = unpackSnorm2x16(q + 0x00010001u * uint(ip.x));\n"
        "    uint r = packUnorm2x16(uv.yx);\n"
        "    vec4 c = unpackSnorm4x8(r);\n"
        "    o = vec4(a.x, a.w * 0.5 + b.y * 0.25 + 0.25, b.x * 0.5 + 0.5, c.y * 0.5 + 0.5);\n",
        ext="#extension GL_ARB_shading_language_packing : require\n",
    ),
)
_add(
    "pack_half",
    fs(
        IP + "    uint h = packHalf2x16(uv * vec2(3.3, -7.1));\n"
        "    vec2 b = unpackHalf2x16(h ^ 0x00010001u);\n"
        "    vec2 c = unpackHalf2x16(uint(ip.x * 1031 + ip.y * 7));\n"
        "    o = vec4(b.x / 3.3, -b.y / 7.1, fract(c.x * 100.0), float(h >> 26) / 63.0);\n",
        ext="#extension GL_ARB_shading_language_packing : require\n",
    ),
)

# ---- fragment system values

_add(
    "fragcoord_facing",
    fs(
        "    vec4 p = gl_FragCoord;\n"
        "    o = vec4(p.x / 64.0, p.y / 64.0, gl_FrontFacing ? 0.75 : 0.25,\n"
        "             fract(p.x * 0.25) + p.z * 0.5);\n"
    ),
    fs_state=(WPOS_YTRANSFORM,),
)

# ---- vertex stage

_add(
    "vs_uniform_transform",
    fs("    o = v_col;\n", head="in vec4 v_col;\n"),
    vs="""#version 330
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_attr;
uniform mat4 xf;
uniform vec4 tint;
uniform float gain;
out vec4 v_col;
void main() {
    gl_Position = in_pos;
    vec4 base = vec4(in_pos.xy * 0.25 + 0.25, in_attr.x, 1.0);
    v_col = clamp(xf * base * tint * gain, 0.0, 1.0);
}
""",
    uniforms={"xf": _M4, "tint": (1.0, 0.8, 0.6, 1.0), "gain": 1.25},
)
_add(
    "vs_vertexid_int",
    fs(
        "    o = vec4(float(v_id.x & 15) / 15.0, float(v_id.y & 255) / 255.0, v_col.xy);\n",
        head="flat in ivec2 v_id;\nin vec4 v_col;\n",
    ),
    vs="""#version 330
layout(location = 0) in vec4 in_pos;
flat out ivec2 v_id;
out vec4 v_col;
void main() {
    gl_Position = in_pos;
    int id = gl_VertexID;
    v_id = ivec2(id * 7 + 3, (id << 4) ^ 0x55);
    v_col = vec4(float((id * 37) % 11) / 10.0, float(id ^ 3) / 3.0, 0.0, 1.0);
}
""",
    note="gl_VertexID, integer VS math, flat (last-vertex) integer varying",
)
_add(
    "vs_loop_branch",
    fs("    o = v_col;\n", head="in vec4 v_col;\n"),
    vs="""#version 330
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_attr;
uniform int count;
out vec4 v_col;
void main() {
    gl_Position = in_pos;
    vec4 acc = vec4(0.0);
    for (int i = 0; i < count; i++) {
        if (in_attr[i & 3] > 0.4)
            acc[i & 3] += 0.125;
        else
            acc.w += 0.0625;
    }
    v_col = acc;
}
""",
    uniforms={"count": 7},
)
_add(
    "shared_uniforms_both_stages",
    fs(
        IP + "    o = vec4(v_col.rgb * scale.x, fract(uv.x * scale.y) * off.x + off.y);\n",
        head="in vec4 v_col;\nuniform vec2 off;\nuniform vec4 scale;\n",
    ),
    vs="""#version 330
layout(location = 0) in vec4 in_pos;
layout(location = 1) in vec4 in_attr;
uniform vec4 scale;
uniform vec3 unused_in_fs;
out vec2 v_pix;
out vec4 v_col;
void main() {
    gl_Position = in_pos;
    v_pix = in_pos.xy * 32.0 + 32.0;
    v_col = in_attr * scale.z + vec4(unused_in_fs, scale.w);
}
""",
    uniforms={"scale": (0.8, 4.0, 0.5, 0.25), "off": (0.5, 0.25), "unused_in_fs": (0.1, 0.2, 0.3)},
    note="a uniform in both stages lands in each stage's own buffer at its own slot",
)
_add(
    "vs_texel_fetch",
    fs("    o = v_col;\n", head="in vec4 v_col;\n"),
    vs="""#version 330
layout(location = 0) in vec4 in_pos;
uniform sampler2D vtex;
out vec4 v_col;
void main() {
    gl_Position = in_pos;
    v_col = texelFetch(vtex, ivec2(gl_VertexID, 1), 0) * 0.5
          + vec4(textureSize(vtex, 0), 0, 0) * 0.05;
}
""",
    textures=(Texture("vtex", 0, "2d", (4, 4), seed=5, stage="vertex"),),
)

# ---- textures

_add(
    "tex_nearest_repeat",
    fs(IP + "    o = texture(t, uv * 1.5 - 0.2);\n", head="uniform sampler2D t;\n"),
    textures=(Texture("t", 0, "2d", (8, 8), seed=1),),
)
_add(
    "tex_bilinear_clamp",
    fs(IP + "    o = texture(t, uv * 1.25 - 0.125);\n", head="uniform sampler2D t;\n"),
    textures=(
        Texture(
            "t", 0, "2d", (8, 8), min_filter="linear", mag_filter="linear", wrap="clamp", seed=2
        ),
    ),
)
_add(
    "tex_bilinear_repeat",
    fs(IP + "    o = texture(t, v_attr.xy * 3.0);\n", head="uniform sampler2D t;\n"),
    textures=(Texture("t", 0, "2d", (4, 4), min_filter="linear", mag_filter="linear", seed=3),),
    note="bilinear at arbitrary interpolated coordinates",
)
_add(
    "tex_lod_mip_linear",
    fs(
        IP + "    o = textureLod(t, uv, uv.y * 4.0) * 0.5 + textureLod(t, uv.yx, 1.0) * 0.5;\n",
        head="uniform sampler2D t;\n",
    ),
    textures=(
        Texture(
            "t",
            0,
            "2d",
            (16, 16),
            levels=5,
            min_filter="linear",
            mag_filter="linear",
            mip="linear",
            seed=4,
        ),
    ),
)
_add(
    "tex_implicit_lod_bias",
    fs(
        IP + "    o = texture(t, uv * 8.0) * 0.5 + texture(t, uv * 2.0, 1.0) * 0.5;\n",
        head="uniform sampler2D t;\n",
    ),
    textures=(
        Texture(
            "t",
            0,
            "2d",
            (32, 32),
            levels=6,
            min_filter="linear",
            mag_filter="linear",
            mip="nearest",
            seed=6,
        ),
    ),
    note="implicit derivatives select level 2; TXB with bias 1",
)
_add(
    "tex_fetch_size_levels",
    fs(
        IP + "    vec4 a = texelFetch(t, ivec2(ip.x % 8, ip.y % 8), 0);\n"
        "    vec4 b = texelFetch(t, ip / 16, 1);\n"
        "    ivec2 s0 = textureSize(t, 0);\n"
        "    ivec2 s1 = textureSize(t, 2);\n"
        "    o = a * 0.5 + b * 0.25 + vec4(s0, s1) / 64.0 + float(textureQueryLevels(t)) * 0.01;\n",
        head="uniform sampler2D t;\n",
        ext="#extension GL_ARB_texture_query_levels : require\n",
    ),
    textures=(Texture("t", 0, "2d", (8, 8), levels=4, mip="nearest", seed=7),),
)
_add(
    "tex_grad",
    fs(
        IP + "    vec2 gx = vec2(exp2(floor(uv.x * 4.0)) / 16.0, 0.0);\n"
        "    vec2 gy = vec2(0.0, exp2(floor(uv.y * 3.0)) / 32.0);\n"
        "    o = textureGrad(t, uv * 1.5, gx, gy);\n",
        head="uniform sampler2D t;\n",
    ),
    textures=(
        Texture(
            "t",
            0,
            "2d",
            (16, 16),
            levels=5,
            min_filter="linear",
            mag_filter="linear",
            mip="linear",
            seed=8,
        ),
    ),
    note="explicit anisotropic derivatives; powers of two, so every driver's log2 gives the "
    "same integer lod (llvmpipe-style fast_log2 and softpipe's log2f differ in between)",
)
_add(
    "tex_proj",
    fs(
        IP + "    float w = 1.0 + uv.x;\n"
        "    o = textureProj(t, vec3(uv.yx * w, w)) * 0.5 +\n"
        "        textureProj(t, vec4(uv * 2.0, 0.0, 2.0)) * 0.5;\n",
        head="uniform sampler2D t;\n",
    ),
    textures=(Texture("t", 0, "2d", (8, 8), min_filter="linear", mag_filter="linear", seed=9),),
)
_add(
    "tex_offset",
    fs(
        IP + "    o = textureOffset(t, uv, ivec2(1, -2)) * 0.5 +\n"
        "        texelFetchOffset(t, ip / 8 % 7 + ivec2(1, 0), 0, ivec2(-1, 1)) * 0.5;\n",
        head="uniform sampler2D t;\n",
    ),
    textures=(Texture("t", 0, "2d", (8, 8), seed=10),),
    note="texel offsets on TEX and TXF (fetches stay inside: out of range is undefined)",
)
_add(
    "tex_shadow",
    fs(
        IP + "    float a = texture(t, vec3(uv, uv.x * 0.8 + 0.1 + 1.0 / 64.0));\n"
        "    float b = texture(t, vec3(uv.yx, 0.5 + 1.0 / 32.0));\n"
        "    o = vec4(a, b, a * b, 1.0);\n",
        head="uniform sampler2DShadow t;\n",
    ),
    textures=(
        Texture(
            "t",
            0,
            "depth",
            (8, 8),
            min_filter="nearest",
            mag_filter="nearest",
            compare="<=",
            seed=11,
        ),
    ),
    note="depth compare (NEAREST: with LINEAR, softpipe filters the depths and then compares,"
    " llvmpipe compares each texel and then filters; GL leaves it open)",
)
_add(
    "tex_array",
    fs(
        IP + "    o = texture(t, vec3(uv * 2.0, float(ip.x / 16) + 0.25));\n",
        head="uniform sampler2DArray t;\n",
    ),
    textures=(Texture("t", 0, "2d_array", (4, 4, 4), seed=12),),
)
_add(
    "tex_3d",
    fs(IP + "    o = texture(t, vec3(uv, uv.x * uv.y + 0.1));\n", head="uniform sampler3D t;\n"),
    textures=(
        Texture(
            "t", 0, "3d", (4, 4, 4), min_filter="linear", mag_filter="linear", wrap="clamp", seed=13
        ),
    ),
)
_add(
    "tex_cube",
    fs(
        IP + "    vec3 d = vec3(uv * 2.0 - 1.0, 0.6);\n"
        "    o = texture(t, d * vec3(1.0, 0.9, 1.0)) * 0.5 +\n"
        "        texture(t, vec3(-0.45, d.x, d.y * 0.9)) * 0.5;\n",
        head="uniform samplerCube t;\n",
    ),
    textures=(Texture("t", 0, "cube", (4, 4), seed=14),),
    note="no two direction components are ever equal in magnitude: the face of a tie is "
    "implementation-defined (softpipe prefers x over y over z, llvmpipe z over y over x)",
)
_add(
    "tex_integer_formats",
    fs(
        IP + "    ivec4 a = texelFetch(ti, ip % 4, 0);\n"
        "    uvec4 b = texelFetch(tu, ip / 16, 0);\n"
        "    o = vec4(a + 128) / 255.0 * 0.5 + vec4(b) / 255.0 * 0.5;\n",
        head="uniform isampler2D ti;\nuniform usampler2D tu;\n",
    ),
    textures=(
        Texture("ti", 0, "2d", (4, 4), fmt="rgba8i", seed=15),
        Texture("tu", 1, "2d", (4, 4), fmt="rgba8ui", seed=16),
    ),
)
_add(
    "tex_gather",
    fs(
        IP + "    o = textureGather(t, uv, 1) * 0.5 +\n"
        "        textureGatherOffset(t, uv, ivec2(1, 0), 2) * 0.5;\n",
        head="uniform sampler2D t;\n",
        ext=GS5,
    ),
    textures=(Texture("t", 0, "2d", (8, 8), min_filter="linear", mag_filter="linear", seed=17),),
)
_add(
    "tex_query_lod",
    fs(
        IP + "    vec2 c = uv * exp2(floor(uv * 4.0) * vec2(2.0, 1.0) + vec2(0.0, 1.0));\n"
        "    vec2 l = textureQueryLOD(t, c);\n"
        "    o = vec4(l * 0.25, l.y * 0.1 + 0.2, 1.0);\n",
        head="uniform sampler2D t;\n",
        ext="#extension GL_ARB_texture_query_lod : require\n",
    ),
    textures=(
        Texture(
            "t",
            0,
            "2d",
            (32, 32),
            levels=6,
            min_filter="linear",
            mag_filter="linear",
            mip="linear",
            seed=18,
        ),
    ),
    note="s depends on x only and t on y only, with power-of-two slopes that change at quad"
    " boundaries, so every lod is an integer: with other derivatives the scale factor"
    " (softpipe: max of |components|, llvmpipe: vector lengths) and log2 (softpipe: log2f,"
    " llvmpipe: piecewise-linear fast_log2) are implementation-defined",
)
_add(
    "tex_two_units",
    fs(
        IP + "    vec4 a = texture(t0, uv);\n"
        "    vec4 b = texture(t1, a.xy);\n"
        "    o = mix(a, b, uv.x);\n",
        head="uniform sampler2D t0;\nuniform sampler2D t1;\n",
    ),
    textures=(
        Texture("t0", 0, "2d", (8, 8), seed=19),
        Texture("t1", 1, "2d", (4, 4), seed=20),
    ),
    note="dependent read: the second lookup's coordinates come from the first",
)


ENTRIES: tuple[Entry, ...] = tuple(_E)


def entry_by_name(name: str) -> Entry:
    for e in ENTRIES:
        if e.name == name:
            return e
    raise KeyError(name)


# BEGIN GENERATED OPCODES (tools/make_tgsi_corpus.py rewrites this block)
OPCODES: dict[str, dict[str, str]] = {
    "passthrough": {
        "vs": "END MAD MOV",
        "fs": "DIV END MOV",
    },
    "mad_dot": {
        "vs": "END MAD MOV",
        "fs": "DIV DP2 DP3 DP4 END MAD MUL",
    },
    "cross_normalize": {
        "vs": "END MAD MOV",
        "fs": "DIV DP3 END LRP MAD MOV MUL RSQ SQRT",
    },
    "distance_length": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV DP2 DP3 DP4 END MOV MUL SQRT",
    },
    "pow_exp2_log2": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END EX2 LG2 MAD MUL POW",
    },
    "exp_log_hyperbolic": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END EX2 LG2 MAD MAX MIN MUL",
    },
    "sqrt_rsq": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV DP2 END MUL RSQ SQRT",
    },
    "min_max_clamp": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MAD MAX MIN MOV MUL",
    },
    "mix_step_smoothstep": {
        "vs": "END MAD MOV",
        "fs": "ADD AND DIV END FSGE LRP MAD MOV MUL",
    },
    "abs_sign": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MAD SSG",
    },
    "floor_ceil_fract": {
        "vs": "END MAD MOV",
        "fs": "ADD CEIL DIV END FLR FRC MUL",
    },
    "mod_trunc_round": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END FLR MAD MUL ROUND TRUNC",
    },
    "trig_sin_cos": {
        "vs": "END MAD MOV",
        "fs": "COS DIV END MAD MUL SIN",
    },
    "trig_tan_atan": {
        "vs": "END MAD MOV",
        "fs": "ADD AND COS DIV END FSEQ FSGE FSLT MAD MAX MIN MOV MUL RCP SIN SSG UCMP",
    },
    "trig_asin_acos": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END LRP MAD MOV MUL SQRT SSG",
    },
    "fma_frexp_ldexp": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I FSNE I2F INEG ISHR LDEXP MAD MOV MUL OR UADD UCMP",
    },
    "special_values": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END FRC FSEQ FSNE MAD MOV OR RCP UCMP",
    },
    "int_arith": {
        "vs": "END MAD MOV",
        "fs": "DIV END F2I I2F IABS IDIV IMAX IMIN INEG ISSG SHL UADD UMOD UMUL",
    },
    "uint_arith": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2U U2F UADD UDIV UMAX UMIN UMOD UMUL USHR",
    },
    "int_shift_bitops": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I I2F ISHR NOT OR SHL UADD USHR XOR",
    },
    "int_float_conversions": {
        "vs": "END MAD MOV",
        "fs": "ADD AND DIV END F2I F2U I2F MUL U2F UADD UMOD",
    },
    "bitfield_extract_insert": {
        "vs": "END MAD MOV",
        "fs": "AND BFI DIV END F2I I2F IBFE U2F UADD UBFE UMUL XOR",
    },
    "bit_count_find_reverse": {
        "vs": "END MAD MOV",
        "fs": "AND BREV DIV END F2I I2F IMSB ISHR LSB POPC U2F UADD UMSB UMUL USHR XOR",
    },
    "mul_extended_carry": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I IMUL_HI INEG MAD SHL U2F UADD UMUL UMUL_HI USHR USLT XOR",
    },
    "compare_bvec": {
        "vs": "END MAD MOV",
        "fs": "ADD AND DIV DP4 END F2I FSGE FSLT MOV MUL OR UCMP UMOD USNE",
    },
    "select_ternary": {
        "vs": "END MAD MOV",
        "fs": "ADD AND DIV END F2I FSLT I2F INEG ISLT SHL U2F UADD UCMP UMUL USEQ",
    },
    "if_else_chain": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV DP2 END F2I FSLT ISLT MOV UCMP",
    },
    "for_break_continue": {
        "vs": "END MAD MOV",
        "fs": "AND BGNLOOP BRK DIV ELSE END ENDIF ENDLOOP F2I I2F ISGE MAD MOV UADD UIF USEQ",
    },
    "while_loop": {
        "vs": "END MAD MOV",
        "fs": (
            "AND BGNLOOP BRK DIV END ENDIF ENDLOOP F2I I2F ISLT MOV NOT SHL UADD UCMP UIF UMUL "
            "USEQ USHR USNE"
        ),
    },
    "switch_fallthrough": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END F2I IABS ISSG MOV OR UADD UCMP UMOD UMUL USEQ USGE USHR",
    },
    "function_early_return": {
        "vs": "END MAD MOV",
        "fs": "ADD ELSE END ENDIF FSLT MOV MUL NOT UCMP UIF",
    },
    "nested_loops": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END ENDIF F2I I2F ISGE ISLT MOV SHL UADD UCMP UIF",
    },
    "discard": {
        "vs": "END MAD MOV",
        "fs": (
            "ADD AND BGNLOOP BRK DIV END ENDIF ENDLOOP F2I ISGE ISLT KILL KILL_IF MOV UADD UIF "
            "USEQ USNE XOR"
        ),
    },
    "loop_float_iteration": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV DP2 ELSE END ENDIF FRC FSLT I2F MAD MOV MUL NOT UCMP UIF",
    },
    "derivatives": {
        "vs": "END MAD MOV",
        "fs": "ADD DDX DDY END MAD MUL",
    },
    "derivatives_fine": {
        "vs": "END MAD MOV",
        "fs": "DDX DDX_FINE DDY DDY_FINE END MAD MUL",
    },
    "derivatives_coarse_rows": {
        "vs": "END MAD MOV",
        "fs": "ADD DDX DDY END MAD MOV MUL",
    },
    "uniform_array_index": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I IABS INEG ISSG MAD MOV MUL SHL UADD UARL UMUL USHR",
    },
    "uniform_float_array_index": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I INEG MAD MOV MUL SHL UADD UARL UMOD UMUL USHR",
    },
    "local_array_index": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END F2I ISHR MOV MUL UADD UARL UMOD UMUL",
    },
    "mat4_mul_transpose": {
        "vs": "END MAD MOV",
        "fs": "DIV DP4 END MAD MOV MUL",
    },
    "mat3_inverse_determinant": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MAD MOV MUL",
    },
    "outer_product_matrix_ops": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV DP2 END MAD MUL",
    },
    "pack_unorm_snorm": {
        "vs": "END MAD MOV",
        "fs": (
            "ADD AND BFI DIV END F2I F2U I2F IBFE MAD MAX MIN MOV MUL ROUND U2F UADD UMUL USHR XOR"
        ),
    },
    "pack_half": {
        "vs": "END MAD MOV",
        "fs": (
            "AND DIV ELSE END ENDIF F2I F2U FRC MOV MUL OR ROUND SHL U2F UADD UCMP UIF UMUL USEQ "
            "USHR USLT USNE XOR"
        ),
    },
    "fragcoord_facing": {
        "vs": "END MOV",
        "fs": "ADD DIV END FRC MAD MOV MUL SGE UCMP",
    },
    "vs_uniform_transform": {
        "vs": "ADD END MAD MOV MUL",
        "fs": "END MOV",
    },
    "vs_vertexid_int": {
        "vs": "DIV END I2F MOV SHL UADD UMOD UMUL XOR",
        "fs": "AND DIV END I2F MOV",
    },
    "vs_loop_branch": {
        "vs": "ADD AND BGNLOOP BRK ELSE END ENDIF ENDLOOP FSLT ISGE ISLT MOV UADD UCMP UIF USEQ",
        "fs": "END MOV",
    },
    "shared_uniforms_both_stages": {
        "vs": "END MAD MOV",
        "fs": "DIV END FRC MAD MUL",
    },
    "vs_texel_fetch": {
        "vs": "END I2F MAD MOV MUL TXF TXQ",
        "fs": "END MOV",
    },
    "tex_nearest_repeat": {
        "vs": "END MAD MOV",
        "fs": "DIV END MAD TEX",
    },
    "tex_bilinear_clamp": {
        "vs": "END MAD MOV",
        "fs": "DIV END MAD TEX",
    },
    "tex_bilinear_repeat": {
        "vs": "END MOV",
        "fs": "END MUL TEX",
    },
    "tex_lod_mip_linear": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MOV MUL TXL",
    },
    "tex_implicit_lod_bias": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MOV MUL TEX TXB",
    },
    "tex_fetch_size_levels": {
        "vs": "END MAD MOV",
        "fs": "AND DIV END F2I I2F IABS ISSG MAD MOV TXF TXQ UMUL USHR",
    },
    "tex_grad": {
        "vs": "END MAD MOV",
        "fs": "DIV END EX2 FLR MOV MUL TXD",
    },
    "tex_proj": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MOV MUL TXP",
    },
    "tex_offset": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END F2I IABS ISSG MOV MUL TEX TXF UADD UMOD UMUL USHR",
    },
    "tex_shadow": {
        "vs": "END MAD MOV",
        "fs": "DIV END MAD MOV MUL TEX",
    },
    "tex_array": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END F2I I2F IABS ISSG MUL TEX UMUL USHR",
    },
    "tex_3d": {
        "vs": "END MAD MOV",
        "fs": "DIV END MAD MOV TEX",
    },
    "tex_cube": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END LRP MOV MUL TEX",
    },
    "tex_integer_formats": {
        "vs": "END MAD MOV",
        "fs": "ADD AND DIV END F2I I2F IABS ISSG MOV MUL TXF U2F UADD UMUL USHR",
    },
    "tex_gather": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END MUL TG4",
    },
    "tex_query_lod": {
        "vs": "END MAD MOV",
        "fs": "ADD DIV END EX2 FLR LODQ MAD MOV MUL",
    },
    "tex_two_units": {
        "vs": "END MAD MOV",
        "fs": "DIV END LRP MOV TEX",
    },
}
# END GENERATED OPCODES

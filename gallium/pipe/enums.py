"""Gallium ``pipe`` enums and limits for numpipe.

This module mirrors Mesa 18's ``src/gallium/include/pipe/p_defines.h`` and
``p_format.h`` (plus the implementation-limit ``#define``s of ``p_state.h``):
every C enum / flag group is an :class:`enum.IntEnum` or :class:`enum.IntFlag`
whose member names drop the C prefix and whose values equal the C values.

Transcribed from (Mesa 18.0 development era, early 2018):

* p_defines.h -- yuq/mesa-lima @ 2ab405d2547241b9999c46b7da144e2e94736886
  (the commit that added PIPE_CAP_FENCE_SIGNAL, right after
  PIPE_CAP_CONTEXT_PRIORITY_MASK; still has PIPE_CAPF_GUARD_BAND_* and PIPE_SHADER_IR_LLVM)
* p_format.h  -- opencor/mesa @ bfd9ff0632278e1cacff394f8b1dbb6efb528ad0
  (the format list ends at PIPE_FORMAT_P016 = 307)
* p_state.h   -- gpuci/mesa @ b296dbac1bf6e647390f60cd660e2f7133c4f7c2
  (late 2017), plus PIPE_MAX_HW_ATOMIC_BUFFERS

The original C spellings are aliases: ``C_NAMES`` maps every C name
(e.g. ``"PIPE_FORMAT_R8G8B8A8_UNORM"``) to its member, and each C name is also
exported as a module-level global, so ``enums.PIPE_CAP_MAX_RENDER_TARGETS is
Cap.MAX_RENDER_TARGETS``.
"""

from __future__ import annotations

import enum
import sys

# ---------------------------------------------------------------------------
# Plain constants
# ---------------------------------------------------------------------------

#: p_defines.h: fence_finish() timeout meaning "wait forever".
PIPE_TIMEOUT_INFINITE = 0xFFFFFFFFFFFFFFFF
#: p_defines.h: size of the device/driver UUIDs.
PIPE_UUID_SIZE = 16

# p_state.h implementation limits.
PIPE_MAX_ATTRIBS = 32
PIPE_MAX_CLIP_PLANES = 8
PIPE_MAX_COLOR_BUFS = 8
PIPE_MAX_CONSTANT_BUFFERS = 32
PIPE_MAX_SAMPLERS = 32
PIPE_MAX_SHADER_INPUTS = 80  # 32 GENERIC + 32 PATCH + 16 others
PIPE_MAX_SHADER_OUTPUTS = 80  # 32 GENERIC + 32 PATCH + 16 others
PIPE_MAX_SHADER_SAMPLER_VIEWS = 32
PIPE_MAX_SHADER_BUFFERS = 32
PIPE_MAX_SHADER_IMAGES = 32
PIPE_MAX_TEXTURE_LEVELS = 16
PIPE_MAX_SO_BUFFERS = 4
PIPE_MAX_SO_OUTPUTS = 64
PIPE_MAX_VERTEX_STREAMS = 4
PIPE_MAX_VIEWPORTS = 16
PIPE_MAX_CLIP_OR_CULL_DISTANCE_COUNT = 8
PIPE_MAX_CLIP_OR_CULL_DISTANCE_ELEMENT_COUNT = 2
PIPE_MAX_WINDOW_RECTANGLES = 8
PIPE_MAX_HW_ATOMIC_BUFFERS = 32  # added with the HW atomic counter caps

_CONSTANT_NAMES = [
    "PIPE_TIMEOUT_INFINITE",
    "PIPE_UUID_SIZE",
    "PIPE_MAX_ATTRIBS",
    "PIPE_MAX_CLIP_PLANES",
    "PIPE_MAX_COLOR_BUFS",
    "PIPE_MAX_CONSTANT_BUFFERS",
    "PIPE_MAX_SAMPLERS",
    "PIPE_MAX_SHADER_INPUTS",
    "PIPE_MAX_SHADER_OUTPUTS",
    "PIPE_MAX_SHADER_SAMPLER_VIEWS",
    "PIPE_MAX_SHADER_BUFFERS",
    "PIPE_MAX_SHADER_IMAGES",
    "PIPE_MAX_TEXTURE_LEVELS",
    "PIPE_MAX_SO_BUFFERS",
    "PIPE_MAX_SO_OUTPUTS",
    "PIPE_MAX_VERTEX_STREAMS",
    "PIPE_MAX_VIEWPORTS",
    "PIPE_MAX_CLIP_OR_CULL_DISTANCE_COUNT",
    "PIPE_MAX_CLIP_OR_CULL_DISTANCE_ELEMENT_COUNT",
    "PIPE_MAX_WINDOW_RECTANGLES",
    "PIPE_MAX_HW_ATOMIC_BUFFERS",
]


# ---------------------------------------------------------------------------
# p_format.h
# ---------------------------------------------------------------------------


class Format(enum.IntEnum):
    """Mirrors enum pipe_format (PIPE_FORMAT_*) from p_format.h."""

    NONE = 0
    B8G8R8A8_UNORM = 1
    B8G8R8X8_UNORM = 2
    A8R8G8B8_UNORM = 3
    X8R8G8B8_UNORM = 4
    B5G5R5A1_UNORM = 5
    B4G4R4A4_UNORM = 6
    B5G6R5_UNORM = 7
    R10G10B10A2_UNORM = 8
    L8_UNORM = 9
    A8_UNORM = 10
    I8_UNORM = 11
    L8A8_UNORM = 12
    L16_UNORM = 13
    UYVY = 14
    YUYV = 15
    Z16_UNORM = 16
    Z32_UNORM = 17
    Z32_FLOAT = 18
    Z24_UNORM_S8_UINT = 19
    S8_UINT_Z24_UNORM = 20
    Z24X8_UNORM = 21
    X8Z24_UNORM = 22
    S8_UINT = 23
    R64_FLOAT = 24
    R64G64_FLOAT = 25
    R64G64B64_FLOAT = 26
    R64G64B64A64_FLOAT = 27
    R32_FLOAT = 28
    R32G32_FLOAT = 29
    R32G32B32_FLOAT = 30
    R32G32B32A32_FLOAT = 31
    R32_UNORM = 32
    R32G32_UNORM = 33
    R32G32B32_UNORM = 34
    R32G32B32A32_UNORM = 35
    R32_USCALED = 36
    R32G32_USCALED = 37
    R32G32B32_USCALED = 38
    R32G32B32A32_USCALED = 39
    R32_SNORM = 40
    R32G32_SNORM = 41
    R32G32B32_SNORM = 42
    R32G32B32A32_SNORM = 43
    R32_SSCALED = 44
    R32G32_SSCALED = 45
    R32G32B32_SSCALED = 46
    R32G32B32A32_SSCALED = 47
    R16_UNORM = 48
    R16G16_UNORM = 49
    R16G16B16_UNORM = 50
    R16G16B16A16_UNORM = 51
    R16_USCALED = 52
    R16G16_USCALED = 53
    R16G16B16_USCALED = 54
    R16G16B16A16_USCALED = 55
    R16_SNORM = 56
    R16G16_SNORM = 57
    R16G16B16_SNORM = 58
    R16G16B16A16_SNORM = 59
    R16_SSCALED = 60
    R16G16_SSCALED = 61
    R16G16B16_SSCALED = 62
    R16G16B16A16_SSCALED = 63
    R8_UNORM = 64
    R8G8_UNORM = 65
    R8G8B8_UNORM = 66
    R8G8B8A8_UNORM = 67
    X8B8G8R8_UNORM = 68
    R8_USCALED = 69
    R8G8_USCALED = 70
    R8G8B8_USCALED = 71
    R8G8B8A8_USCALED = 72
    R8_SNORM = 74
    R8G8_SNORM = 75
    R8G8B8_SNORM = 76
    R8G8B8A8_SNORM = 77
    R8_SSCALED = 82
    R8G8_SSCALED = 83
    R8G8B8_SSCALED = 84
    R8G8B8A8_SSCALED = 85
    R32_FIXED = 87
    R32G32_FIXED = 88
    R32G32B32_FIXED = 89
    R32G32B32A32_FIXED = 90
    R16_FLOAT = 91
    R16G16_FLOAT = 92
    R16G16B16_FLOAT = 93
    R16G16B16A16_FLOAT = 94
    L8_SRGB = 95
    L8A8_SRGB = 96
    R8G8B8_SRGB = 97
    A8B8G8R8_SRGB = 98
    X8B8G8R8_SRGB = 99
    B8G8R8A8_SRGB = 100
    B8G8R8X8_SRGB = 101
    A8R8G8B8_SRGB = 102
    X8R8G8B8_SRGB = 103
    R8G8B8A8_SRGB = 104
    DXT1_RGB = 105
    DXT1_RGBA = 106
    DXT3_RGBA = 107
    DXT5_RGBA = 108
    DXT1_SRGB = 109
    DXT1_SRGBA = 110
    DXT3_SRGBA = 111
    DXT5_SRGBA = 112
    RGTC1_UNORM = 113
    RGTC1_SNORM = 114
    RGTC2_UNORM = 115
    RGTC2_SNORM = 116
    R8G8_B8G8_UNORM = 117
    G8R8_G8B8_UNORM = 118
    R8SG8SB8UX8U_NORM = 119
    R5SG5SB6U_NORM = 120
    A8B8G8R8_UNORM = 121
    B5G5R5X1_UNORM = 122
    R10G10B10A2_USCALED = 123
    R11G11B10_FLOAT = 124
    R9G9B9E5_FLOAT = 125
    Z32_FLOAT_S8X24_UINT = 126
    R1_UNORM = 127
    R10G10B10X2_USCALED = 128
    R10G10B10X2_SNORM = 129
    L4A4_UNORM = 130
    B10G10R10A2_UNORM = 131
    R10SG10SB10SA2U_NORM = 132
    R8G8Bx_SNORM = 133
    R8G8B8X8_UNORM = 134
    B4G4R4X4_UNORM = 135
    X24S8_UINT = 136
    S8X24_UINT = 137
    X32_S8X24_UINT = 138
    B2G3R3_UNORM = 139
    L16A16_UNORM = 140
    A16_UNORM = 141
    I16_UNORM = 142
    LATC1_UNORM = 143
    LATC1_SNORM = 144
    LATC2_UNORM = 145
    LATC2_SNORM = 146
    A8_SNORM = 147
    L8_SNORM = 148
    L8A8_SNORM = 149
    I8_SNORM = 150
    A16_SNORM = 151
    L16_SNORM = 152
    L16A16_SNORM = 153
    I16_SNORM = 154
    A16_FLOAT = 155
    L16_FLOAT = 156
    L16A16_FLOAT = 157
    I16_FLOAT = 158
    A32_FLOAT = 159
    L32_FLOAT = 160
    L32A32_FLOAT = 161
    I32_FLOAT = 162
    YV12 = 163
    YV16 = 164
    IYUV = 165
    NV12 = 166
    NV21 = 167
    A4R4_UNORM = 168
    R4A4_UNORM = 169
    R8A8_UNORM = 170
    A8R8_UNORM = 171
    R10G10B10A2_SSCALED = 172
    R10G10B10A2_SNORM = 173
    B10G10R10A2_USCALED = 174
    B10G10R10A2_SSCALED = 175
    B10G10R10A2_SNORM = 176
    R8_UINT = 177
    R8G8_UINT = 178
    R8G8B8_UINT = 179
    R8G8B8A8_UINT = 180
    R8_SINT = 181
    R8G8_SINT = 182
    R8G8B8_SINT = 183
    R8G8B8A8_SINT = 184
    R16_UINT = 185
    R16G16_UINT = 186
    R16G16B16_UINT = 187
    R16G16B16A16_UINT = 188
    R16_SINT = 189
    R16G16_SINT = 190
    R16G16B16_SINT = 191
    R16G16B16A16_SINT = 192
    R32_UINT = 193
    R32G32_UINT = 194
    R32G32B32_UINT = 195
    R32G32B32A32_UINT = 196
    R32_SINT = 197
    R32G32_SINT = 198
    R32G32B32_SINT = 199
    R32G32B32A32_SINT = 200
    A8_UINT = 201
    I8_UINT = 202
    L8_UINT = 203
    L8A8_UINT = 204
    A8_SINT = 205
    I8_SINT = 206
    L8_SINT = 207
    L8A8_SINT = 208
    A16_UINT = 209
    I16_UINT = 210
    L16_UINT = 211
    L16A16_UINT = 212
    A16_SINT = 213
    I16_SINT = 214
    L16_SINT = 215
    L16A16_SINT = 216
    A32_UINT = 217
    I32_UINT = 218
    L32_UINT = 219
    L32A32_UINT = 220
    A32_SINT = 221
    I32_SINT = 222
    L32_SINT = 223
    L32A32_SINT = 224
    B10G10R10A2_UINT = 225
    ETC1_RGB8 = 226
    R8G8_R8B8_UNORM = 227
    G8R8_B8R8_UNORM = 228
    R8G8B8X8_SNORM = 229
    R8G8B8X8_SRGB = 230
    R8G8B8X8_UINT = 231
    R8G8B8X8_SINT = 232
    B10G10R10X2_UNORM = 233
    R16G16B16X16_UNORM = 234
    R16G16B16X16_SNORM = 235
    R16G16B16X16_FLOAT = 236
    R16G16B16X16_UINT = 237
    R16G16B16X16_SINT = 238
    R32G32B32X32_FLOAT = 239
    R32G32B32X32_UINT = 240
    R32G32B32X32_SINT = 241
    R8A8_SNORM = 242
    R16A16_UNORM = 243
    R16A16_SNORM = 244
    R16A16_FLOAT = 245
    R32A32_FLOAT = 246
    R8A8_UINT = 247
    R8A8_SINT = 248
    R16A16_UINT = 249
    R16A16_SINT = 250
    R32A32_UINT = 251
    R32A32_SINT = 252
    R10G10B10A2_UINT = 253
    B5G6R5_SRGB = 254
    BPTC_RGBA_UNORM = 255
    BPTC_SRGBA = 256
    BPTC_RGB_FLOAT = 257
    BPTC_RGB_UFLOAT = 258
    A8L8_UNORM = 259
    A8L8_SNORM = 260
    A8L8_SRGB = 261
    A16L16_UNORM = 262
    G8R8_UNORM = 263
    G8R8_SNORM = 264
    G16R16_UNORM = 265
    G16R16_SNORM = 266
    A8B8G8R8_SNORM = 267
    X8B8G8R8_SNORM = 268
    ETC2_RGB8 = 269
    ETC2_SRGB8 = 270
    ETC2_RGB8A1 = 271
    ETC2_SRGB8A1 = 272
    ETC2_RGBA8 = 273
    ETC2_SRGBA8 = 274
    ETC2_R11_UNORM = 275
    ETC2_R11_SNORM = 276
    ETC2_RG11_UNORM = 277
    ETC2_RG11_SNORM = 278
    ASTC_4x4 = 279
    ASTC_5x4 = 280
    ASTC_5x5 = 281
    ASTC_6x5 = 282
    ASTC_6x6 = 283
    ASTC_8x5 = 284
    ASTC_8x6 = 285
    ASTC_8x8 = 286
    ASTC_10x5 = 287
    ASTC_10x6 = 288
    ASTC_10x8 = 289
    ASTC_10x10 = 290
    ASTC_12x10 = 291
    ASTC_12x12 = 292
    ASTC_4x4_SRGB = 293
    ASTC_5x4_SRGB = 294
    ASTC_5x5_SRGB = 295
    ASTC_6x5_SRGB = 296
    ASTC_6x6_SRGB = 297
    ASTC_8x5_SRGB = 298
    ASTC_8x6_SRGB = 299
    ASTC_8x8_SRGB = 300
    ASTC_10x5_SRGB = 301
    ASTC_10x6_SRGB = 302
    ASTC_10x8_SRGB = 303
    ASTC_10x10_SRGB = 304
    ASTC_12x10_SRGB = 305
    ASTC_12x12_SRGB = 306
    P016 = 307
    COUNT = 308


# ---------------------------------------------------------------------------
# p_defines.h
# ---------------------------------------------------------------------------


class Error(enum.IntEnum):
    """Mirrors enum pipe_error (PIPE_OK, PIPE_ERROR*) from p_defines.h."""

    OK = 0
    ERROR = -1
    ERROR_BAD_INPUT = -2
    ERROR_OUT_OF_MEMORY = -3
    ERROR_RETRY = -4


class BlendFactor(enum.IntEnum):
    """Mirrors enum pipe_blendfactor (PIPE_BLENDFACTOR_*) from p_defines.h."""

    ONE = 1
    SRC_COLOR = 2
    SRC_ALPHA = 3
    DST_ALPHA = 4
    DST_COLOR = 5
    SRC_ALPHA_SATURATE = 6
    CONST_COLOR = 7
    CONST_ALPHA = 8
    SRC1_COLOR = 9
    SRC1_ALPHA = 10
    ZERO = 17
    INV_SRC_COLOR = 18
    INV_SRC_ALPHA = 19
    INV_DST_ALPHA = 20
    INV_DST_COLOR = 21
    INV_CONST_COLOR = 23
    INV_CONST_ALPHA = 24
    INV_SRC1_COLOR = 25
    INV_SRC1_ALPHA = 26


class BlendFunc(enum.IntEnum):
    """Mirrors enum pipe_blend_func (PIPE_BLEND_*) from p_defines.h."""

    ADD = 0
    SUBTRACT = 1
    REVERSE_SUBTRACT = 2
    MIN = 3
    MAX = 4


class LogicOp(enum.IntEnum):
    """Mirrors enum pipe_logicop (PIPE_LOGICOP_*) from p_defines.h."""

    CLEAR = 0
    NOR = 1
    AND_INVERTED = 2
    COPY_INVERTED = 3
    AND_REVERSE = 4
    INVERT = 5
    XOR = 6
    NAND = 7
    AND = 8
    EQUIV = 9
    NOOP = 10
    OR_INVERTED = 11
    COPY = 12
    OR_REVERSE = 13
    OR = 14
    SET = 15


class Mask(enum.IntFlag):
    """Mirrors the PIPE_MASK_* colour/depth/stencil write-mask #defines from p_defines.h."""

    R = 1
    G = 2
    B = 4
    A = 8
    RGBA = 0xF
    Z = 0x10
    S = 0x20
    ZS = 0x30
    RGBAZS = 0x3F


class CompareFunc(enum.IntEnum):
    """Mirrors enum pipe_compare_func (PIPE_FUNC_*) from p_defines.h."""

    NEVER = 0
    LESS = 1
    EQUAL = 2
    LEQUAL = 3
    GREATER = 4
    NOTEQUAL = 5
    GEQUAL = 6
    ALWAYS = 7


class PolygonMode(enum.IntEnum):
    """Mirrors the anonymous polygon fill-mode enum (PIPE_POLYGON_MODE_*) from p_defines.h."""

    FILL = 0
    LINE = 1
    POINT = 2
    FILL_RECTANGLE = 3


class Face(enum.IntFlag):
    """Mirrors the PIPE_FACE_* culling #defines from p_defines.h."""

    NONE = 0
    FRONT = 1
    BACK = 2
    FRONT_AND_BACK = 3


class StencilOp(enum.IntEnum):
    """Mirrors enum pipe_stencil_op (PIPE_STENCIL_OP_*) from p_defines.h."""

    KEEP = 0
    ZERO = 1
    REPLACE = 2
    INCR = 3
    DECR = 4
    INCR_WRAP = 5
    DECR_WRAP = 6
    INVERT = 7


class TextureTarget(enum.IntEnum):
    """Mirrors enum pipe_texture_target (PIPE_BUFFER, PIPE_TEXTURE_*, PIPE_MAX_TEXTURE_TYPES)."""

    BUFFER = 0
    TEXTURE_1D = 1
    TEXTURE_2D = 2
    TEXTURE_3D = 3
    TEXTURE_CUBE = 4
    TEXTURE_RECT = 5
    TEXTURE_1D_ARRAY = 6
    TEXTURE_2D_ARRAY = 7
    TEXTURE_CUBE_ARRAY = 8
    MAX_TEXTURE_TYPES = 9


class TexFace(enum.IntEnum):
    """Mirrors enum pipe_tex_face (PIPE_TEX_FACE_*) from p_defines.h."""

    POS_X = 0
    NEG_X = 1
    POS_Y = 2
    NEG_Y = 3
    POS_Z = 4
    NEG_Z = 5
    MAX = 6


class TexWrap(enum.IntEnum):
    """Mirrors enum pipe_tex_wrap (PIPE_TEX_WRAP_*) from p_defines.h."""

    REPEAT = 0
    CLAMP = 1
    CLAMP_TO_EDGE = 2
    CLAMP_TO_BORDER = 3
    MIRROR_REPEAT = 4
    MIRROR_CLAMP = 5
    MIRROR_CLAMP_TO_EDGE = 6
    MIRROR_CLAMP_TO_BORDER = 7


class MipFilter(enum.IntEnum):
    """Mirrors enum pipe_tex_mipfilter (PIPE_TEX_MIPFILTER_*) from p_defines.h."""

    NEAREST = 0
    LINEAR = 1
    NONE = 2


class TexFilter(enum.IntEnum):
    """Mirrors enum pipe_tex_filter (PIPE_TEX_FILTER_*) from p_defines.h."""

    NEAREST = 0
    LINEAR = 1


class TexCompare(enum.IntEnum):
    """Mirrors enum pipe_tex_compare (PIPE_TEX_COMPARE_*) from p_defines.h."""

    NONE = 0
    R_TO_TEXTURE = 1


class Clear(enum.IntFlag):
    """Mirrors the PIPE_CLEAR_* buffer-bit #defines from p_defines.h."""

    DEPTH = 1
    STENCIL = 2
    COLOR0 = 4
    COLOR1 = 8
    COLOR2 = 0x10
    COLOR3 = 0x20
    COLOR4 = 0x40
    COLOR5 = 0x80
    COLOR6 = 0x100
    COLOR7 = 0x200
    COLOR = 0x3FC
    DEPTHSTENCIL = 3


class Transfer(enum.IntFlag):
    """Mirrors enum pipe_transfer_usage (PIPE_TRANSFER_*) from p_defines.h."""

    READ = 1
    WRITE = 2
    READ_WRITE = 3
    MAP_DIRECTLY = 4
    DISCARD_RANGE = 0x100
    DONTBLOCK = 0x200
    UNSYNCHRONIZED = 0x400
    FLUSH_EXPLICIT = 0x800
    DISCARD_WHOLE_RESOURCE = 0x1000
    PERSISTENT = 0x2000
    COHERENT = 0x4000


class Flush(enum.IntFlag):
    """Mirrors enum pipe_flush_flags (PIPE_FLUSH_*) from p_defines.h."""

    END_OF_FRAME = 1
    DEFERRED = 2
    FENCE_FD = 4
    ASYNC = 8
    HINT_FINISH = 0x10
    TOP_OF_PIPE = 0x20
    BOTTOM_OF_PIPE = 0x40


class DumpFlag(enum.IntFlag):
    """Mirrors the PIPE_DUMP_* flags of pipe_context::dump_debug_state from p_defines.h."""

    DEVICE_STATUS_REGISTERS = 1


class ContextFlag(enum.IntFlag):
    """Mirrors the PIPE_CONTEXT_* flags of pipe_screen::context_create from p_defines.h."""

    COMPUTE_ONLY = 1
    DEBUG = 2
    ROBUST_BUFFER_ACCESS = 4
    PREFER_THREADED = 8
    HIGH_PRIORITY = 0x10
    LOW_PRIORITY = 0x20


class Barrier(enum.IntFlag):
    """Mirrors the PIPE_BARRIER_* flags of pipe_context::memory_barrier from p_defines.h."""

    MAPPED_BUFFER = 1
    SHADER_BUFFER = 2
    QUERY_BUFFER = 4
    VERTEX_BUFFER = 8
    INDEX_BUFFER = 0x10
    CONSTANT_BUFFER = 0x20
    INDIRECT_BUFFER = 0x40
    TEXTURE = 0x80
    IMAGE = 0x100
    FRAMEBUFFER = 0x200
    STREAMOUT_BUFFER = 0x400
    GLOBAL_BUFFER = 0x800
    ALL = 0xFFF


class TextureBarrier(enum.IntFlag):
    """Mirrors the PIPE_TEXTURE_BARRIER_* flags of pipe_context::texture_barrier."""

    SAMPLER = 1
    FRAMEBUFFER = 2


class Bind(enum.IntFlag):
    """Mirrors the PIPE_BIND_* resource binding #defines from p_defines.h."""

    DEPTH_STENCIL = 1
    RENDER_TARGET = 2
    BLENDABLE = 4
    SAMPLER_VIEW = 8
    VERTEX_BUFFER = 0x10
    INDEX_BUFFER = 0x20
    CONSTANT_BUFFER = 0x40
    DISPLAY_TARGET = 0x80
    STREAM_OUTPUT = 0x400
    CURSOR = 0x800
    CUSTOM = 0x1000
    GLOBAL = 0x2000
    SHADER_BUFFER = 0x4000
    SHADER_IMAGE = 0x8000
    COMPUTE_RESOURCE = 0x10000
    COMMAND_ARGS_BUFFER = 0x20000
    QUERY_BUFFER = 0x40000
    SCANOUT = 0x80000
    SHARED = 0x100000
    LINEAR = 0x200000


class ResourceFlag(enum.IntFlag):
    """Mirrors the PIPE_RESOURCE_FLAG_* #defines from p_defines.h."""

    MAP_PERSISTENT = 1
    MAP_COHERENT = 2
    TEXTURING_MORE_LIKELY = 4
    SPARSE = 8
    DRV_PRIV = 0x10000
    ST_PRIV = 0x1000000


class Usage(enum.IntEnum):
    """Mirrors enum pipe_resource_usage (PIPE_USAGE_*) from p_defines.h."""

    DEFAULT = 0
    IMMUTABLE = 1
    DYNAMIC = 2
    STREAM = 3
    STAGING = 4


class ShaderType(enum.IntEnum):
    """Mirrors enum pipe_shader_type (PIPE_SHADER_*) from p_defines.h."""

    VERTEX = 0
    FRAGMENT = 1
    GEOMETRY = 2
    TESS_CTRL = 3
    TESS_EVAL = 4
    COMPUTE = 5
    TYPES = 6


class Prim(enum.IntEnum):
    """Mirrors enum pipe_prim_type (PIPE_PRIM_*) from p_defines.h."""

    POINTS = 0
    LINES = 1
    LINE_LOOP = 2
    LINE_STRIP = 3
    TRIANGLES = 4
    TRIANGLE_STRIP = 5
    TRIANGLE_FAN = 6
    QUADS = 7
    QUAD_STRIP = 8
    POLYGON = 9
    LINES_ADJACENCY = 10
    LINE_STRIP_ADJACENCY = 11
    TRIANGLES_ADJACENCY = 12
    TRIANGLE_STRIP_ADJACENCY = 13
    PATCHES = 14
    MAX = 15


class TessSpacing(enum.IntEnum):
    """Mirrors enum pipe_tess_spacing (PIPE_TESS_SPACING_*) from p_defines.h."""

    FRACTIONAL_ODD = 0
    FRACTIONAL_EVEN = 1
    EQUAL = 2


class QueryType(enum.IntEnum):
    """Mirrors enum pipe_query_type (PIPE_QUERY_*) from p_defines.h."""

    OCCLUSION_COUNTER = 0
    OCCLUSION_PREDICATE = 1
    OCCLUSION_PREDICATE_CONSERVATIVE = 2
    TIMESTAMP = 3
    TIMESTAMP_DISJOINT = 4
    TIME_ELAPSED = 5
    PRIMITIVES_GENERATED = 6
    PRIMITIVES_EMITTED = 7
    SO_STATISTICS = 8
    SO_OVERFLOW_PREDICATE = 9
    SO_OVERFLOW_ANY_PREDICATE = 10
    GPU_FINISHED = 11
    PIPELINE_STATISTICS = 12
    TYPES = 13
    DRIVER_SPECIFIC = 256


class RenderCond(enum.IntEnum):
    """Mirrors enum pipe_render_cond_flag (PIPE_RENDER_COND_*) from p_defines.h."""

    WAIT = 0
    NO_WAIT = 1
    BY_REGION_WAIT = 2
    BY_REGION_NO_WAIT = 3


class SpriteCoord(enum.IntEnum):
    """Mirrors enum pipe_sprite_coord_mode (PIPE_SPRITE_COORD_*) from p_defines.h."""

    UPPER_LEFT = 0
    LOWER_LEFT = 1


class Swizzle(enum.IntEnum):
    """Mirrors enum pipe_swizzle (PIPE_SWIZZLE_*) from p_defines.h."""

    X = 0
    Y = 1
    Z = 2
    W = 3
    # PIPE_SWIZZLE_0 / PIPE_SWIZZLE_1: a Python name cannot start with a digit,
    # so they are spelled ZERO / ONE (the C spellings are in C_NAMES).
    ZERO = 4
    ONE = 5
    NONE = 6
    MAX = 7


class ResetStatus(enum.IntEnum):
    """Mirrors enum pipe_reset_status (PIPE_NO_RESET, PIPE_*_CONTEXT_RESET) from p_defines.h."""

    NO_RESET = 0
    GUILTY_CONTEXT_RESET = 1
    INNOCENT_CONTEXT_RESET = 2
    UNKNOWN_CONTEXT_RESET = 3


class HandleUsage(enum.IntFlag):
    """Mirrors the PIPE_HANDLE_USAGE_* resource_get_handle flags from p_defines.h."""

    EXPLICIT_FLUSH = 1
    READ = 2
    WRITE = 4
    READ_WRITE = 6


class ImageAccess(enum.IntFlag):
    """Mirrors the PIPE_IMAGE_ACCESS_* pipe_image_view access flags from p_defines.h."""

    READ = 1
    WRITE = 2
    READ_WRITE = 3


class Cap(enum.IntEnum):
    """Mirrors enum pipe_cap (PIPE_CAP_*), for pipe_screen::get_param() from p_defines.h."""

    NPOT_TEXTURES = 0
    MAX_DUAL_SOURCE_RENDER_TARGETS = 1
    ANISOTROPIC_FILTER = 2
    POINT_SPRITE = 3
    MAX_RENDER_TARGETS = 4
    OCCLUSION_QUERY = 5
    QUERY_TIME_ELAPSED = 6
    TEXTURE_SWIZZLE = 7
    MAX_TEXTURE_2D_LEVELS = 8
    MAX_TEXTURE_3D_LEVELS = 9
    MAX_TEXTURE_CUBE_LEVELS = 10
    TEXTURE_MIRROR_CLAMP = 11
    BLEND_EQUATION_SEPARATE = 12
    SM3 = 13
    MAX_STREAM_OUTPUT_BUFFERS = 14
    PRIMITIVE_RESTART = 15
    INDEP_BLEND_ENABLE = 16
    INDEP_BLEND_FUNC = 17
    MAX_TEXTURE_ARRAY_LAYERS = 18
    TGSI_FS_COORD_ORIGIN_UPPER_LEFT = 19
    TGSI_FS_COORD_ORIGIN_LOWER_LEFT = 20
    TGSI_FS_COORD_PIXEL_CENTER_HALF_INTEGER = 21
    TGSI_FS_COORD_PIXEL_CENTER_INTEGER = 22
    DEPTH_CLIP_DISABLE = 23
    SHADER_STENCIL_EXPORT = 24
    TGSI_INSTANCEID = 25
    VERTEX_ELEMENT_INSTANCE_DIVISOR = 26
    FRAGMENT_COLOR_CLAMPED = 27
    MIXED_COLORBUFFER_FORMATS = 28
    SEAMLESS_CUBE_MAP = 29
    SEAMLESS_CUBE_MAP_PER_TEXTURE = 30
    MIN_TEXEL_OFFSET = 31
    MAX_TEXEL_OFFSET = 32
    CONDITIONAL_RENDER = 33
    TEXTURE_BARRIER = 34
    MAX_STREAM_OUTPUT_SEPARATE_COMPONENTS = 35
    MAX_STREAM_OUTPUT_INTERLEAVED_COMPONENTS = 36
    STREAM_OUTPUT_PAUSE_RESUME = 37
    TGSI_CAN_COMPACT_CONSTANTS = 38
    VERTEX_COLOR_UNCLAMPED = 39
    VERTEX_COLOR_CLAMPED = 40
    GLSL_FEATURE_LEVEL = 41
    QUADS_FOLLOW_PROVOKING_VERTEX_CONVENTION = 42
    USER_VERTEX_BUFFERS = 43
    VERTEX_BUFFER_OFFSET_4BYTE_ALIGNED_ONLY = 44
    VERTEX_BUFFER_STRIDE_4BYTE_ALIGNED_ONLY = 45
    VERTEX_ELEMENT_SRC_OFFSET_4BYTE_ALIGNED_ONLY = 46
    COMPUTE = 47
    CONSTANT_BUFFER_OFFSET_ALIGNMENT = 48
    START_INSTANCE = 49
    QUERY_TIMESTAMP = 50
    TEXTURE_MULTISAMPLE = 51
    MIN_MAP_BUFFER_ALIGNMENT = 52
    CUBE_MAP_ARRAY = 53
    TEXTURE_BUFFER_OBJECTS = 54
    TEXTURE_BUFFER_OFFSET_ALIGNMENT = 55
    BUFFER_SAMPLER_VIEW_RGBA_ONLY = 56
    TGSI_TEXCOORD = 57
    PREFER_BLIT_BASED_TEXTURE_TRANSFER = 58
    QUERY_PIPELINE_STATISTICS = 59
    TEXTURE_BORDER_COLOR_QUIRK = 60
    MAX_TEXTURE_BUFFER_SIZE = 61
    MAX_VIEWPORTS = 62
    ENDIANNESS = 63
    MIXED_FRAMEBUFFER_SIZES = 64
    TGSI_VS_LAYER_VIEWPORT = 65
    MAX_GEOMETRY_OUTPUT_VERTICES = 66
    MAX_GEOMETRY_TOTAL_OUTPUT_COMPONENTS = 67
    MAX_TEXTURE_GATHER_COMPONENTS = 68
    TEXTURE_GATHER_SM5 = 69
    BUFFER_MAP_PERSISTENT_COHERENT = 70
    FAKE_SW_MSAA = 71
    TEXTURE_QUERY_LOD = 72
    MIN_TEXTURE_GATHER_OFFSET = 73
    MAX_TEXTURE_GATHER_OFFSET = 74
    SAMPLE_SHADING = 75
    TEXTURE_GATHER_OFFSETS = 76
    TGSI_VS_WINDOW_SPACE_POSITION = 77
    MAX_VERTEX_STREAMS = 78
    DRAW_INDIRECT = 79
    TGSI_FS_FINE_DERIVATIVE = 80
    VENDOR_ID = 81
    DEVICE_ID = 82
    ACCELERATED = 83
    VIDEO_MEMORY = 84
    UMA = 85
    CONDITIONAL_RENDER_INVERTED = 86
    MAX_VERTEX_ATTRIB_STRIDE = 87
    SAMPLER_VIEW_TARGET = 88
    CLIP_HALFZ = 89
    VERTEXID_NOBASE = 90
    POLYGON_OFFSET_CLAMP = 91
    MULTISAMPLE_Z_RESOLVE = 92
    RESOURCE_FROM_USER_MEMORY = 93
    DEVICE_RESET_STATUS_QUERY = 94
    MAX_SHADER_PATCH_VARYINGS = 95
    TEXTURE_FLOAT_LINEAR = 96
    TEXTURE_HALF_FLOAT_LINEAR = 97
    DEPTH_BOUNDS_TEST = 98
    TGSI_TXQS = 99
    FORCE_PERSAMPLE_INTERP = 100
    SHAREABLE_SHADERS = 101
    COPY_BETWEEN_COMPRESSED_AND_PLAIN_FORMATS = 102
    CLEAR_TEXTURE = 103
    DRAW_PARAMETERS = 104
    TGSI_PACK_HALF_FLOAT = 105
    MULTI_DRAW_INDIRECT = 106
    MULTI_DRAW_INDIRECT_PARAMS = 107
    TGSI_FS_POSITION_IS_SYSVAL = 108
    TGSI_FS_FACE_IS_INTEGER_SYSVAL = 109
    SHADER_BUFFER_OFFSET_ALIGNMENT = 110
    INVALIDATE_BUFFER = 111
    GENERATE_MIPMAP = 112
    STRING_MARKER = 113
    SURFACE_REINTERPRET_BLOCKS = 114
    QUERY_BUFFER_OBJECT = 115
    QUERY_MEMORY_INFO = 116
    PCI_GROUP = 117
    PCI_BUS = 118
    PCI_DEVICE = 119
    PCI_FUNCTION = 120
    FRAMEBUFFER_NO_ATTACHMENT = 121
    ROBUST_BUFFER_ACCESS_BEHAVIOR = 122
    CULL_DISTANCE = 123
    PRIMITIVE_RESTART_FOR_PATCHES = 124
    TGSI_VOTE = 125
    MAX_WINDOW_RECTANGLES = 126
    POLYGON_OFFSET_UNITS_UNSCALED = 127
    VIEWPORT_SUBPIXEL_BITS = 128
    MIXED_COLOR_DEPTH_BITS = 129
    TGSI_ARRAY_COMPONENTS = 130
    STREAM_OUTPUT_INTERLEAVE_BUFFERS = 131
    TGSI_CAN_READ_OUTPUTS = 132
    NATIVE_FENCE_FD = 133
    GLSL_OPTIMIZE_CONSERVATIVELY = 134
    TGSI_FS_FBFETCH = 135
    TGSI_MUL_ZERO_WINS = 136
    DOUBLES = 137
    INT64 = 138
    INT64_DIVMOD = 139
    TGSI_TEX_TXF_LZ = 140
    TGSI_CLOCK = 141
    POLYGON_MODE_FILL_RECTANGLE = 142
    SPARSE_BUFFER_PAGE_SIZE = 143
    TGSI_BALLOT = 144
    TGSI_TES_LAYER_VIEWPORT = 145
    CAN_BIND_CONST_BUFFER_AS_VERTEX = 146
    ALLOW_MAPPED_BUFFERS_DURING_EXECUTION = 147
    POST_DEPTH_COVERAGE = 148
    BINDLESS_TEXTURE = 149
    NIR_SAMPLERS_AS_DEREF = 150
    QUERY_SO_OVERFLOW = 151
    MEMOBJ = 152
    LOAD_CONSTBUF = 153
    TGSI_ANY_REG_AS_ADDRESS = 154
    TILE_RASTER_ORDER = 155
    MAX_COMBINED_SHADER_OUTPUT_RESOURCES = 156
    SIGNED_VERTEX_BUFFER_OFFSET = 157
    CONTEXT_PRIORITY_MASK = 158
    FENCE_SIGNAL = 159


class ContextPriority(enum.IntFlag):
    """Mirrors the PIPE_CONTEXT_PRIORITY_* bits of PIPE_CAP_CONTEXT_PRIORITY_MASK."""

    LOW = 1
    MEDIUM = 2
    HIGH = 4


class Quirk(enum.IntFlag):
    """Mirrors the PIPE_QUIRK_* bits of PIPE_CAP_TEXTURE_BORDER_COLOR_QUIRK from p_defines.h."""

    TEXTURE_BORDER_COLOR_SWIZZLE_NV50 = 1
    TEXTURE_BORDER_COLOR_SWIZZLE_R600 = 2


class Endian(enum.IntEnum):
    """Mirrors enum pipe_endian (PIPE_ENDIAN_*) from p_defines.h."""

    LITTLE = 0
    BIG = 1
    # PIPE_ENDIAN_NATIVE is picked by the C preprocessor from the host byte
    # order; here it is an alias of LITTLE or BIG chosen from sys.byteorder.
    NATIVE = LITTLE if sys.byteorder == "little" else BIG


class CapF(enum.IntEnum):
    """Mirrors enum pipe_capf (PIPE_CAPF_*), for pipe_screen::get_paramf() from p_defines.h."""

    MAX_LINE_WIDTH = 0
    MAX_LINE_WIDTH_AA = 1
    MAX_POINT_WIDTH = 2
    MAX_POINT_WIDTH_AA = 3
    MAX_TEXTURE_ANISOTROPY = 4
    MAX_TEXTURE_LOD_BIAS = 5
    GUARD_BAND_LEFT = 6
    GUARD_BAND_TOP = 7
    GUARD_BAND_RIGHT = 8
    GUARD_BAND_BOTTOM = 9


class ShaderCap(enum.IntEnum):
    """Mirrors enum pipe_shader_cap (PIPE_SHADER_CAP_*), for get_shader_param() from p_defines.h."""

    MAX_INSTRUCTIONS = 0
    MAX_ALU_INSTRUCTIONS = 1
    MAX_TEX_INSTRUCTIONS = 2
    MAX_TEX_INDIRECTIONS = 3
    MAX_CONTROL_FLOW_DEPTH = 4
    MAX_INPUTS = 5
    MAX_OUTPUTS = 6
    MAX_CONST_BUFFER_SIZE = 7
    MAX_CONST_BUFFERS = 8
    MAX_TEMPS = 9
    TGSI_CONT_SUPPORTED = 10
    INDIRECT_INPUT_ADDR = 11
    INDIRECT_OUTPUT_ADDR = 12
    INDIRECT_TEMP_ADDR = 13
    INDIRECT_CONST_ADDR = 14
    SUBROUTINES = 15
    INTEGERS = 16
    INT64_ATOMICS = 17
    FP16 = 18
    MAX_TEXTURE_SAMPLERS = 19
    PREFERRED_IR = 20
    TGSI_SQRT_SUPPORTED = 21
    MAX_SAMPLER_VIEWS = 22
    TGSI_DROUND_SUPPORTED = 23
    TGSI_DFRACEXP_DLDEXP_SUPPORTED = 24
    TGSI_FMA_SUPPORTED = 25
    TGSI_ANY_INOUT_DECL_RANGE = 26
    MAX_UNROLL_ITERATIONS_HINT = 27
    MAX_SHADER_BUFFERS = 28
    SUPPORTED_IRS = 29
    MAX_SHADER_IMAGES = 30
    LOWER_IF_THRESHOLD = 31
    TGSI_SKIP_MERGE_REGISTERS = 32
    TGSI_LDEXP_SUPPORTED = 33
    MAX_HW_ATOMIC_COUNTERS = 34
    MAX_HW_ATOMIC_COUNTER_BUFFERS = 35


class ShaderIR(enum.IntEnum):
    """Mirrors enum pipe_shader_ir (PIPE_SHADER_IR_*) from p_defines.h."""

    TGSI = 0
    LLVM = 1
    NATIVE = 2
    NIR = 3


class ComputeCap(enum.IntEnum):
    """Mirrors enum pipe_compute_cap (PIPE_COMPUTE_CAP_*), for get_compute_param()."""

    ADDRESS_BITS = 0
    IR_TARGET = 1
    GRID_DIMENSION = 2
    MAX_GRID_SIZE = 3
    MAX_BLOCK_SIZE = 4
    MAX_THREADS_PER_BLOCK = 5
    MAX_GLOBAL_SIZE = 6
    MAX_LOCAL_SIZE = 7
    MAX_PRIVATE_SIZE = 8
    MAX_INPUT_SIZE = 9
    MAX_MEM_ALLOC_SIZE = 10
    MAX_CLOCK_FREQUENCY = 11
    MAX_COMPUTE_UNITS = 12
    IMAGES_SUPPORTED = 13
    SUBGROUP_SIZE = 14
    MAX_VARIABLE_THREADS_PER_BLOCK = 15


class QueryValueType(enum.IntEnum):
    """Mirrors enum pipe_query_value_type (PIPE_QUERY_TYPE_*) from p_defines.h."""

    I32 = 0
    U32 = 1
    I64 = 2
    U64 = 3


class DriverQueryType(enum.IntEnum):
    """Mirrors enum pipe_driver_query_type (PIPE_DRIVER_QUERY_TYPE_*) from p_defines.h."""

    UINT64 = 0
    UINT = 1
    FLOAT = 2
    PERCENTAGE = 3
    BYTES = 4
    MICROSECONDS = 5
    HZ = 6
    DBM = 7
    TEMPERATURE = 8
    VOLTS = 9
    AMPS = 10
    WATTS = 11


class DriverQueryResultType(enum.IntEnum):
    """Mirrors enum pipe_driver_query_result_type (PIPE_DRIVER_QUERY_RESULT_TYPE_*)."""

    AVERAGE = 0
    CUMULATIVE = 1


class DriverQueryFlag(enum.IntFlag):
    """Mirrors the PIPE_DRIVER_QUERY_FLAG_* driver query flags from p_defines.h."""

    BATCH = 1
    DONT_LIST = 2


class FdType(enum.IntEnum):
    """Mirrors enum pipe_fd_type (PIPE_FD_TYPE_*) from p_defines.h."""

    NATIVE_SYNC = 0


class DebugType(enum.IntEnum):
    """Mirrors enum pipe_debug_type (PIPE_DEBUG_TYPE_*) from p_defines.h."""

    OUT_OF_MEMORY = 1
    ERROR = 2
    SHADER_INFO = 3
    PERF_INFO = 4
    INFO = 5
    FALLBACK = 6
    CONFORMANCE = 7


#: The C spelling of pipe_quirk bits is PIPE_QUIRK_*; also known by this longer name.
TextureBorderColorQuirk = Quirk


# ---------------------------------------------------------------------------
# C-name aliases
# ---------------------------------------------------------------------------

#: C prefix of every class: C name == prefix + member name (except below).
_C_PREFIX: dict[type[enum.Enum], str] = {
    Format: "PIPE_FORMAT_",
    Error: "PIPE_",
    BlendFactor: "PIPE_BLENDFACTOR_",
    BlendFunc: "PIPE_BLEND_",
    LogicOp: "PIPE_LOGICOP_",
    Mask: "PIPE_MASK_",
    CompareFunc: "PIPE_FUNC_",
    PolygonMode: "PIPE_POLYGON_MODE_",
    Face: "PIPE_FACE_",
    StencilOp: "PIPE_STENCIL_OP_",
    TextureTarget: "PIPE_",
    TexFace: "PIPE_TEX_FACE_",
    TexWrap: "PIPE_TEX_WRAP_",
    MipFilter: "PIPE_TEX_MIPFILTER_",
    TexFilter: "PIPE_TEX_FILTER_",
    TexCompare: "PIPE_TEX_COMPARE_",
    Clear: "PIPE_CLEAR_",
    Transfer: "PIPE_TRANSFER_",
    Flush: "PIPE_FLUSH_",
    DumpFlag: "PIPE_DUMP_",
    ContextFlag: "PIPE_CONTEXT_",
    Barrier: "PIPE_BARRIER_",
    TextureBarrier: "PIPE_TEXTURE_BARRIER_",
    Bind: "PIPE_BIND_",
    ResourceFlag: "PIPE_RESOURCE_FLAG_",
    Usage: "PIPE_USAGE_",
    ShaderType: "PIPE_SHADER_",
    Prim: "PIPE_PRIM_",
    TessSpacing: "PIPE_TESS_SPACING_",
    QueryType: "PIPE_QUERY_",
    RenderCond: "PIPE_RENDER_COND_",
    SpriteCoord: "PIPE_SPRITE_COORD_",
    Swizzle: "PIPE_SWIZZLE_",
    ResetStatus: "PIPE_",
    HandleUsage: "PIPE_HANDLE_USAGE_",
    ImageAccess: "PIPE_IMAGE_ACCESS_",
    Cap: "PIPE_CAP_",
    ContextPriority: "PIPE_CONTEXT_PRIORITY_",
    Quirk: "PIPE_QUIRK_",
    Endian: "PIPE_ENDIAN_",
    CapF: "PIPE_CAPF_",
    ShaderCap: "PIPE_SHADER_CAP_",
    ShaderIR: "PIPE_SHADER_IR_",
    ComputeCap: "PIPE_COMPUTE_CAP_",
    QueryValueType: "PIPE_QUERY_TYPE_",
    DriverQueryType: "PIPE_DRIVER_QUERY_TYPE_",
    DriverQueryResultType: "PIPE_DRIVER_QUERY_RESULT_TYPE_",
    DriverQueryFlag: "PIPE_DRIVER_QUERY_FLAG_",
    FdType: "PIPE_FD_TYPE_",
    DebugType: "PIPE_DEBUG_TYPE_",
}

#: C spellings that are not prefix + member name, keyed by (class, member name).
#: Keyed by name rather than member because IntEnum members of different classes
#: with equal values compare (and hash) equal.
_C_SPELLING_EXCEPTIONS: dict[tuple[type[enum.Enum], str], str] = {
    # Python names cannot start with a digit: Swizzle.ZERO / Swizzle.ONE.
    (Swizzle, "ZERO"): "PIPE_SWIZZLE_0",
    (Swizzle, "ONE"): "PIPE_SWIZZLE_1",
}


def _build_c_names() -> dict[str, enum.Enum]:
    """Map every C spelling (aliases included) to its enum member."""
    names: dict[str, enum.Enum] = {}
    for cls, prefix in _C_PREFIX.items():
        for name, member in cls.__members__.items():
            c_name = _C_SPELLING_EXCEPTIONS.get((cls, name), prefix + name)
            if c_name in names:
                raise RuntimeError(f"duplicate C name {c_name}")
            names[c_name] = member
    return names


C_NAMES: dict[str, enum.Enum] = _build_c_names()

_clash = set(C_NAMES) & set(globals())
if _clash:
    raise RuntimeError(f"C names clash with module globals: {sorted(_clash)}")
del _clash

globals().update(C_NAMES)

_all_names = [cls.__name__ for cls in _C_PREFIX]
_all_names += ["TextureBorderColorQuirk", "C_NAMES", *_CONSTANT_NAMES, *C_NAMES]
__all__ = list(_all_names)
del _all_names

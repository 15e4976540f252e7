"""Shader buffers and images in vertex and fragment shaders: GLSL programs, and what
Mesa made of them.

Each :class:`Scene` draws ``triangles`` (clip-space corners, three per triangle,
in draw order) on a 32x32 RGBA8 framebuffer with a depth buffer (LESS), with one
shader storage buffer (``ssbo_words`` uint32, binding 0, zero-filled) and,
optionally, one 32x32 R32UI image (``image``, zero-filled, image unit 0).
``tools/make_memory_reference.py`` runs it twice:

* on softpipe (``SOFTPIPE_DEBUG=use_tgsi``, ``GALLIUM_TRACE``): the TGSI of the
  programs and the Gallium slots the buffer and the image were bound to
  (``<name>.vs.tgsi``, ``.fs.tgsi``, ``<name>.json``);
* on llvmpipe: the buffer's words, the image's texels and the colour image
  after the draw (``<name>.json``, ``<name>.png``, row 0 = NDC y -1).

Every scene's results are deterministic on any GPU: counts of invocations,
and per-pixel stores whose value names the primitive (the last one drawn to a
pixel wins); ``tests/test_shader_memory.py`` compares them exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WIDTH = HEIGHT = 32

VS_PLAIN = """#version 330
layout(location = 0) in vec4 in_pos;
void main() { gl_Position = in_pos; }
"""


@dataclass(frozen=True)
class Scene:
    name: str
    vs: str
    fs: str
    triangles: tuple[tuple[float, float, float], ...]  # (x, y, z) corners, 3 a triangle
    ssbo_words: int = 1
    image: bool = False
    depth: bool = True

    def vertices(self) -> np.ndarray:
        v = np.zeros((len(self.triangles), 4), np.float32)
        v[:, :3] = np.array(self.triangles, np.float32)
        v[:, 3] = 1
        return v


# two overlapping triangle pairs: the nearer drawn second, then a farther one third
_TRIS = (
    (-0.9, -0.9, 0.5), (0.9, -0.9, 0.5), (-0.9, 0.9, 0.5),
    (-0.5, -0.6, 0.25), (0.8, 0.7, 0.25), (-0.6, 0.8, 0.25),
    (-0.7, -0.8, 0.75), (0.7, -0.2, 0.75), (0.2, 0.9, 0.75),
)  # fmt: skip

FS_COUNT = """#version 330
#extension GL_ARB_shader_storage_buffer_object : require
{early}
layout(std430, binding = 0) buffer Counter {{ uint count; }};
out vec4 color;
void main() {{
    uint n = atomicAdd(count, 1u);
    color = vec4(float(gl_PrimitiveID) * 0.25, 0.5, 0.0, 1.0);
}}
"""

FS_PIXEL_IDS = """#version 330
#extension GL_ARB_shader_storage_buffer_object : require
#extension GL_ARB_shader_image_load_store : require
layout(std430, binding = 0) buffer Ids { uint ids[]; };
layout(r32ui) uniform uimage2D img;
out vec4 color;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    uint id = uint(gl_PrimitiveID) + 1u;
    ids[p.y * 32 + p.x] = id;
    imageStore(img, p, uvec4(id * 16u + uint(gl_FragCoord.z * 8.0)));
    color = vec4(0.0, 0.25 * float(id), 1.0, 1.0);
}
"""

FS_DISCARD_DERIVATIVES = """#version 330
#extension GL_ARB_shader_storage_buffer_object : require
layout(std430, binding = 0) buffer Marks { uint marks[]; };
out vec4 color;
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    float d = dFdx(gl_FragCoord.x) + dFdy(gl_FragCoord.y);
    if (((p.x + p.y) & 3) == 0)
        discard;
    atomicAdd(marks[p.y * 32 + p.x], uint(d));
    color = vec4(d * 0.25, 0.0, 1.0, 1.0);
}
"""

VS_WRITES = """#version 330
#extension GL_ARB_shader_storage_buffer_object : require
layout(location = 0) in vec4 in_pos;
layout(std430, binding = 0) buffer Out { uint words[]; };
void main() {
    gl_Position = in_pos;
    words[gl_VertexID] = floatBitsToUint(in_pos.x * 2.0 + in_pos.y);
    atomicAdd(words[63], 1u);
}
"""

FS_RED = """#version 330
out vec4 color;
void main() { color = vec4(1.0, 0.0, 0.0, 1.0); }
"""

SCENES: tuple[Scene, ...] = (
    # every covered fragment runs the shader (depth test after it)
    Scene("fs_count_late", VS_PLAIN, FS_COUNT.format(early=""), _TRIS),
    # only fragments passing the depth test at their turn run it
    Scene(
        "fs_count_early",
        VS_PLAIN,
        FS_COUNT.format(early="layout(early_fragment_tests) in;"),
        _TRIS,
    ),
    # per-pixel stores to a buffer and an image: the last primitive wins
    Scene("fs_pixel_ids", VS_PLAIN, FS_PIXEL_IDS, _TRIS, ssbo_words=1024, image=True),
    # helper invocations (derivatives) and discarded fragments store nothing
    Scene("fs_discard_derivatives", VS_PLAIN, FS_DISCARD_DERIVATIVES, _TRIS, ssbo_words=1024),
    # a vertex shader's stores and atomics
    Scene("vs_writes", VS_WRITES, FS_RED, _TRIS, ssbo_words=64),
)


def scene_by_name(name: str) -> Scene:
    for s in SCENES:
        if s.name == name:
            return s
    raise KeyError(name)

"""Draws that switch rasterizer states and fragment shaders within one frame
link and set up as if each were drawn alone.

A context remembers, until the scene is submitted, the linkage of the last
vertex stage to the fragment shader and the polygon fields that follow from it
and the rasterizer state (NumpipeContext._link_program).  These frames change
the shading model, the fill mode and the fragment shader between draws of one
scene, and must give the bytes of the same draws each in a frame of its own.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import get_screen
from helpers import make_target, read_rgba8

from gallium import pipe

VS = """VERT
DCL IN[0]
DCL IN[1]
DCL OUT[0], POSITION
DCL OUT[1], COLOR
DCL OUT[2], GENERIC[0]
  0: MOV OUT[0], IN[0]
  1: MOV OUT[1], IN[1]
  2: MOV OUT[2], IN[1].wzyx
  3: END
"""
# colour inputs follow the rasterizer's flatshade; the second shader reads a generic
FS_COLOR = """FRAG
DCL IN[0], COLOR, COLOR
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""
FS_GENERIC = """FRAG
DCL IN[0], GENERIC[0], PERSPECTIVE
DCL OUT[0], COLOR
  0: MOV OUT[0], IN[0]
  1: END
"""


def _triangle(x0: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = np.zeros((3, 8), np.float32)
    v[:, 0] = [x0, x0 + 0.6, x0 + 0.1]
    v[:, 1] = [-0.9, -0.5, 0.9]
    v[:, 3] = 1.0
    v[:, 4:8] = rng.uniform(0, 1, (3, 4))
    return v


def _states(ctx) -> dict:
    fill = pipe.PolygonMode
    make = ctx.create_rasterizer_state
    return {
        "smooth": make(pipe.RasterizerState(flatshade=False)),
        "flat": make(pipe.RasterizerState(flatshade=True)),
        "flat_first": make(pipe.RasterizerState(flatshade=True, flatshade_first=True)),
        "lines": make(pipe.RasterizerState(fill_front=fill.LINE, fill_back=fill.LINE)),
    }


# (rasterizer, fragment shader, x of the triangle) per draw, in order
DRAWS = [
    ("smooth", "color", -1.0),
    ("flat", "color", -0.6),
    ("lines", "color", -0.2),
    ("smooth", "generic", 0.1),
    ("flat_first", "color", 0.3),
    ("flat", "generic", -0.9),
    ("smooth", "color", 0.35),
]


def _render(threaded: bool, one_scene: bool, draws: list = DRAWS) -> np.ndarray:
    screen = get_screen(2)
    ctx = screen.context_create(threaded=threaded)
    try:
        rt, _ = make_target(screen, ctx, 48, 40)
        ctx.bind_vs_state(ctx.create_vs_state(pipe.ShaderState(tokens=VS)))
        shaders = {
            "color": ctx.create_fs_state(pipe.ShaderState(tokens=FS_COLOR)),
            "generic": ctx.create_fs_state(pipe.ShaderState(tokens=FS_GENERIC)),
        }
        ctx.bind_vertex_elements_state(
            ctx.create_vertex_elements_state(
                [
                    pipe.VertexElement(0, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                    pipe.VertexElement(16, 0, 0, pipe.Format.R32G32B32A32_FLOAT),
                ]
            )
        )
        states = _states(ctx)
        ctx.clear(pipe.Clear.COLOR0, color=(0.0, 0.0, 0.0, 1.0))
        for k, (rast, fs, x0) in enumerate(draws):
            ctx.bind_rasterizer_state(states[rast])
            ctx.bind_fs_state(shaders[fs])
            ctx.set_vertex_buffers(
                0, [pipe.VertexBuffer(stride=32, buffer_offset=0, buffer=_triangle(x0, k))]
            )
            ctx.draw_vbo(pipe.DrawInfo(mode=pipe.Prim.TRIANGLES, start=0, count=3))
            if not one_scene:
                ctx.flush().wait(None)  # (a scene of its own: nothing remembered)
        ctx.flush().wait(None)
        return read_rgba8(ctx, rt)
    finally:
        ctx.destroy()


@pytest.mark.parametrize("threaded", [False, True], ids=["direct", "threaded"])
def test_states_switched_within_a_scene_draw_as_alone(threaded):
    alone = _render(threaded, one_scene=False)
    assert np.array_equal(_render(threaded, one_scene=True), alone)


def test_the_switched_states_draw_differently():
    """(The frames above would match for a context that ignored the switches
    only if the states drew alike: flat and smooth, first and last provoking
    vertex, filled and outlined, colour and generic inputs all differ here.)"""
    ref = _render(False, one_scene=False)
    for k, rast, fs in [(1, "smooth", "color"), (2, "smooth", "color"), (4, "flat", "color"),
                        (3, "smooth", "color")]:  # fmt: skip
        draws = list(DRAWS)
        draws[k] = (rast, fs, DRAWS[k][2])
        assert draws[k] != DRAWS[k]
        assert not np.array_equal(_render(False, one_scene=False, draws=draws), ref), k

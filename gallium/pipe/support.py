"""What a driver implements, as the contract's checks need to know it at the call.

The contract's rule (errors.py): a call that is valid Gallium but asks for
something the driver does not implement raises
:class:`~gallium.pipe.errors.UnsupportedError` at the call, and the matching
cap answers 0.  :class:`Support` is that knowledge in one record, read from
the screen's caps where Gallium has a cap for the feature, so the checks of
:mod:`gallium.pipe.checks` decide "is this supported" from the caps, the same
way on every context -- a driver's own, or a frontend wrapping it.  The few
features Gallium has no cap for are declared by the screen when it builds
the record.

A screen builds its record once (``screen.support``): caps never change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .enums import Cap, CapF, ComputeCap, ShaderCap, ShaderIR, ShaderType


@dataclass(frozen=True, slots=True)
class Support:
    """The screen's answers the contract's checks consult."""

    max_texture_size: int  # from PIPE_CAP_MAX_TEXTURE_2D_LEVELS
    sample_shading: bool  # PIPE_CAP_SAMPLE_SHADING: set_min_samples(n > 1)
    max_window_rectangles: int  # PIPE_CAP_MAX_WINDOW_RECTANGLES
    max_stream_output_buffers: int  # PIPE_CAP_MAX_STREAM_OUTPUT_BUFFERS
    draw_indirect: bool  # PIPE_CAP_DRAW_INDIRECT
    tessellation: bool  # PIPE_SHADER_CAP_MAX_INSTRUCTIONS of TESS_CTRL > 0
    smooth_points: bool  # PIPE_CAPF_MAX_POINT_WIDTH_AA > 0
    smooth_lines: bool  # PIPE_CAPF_MAX_LINE_WIDTH_AA > 0
    max_anisotropy: float  # PIPE_CAPF_MAX_TEXTURE_ANISOTROPY
    max_grid_size: tuple[int, int, int]  # PIPE_COMPUTE_CAP_MAX_GRID_SIZE
    max_block_size: tuple[int, int, int]  # PIPE_COMPUTE_CAP_MAX_BLOCK_SIZE
    max_threads_per_block: int  # PIPE_COMPUTE_CAP_MAX_THREADS_PER_BLOCK
    max_input_size: int  # PIPE_COMPUTE_CAP_MAX_INPUT_SIZE
    multisample: bool  # PIPE_CAP_TEXTURE_MULTISAMPLE
    depth_bounds_test: bool  # PIPE_CAP_DEPTH_BOUNDS_TEST
    fill_rectangle: bool  # PIPE_CAP_POLYGON_MODE_FILL_RECTANGLE
    bindless: bool  # PIPE_CAP_BINDLESS_TEXTURE: texture and image handles
    driver: str  # the screen's name, for messages
    # No Gallium cap says these; the screen declares what it lacks.
    line_stipple: bool = True
    triangle_strip_adjacency: bool = True
    blit: bool = True
    logic_op: bool = True
    polygon_stipple: bool = True
    polygon_offset: bool = True
    two_sided_lighting: bool = True
    polygon_modes: bool = True  # fill_front/fill_back LINE and POINT
    buffer_surfaces: bool = True
    max_draw_vertices: int = 0  # count x instance_count of one draw at most (0: no limit)
    max_global_buffers: int = 0  # set_global_binding slots (0: no GLOBAL memory)
    max_global_buffer_bytes: int = 0  # the largest buffer set_global_binding maps

    @classmethod
    def from_screen(cls, screen: Any, **uncapped: bool) -> Support:
        """Read the caps of ``screen``; ``uncapped`` gives the features without one."""
        p, pf = screen.get_param, screen.get_paramf

        def compute(cap: ComputeCap) -> Any:
            return screen.get_compute_param(ShaderIR.TGSI, cap)

        levels = p(Cap.MAX_TEXTURE_2D_LEVELS)
        return cls(
            max_texture_size=1 << max(levels - 1, 0),
            sample_shading=bool(p(Cap.SAMPLE_SHADING)),
            max_window_rectangles=int(p(Cap.MAX_WINDOW_RECTANGLES)),
            max_stream_output_buffers=int(p(Cap.MAX_STREAM_OUTPUT_BUFFERS)),
            draw_indirect=bool(p(Cap.DRAW_INDIRECT)),
            tessellation=screen.get_shader_param(ShaderType.TESS_CTRL, ShaderCap.MAX_INSTRUCTIONS)
            > 0,
            smooth_points=pf(CapF.MAX_POINT_WIDTH_AA) > 0,
            smooth_lines=pf(CapF.MAX_LINE_WIDTH_AA) > 0,
            max_anisotropy=float(pf(CapF.MAX_TEXTURE_ANISOTROPY)),
            max_grid_size=tuple(compute(ComputeCap.MAX_GRID_SIZE)),  # type: ignore[arg-type]
            max_block_size=tuple(compute(ComputeCap.MAX_BLOCK_SIZE)),  # type: ignore[arg-type]
            max_threads_per_block=int(compute(ComputeCap.MAX_THREADS_PER_BLOCK)),
            max_input_size=int(compute(ComputeCap.MAX_INPUT_SIZE)),
            multisample=bool(p(Cap.TEXTURE_MULTISAMPLE)),
            depth_bounds_test=bool(p(Cap.DEPTH_BOUNDS_TEST)),
            fill_rectangle=bool(p(Cap.POLYGON_MODE_FILL_RECTANGLE)),
            bindless=bool(p(Cap.BINDLESS_TEXTURE)),
            driver=screen.get_name(),
            **uncapped,
        )

"""State templates: Gallium's ``p_state.h`` structs as dataclasses.

Each class is the C struct ``pipe_foo_bar`` spelled ``FooBar``, with the C field
names.  Defaults are the zero-initialised C struct except where noted in the
class docstring (DESIGN.md pins those exceptions: ``RasterizerState`` has
``half_pixel_center``, ``depth_clip``, ``line_width`` and ``point_size`` set,
``RtBlendState.colormask`` is RGBA, and the view templates cover the whole
resource).  Two more are made so that the pinned quick-start works as written:
``DrawInfo.instance_count`` is 1 and ``DrawInfo.max_index`` is 0xffffffff (the
spec says an over-estimate must render the same).

Unions are flattened: ``pipe_surface.u.tex.level`` is ``SurfaceTemplate.level``,
``pipe_sampler_view.u.buf.offset`` is ``SamplerViewTemplate.buf_offset``.  C
count-plus-array pairs are one sequence (``FramebufferState.cbufs``).  A field
that takes a buffer (``VertexBuffer.buffer``, ``DrawInfo.index``,
``ConstantBuffer.user_buffer``) accepts a ``Resource`` or any bytes-like object
or numpy array, which is a user buffer.

The templates are plain data.  They are validated when they are handed to a
context or screen, never mutated by numpipe, and copied where the driver keeps
them (a CSO keeps its own frozen copy), so a caller may reuse and change a
template after the call returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .enums import (
    PIPE_MAX_CLIP_PLANES,
    PIPE_MAX_COLOR_BUFS,
    BlendFactor,
    BlendFunc,
    CompareFunc,
    Face,
    Format,
    LogicOp,
    Mask,
    MipFilter,
    PolygonMode,
    Prim,
    ShaderIR,
    StencilOp,
    Swizzle,
    TexFilter,
    TextureTarget,
    TexWrap,
    Usage,
)

# --------------------------------------------------------------------------
# Resources, boxes, views
# --------------------------------------------------------------------------


@dataclass(slots=True)
class Box:
    """``pipe_box``: a 1D/2D/3D region; for array textures z/depth are layers."""

    x: int = 0
    y: int = 0
    z: int = 0
    width: int = 0
    height: int = 0
    depth: int = 0


@dataclass(slots=True)
class ResourceTemplate:
    """``pipe_resource`` as a creation template.

    Zero-initialised like the C struct; ``resource_create`` reads a zero
    ``height0`` / ``depth0`` / ``array_size`` as 1 where the target has no such
    dimension (``height0`` of a buffer, ``depth0`` of a 2D texture, ...).
    """

    target: TextureTarget = TextureTarget.BUFFER
    format: Format = Format.NONE
    width0: int = 0
    height0: int = 0
    depth0: int = 0
    array_size: int = 0
    last_level: int = 0
    nr_samples: int = 0
    nr_storage_samples: int = 0
    usage: Usage = Usage.DEFAULT
    bind: int = 0
    flags: int = 0


@dataclass(slots=True)
class SurfaceTemplate:
    """``pipe_surface`` template: format plus ``u.tex`` (or ``u.buf``) flattened."""

    format: Format = Format.NONE
    level: int = 0
    first_layer: int = 0
    last_layer: int = 0
    first_element: int = 0
    last_element: int = 0
    writable: bool = False


@dataclass(slots=True)
class SamplerViewTemplate:
    """``pipe_sampler_view`` template.

    ``target`` None means the resource's target; ``last_level`` / ``last_layer``
    None mean the resource's last level / layer (the whole resource, as DESIGN.md
    pins).  ``buf_offset`` / ``buf_size`` are ``u.buf`` for buffer views
    (``buf_size`` 0 means to the end of the buffer).
    """

    format: Format = Format.NONE
    target: TextureTarget | None = None
    swizzle_r: Swizzle = Swizzle.X
    swizzle_g: Swizzle = Swizzle.Y
    swizzle_b: Swizzle = Swizzle.Z
    swizzle_a: Swizzle = Swizzle.W
    first_level: int = 0
    last_level: int | None = None
    first_layer: int = 0
    last_layer: int | None = None
    buf_offset: int = 0
    buf_size: int = 0


@dataclass(slots=True)
class ImageView:
    """``pipe_image_view``: a resource bound for LOAD/STORE/ATOM* access."""

    resource: Any = None
    format: Format = Format.NONE
    access: int = 0
    level: int = 0
    first_layer: int = 0
    last_layer: int = 0
    buf_offset: int = 0
    buf_size: int = 0


@dataclass(slots=True)
class ShaderBuffer:
    """``pipe_shader_buffer``: a range of a buffer bound to a shader stage."""

    buffer: Any = None
    buffer_offset: int = 0
    buffer_size: int = 0


# --------------------------------------------------------------------------
# Constant state objects (CSOs)
# --------------------------------------------------------------------------


@dataclass(slots=True)
class RtBlendState:
    """``pipe_rt_blend_state``; ``colormask`` defaults to RGBA (DESIGN.md).

    The factors zero-initialise to 0, which is no valid ``PIPE_BLENDFACTOR``
    (as in C); they are only checked when ``blend_enable`` is set.
    """

    blend_enable: bool = False
    rgb_func: BlendFunc = BlendFunc.ADD
    rgb_src_factor: BlendFactor | int = 0
    rgb_dst_factor: BlendFactor | int = 0
    alpha_func: BlendFunc = BlendFunc.ADD
    alpha_src_factor: BlendFactor | int = 0
    alpha_dst_factor: BlendFactor | int = 0
    colormask: int = int(Mask.RGBA)


@dataclass(slots=True)
class BlendState:
    """``pipe_blend_state``.  ``rt`` may be shorter than PIPE_MAX_COLOR_BUFS."""

    independent_blend_enable: bool = False
    logicop_enable: bool = False
    logicop_func: LogicOp = LogicOp.CLEAR
    dither: bool = False
    alpha_to_coverage: bool = False
    alpha_to_one: bool = False
    rt: list[RtBlendState] = field(default_factory=lambda: [RtBlendState()])


@dataclass(slots=True)
class DepthState:
    """``pipe_depth_state``."""

    enabled: bool = False
    writemask: bool = False
    func: CompareFunc = CompareFunc.NEVER
    bounds_test: bool = False
    bounds_min: float = 0.0
    bounds_max: float = 0.0


@dataclass(slots=True)
class StencilState:
    """``pipe_stencil_state`` (one face)."""

    enabled: bool = False
    func: CompareFunc = CompareFunc.NEVER
    fail_op: StencilOp = StencilOp.KEEP
    zpass_op: StencilOp = StencilOp.KEEP
    zfail_op: StencilOp = StencilOp.KEEP
    valuemask: int = 0
    writemask: int = 0


@dataclass(slots=True)
class AlphaState:
    """``pipe_alpha_state``."""

    enabled: bool = False
    func: CompareFunc = CompareFunc.NEVER
    ref_value: float = 0.0


@dataclass(slots=True)
class DepthStencilAlphaState:
    """``pipe_depth_stencil_alpha_state``: ``stencil[0]`` front, ``stencil[1]`` back."""

    depth: DepthState = field(default_factory=DepthState)
    stencil: tuple[StencilState, StencilState] | list[StencilState] = field(
        default_factory=lambda: (StencilState(), StencilState())
    )
    alpha: AlphaState = field(default_factory=AlphaState)


@dataclass(slots=True)
class RasterizerState:
    """``pipe_rasterizer_state`` (Mesa 18 layout).

    Not zero: ``half_pixel_center``, ``depth_clip`` (both True), ``line_width``
    and ``point_size`` (1.0).  ``front_ccw`` counts winding in memory-row space
    (row 0 first, y growing downward), as llvmpipe does.
    """

    flatshade: bool = False
    light_twoside: bool = False
    clamp_vertex_color: bool = False
    clamp_fragment_color: bool = False
    front_ccw: bool = False
    cull_face: Face = Face.NONE
    fill_front: PolygonMode = PolygonMode.FILL
    fill_back: PolygonMode = PolygonMode.FILL
    offset_point: bool = False
    offset_line: bool = False
    offset_tri: bool = False
    scissor: bool = False
    poly_smooth: bool = False
    poly_stipple_enable: bool = False
    point_smooth: bool = False
    sprite_coord_mode: int = 0
    point_quad_rasterization: bool = False
    point_tri_clip: bool = False
    point_size_per_vertex: bool = False
    multisample: bool = False
    force_persample_interp: bool = False
    line_smooth: bool = False
    line_stipple_enable: bool = False
    line_last_pixel: bool = False
    flatshade_first: bool = False
    half_pixel_center: bool = True
    bottom_edge_rule: bool = False
    rasterizer_discard: bool = False
    depth_clip: bool = True
    clip_halfz: bool = False
    offset_units_unscaled: bool = False
    clip_plane_enable: int = 0
    line_stipple_factor: int = 0
    line_stipple_pattern: int = 0
    sprite_coord_enable: int = 0
    line_width: float = 1.0
    point_size: float = 1.0
    offset_units: float = 0.0
    offset_scale: float = 0.0
    offset_clamp: float = 0.0
    # Later Mesa's split of ``depth_clip``; None: as ``depth_clip`` says
    # (clip at both planes, or at neither and clamp the fragments' depth)
    depth_clip_near: bool | None = None
    depth_clip_far: bool | None = None
    depth_clamp: bool | None = None


@dataclass(slots=True)
class SamplerState:
    """``pipe_sampler_state``; ``normalized_coords`` defaults to True (DESIGN.md)."""

    wrap_s: TexWrap = TexWrap.REPEAT
    wrap_t: TexWrap = TexWrap.REPEAT
    wrap_r: TexWrap = TexWrap.REPEAT
    min_img_filter: TexFilter = TexFilter.NEAREST
    min_mip_filter: MipFilter = MipFilter.NEAREST
    mag_img_filter: TexFilter = TexFilter.NEAREST
    compare_mode: int = 0
    compare_func: CompareFunc = CompareFunc.NEVER
    normalized_coords: bool = True
    max_anisotropy: int = 0
    seamless_cube_map: bool = False
    lod_bias: float = 0.0
    min_lod: float = 0.0
    max_lod: float = 0.0
    border_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


@dataclass(slots=True)
class StreamOutputInfo:
    """``pipe_stream_output_info``; ``output`` holds dicts or :class:`StreamOutput`."""

    num_outputs: int = 0
    stride: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    output: list[StreamOutput] = field(default_factory=list)


@dataclass(slots=True)
class StreamOutput:
    """One ``pipe_stream_output_info.output[]`` entry."""

    register_index: int = 0
    start_component: int = 0
    num_components: int = 0
    output_buffer: int = 0
    dst_offset: int = 0
    stream: int = 0


@dataclass(slots=True)
class ShaderState:
    """``pipe_shader_state``: ``tokens`` is TGSI text or a parsed ``tgsi.Shader``."""

    tokens: Any = None
    type: ShaderIR = ShaderIR.TGSI
    stream_output: StreamOutputInfo = field(default_factory=StreamOutputInfo)


@dataclass(slots=True)
class ComputeState:
    """``pipe_compute_state``: ``prog`` is TGSI text or a parsed ``tgsi.Shader``."""

    prog: Any = None
    ir_type: ShaderIR = ShaderIR.TGSI
    req_local_mem: int = 0
    req_private_mem: int = 0
    req_input_mem: int = 0


# --------------------------------------------------------------------------
# Vertex input
# --------------------------------------------------------------------------


@dataclass(slots=True)
class VertexElement:
    """``pipe_vertex_element``."""

    src_offset: int = 0
    instance_divisor: int = 0
    vertex_buffer_index: int = 0
    src_format: Format = Format.NONE


@dataclass(slots=True)
class VertexBuffer:
    """``pipe_vertex_buffer``: ``buffer`` is a Resource or a user buffer."""

    stride: int = 0
    buffer_offset: int = 0
    buffer: Any = None
    is_user_buffer: bool = False


@dataclass(slots=True)
class ConstantBuffer:
    """``pipe_constant_buffer``: a Resource range or ``user_buffer`` data.

    ``buffer_size`` 0 with a resource means "to the end of the buffer".
    """

    buffer: Any = None
    buffer_offset: int = 0
    buffer_size: int = 0
    user_buffer: Any = None


@dataclass(slots=True)
class BlitImage:
    """One side of a blit (``pipe_blit_info``'s ``dst`` / ``src``).

    ``box`` is in texels of ``level``; its ``z``/``depth`` are layers (array,
    cube faces) or slices (3D).  Only the source box may have negative sizes
    (a flip).  ``format`` is how the texels are read or written (it may
    differ from the resource's format, as in Mesa); PIPE_FORMAT_NONE means
    the resource's own format.
    """

    resource: Any = None
    level: int = 0
    box: Box = field(default_factory=Box)
    format: Format = Format.NONE


@dataclass(slots=True)
class BlitInfo:
    """``pipe_blit_info`` (Mesa 18): copy ``src.box`` to ``dst.box`` with
    scaling, flipping, format conversion and multisample resolve.

    Defaults, as DESIGN.md pins the call: every colour channel
    (``mask=Mask.RGBA``), ``filter=TexFilter.LINEAR`` (used only when the
    boxes differ in size), no scissor, no render condition, no blending.
    ``scissor`` is a ``ScissorState`` used when ``scissor_enable``.  The
    window rectangles (``window_rectangles``, up to
    PIPE_MAX_WINDOW_RECTANGLES, inclusive or not) clip the destination as
    ``set_window_rectangles`` clips draws; none means no clipping.
    """

    dst: BlitImage = field(default_factory=BlitImage)
    src: BlitImage = field(default_factory=BlitImage)
    mask: Mask | int = Mask.RGBA
    filter: TexFilter = TexFilter.LINEAR
    scissor_enable: bool = False
    scissor: Any = None
    render_condition_enable: bool = False
    alpha_blend: bool = False
    window_rectangle_include: bool = False
    window_rectangles: list[Any] = field(default_factory=list)

    @property
    def num_window_rectangles(self) -> int:
        return len(self.window_rectangles)


# --------------------------------------------------------------------------
# Non-CSO state
# --------------------------------------------------------------------------


@dataclass(slots=True)
class FramebufferState:
    """``pipe_framebuffer_state``: ``cbufs`` is the C ``cbufs[nr_cbufs]`` array."""

    width: int = 0
    height: int = 0
    layers: int = 0
    samples: int = 0
    cbufs: list[Any] = field(default_factory=list)
    zsbuf: Any = None

    @property
    def nr_cbufs(self) -> int:
        return len(self.cbufs)


@dataclass(slots=True)
class ViewportState:
    """``pipe_viewport_state``: window = ndc * scale + translate."""

    scale: tuple[float, float, float] = (0.0, 0.0, 0.0)
    translate: tuple[float, float, float] = (0.0, 0.0, 0.0)


@dataclass(slots=True)
class ScissorState:
    """``pipe_scissor_state``: min inclusive, max exclusive."""

    minx: int = 0
    miny: int = 0
    maxx: int = 0
    maxy: int = 0


@dataclass(slots=True)
class ClipState:
    """``pipe_clip_state``: user clip planes."""

    ucp: list[tuple[float, float, float, float]] = field(
        default_factory=lambda: [(0.0, 0.0, 0.0, 0.0)] * PIPE_MAX_CLIP_PLANES
    )


@dataclass(slots=True)
class PolyStipple:
    """``pipe_poly_stipple``: 32 rows of 32 bits."""

    stipple: list[int] = field(default_factory=lambda: [0] * 32)


@dataclass(slots=True)
class StencilRef:
    """``pipe_stencil_ref``: front and back reference values."""

    ref_value: tuple[int, int] = (0, 0)


@dataclass(slots=True)
class BlendColor:
    """``pipe_blend_color``."""

    color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)


# --------------------------------------------------------------------------
# Draw and dispatch
# --------------------------------------------------------------------------


@dataclass(slots=True)
class DrawIndirectInfo:
    """``pipe_draw_indirect_info``."""

    offset: int = 0
    stride: int = 0
    draw_count: int = 1
    indirect_draw_count_offset: int = 0
    buffer: Any = None
    indirect_draw_count: Any = None


@dataclass(slots=True)
class DrawInfo:
    """``pipe_draw_info`` (Mesa 18 layout).

    ``index`` is the index Resource or user index data when ``index_size`` is
    1, 2 or 4; ``instance_count`` defaults to 1 and ``max_index`` to 0xffffffff.
    """

    mode: Prim = Prim.POINTS
    start: int = 0
    count: int = 0
    index_size: int = 0
    index: Any = None
    has_user_indices: bool = False
    primitive_restart: bool = False
    restart_index: int = 0
    vertices_per_patch: int = 0
    start_instance: int = 0
    instance_count: int = 1
    drawid: int = 0
    index_bias: int = 0
    min_index: int = 0
    max_index: int = 0xFFFFFFFF
    indirect: DrawIndirectInfo | None = None
    count_from_stream_output: Any = None


@dataclass(slots=True)
class GridInfo:
    """``pipe_grid_info``: ``block`` threads per block, ``grid`` blocks."""

    pc: int = 0
    input: Any = None
    work_dim: int = 3
    block: tuple[int, int, int] = (1, 1, 1)
    grid: tuple[int, int, int] = (1, 1, 1)
    indirect: Any = None
    indirect_offset: int = 0


@dataclass(slots=True)
class DriverQueryInfo:
    """``pipe_driver_query_info``."""

    name: str = ""
    query_type: int = 0
    max_value: int = 0
    type: int = 0
    result_type: int = 0
    group_id: int = 0
    flags: int = 0


@dataclass(slots=True)
class DriverQueryGroupInfo:
    """``pipe_driver_query_group_info``."""

    name: str = ""
    max_active_queries: int = 0
    num_queries: int = 0


__all__ = [
    "PIPE_MAX_COLOR_BUFS",
    "AlphaState",
    "BlendColor",
    "BlendState",
    "BlitImage",
    "BlitInfo",
    "Box",
    "ClipState",
    "ComputeState",
    "ConstantBuffer",
    "DepthState",
    "DepthStencilAlphaState",
    "DrawIndirectInfo",
    "DrawInfo",
    "DriverQueryGroupInfo",
    "DriverQueryInfo",
    "FramebufferState",
    "GridInfo",
    "ImageView",
    "PolyStipple",
    "RasterizerState",
    "ResourceTemplate",
    "RtBlendState",
    "SamplerState",
    "SamplerViewTemplate",
    "ScissorState",
    "ShaderBuffer",
    "ShaderState",
    "StencilRef",
    "StencilState",
    "StreamOutput",
    "StreamOutputInfo",
    "SurfaceTemplate",
    "VertexBuffer",
    "VertexElement",
    "ViewportState",
]

"""The numpipe screen: ``pipe_screen`` of the software driver.

Thread safety (screen.rst): every method here may be called from any thread
at any time, including while contexts of this screen run on other threads.
The screen's mutable state is the resource registry and the statistics, both
guarded by one lock; creating resources and contexts touches nothing shared
beyond that.  The screen owns the worker pool that every context's scenes run
on.
"""

from __future__ import annotations

import os
import platform
import threading
import time
from typing import Any

import numpy as np

from ..pipe.checks import check_fence_timeout
from ..pipe.enums import (
    PIPE_MAX_COLOR_BUFS,
    PIPE_MAX_VIEWPORTS,
    PIPE_MAX_WINDOW_RECTANGLES,
    PIPE_TIMEOUT_INFINITE,
    Bind,
    Cap,
    CapF,
    ComputeCap,
    Endian,
    Format,
    ShaderCap,
    ShaderIR,
    ShaderType,
    TextureTarget,
)
from ..pipe.errors import (
    ContextDestroyedError,
    PipeValueError,
    UnsupportedError,
    bad_type,
    bad_value,
    check_int,
    short_repr,
)
from ..pipe.fence import Fence
from ..pipe.state import DriverQueryInfo, ResourceTemplate
from ..pipe.support import Support
from ..tgsi.limits import NUMPIPE as SHADER_LIMITS
from ..util.format import try_describe
from .resource import Resource, format_desc_or_error, normalize_template, texture_layout
from .sampler import sampleable

MAX_TEXTURE_SIZE = 16384
# Sample counts of multisample resources (llvmpipe: 4; 2 with the standard
# positions, workers/msaa.py) and the targets that take them.
SAMPLE_COUNTS = (2, 4)
_MSAA_TARGETS = (TextureTarget.TEXTURE_2D, TextureTarget.TEXTURE_2D_ARRAY)
# The vertices one draw may have (count x instances): a draw's vertex pipeline
# holds a few hundred bytes a vertex at once (ids, fetched inputs, shader
# outputs, set-up triangles), so this bounds one draw to a few GiB.
MAX_DRAW_VERTICES = 1 << 24
MAX_TEXTURE_LEVELS = 15  # 16384 = 2**14: 1D, 2D and rect textures
MAX_TEXTURE_3D_LEVELS = 12  # 2048 texels a side
MAX_TEXTURE_CUBE_LEVELS = 13  # 4096 texels a side
MAX_TEXTURE_ARRAY_LAYERS = 2048
MAX_BUFFER_BYTES = 1 << 31
# One resource's storage at most: llvmpipe's LP_MAX_TEXTURE_SIZE (2 GiB), and
# never more than the machine's memory (NumpipeScreen.max_resource_bytes).
MAX_RESOURCE_BYTES = 1 << 31

# Integer caps.  Every cap screen.rst names is here; 0 means "not supported
# (yet)" and the matching entry point raises UnsupportedError.
_CAPS: dict[Cap, int] = {
    Cap.NPOT_TEXTURES: 1,
    Cap.MAX_DUAL_SOURCE_RENDER_TARGETS: 1,
    Cap.MAX_RENDER_TARGETS: PIPE_MAX_COLOR_BUFS,
    Cap.OCCLUSION_QUERY: 1,
    Cap.QUERY_TIME_ELAPSED: 1,
    Cap.MAX_TEXTURE_2D_LEVELS: MAX_TEXTURE_LEVELS,
    Cap.MAX_TEXTURE_3D_LEVELS: MAX_TEXTURE_3D_LEVELS,
    Cap.MAX_TEXTURE_CUBE_LEVELS: MAX_TEXTURE_CUBE_LEVELS,
    Cap.BLEND_EQUATION_SEPARATE: 1,
    Cap.SM3: 1,
    Cap.PRIMITIVE_RESTART: 1,
    Cap.INDEP_BLEND_ENABLE: 1,
    Cap.INDEP_BLEND_FUNC: 1,
    Cap.MAX_TEXTURE_ARRAY_LAYERS: MAX_TEXTURE_ARRAY_LAYERS,
    Cap.TGSI_FS_COORD_ORIGIN_UPPER_LEFT: 1,
    Cap.TGSI_FS_COORD_ORIGIN_LOWER_LEFT: 1,
    Cap.TGSI_FS_COORD_PIXEL_CENTER_HALF_INTEGER: 1,
    Cap.TGSI_FS_COORD_PIXEL_CENTER_INTEGER: 1,
    Cap.DEPTH_CLIP_DISABLE: 1,
    Cap.SHADER_STENCIL_EXPORT: 1,
    Cap.TGSI_INSTANCEID: 1,
    Cap.VERTEX_ELEMENT_INSTANCE_DIVISOR: 1,
    Cap.MIXED_COLORBUFFER_FORMATS: 1,
    Cap.CONDITIONAL_RENDER: 1,
    Cap.CONDITIONAL_RENDER_INVERTED: 1,
    Cap.VERTEX_COLOR_UNCLAMPED: 1,
    Cap.GLSL_FEATURE_LEVEL: 130,
    # quads are provoked by their last vertex whatever flatshade_first says,
    # as llvmpipe does (gallium/draw/assemble.py)
    Cap.QUADS_FOLLOW_PROVOKING_VERTEX_CONVENTION: 0,
    Cap.USER_VERTEX_BUFFERS: 1,
    Cap.CONSTANT_BUFFER_OFFSET_ALIGNMENT: 16,
    Cap.START_INSTANCE: 1,
    Cap.QUERY_TIMESTAMP: 1,
    Cap.MIN_MAP_BUFFER_ALIGNMENT: 64,
    Cap.QUERY_PIPELINE_STATISTICS: 1,
    # viewport arrays and layered rendering (gallium/draw/layers.py), as llvmpipe
    Cap.MAX_VIEWPORTS: PIPE_MAX_VIEWPORTS,
    Cap.TGSI_VS_LAYER_VIEWPORT: 1,
    Cap.TGSI_TES_LAYER_VIEWPORT: 1,
    Cap.ENDIANNESS: int(Endian.LITTLE),
    Cap.VENDOR_ID: 0xFFFFFFFF,
    Cap.DEVICE_ID: 0xFFFFFFFF,
    Cap.ACCELERATED: 0,
    Cap.UMA: 1,
    Cap.MAX_VERTEX_ATTRIB_STRIDE: 2048,
    Cap.CLIP_HALFZ: 1,
    Cap.DEVICE_RESET_STATUS_QUERY: 1,
    Cap.TGSI_FS_FINE_DERIVATIVE: 1,
    Cap.SHAREABLE_SHADERS: 1,
    # compute (gallium/numpipe/compute.py): launch_grid with shader buffers
    Cap.COMPUTE: 1,
    # points (context.py _front_end_points): sprite coordinates, PCOORD
    Cap.POINT_SPRITE: 1,
    # stream output (gallium/draw/so.py): draw_auto, pause/resume, every query
    Cap.MAX_STREAM_OUTPUT_BUFFERS: 4,
    Cap.MAX_STREAM_OUTPUT_SEPARATE_COMPONENTS: 64,
    Cap.MAX_STREAM_OUTPUT_INTERLEAVED_COMPONENTS: 64,
    Cap.STREAM_OUTPUT_PAUSE_RESUME: 1,
    Cap.STREAM_OUTPUT_INTERLEAVE_BUFFERS: 1,
    Cap.MAX_VERTEX_STREAMS: 4,
    Cap.QUERY_SO_OVERFLOW: 1,
    # indirect draws (context.py indirect_commands), query results into buffers
    Cap.DRAW_INDIRECT: 1,
    Cap.MULTI_DRAW_INDIRECT: 1,
    Cap.MULTI_DRAW_INDIRECT_PARAMS: 1,
    Cap.QUERY_BUFFER_OBJECT: 1,
    # geometry shaders (gallium/draw/gs.py)
    Cap.MAX_GEOMETRY_OUTPUT_VERTICES: 1024,
    Cap.MAX_GEOMETRY_TOTAL_OUTPUT_COMPONENTS: 1024,
    Cap.SHADER_BUFFER_OFFSET_ALIGNMENT: 4,
    Cap.DRAW_PARAMETERS: 1,
    Cap.PREFER_BLIT_BASED_TEXTURE_TRANSFER: 0,
    Cap.SIGNED_VERTEX_BUFFER_OFFSET: 0,
    Cap.ALLOW_MAPPED_BUFFERS_DURING_EXECUTION: 1,
    Cap.TGSI_CAN_READ_OUTPUTS: 1,
    Cap.TGSI_ANY_REG_AS_ADDRESS: 0,
    Cap.CAN_BIND_CONST_BUFFER_AS_VERTEX: 1,
    # polygon state (gallium/draw/polygon.py): offset with clamp and unscaled units
    Cap.POLYGON_OFFSET_CLAMP: 1,
    Cap.POLYGON_OFFSET_UNITS_UNSCALED: 1,
    Cap.VERTEX_COLOR_CLAMPED: 1,
    Cap.FRAGMENT_COLOR_CLAMPED: 1,
    Cap.TGSI_TEXCOORD: 0,
    Cap.TGSI_ARRAY_COMPONENTS: 0,
    Cap.MAX_SHADER_PATCH_VARYINGS: 30,  # (tessellation: gallium/draw/tess.py)
    Cap.VIEWPORT_SUBPIXEL_BITS: 8,
    Cap.MIXED_COLOR_DEPTH_BITS: 1,
    Cap.TGSI_FS_POSITION_IS_SYSVAL: 0,
    Cap.TGSI_FS_FACE_IS_INTEGER_SYSVAL: 0,
    # window rectangles (window.py): draws are cut into the regions they leave
    Cap.MAX_WINDOW_RECTANGLES: PIPE_MAX_WINDOW_RECTANGLES,
    # texture sampling (gallium/numpipe/sampler.py)
    Cap.TEXTURE_SWIZZLE: 1,
    Cap.SEAMLESS_CUBE_MAP: 1,
    Cap.SEAMLESS_CUBE_MAP_PER_TEXTURE: 1,
    Cap.CUBE_MAP_ARRAY: 1,
    Cap.TEXTURE_MIRROR_CLAMP: 1,
    Cap.TEXTURE_BUFFER_OBJECTS: 1,
    Cap.TEXTURE_QUERY_LOD: 1,
    Cap.TGSI_TXQS: 1,
    Cap.SAMPLER_VIEW_TARGET: 1,
    Cap.TEXTURE_FLOAT_LINEAR: 1,
    Cap.TEXTURE_HALF_FLOAT_LINEAR: 1,
    Cap.TEXTURE_GATHER_SM5: 1,
    Cap.MIN_TEXEL_OFFSET: -32,
    Cap.MAX_TEXEL_OFFSET: 31,
    Cap.MIN_TEXTURE_GATHER_OFFSET: -32,
    Cap.MAX_TEXTURE_GATHER_OFFSET: 31,
    Cap.MAX_TEXTURE_GATHER_COMPONENTS: 4,
    Cap.TEXTURE_BUFFER_OFFSET_ALIGNMENT: 16,
    Cap.MAX_TEXTURE_BUFFER_SIZE: 1 << 27,
    Cap.TEXTURE_GATHER_OFFSETS: 0,  # one offset per gather only
    # multisampling (workers/msaa.py): 2 and 4 samples, per-sample shading
    Cap.TEXTURE_MULTISAMPLE: 1,
    Cap.SAMPLE_SHADING: 1,
    Cap.FORCE_PERSAMPLE_INTERP: 1,  # (rast.force_persample_interp: workers/msaa.py sample slots)
    Cap.TGSI_FS_FBFETCH: 1,  # (FBFETCH: triangles shaded in order, workers/raster.py)
    Cap.TEXTURE_BARRIER: 1,
    Cap.BINDLESS_TEXTURE: 1,  # (texture and image handles: context.py, TGSI handle operands)
    Cap.ANISOTROPIC_FILTER: 1,  # (llvmpipe's elliptical filter: sampler.py _aniso)
    # shader arithmetic (gallium/tgsi): doubles and 64-bit integers run
    Cap.DOUBLES: 1,
    Cap.INT64: 1,
}


def _memory_bytes() -> int:
    """The memory this process may use: physical memory, or less under a
    cgroup limit (a container)."""
    try:
        total = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        total = 1 << 30
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def _video_memory_mb() -> int:
    return _memory_bytes() >> 20


# (longest side, the cap that says so) of each texture target
_MAX_SIDE = {
    TextureTarget.TEXTURE_1D: (1 << (MAX_TEXTURE_LEVELS - 1), "MAX_TEXTURE_2D_LEVELS"),
    TextureTarget.TEXTURE_1D_ARRAY: (1 << (MAX_TEXTURE_LEVELS - 1), "MAX_TEXTURE_2D_LEVELS"),
    TextureTarget.TEXTURE_2D: (1 << (MAX_TEXTURE_LEVELS - 1), "MAX_TEXTURE_2D_LEVELS"),
    TextureTarget.TEXTURE_2D_ARRAY: (1 << (MAX_TEXTURE_LEVELS - 1), "MAX_TEXTURE_2D_LEVELS"),
    TextureTarget.TEXTURE_RECT: (1 << (MAX_TEXTURE_LEVELS - 1), "MAX_TEXTURE_2D_LEVELS"),
    TextureTarget.TEXTURE_3D: (1 << (MAX_TEXTURE_3D_LEVELS - 1), "MAX_TEXTURE_3D_LEVELS"),
    TextureTarget.TEXTURE_CUBE: (1 << (MAX_TEXTURE_CUBE_LEVELS - 1), "MAX_TEXTURE_CUBE_LEVELS"),
    TextureTarget.TEXTURE_CUBE_ARRAY: (
        1 << (MAX_TEXTURE_CUBE_LEVELS - 1),
        "MAX_TEXTURE_CUBE_LEVELS",
    ),
}


# wider points and lines are drawn this wide (llvmpipe's limits)
MAX_POINT_WIDTH = 255.0
MAX_LINE_WIDTH = 255.0

_CAPF: dict[CapF, float] = {
    CapF.MAX_LINE_WIDTH: MAX_LINE_WIDTH,
    CapF.MAX_LINE_WIDTH_AA: MAX_LINE_WIDTH,
    CapF.MAX_POINT_WIDTH: MAX_POINT_WIDTH,
    CapF.MAX_POINT_WIDTH_AA: MAX_POINT_WIDTH,
    CapF.MAX_TEXTURE_ANISOTROPY: 16.0,
    CapF.MAX_TEXTURE_LOD_BIAS: 16.0,
    CapF.GUARD_BAND_LEFT: -float(1 << 20),
    CapF.GUARD_BAND_TOP: -float(1 << 20),
    CapF.GUARD_BAND_RIGHT: float(1 << 20),
    CapF.GUARD_BAND_BOTTOM: float(1 << 20),
}

# The shader limits are the compiler's (gallium/tgsi/limits.py), which checks
# every program against them: a cap is what works.
_SHADER_CAPS: dict[ShaderCap, int] = {
    ShaderCap.MAX_INSTRUCTIONS: SHADER_LIMITS.instructions,
    ShaderCap.MAX_ALU_INSTRUCTIONS: SHADER_LIMITS.instructions,
    ShaderCap.MAX_TEX_INSTRUCTIONS: SHADER_LIMITS.instructions,
    ShaderCap.MAX_TEX_INDIRECTIONS: SHADER_LIMITS.instructions,
    ShaderCap.MAX_CONTROL_FLOW_DEPTH: SHADER_LIMITS.control_flow_depth,
    ShaderCap.MAX_INPUTS: SHADER_LIMITS.inputs,
    ShaderCap.MAX_OUTPUTS: SHADER_LIMITS.outputs,
    ShaderCap.MAX_CONST_BUFFER_SIZE: SHADER_LIMITS.const_buffer_size,
    ShaderCap.MAX_CONST_BUFFERS: SHADER_LIMITS.const_buffers,
    ShaderCap.MAX_TEMPS: SHADER_LIMITS.temps,
    ShaderCap.TGSI_CONT_SUPPORTED: 1,
    ShaderCap.INDIRECT_INPUT_ADDR: 1,
    ShaderCap.INDIRECT_OUTPUT_ADDR: 1,
    ShaderCap.INDIRECT_TEMP_ADDR: 1,
    ShaderCap.INDIRECT_CONST_ADDR: 1,
    ShaderCap.SUBROUTINES: 1,
    ShaderCap.INTEGERS: 1,
    ShaderCap.INT64_ATOMICS: 0,
    ShaderCap.FP16: 0,
    ShaderCap.MAX_TEXTURE_SAMPLERS: SHADER_LIMITS.samplers,
    ShaderCap.PREFERRED_IR: int(ShaderIR.TGSI),
    ShaderCap.TGSI_SQRT_SUPPORTED: 1,
    ShaderCap.MAX_SAMPLER_VIEWS: SHADER_LIMITS.sampler_views,
    ShaderCap.TGSI_DROUND_SUPPORTED: 1,
    ShaderCap.TGSI_DFRACEXP_DLDEXP_SUPPORTED: 1,
    ShaderCap.TGSI_FMA_SUPPORTED: 1,
    ShaderCap.TGSI_ANY_INOUT_DECL_RANGE: 1,
    ShaderCap.MAX_UNROLL_ITERATIONS_HINT: 0,
    ShaderCap.MAX_SHADER_BUFFERS: 0,
    ShaderCap.SUPPORTED_IRS: 1 << int(ShaderIR.TGSI),
    ShaderCap.MAX_SHADER_IMAGES: 0,
    ShaderCap.LOWER_IF_THRESHOLD: 0,
    ShaderCap.TGSI_SKIP_MERGE_REGISTERS: 0,
    ShaderCap.TGSI_LDEXP_SUPPORTED: 1,
    ShaderCap.MAX_HW_ATOMIC_COUNTERS: 0,
    ShaderCap.MAX_HW_ATOMIC_COUNTER_BUFFERS: 0,
}
_SUPPORTED_STAGES = {
    ShaderType.VERTEX,
    ShaderType.TESS_CTRL,
    ShaderType.TESS_EVAL,
    ShaderType.GEOMETRY,
    ShaderType.FRAGMENT,
    ShaderType.COMPUTE,
}

_RENDER_FORMATS = {
    Format.R8G8B8A8_UNORM,
    Format.B8G8R8A8_UNORM,
    Format.R8G8B8X8_UNORM,
    Format.B8G8R8X8_UNORM,
    Format.A8R8G8B8_UNORM,
    Format.X8R8G8B8_UNORM,
    Format.A8B8G8R8_UNORM,
    Format.R32G32B32A32_FLOAT,
    Format.R32_FLOAT,
    Format.R32G32_FLOAT,
    # pure integer targets (channels clamped on store; logic ops, no blending)
    Format.R8G8B8A8_UINT,
    Format.R8G8B8A8_SINT,
    Format.R8_UINT,
    Format.R8_SINT,
    Format.R16G16B16A16_UINT,
    Format.R16G16B16A16_SINT,
    Format.R32_UINT,
    Format.R32_SINT,
    Format.R32G32_UINT,
    Format.R32G32B32A32_UINT,
    Format.R32G32B32A32_SINT,
}
_DEPTH_FORMATS = {
    Format.Z32_FLOAT,
    Format.Z24_UNORM_S8_UINT,
    Format.S8_UINT_Z24_UNORM,
    Format.Z24X8_UNORM,
    Format.X8Z24_UNORM,
    Format.Z16_UNORM,
    Format.Z32_FLOAT_S8X24_UINT,
    Format.S8_UINT,
}


# What numpipe lacks that no Gallium cap says (gallium.pipe.support).
_UNCAPPED = {
    "buffer_surfaces": False,
    "max_draw_vertices": MAX_DRAW_VERTICES,
    # GLOBAL memory (gallium/numpipe/compute.py): 32 windows of 64 MiB
    "max_global_buffers": 32,
    "max_global_buffer_bytes": 1 << 26,
}

# Resources at least this big live in shared blocks when the screen has band
# processes (smaller ones are copied with the scenes that read them).
SHARED_MIN_BYTES = 1 << 16


class NumpipeScreen:
    """``pipe_screen`` of the numpipe software driver."""

    def __init__(
        self,
        num_threads: int | None = None,
        processes: bool | None = None,
        frontend: Any = None,
    ) -> None:
        """``frontend`` wraps the contexts this screen makes (a
        :class:`gallium.pipe.protocols.ContextFrontend`, such as the threaded
        context's); None: contexts are direct."""
        from workers.memory import tune_allocator
        from workers.pool import WorkerPool

        self.allocator_tuned = tune_allocator()
        self.pool = WorkerPool(num_threads, processes=processes)
        self.frontend = frontend
        self._lock = threading.Lock()
        self._epoch = time.perf_counter_ns()
        self._resources = 0
        self._contexts = 0
        self.destroyed = False
        # what the contract's checks consult (caps, and what no cap says)
        self.support = Support.from_screen(self, **_UNCAPPED)

    # -- identification ----------------------------------------------------------

    def get_name(self) -> str:
        return "numpipe"

    def get_vendor(self) -> str:
        return "numpipe"

    def get_device_vendor(self) -> str:
        return platform.processor() or platform.machine() or "unknown"

    # -- caps ---------------------------------------------------------------------

    def get_param(self, param: Cap | int) -> int:
        cap = _enum_arg("param", Cap, param, "a pipe.Cap (PIPE_CAP_*)")
        if cap == Cap.VIDEO_MEMORY:
            return _video_memory_mb()
        return _CAPS.get(cap, 0)

    def get_paramf(self, param: CapF | int) -> float:
        cap = _enum_arg("param", CapF, param, "a pipe.CapF (PIPE_CAPF_*)")
        return _CAPF.get(cap, 0.0)

    def get_shader_param(self, shader: ShaderType | int, param: ShaderCap | int) -> int:
        stage = _enum_arg("shader", ShaderType, shader, "a pipe.ShaderType")
        cap = _enum_arg("param", ShaderCap, param, "a pipe.ShaderCap (PIPE_SHADER_CAP_*)")
        if stage not in _SUPPORTED_STAGES:
            if cap == ShaderCap.PREFERRED_IR:
                return int(ShaderIR.TGSI)
            return 0
        if cap == ShaderCap.MAX_SHADER_BUFFERS:  # (every stage: gallium/numpipe/memory.py)
            return SHADER_LIMITS.shader_buffers
        if cap == ShaderCap.MAX_SHADER_IMAGES:
            return SHADER_LIMITS.shader_images
        return _SHADER_CAPS.get(cap, 0)

    def get_compute_param(self, ir_type: ShaderIR | int, param: ComputeCap | int) -> Any:
        from . import compute as cs

        cap = _enum_arg("param", ComputeCap, param, "a pipe.ComputeCap (PIPE_COMPUTE_CAP_*)")
        values: dict[ComputeCap, Any] = {
            ComputeCap.ADDRESS_BITS: 32,  # (GLOBAL addresses: compute.global_base)
            ComputeCap.IR_TARGET: "numpipe-tgsi",
            ComputeCap.GRID_DIMENSION: 3,
            ComputeCap.MAX_GRID_SIZE: list(cs.MAX_GRID_SIZE),
            ComputeCap.MAX_BLOCK_SIZE: list(cs.MAX_BLOCK_SIZE),
            ComputeCap.MAX_THREADS_PER_BLOCK: cs.MAX_THREADS_PER_BLOCK,
            ComputeCap.MAX_GLOBAL_SIZE: cs.MAX_GLOBAL_BUFFERS * cs.GLOBAL_WINDOW,
            ComputeCap.MAX_LOCAL_SIZE: cs.MAX_LOCAL_SIZE,
            ComputeCap.MAX_PRIVATE_SIZE: cs.MAX_PRIVATE_SIZE,
            ComputeCap.MAX_INPUT_SIZE: cs.MAX_INPUT_SIZE,
            ComputeCap.MAX_MEM_ALLOC_SIZE: self.max_resource_bytes,
            ComputeCap.MAX_CLOCK_FREQUENCY: 0,
            ComputeCap.MAX_COMPUTE_UNITS: max(1, self.pool.num_threads),
            ComputeCap.IMAGES_SUPPORTED: 1,
            ComputeCap.SUBGROUP_SIZE: 1,
            ComputeCap.MAX_VARIABLE_THREADS_PER_BLOCK: cs.MAX_THREADS_PER_BLOCK,
        }
        return values.get(cap, 0)

    # -- formats and resources ----------------------------------------------------------

    def is_format_supported(
        self,
        format: Format | int,
        target: TextureTarget | int,
        sample_count: int = 0,
        bindings: int = 0,
        storage_sample_count: int = 0,
    ) -> bool:
        format, target, bindings = (
            check_int("format", format),
            check_int("target", target),
            check_int("bindings", bindings, 0),
        )
        sample_count = check_int("sample_count", sample_count, 0)
        storage_sample_count = check_int("storage_sample_count", storage_sample_count, 0)
        try:
            fmt = Format(format)
            tgt = TextureTarget(target)
            Bind(bindings)
        except ValueError:
            return False
        if storage_sample_count > 1 and storage_sample_count != sample_count:
            return False
        if sample_count > 1:
            # 2 and 4 samples (llvmpipe: 4), on 2D textures and arrays, for
            # what is supported with one sample
            if sample_count not in SAMPLE_COUNTS or target not in _MSAA_TARGETS:
                return False
            if int(bindings) & int(Bind.SHADER_BUFFER | Bind.VERTEX_BUFFER):
                return False
            return self.is_format_supported(format, target, 0, bindings)
        if fmt == Format.NONE:
            return tgt == TextureTarget.BUFFER and not bindings & ~int(
                Bind.VERTEX_BUFFER
                | Bind.INDEX_BUFFER
                | Bind.CONSTANT_BUFFER
                | Bind.SHADER_BUFFER
                | Bind.COMMAND_ARGS_BUFFER
                | Bind.COMPUTE_RESOURCE
                | Bind.STREAM_OUTPUT
                | Bind.QUERY_BUFFER
            )
        desc = try_describe(fmt)
        if desc is None:
            return False
        b = Bind(int(bindings))
        if b & Bind.RENDER_TARGET and fmt not in _RENDER_FORMATS:
            return False
        if b & Bind.DEPTH_STENCIL and fmt not in _DEPTH_FORMATS:
            return False
        if b & Bind.STREAM_OUTPUT and tgt != TextureTarget.BUFFER:
            return False  # (stream output writes buffers)
        if b & Bind.SHADER_IMAGE and (
            desc.is_depth or desc.is_stencil or desc.layout not in ("array", "packed")
        ):
            return False
        if b & (Bind.SHADER_BUFFER | Bind.COMMAND_ARGS_BUFFER) and tgt != TextureTarget.BUFFER:
            return False
        if b & Bind.SAMPLER_VIEW and not sampleable(desc):
            return False
        if b & Bind.VERTEX_BUFFER and (desc.is_depth or desc.is_stencil or desc.layout == "other"):
            return False
        return not ((desc.is_depth or desc.is_stencil) and tgt == TextureTarget.BUFFER)

    def can_create_resource(self, templ: ResourceTemplate) -> bool:
        """Whether ``resource_create(templ)`` would succeed: exactly the checks it
        makes (caps of every dimension, the layer count, the formats and bind
        flags, the storage's size against :attr:`max_resource_bytes`)."""
        try:
            self._check_template(templ)
        except (PipeValueError, TypeError, ValueError):
            return False
        return True

    @property
    def max_resource_bytes(self) -> int:
        """The most bytes one resource's storage may take: MAX_RESOURCE_BYTES,
        or the machine's memory when that is less."""
        return min(MAX_RESOURCE_BYTES, _memory_bytes())

    def _check_template(self, templ: ResourceTemplate) -> tuple[ResourceTemplate, Any]:
        """The normalized template and its format, or the error naming the
        first rule it breaks; nothing is allocated."""
        t = normalize_template(templ)
        desc = format_desc_or_error(t.format)
        if t.nr_samples > 1:
            if t.nr_samples not in SAMPLE_COUNTS:
                raise bad_value(
                    "templ.nr_samples", f"must be 0, 1 or one of {SAMPLE_COUNTS}", t.nr_samples
                )
            if t.target not in _MSAA_TARGETS:
                raise bad_value(
                    "templ.target", "must be TEXTURE_2D or TEXTURE_2D_ARRAY when multisampled",
                    t.target.name,
                )  # fmt: skip
            if t.last_level:
                raise bad_value("templ.last_level", "must be 0 when multisampled", t.last_level)
            if t.bind and not self.is_format_supported(
                t.format, t.target, t.nr_samples, int(t.bind)
            ):
                raise bad_value(
                    "templ.format",
                    f"is not supported with {t.nr_samples} samples and bind flags "
                    f"{Bind(int(t.bind))!r}",
                    Format(t.format).name,
                )
        target = TextureTarget(t.target)
        if target == TextureTarget.BUFFER:
            if t.width0 > MAX_BUFFER_BYTES:
                raise bad_value(
                    "templ.width0", f"must be <= {MAX_BUFFER_BYTES} bytes for a buffer", t.width0
                )
        else:
            if desc is None:
                raise bad_value("templ.format", "must not be PIPE_FORMAT_NONE for a texture")
            side, cap = _MAX_SIDE[target]
            for name, v in (("width0", t.width0), ("height0", t.height0), ("depth0", t.depth0)):
                if v > side:
                    raise bad_value(
                        f"templ.{name}",
                        f"must be <= {side} for {target.name} (PIPE_CAP_{cap})",
                        v,
                    )
            if t.array_size > MAX_TEXTURE_ARRAY_LAYERS:
                raise bad_value(
                    "templ.array_size",
                    f"must be <= {MAX_TEXTURE_ARRAY_LAYERS} (PIPE_CAP_MAX_TEXTURE_ARRAY_LAYERS)",
                    t.array_size,
                )
            if t.bind and not self.is_format_supported(t.format, t.target, 0, int(t.bind)):
                raise bad_value(
                    "templ.format",
                    f"is not supported with bind flags {Bind(int(t.bind))!r} on {target.name}",
                    Format(t.format).name,
                )
        _, size = texture_layout(t, desc.block_bytes if desc is not None else 1)
        limit = self.max_resource_bytes
        if size > limit:
            raise bad_value(
                "templ",
                f"needs {size} bytes of storage; one resource holds at most {limit} bytes "
                "(screen.max_resource_bytes: 2 GiB, or the machine's memory when less)",
                templ,
            )
        return t, desc

    def resource_create(self, templ: ResourceTemplate) -> Resource:
        """Create a buffer or texture (screen.rst resource_create)."""
        t, desc = self._check_template(templ)
        try:
            res = Resource(self, t, desc)
        except MemoryError as exc:  # allowed, but the memory is not there now
            size = texture_layout(t, desc.block_bytes if desc is not None else 1)[1]
            raise MemoryError(
                f"resource_create: no memory now for the {size} bytes of {short_repr(templ)}"
            ) from exc
        with self._lock:
            self._resources += 1
        return res

    def resource_destroy(self, resource: Resource) -> None:
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource created by this screen", resource)
        if resource.screen is not self:
            raise bad_value("resource", "belongs to another screen")
        with self._lock:
            if not resource.destroyed:
                resource.destroyed = True
                self._resources -= 1

    def resource_changed(self, resource: Resource) -> None:
        if not isinstance(resource, Resource):
            raise bad_type("resource", "a Resource", resource)

    # -- contexts and fences ---------------------------------------------------------------

    def context_create(self, priv: Any = None, flags: int = 0, threaded: bool | None = None) -> Any:
        """A new context: wrapped by the screen's frontend (the threaded context)
        unless ``threaded=False`` or GALLIUM_THREAD=0."""
        from .context import NumpipeContext

        if self.destroyed:
            raise ContextDestroyedError("the screen has been destroyed")
        if threaded is None:
            threaded = os.environ.get("GALLIUM_THREAD", "1") not in ("0", "false", "no")
        if threaded and self.frontend is None:
            raise UnsupportedError("this screen was made without a threaded frontend")
        with self._lock:
            self._contexts += 1
        direct = NumpipeContext(self, priv, flags)
        if not threaded:
            return direct
        return self.frontend.wrap(direct)

    def fence_finish(self, ctx: Any, fence: Fence, timeout_ns: int = PIPE_TIMEOUT_INFINITE) -> bool:
        """Wait for ``fence``; True if signalled within ``timeout_ns`` (any thread)."""
        if not isinstance(fence, Fence):
            raise bad_type("fence", "a gallium.Fence", fence)
        return fence.finish(check_fence_timeout(timeout_ns))

    def fence_reference(self, fence: Fence | None) -> Fence | None:
        return fence

    def allocate_storage(self, nbytes: int) -> np.ndarray:
        """Zeroed storage for a resource: in a shared block when band processes
        may rasterize into it or read it (workers/bandproc.py), else private."""
        if self.pool.processes and nbytes >= SHARED_MIN_BYTES:
            from workers import shared

            try:
                return shared.allocate(nbytes)
            except OSError:
                pass
        return np.zeros(nbytes, np.uint8)

    def get_timestamp(self) -> int:
        """Nanoseconds on the clock PIPE_QUERY_TIMESTAMP uses."""
        return time.perf_counter_ns() - self._epoch + 1

    def get_driver_query_info(self, index: int | None = None) -> Any:
        infos = self.frontend.driver_query_infos() if self.frontend is not None else []
        if index is None:
            return len(infos)
        index = check_int("index", index)
        if not 0 <= index < len(infos):
            return None
        return infos[index]

    def get_driver_query_group_info(self, index: int | None = None) -> Any:
        if index is None:
            return 0
        check_int("index", index)
        return None

    def get_disk_shader_cache(self) -> None:
        return None

    def destroy(self) -> None:
        """Release the screen.  Work already submitted still runs (or fails:
        every fence is signalled); contexts refuse new work from now on."""
        if not self.destroyed:
            self.destroyed = True
            self.pool.shutdown(wait=False)

    def __repr__(self) -> str:
        return f"<NumpipeScreen {self.pool.num_threads} workers>"


_ = DriverQueryInfo


def _enum_arg(arg: str, enum_type: type, value: Any, what: str) -> Any:
    """``value`` as a member of ``enum_type``, else an error naming ``arg``."""
    try:
        return enum_type(check_int(arg, value))
    except ValueError:
        raise bad_value(arg, f"must be {what}", value) from None

"""The interface between shader kernels and texture sampling.

The TGSI compiler decodes a texture instruction (TEX, TXB, TXL, TXP, TXD, TXF,
TXQ, TXQS, TG4, LODQ, TEX2/TXB2/TXL2, SAMPLE*, GATHER4, SVIEWINFO) into a
:class:`TexRequest` holding *semantic* coordinates (s, t, r, array layer,
shadow reference, lod, bias, explicit derivatives, offsets): it knows which
source component carries what for each target and opcode.  The driver's
:class:`TextureUnits` object (``ExecEnv.textures``) knows resources, formats,
wrap modes and filters, and answers the request.  Neither side knows the
other's details.

All array arguments have one value per lane (``n`` lanes) or are numpy
scalars (uniform).  Results are four channels: float32 arrays for float and
normalised formats, raw ``int32`` / ``uint32`` arrays for pure integer formats
(the kernel keeps their bits as they are).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

# TGSI texture targets by what their coordinates mean.
ARRAY_TARGETS = {
    "1D_ARRAY",
    "2D_ARRAY",
    "SHADOW1D_ARRAY",
    "SHADOW2D_ARRAY",
    "CUBEARRAY",
    "SHADOWCUBEARRAY",
    "2D_ARRAY_MSAA",
}
SHADOW_TARGETS = {
    "SHADOW1D",
    "SHADOW2D",
    "SHADOWRECT",
    "SHADOW1D_ARRAY",
    "SHADOW2D_ARRAY",
    "SHADOWCUBE",
    "SHADOWCUBEARRAY",
}
CUBE_TARGETS = {"CUBE", "SHADOWCUBE", "CUBEARRAY", "SHADOWCUBEARRAY"}
RECT_TARGETS = {"RECT", "SHADOWRECT"}


def coord_count(target: str) -> int:
    """Number of spatial coordinates (s, t, r) a target uses."""
    if target in ("1D", "SHADOW1D", "1D_ARRAY", "SHADOW1D_ARRAY", "BUFFER"):
        return 1
    if target in ("3D",) or target in CUBE_TARGETS:
        return 3
    return 2


@dataclass
class TexRequest:
    """One texture operation for ``n`` lanes.

    ``op`` is one of:

    * ``"sample"`` — filtered lookup (TEX, TXB, TXL, TXP, TXD, TEX2, TXB2, TXL2,
      SAMPLE, SAMPLE_B, SAMPLE_L, SAMPLE_D, SAMPLE_C, SAMPLE_C_LZ);
    * ``"gather"`` — TG4 / GATHER4, returning the four texels of the bilinear
      footprint's ``component`` (or compare results for shadow targets);
    * ``"fetch"`` — TXF / SAMPLE_I: unfiltered texel at integer coordinates
      ``s, t, r`` (and ``layer``), mip level ``lod`` (integer), no sampler;
    * ``"size"`` — TXQ / SVIEWINFO: (width, height, depth or layers, levels)
      of mip level ``lod`` as int32;
    * ``"samples"`` — TXQS: sample count;
    * ``"lod"`` — LODQ: (clamped lod, unclamped lod, 0, 0) the sampler would use.

    ``unit`` selects the sampler view and ``sampler`` the sampler state (equal
    for the TEX family; separate for SAMPLE* with SVIEW declarations).
    ``lod`` is an explicit level of detail (TXL, SAMPLE_L, C_LZ as 0.0),
    ``bias`` a bias added to the computed one (TXB).  ``ddx``/``ddy`` are
    explicit derivatives of (s, t, r) (TXD).  Without ``lod`` or ``ddx``, the
    sampler computes derivatives itself over the 2x2 quads described by
    ``quad_shape`` (fragment kernels) or uses level 0 (other stages).
    ``offset`` is a per-axis integer texel offset (tuple of ints or lane arrays).
    ``sample`` is the sample index of a multisample fetch (TXF on an MSAA
    target, SAMPLE_I_MS).
    Shadow comparisons carry ``ref`` and a ``SHADOW*`` target (SAMPLE_C and
    SAMPLE_C_LZ map their sampler view's target to its shadow form).
    """

    op: str
    unit: int
    sampler: int
    target: str
    n: int
    s: Any = None
    t: Any = None
    r: Any = None
    layer: Any = None
    ref: Any = None
    lod: Any = None
    bias: Any = None
    ddx: list[Any] | None = None
    ddy: list[Any] | None = None
    offset: tuple[Any, Any, Any] | None = None
    component: Any = 0
    quad_shape: tuple[int, int] | None = None
    sample: Any = None


class TextureUnits(Protocol):
    """What ``ExecEnv.textures`` must provide."""

    def execute(self, req: TexRequest) -> list[Any]:
        """Answer a request with four channels (see module docstring)."""
        ...


def coord_dim(target: str) -> int:
    """Source components holding coordinates, array layer included (tgsi_util's
    ``tgsi_util_get_texture_coord_dim``)."""
    n = coord_count(target)
    return n + 1 if target in ARRAY_TARGETS else n


def shadow_ref_index(target: str) -> int | None:
    """Which source component holds the shadow reference: 0..3 are src0.xyzw,
    4 is src1.x (``tgsi_util_get_shadow_ref_src_index``); None if not shadow."""
    if target in ("SHADOW1D", "SHADOW2D", "SHADOWRECT", "SHADOW1D_ARRAY"):
        return 2
    if target in ("SHADOW2D_ARRAY", "SHADOWCUBE"):
        return 3
    if target == "SHADOWCUBEARRAY":
        return 4
    return None


SHADOW_OF = {
    "1D": "SHADOW1D",
    "2D": "SHADOW2D",
    "RECT": "SHADOWRECT",
    "1D_ARRAY": "SHADOW1D_ARRAY",
    "2D_ARRAY": "SHADOW2D_ARRAY",
    "CUBE": "SHADOWCUBE",
    "CUBEARRAY": "SHADOWCUBEARRAY",
}

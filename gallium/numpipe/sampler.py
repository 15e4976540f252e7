"""Texture sampling: the driver's side of :mod:`gallium.tgsi.texture_api`.

``TextureBindings.capture(views, samplers)`` snapshots a shader stage's
sampler views and sampler states when a draw is recorded (the storage arrays
of the resources, the view's format, swizzle, level and layer ranges, the
sampler state), so the worker that later shades the draw sees exactly what
was bound, whatever the context does meanwhile.  ``execute(request)``
answers a kernel's texture request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..pipe.errors import UnsupportedError
from ..tgsi.texture_api import TexRequest


@dataclass(frozen=True)
class BoundView:
    """A sampler view as captured for one draw."""

    resource: Any
    storage: np.ndarray
    desc: Any  # FormatDesc of the view format
    target: Any  # pipe.TextureTarget of the view
    swizzle: tuple[int, int, int, int]
    first_level: int
    last_level: int
    first_layer: int
    last_layer: int
    buf_offset: int
    buf_size: int


class TextureBindings:
    """The sampler views and samplers of one shader stage for one draw."""

    def __init__(self, views: list[BoundView | None], samplers: list[Any]) -> None:
        self.views = views
        self.samplers = samplers  # SamplerState or None per slot

    @classmethod
    def capture(cls, views: list[Any], samplers: list[Any]) -> TextureBindings | None:
        if not views and not samplers:
            return None
        bound: list[BoundView | None] = []
        for v in views:
            if v is None:
                bound.append(None)
                continue
            res = v.texture
            bound.append(
                BoundView(
                    resource=res,
                    storage=res.storage,
                    desc=v.desc,
                    target=v.target,
                    swizzle=tuple(int(s) for s in v.swizzle),  # type: ignore[arg-type]
                    first_level=v.first_level,
                    last_level=v.last_level,
                    first_layer=v.first_layer,
                    last_layer=v.last_layer,
                    buf_offset=v.buf_offset,
                    buf_size=v.buf_size,
                )
            )
        states = [s.state if s is not None else None for s in samplers]
        return cls(bound, states)

    def resources(self) -> list[Any]:
        return [v.resource for v in self.views if v is not None]

    def execute(self, req: TexRequest) -> list[Any]:
        raise UnsupportedError(f"texture operation {req.op!r} is not implemented by numpipe yet")

"""The rasterizer's worker pool and its kernels: scene/band execution
(:mod:`workers.raster`) and per-fragment operations (:mod:`workers.fragment`)."""

from .pool import WorkerPool

__all__ = ["WorkerPool"]

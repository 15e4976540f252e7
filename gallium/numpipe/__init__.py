"""The numpipe software driver: screen, context, resources, setup and scenes."""

from .screen import NumpipeScreen

__all__ = ["NumpipeScreen"]

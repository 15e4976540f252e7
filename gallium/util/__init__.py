"""Helpers in the spirit of Mesa's gallium/auxiliary/util: formats, images."""

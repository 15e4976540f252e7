"""The opcode emitter registry shared by the ``ops_*`` modules.

An emitter turns one TGSI instruction into Python source lines through the
generator object ``g`` that :mod:`gallium.tgsi.compiler` passes in.  The
generator offers:

* ``g.src(inst, k, chan, want)`` — an expression for channel ``chan`` of
  source ``k`` after swizzle, absolute and negate, viewed as ``want``
  (``"f"`` float32, ``"i"`` int32, ``"u"`` uint32); ``g.src_raw`` is the same
  without the modifiers.
* ``g.write(inst, {chan: (expr, type)}, dst_index=0)`` — write the channels
  of the destination's write mask under the current lane mask; all values
  are evaluated before any register changes.
* ``g.emit(line)`` and ``g.tmp(prefix)`` — raw source lines and fresh names.
* ``g.active()`` — the current lane mask as an expression; ``g.effects()`` —
  a variable holding the lanes whose stores and atomics land (active, not
  killed, not helpers).
* ``g.fail(inst, message)`` — a :class:`ShaderCompileError` to raise.

Emitters never interpret anything per lane in Python: each line they emit is
a numpy expression over all lanes (or a call into :mod:`.runtime`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .shader import Instruction

Emitter = Callable[[Any, Instruction], None]

OPCODE_EMITTERS: dict[str, Emitter] = {}


def register(*names: str) -> Callable[[Emitter], Emitter]:
    """Decorator: use the function as the emitter of every opcode in ``names``."""

    def deco(fn: Emitter) -> Emitter:
        for name in names:
            OPCODE_EMITTERS[name] = fn
        return fn

    return deco


def _neg_operand(expr: str) -> str | None:
    """The operand of an expression ``(-x)`` when ``x`` is a plain name."""
    if expr.startswith("(-") and expr.endswith(")"):
        inner = expr[2:-1]
        if inner.replace("_", "a").isalnum():
            return inner
    return None


def fold_add(a: str, b: str) -> str:
    """``a + b``, written as a subtraction when ``b`` is a negated register.

    Saves numpy one temporary array per negated operand (ADD with ``-src``
    is the usual TGSI spelling of a subtraction).
    """
    nb = _neg_operand(b)
    if nb is not None:
        return f"({a} - {nb})"
    na = _neg_operand(a)
    if na is not None:
        return f"({b} - {na})"
    return f"({a} + {b})"


def componentwise(name: str, src_types: str, dst_type: str, template: str | Callable) -> None:
    """Register a per-channel opcode.

    ``template`` is a format string over the source channel expressions, or a
    function taking them and returning the expression.
    """

    def emit(g: Any, inst: Instruction) -> None:
        results = {}
        mask = inst.dst[0].writemask if inst.dst else 0xF
        for chan in range(4):
            if mask >> chan & 1:
                args = [g.src(inst, k, chan, t) for k, t in enumerate(src_types)]
                if callable(template):
                    results[chan] = (template(*args), dst_type)
                else:
                    results[chan] = (template.format(*args), dst_type)
        g.write(inst, results)

    OPCODE_EMITTERS[name] = emit


def replicated(name: str, src_types: str, dst_type: str, template: str, chans: str) -> None:
    """Register an opcode whose scalar result goes to every written channel.

    ``chans`` lists which channels of each source feed ``template``: "x" for
    RCP, "xyz" for DP3 (the arguments are then src0.x, src0.y, src0.z,
    src1.x, ...).
    """

    def emit(g: Any, inst: Instruction) -> None:
        if not inst.dst or not inst.dst[0].writemask:
            return
        args = []
        for k, t in enumerate(src_types):
            for c in chans:
                args.append(g.src(inst, k, "xyzw".index(c), t))
        v = g.tmp()
        g.emit(f"{v} = {template.format(*args)}")
        g.write(inst, {c: (v, dst_type) for c in range(4)})

    OPCODE_EMITTERS[name] = emit

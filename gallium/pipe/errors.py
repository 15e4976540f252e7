"""Exceptions raised through the Gallium interface.

Every error numpipe raises on purpose derives from :class:`PipeError`.  Bad
arguments raise :class:`PipeValueError` / :class:`PipeTypeError`, which are also
``ValueError`` / ``TypeError`` so ordinary ``except ValueError`` code keeps
working.  Their message names the argument and the rule it broke.

An exception raised on a context's driver thread or on a worker is never
swallowed: it is kept by the context and re-raised on the application's thread
at the next sync point (flush, fence wait, map, query result), as the very
exception object that was raised, with :class:`DeviceResetNote` text attached
saying where it happened.
"""

from __future__ import annotations

import numbers


class PipeError(Exception):
    """Base class of every error raised by numpipe on purpose."""


class PipeValueError(PipeError, ValueError):
    """An argument has a value the interface does not allow."""


class PipeTypeError(PipeError, TypeError):
    """An argument has a type the interface does not accept."""


class UnsupportedError(PipeError, NotImplementedError):
    """The call is valid Gallium but numpipe does not implement it (yet).

    The message says what is missing; the screen's caps report the same thing
    (a cap answering 0 means the feature raises this error).
    """


class ContextDestroyedError(PipeError, RuntimeError):
    """A call was made on a context after ``destroy()``."""


class FenceTimeout(PipeError, TimeoutError):
    """Raised by waits that were given a timeout and want an exception, not False."""


def bad_value(arg: str, rule: str, value: object = ...) -> PipeValueError:
    """Build the standard 'argument broke rule' error.

    ``bad_value("box", "must lie inside level 0 (256x256x1)", box)`` gives
    ``box must lie inside level 0 (256x256x1); got Box(...)``.
    """
    if value is ...:
        return PipeValueError(f"{arg} {rule}")
    return PipeValueError(f"{arg} {rule}; got {short_repr(value)}")


REPR_LIMIT = 200  # characters of a bad value quoted in an error message


def short_repr(value: object, limit: int = REPR_LIMIT) -> str:
    """``repr(value)`` for an error message, never longer than about ``limit``.

    An array is described by its shape and dtype; anything else whose repr is
    too long (a state object holding a big array, a long list) is cut, with
    its full length said, so a bad argument never floods a log.
    """
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if isinstance(shape, tuple) and dtype is not None and len(shape) > 0:
        return f"{type(value).__name__} of shape {shape} and dtype {dtype}"
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 40]}... ({len(text)} characters)"


def bad_type(arg: str, expected: str, value: object) -> PipeTypeError:
    return PipeTypeError(f"{arg} must be {expected}; got {type(value).__name__}")


def check_int(arg: str, value: object, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as a Python int in [lo, hi], else an error naming ``arg``.

    Accepts Python and numpy integers (and bools, which are integers); a
    float, a string or None is a PipeTypeError even when it would convert.
    """
    if type(value) is int:  # the common case, without the ABC check
        v = value
    elif isinstance(value, numbers.Integral):
        v = int(value)
    else:
        raise bad_type(arg, "an integer", value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        if hi is None:
            raise bad_value(arg, f"must be >= {lo}", v)
        if lo is None:
            raise bad_value(arg, f"must be <= {hi}", v)
        raise bad_value(arg, f"must be in [{lo}, {hi}]", v)
    return v


def add_origin_note(exc: BaseException, where: str) -> BaseException:
    """Attach a note saying on which thread / stage an exception happened."""
    note = f"numpipe: raised on {where}; reported at the application's next sync point"
    notes = getattr(exc, "__notes__", None)
    if not notes or note not in notes:
        exc.add_note(note)
    return exc

"""The compiler's kernel cache: equal programs share a kernel; the cache stays small.

Before: the cache kept every kernel compiled until it held 512, then dropped
them all.  A program that makes shaders as it goes (the stress soak draws
with shaders whose immediates it never repeats) held ~12 MiB of kernels of
shaders long destroyed, in a saw-tooth, and every hot kernel was compiled
again after each clear.
"""

from __future__ import annotations

import gc
import weakref

from gallium.tgsi import compiler
from gallium.tgsi.compiler import RECENT_KERNELS, compile_shader


def _program(k: int) -> str:
    imm = f"IMM[0] FLT32 {{{k}.5, 0.0, 0.0, 1.0}}"
    return f"FRAG\nDCL OUT[0], COLOR\n{imm}\n  0: MOV OUT[0], IMM[0]\n  1: END\n"


def test_dropped_kernels_are_freed_beyond_the_recent_ones():
    made = [weakref.ref(compile_shader(_program(k))) for k in range(RECENT_KERNELS + 40)]
    gc.collect()
    alive = [k for k, r in enumerate(made) if r() is not None]
    # exactly the most recent ones are kept, however many were compiled
    assert alive == list(range(40, RECENT_KERNELS + 40))


def test_a_kernel_in_use_is_shared_however_old():
    held = compile_shader(_program(-1))
    for k in range(RECENT_KERNELS + 5):  # pushes it out of the recent ones
        compile_shader(_program(10_000 + k))
    assert compile_shader(_program(-1)) is held


def test_a_recent_kernel_is_not_compiled_again():
    first = weakref.ref(compile_shader(_program(-2)))
    gc.collect()
    again = compile_shader(_program(-2))
    assert again is first()
    assert compiler.cache_size()[1] <= RECENT_KERNELS

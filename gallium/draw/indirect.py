"""Indirect draws: the draws a ``pipe_draw_indirect_info`` describes.

The commands are read from their buffer when the draw runs -- after every
earlier call that writes the buffer, as llvmpipe's util_draw_indirect maps
it -- and become ordinary draws, in order:

* at most ``draw_count`` commands, fewer when ``indirect_draw_count`` holds a
  smaller count (a uint32 at ``indirect_draw_count_offset``);
* a command is uint32 ``count, instance_count, start, start_instance``, or for
  indexed draws ``count, instance_count, start, index_bias (int32),
  start_instance``, ``stride`` bytes after the previous one;
* DRAWID numbers the commands from 0;
* indices a command reads past the end of the index buffer read 0, as the
  draw module's bounded element fetch (DRAW_GET_IDX) reads them.

A command past the driver's vertex limit a draw (count x instance_count)
cannot be drawn: UnsupportedError, where the draw runs (on a threaded
context, reported at its next sync point), since only the buffer's contents
decide it.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ..pipe.errors import UnsupportedError


def indirect_commands(
    info: Any, commands: np.ndarray, count_word: np.ndarray | None, limit: int
) -> list[Any]:
    """The draws ``info`` (an indirect DrawInfo) describes.

    ``commands`` is the command buffer's bytes, ``count_word`` the bytes of
    the indirect_draw_count buffer (or None), ``limit`` the vertices one draw
    may have (0: no limit).  Indexed commands whose range leaves the index
    buffer get a zero-padded copy of the indices."""
    ind = info.indirect
    count = ind.draw_count
    if count_word is not None:
        off = ind.indirect_draw_count_offset
        count = min(count, int(count_word[off : off + 4].view("<u4")[0]))
    size = 20 if info.index_size else 16
    out = []
    for i in range(count):
        at = ind.offset + i * ind.stride
        words = commands[at : at + size].view("<u4")
        sub = copy.copy(info)
        sub.indirect = None
        sub.count, sub.instance_count, sub.start = (int(w) for w in words[:3])
        if info.index_size:
            sub.index_bias = int(commands[at + 12 : at + 16].view("<i4")[0])
            sub.start_instance = int(words[4])
            sub.index = _bounded_indices(info, sub.start, sub.count)
        else:
            sub.start_instance = int(words[3])
        sub.drawid = i
        if limit and sub.count * sub.instance_count > limit:
            raise UnsupportedError(
                f"info.indirect command {i} (at byte {at}) draws {sub.count:,} x "
                f"{sub.instance_count:,} vertices: numpipe draws at most {limit:,} a call"
            )
        out.append(sub)
    return out


def _bounded_indices(info: Any, start: int, count: int) -> Any:
    """The index data a command reads: the buffer itself, or a copy padded
    with zero indices when the range leaves it."""
    index = info.index
    data = index.storage if hasattr(index, "storage") else np.asarray(index).view(np.uint8)
    end = (start + count) * info.index_size
    if end <= data.size:
        return index
    padded = np.zeros(end, np.uint8)
    padded[: data.size] = data
    return padded

"""TRIANGLE_STRIP_ADJACENCY's primitives in both provoking-vertex conventions.

The last-vertex order is checked against llvmpipe's images in
tests/test_reference.py (gs_triangle_strip_adjacency colours every input slot,
strip_adjacency_without_gs culls by winding); here the first-vertex order is
checked against it: the same triangles and adjacent vertices, the same
winding, and the provoking vertex moved from the last place to the first.
"""

from __future__ import annotations

import numpy as np
import pytest

from gallium.draw.assemble import adjacency_primitives, triangles
from gallium.pipe import Prim

MODE = Prim.TRIANGLE_STRIP_ADJACENCY


def _winding(tri: np.ndarray) -> set:
    a, b, c = tri
    return {(a, b, c), (b, c, a), (c, a, b)}


@pytest.mark.parametrize("count", [5, 6, 7, 8, 9, 12, 13, 20])
def test_first_vertex_order_is_the_last_vertex_order_turned(count):
    last = adjacency_primitives(MODE, count, np.zeros(0, np.int64), False)
    first = adjacency_primitives(MODE, count, np.zeros(0, np.int64), True)
    assert last.shape == first.shape == (max((count - 4) // 2, 0), 6)
    for j, (lp, fp) in enumerate(zip(last.tolist(), first.tolist())):
        i = 2 * j
        assert set(lp[0::2]) == set(fp[0::2]) == {i, i + 2, i + 4}
        assert set(lp[1::2]) == set(fp[1::2])  # the adjacent vertices
        assert tuple(fp[0::2]) in _winding(lp[0::2])
        assert lp[4] == i + 4 and fp[0] == i  # the provoking vertex of each convention
        # each adjacent vertex stays opposite the same edge
        for k in range(3):
            edge = {lp[2 * k], lp[(2 * k + 2) % 6]}
            m = next(n for n in range(3) if {fp[2 * n], fp[(2 * n + 2) % 6]} == edge)
            assert fp[2 * m + 1] == lp[2 * k + 1]


def test_restarts_cut_strips_and_triangles_are_slots_0_2_4():
    cuts = np.array([8])
    prims = adjacency_primitives(MODE, 16, cuts, False)
    assert prims.shape == (4, 6)
    assert prims[:2].max() < 8 and prims[2:].min() >= 8
    tris, ids = triangles(MODE, 16, cuts, False)
    np.testing.assert_array_equal(tris, prims[:, [0, 2, 4]])
    assert ids.tolist() == [0, 1, 2, 3]

"""Per-lane control flow, indirect addressing, KILL, derivatives, and the
texture / memory / geometry-output interfaces of compiled TGSI kernels.

Every expected value is derived by hand (or by a few lines of plain Python
that replay the program for one lane at a time)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gallium.tgsi.compiler import (
    ExecEnv,
    GsEvent,
    ShaderCompileError,
    ShaderRuntimeError,
    compile_shader,
)
from gallium.tgsi.limits import ShaderLimitError
from gallium.tgsi.memory_api import ReferenceImage, ReferenceMemory
from gallium.tgsi.texture_api import TexRequest

F32, U32, I32 = np.float32, np.uint32, np.int32


def f2b(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def run(text: str, inputs: list[list], n: int, **env):
    """Run TGSI text with float inputs ``inputs[reg][chan]`` (lists of lanes)."""
    ins = [[np.asarray(ch, F32) if ch is not None else None for ch in reg] for reg in inputs]
    res = compile_shader(text)(ExecEnv(n=n, inputs=ins, **env))
    outs = {
        r: [np.broadcast_to(np.asarray(c), (n,)) for c in chans] for r, chans in res.outputs.items()
    }
    return outs, res


def fl(x) -> list[float]:
    return [float(v) for v in np.asarray(x, F32)]


def ints(x) -> list[int]:
    return [int(v) for v in np.asarray(x, F32).view(I32)]


def lanes4(values):
    return [list(values)] * 4


# -- IF / ELSE ------------------------------------------------------------------------------


def test_nested_if_else_divergent():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 2.0, 3.0, 4.0}
IMM[1] FLT32 {0.0, 10.0, 20.0, 0.0}
  0: SLT TEMP[0].x, IN[0].xxxx, IMM[1].yyyy
  1: SLT TEMP[0].y, IN[0].xxxx, IMM[1].zzzz
  2: IF TEMP[0].xxxx :0
  3:   MOV OUT[0].x, IMM[0].xxxx
  4: ELSE :0
  5:   IF TEMP[0].yyyy :0
  6:     MOV OUT[0].x, IMM[0].yyyy
  7:   ELSE :0
  8:     MOV OUT[0].x, IMM[0].zzzz
  9:   ENDIF
 10:   ADD OUT[0].y, OUT[0].xxxx, IMM[0].wwww
 11: ENDIF
 12: END
"""
    x = [5.0, 15.0, 25.0, 9.0, 19.0, 100.0]
    out, _ = run(text, [lanes4(x)], len(x))
    assert fl(out[0][0]) == [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]
    assert fl(out[0][1]) == [0.0, 6.0, 7.0, 0.0, 6.0, 7.0]


def test_if_conditions_float_and_uint():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: IF IN[0].xxxx :0
  1:   MOV OUT[0].x, IMM[0].xxxx
  2: ENDIF
  3: UIF IN[0].xxxx :0
  4:   MOV OUT[0].y, IMM[0].xxxx
  5: ENDIF
  6: END
"""
    # -0.0 is false for IF but its bits (0x80000000) are true for UIF; NaN is true.
    x = [0.0, -0.0, float("nan"), 2.0]
    out, _ = run(text, [lanes4(x)], 4)
    assert fl(out[0][0]) == [0.0, 0.0, 1.0, 1.0]
    assert fl(out[0][1]) == [0.0, 1.0, 1.0, 1.0]


def test_uniform_branch_not_taken_is_skipped():
    text = """FRAG
DCL OUT[0]
IMM[0] FLT32 {0.0, 7.0, 0.0, 0.0}
  0: IF IMM[0].xxxx :0
  1:   MOV OUT[0], IMM[0].yyyy
  2: ELSE :0
  3:   MOV OUT[0], -IMM[0].yyyy
  4: ENDIF
  5: END
"""
    out, _ = run(text, [], 3)
    assert fl(out[0][0]) == [-7.0] * 3


# -- loops --------------------------------------------------------------------------------


def test_loop_with_divergent_brk_and_cont():
    # i = 0; acc = 0; loop { if (i >= limit) break; i += 1; if (i is odd) continue; acc += i; }
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..2]
IMM[0] INT32 {0, 1, 2, 0}
  0: MOV TEMP[0].x, IMM[0].xxxx
  1: MOV TEMP[0].y, IMM[0].xxxx
  2: F2I TEMP[2].x, IN[0].xxxx
  3: BGNLOOP :0
  4:   ISGE TEMP[1].x, TEMP[0].xxxx, TEMP[2].xxxx
  5:   UIF TEMP[1].xxxx :0
  6:     BRK
  7:   ENDIF
  8:   UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  9:   AND TEMP[1].y, TEMP[0].xxxx, IMM[0].yyyy
 10:   UIF TEMP[1].yyyy :0
 11:     CONT
 12:   ENDIF
 13:   UADD TEMP[0].y, TEMP[0].yyyy, TEMP[0].xxxx
 14: ENDLOOP :0
 15: MOV OUT[0].xy, TEMP[0]
 16: END
"""
    limits = [0, 1, 2, 5, 8, 3]
    out, _ = run(text, [lanes4([float(v) for v in limits])], len(limits))

    def replay(limit):
        i = acc = 0
        while True:
            if i >= limit:
                break
            i += 1
            if i & 1:
                continue
            acc += i
        return i, acc

    assert ints(out[0][0]) == [replay(v)[0] for v in limits]
    assert ints(out[0][1]) == [replay(v)[1] for v in limits]


def test_nested_loops_break_inner_only():
    # for (i < a) { for (;;) { j++; if (j >= b) break; } total += j; }
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..3]
IMM[0] FLT32 {0.0, 1.0, 0.0, 0.0}
  0: MOV TEMP[0], IMM[0].xxxx
  1: BGNLOOP :0
  2:   SGE TEMP[1].x, TEMP[0].xxxx, IN[0].xxxx
  3:   IF TEMP[1].xxxx :0
  4:     BRK
  5:   ENDIF
  6:   MOV TEMP[2].x, IMM[0].xxxx
  7:   BGNLOOP :0
  8:     ADD TEMP[2].x, TEMP[2].xxxx, IMM[0].yyyy
  9:     SGE TEMP[1].y, TEMP[2].xxxx, IN[0].yyyy
 10:     IF TEMP[1].yyyy :0
 11:       BRK
 12:     ENDIF
 13:   ENDLOOP :0
 14:   ADD TEMP[0].y, TEMP[0].yyyy, TEMP[2].xxxx
 15:   ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
 16: ENDLOOP :0
 17: MOV OUT[0], TEMP[0]
 18: END
"""
    a = [0.0, 1.0, 3.0, 2.0]
    b = [5.0, 2.0, 4.0, 0.0]
    out, _ = run(text, [[a, b, a, a]], 4)
    # the inner loop runs max(b, 1) times
    assert fl(out[0][1]) == [0.0, 2.0, 12.0, 2.0]
    assert fl(out[0][0]) == a


def test_breakc():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..1]
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: MOV TEMP[0], IMM[0].yyyy
  1: BGNLOOP :0
  2:   ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  3:   SGE TEMP[1].x, TEMP[0].xxxx, IN[0].xxxx
  4:   BREAKC TEMP[1].xxxx
  5: ENDLOOP :0
  6: MOV OUT[0], TEMP[0]
  7: END
"""
    out, _ = run(text, [lanes4([1.0, 4.0, 2.0])], 3)
    assert fl(out[0][0]) == [1.0, 4.0, 2.0]


def test_a_runaway_loop_stops_when_the_budget_is_spent():
    """A loop no lane leaves runs until the call's loop budget is spent, then
    ends at its ENDLOOP and the program goes on (llvmpipe's loop limiter: no
    error, no reset)."""
    text = """VERT
DCL OUT[0]
DCL TEMP[0]
IMM[0] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: MOV TEMP[0], IMM[0].yyyy
  1: BGNLOOP :0
  2:   ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].xxxx
  3: ENDLOOP :0
  4: ADD OUT[0].x, TEMP[0].xxxx, IMM[0].xxxx
  5: END
"""
    kernel = compile_shader(text)
    kernel._fn.__globals__["MAX_LOOP_ITERATIONS"] = 50  # this kernel only
    res = kernel(ExecEnv(n=2))
    assert fl(res.outputs[0][0]) == [51.0, 51.0]  # 50 bodies, then the ADD after the loop


# -- SWITCH -------------------------------------------------------------------------------


SWITCH_TEXT = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..1]
IMM[0] INT32 {0, 1, 2, 3}
IMM[1] INT32 {100, 10, 1000, 7}
  0: F2I TEMP[0].x, IN[0].xxxx
  1: MOV TEMP[1].x, IMM[0].xxxx
  2: SWITCH TEMP[0].xxxx
  3:   CASE IMM[0].xxxx
  4:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].yyyy
  5:   CASE IMM[0].yyyy
  6:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].xxxx
  7:     BRK
  8:   DEFAULT
  9:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].wwww
 10:   CASE IMM[0].zzzz
 11:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].zzzz
 12:     BRK
 13:   CASE IMM[0].wwww
 14:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[0].yyyy
 15: ENDSWITCH
 16: MOV OUT[0].x, TEMP[1].xxxx
 17: END
"""


def test_switch_fallthrough_and_default_in_the_middle():
    # case 0: +10, falls into case 1: +100, break
    # default (anything else): +7, falls into case 2: +1000, break
    # case 2: +1000, break; case 3: +1 (last case, falls out)
    sel = [0.0, 1.0, 2.0, 3.0, 9.0, -4.0]
    out, _ = run(SWITCH_TEXT, [lanes4(sel)], len(sel))
    assert ints(out[0][0]) == [110, 100, 1000, 1, 1007, 1007]


def test_switch_inside_loop_with_cont():
    # loop i = 0..3: switch(i & 1) { case 0: acc += 1; continue; default: acc += 10; }
    #                i += 1 is done before the switch; acc += 100 after it (skipped by CONT).
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..2]
IMM[0] INT32 {0, 1, 10, 100}
IMM[1] INT32 {4, 0, 0, 0}
  0: MOV TEMP[0], IMM[0].xxxx
  1: BGNLOOP :0
  2:   USGE TEMP[2].x, TEMP[0].xxxx, IMM[1].xxxx
  3:   UIF TEMP[2].xxxx :0
  4:     BRK
  5:   ENDIF
  6:   UADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  7:   AND TEMP[2].y, TEMP[0].xxxx, IMM[0].yyyy
  8:   SWITCH TEMP[2].yyyy
  9:     CASE IMM[0].xxxx
 10:       UADD TEMP[0].y, TEMP[0].yyyy, IMM[0].yyyy
 11:       CONT
 12:     DEFAULT
 13:       UADD TEMP[0].y, TEMP[0].yyyy, IMM[0].zzzz
 14:   ENDSWITCH
 15:   UADD TEMP[0].y, TEMP[0].yyyy, IMM[0].wwww
 16: ENDLOOP :0
 17: MOV OUT[0], TEMP[0]
 18: END
"""
    out, _ = run(text, [lanes4([0.0, 0.0])], 2)
    # i = 1: +10 +100; i = 2: +1 (continue); i = 3: +110; i = 4: +1
    assert ints(out[0][1]) == [222, 222]


# -- subroutines ------------------------------------------------------------------------------


CALL_TEXT = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0]
IMM[0] FLT32 {0.0, 1.0, 100.0, 1000.0}
  0: MOV TEMP[0].x, IMM[0].xxxx
  1: CAL :6
  2: ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].wwww
  3: CAL :6
  4: MOV OUT[0].x, TEMP[0].xxxx
  5: END
  6: BGNSUB
  7:   ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
  8:   IF IN[0].xxxx :0
  9:     RET
 10:   ENDIF
 11:   ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].zzzz
 12: ENDSUB
"""


def test_cal_with_lanes_returning_early():
    out, _ = run(CALL_TEXT, [lanes4([0.0, 1.0, 0.0])], 3)
    # lanes with IN.x != 0 return before the +100, at both calls
    assert fl(out[0][0]) == [1202.0, 1002.0, 1202.0]


def test_ret_in_main_stops_lanes():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {5.0, 6.0, 0.0, 0.0}
  0: MOV OUT[0].x, IMM[0].xxxx
  1: IF IN[0].xxxx :0
  2:   RET
  3: ENDIF
  4: MOV OUT[0].x, IMM[0].yyyy
  5: END
"""
    out, _ = run(text, [lanes4([1.0, 0.0, 1.0, 0.0])], 4)
    assert fl(out[0][0]) == [5.0, 6.0, 5.0, 6.0]


def test_recursion_is_refused():
    text = """FRAG
DCL OUT[0]
  0: CAL :2
  1: END
  2: BGNSUB
  3:   CAL :2
  4: ENDSUB
"""
    with pytest.raises(ShaderCompileError, match="recursion"):
        compile_shader(text)


def test_structure_errors():
    with pytest.raises(ShaderCompileError, match="ELSE without IF"):
        compile_shader("FRAG\n  0: ELSE\n  1: END\n")
    with pytest.raises(ShaderCompileError, match="unterminated IF"):
        compile_shader("FRAG\nDCL IN[0]\n  0: IF IN[0].xxxx\n  1: END\n")
    with pytest.raises(ShaderCompileError, match="BRK outside"):
        compile_shader("FRAG\n  0: BRK\n  1: END\n")


def test_bra_forward_jump():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {1.0, 2.0, 4.0, 0.0}
  0: MOV OUT[0].x, IMM[0].wwww
  1: IF IN[0].xxxx :0
  2:   BRA :5
  3: ENDIF
  4: ADD OUT[0].x, OUT[0].xxxx, IMM[0].xxxx
  5: ADD OUT[0].x, OUT[0].xxxx, IMM[0].yyyy
  6: END
"""
    out, _ = run(text, [lanes4([1.0, 0.0])], 2)
    assert fl(out[0][0]) == [2.0, 3.0]


# -- KILL ----------------------------------------------------------------------------------


def test_kill_per_lane_and_killed_lanes_keep_running():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {3.0, 0.0, 0.0, 0.0}
  0: KILL_IF IN[0].xyzw
  1: IF IN[0].wwww :0
  2:   KILL
  3: ENDIF
  4: MOV OUT[0].x, IMM[0].xxxx
  5: END
"""
    x = [
        [1.0, -1.0, 1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, -0.0, 1.0],
        [1.0, 1.0, float("nan"), 1.0, 1.0],
        [0.0, 0.0, 0.0, 0.0, 2.0],
    ]
    out, res = run(text, [x], 5)
    # KILL_IF: any component < 0 (-0.0 and NaN are not); KILL: lanes with w != 0
    assert list(res.kill) == [False, True, False, False, True]
    assert fl(out[0][0]) == [3.0] * 5


def test_no_kill_leaves_mask_none():
    _, res = run("FRAG\nDCL OUT[0]\n  0: END\n", [], 2)
    assert res.kill is None


# -- indirect addressing --------------------------------------------------------------------


def test_temp_array_indirect_read_write_and_bounds():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0]
DCL TEMP[1..4], ARRAY(1)
DCL TEMP[5]
DCL ADDR[0]
IMM[0] FLT32 {10.0, 20.0, 30.0, 40.0}
IMM[1] FLT32 {99.0, 0.0, 0.0, 0.0}
  0: MOV TEMP[1].x, IMM[0].xxxx
  1: MOV TEMP[2].x, IMM[0].yyyy
  2: MOV TEMP[3].x, IMM[0].zzzz
  3: MOV TEMP[4].x, IMM[0].wwww
  4: MOV TEMP[5].x, IMM[1].xxxx
  5: ARL ADDR[0].x, IN[0].xxxx
  6: MOV OUT[0].x, TEMP[ADDR[0].x+1](1).xxxx
  7: MOV TEMP[ADDR[0].x+2](1).x, IMM[1].xxxx
  8: MOV OUT[0].y, TEMP[2].xxxx
  9: MOV OUT[0].z, TEMP[5].xxxx
 10: MOV OUT[0].w, TEMP[0].xxxx
 11: END
"""
    idx = [0.0, 2.0, 3.0, -1.0, 4.0, 7.0]
    out, _ = run(text, [lanes4(idx)], len(idx))
    # reads TEMP[1 + a] inside 1..4, 0 outside the array (never TEMP[0] or TEMP[5])
    assert fl(out[0][0]) == [10.0, 30.0, 40.0, 0.0, 0.0, 0.0]
    # writes TEMP[2 + a]: only a == 0 hits TEMP[2]; a == -1 would be TEMP[1]
    assert fl(out[0][1]) == [99.0, 20.0, 20.0, 20.0, 20.0, 20.0]
    # out-of-range writes never spill into neighbouring registers
    assert fl(out[0][2]) == [99.0] * 6
    assert fl(out[0][3]) == [0.0] * 6


def test_inactive_lanes_never_write_through_indirection():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..3], ARRAY(1)
DCL ADDR[0]
IMM[0] FLT32 {5.0, 0.0, 0.0, 0.0}
  0: UARL ADDR[0].x, IMM[0].yyyy
  1: IF IN[0].xxxx :0
  2:   MOV TEMP[ADDR[0].x+1](1).x, IMM[0].xxxx
  3: ENDIF
  4: MOV OUT[0].x, TEMP[1].xxxx
  5: END
"""
    out, _ = run(text, [lanes4([1.0, 0.0, 1.0, 0.0])], 4)
    assert fl(out[0][0]) == [5.0, 0.0, 5.0, 0.0]


def test_const_indirect_and_out_of_range():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL CONST[0][0..2]
DCL CONST[1][0..1]
DCL ADDR[0]
  0: ARL ADDR[0].x, IN[0].xxxx
  1: MOV OUT[0].x, CONST[0][ADDR[0].x].yyyy
  2: MOV OUT[0].y, CONST[1][ADDR[0].x+1].xxxx
  3: MOV OUT[0].z, CONST[0][5].xxxx
  4: MOV OUT[0].w, CONST[ADDR[0].x][0].wwww
  5: END
"""
    c0 = np.arange(12, dtype=F32)  # three vec4s: 0..3, 4..7, 8..11
    c1 = np.array([100, 101, 102, 103, 104, 105, 106, 107], F32)
    consts = [c0.view(np.uint8), c1.view(np.uint8)]
    idx = [0.0, 1.0, 2.0, 3.0, -1.0]
    out, _ = run(text, [lanes4(idx)], 5, consts=consts)
    assert fl(out[0][0]) == [1.0, 5.0, 9.0, 0.0, 0.0]
    assert fl(out[0][1]) == [104.0, 0.0, 0.0, 0.0, 100.0]
    assert fl(out[0][2]) == [0.0] * 5
    # 2-D indirect: buffer ADDR.x, vector 0, .w
    assert fl(out[0][3]) == [3.0, 103.0, 0.0, 0.0, 0.0]


def test_input_and_immediate_indirect():
    text = """FRAG
DCL IN[0..2]
DCL OUT[0]
DCL ADDR[0]
IMM[0] FLT32 {1.0, 2.0, 3.0, 4.0}
IMM[1] FLT32 {5.0, 6.0, 7.0, 8.0}
  0: ARL ADDR[0].x, IN[0].xxxx
  1: MOV OUT[0].x, IN[ADDR[0].x+1].yyyy
  2: MOV OUT[0].y, IMM[ADDR[0].x].zzzz
  3: END
"""
    idx = [0.0, 1.0, 2.0, -1.0]
    ins = [lanes4(idx), lanes4([10.0] * 4), lanes4([20.0] * 4)]
    out, _ = run(text, ins, 4)
    # IN[-1 + 1] = IN[0] is still inside the declared inputs; IN[3] is not
    assert fl(out[0][0]) == [10.0, 20.0, 0.0, -1.0]
    assert fl(out[0][1]) == [3.0, 7.0, 0.0, 0.0]


# -- derivatives -------------------------------------------------------------------------------


def test_ddx_ddy_coarse_and_fine_on_quads():
    # Two 2x2 quads side by side: lanes laid out as (quad_row=1, y=2, quad_col=2, x=2).
    # v(x, y) = 3x^2 + 100y^2 + 7xy over pixel centres, as the softpipe measurement.
    xs = np.tile(np.repeat([0.5, 1.5, 2.5, 3.5], 1), 2).reshape(2, 4)
    ys = np.array([[0.5] * 4, [1.5] * 4])
    v = 3 * xs**2 + 100 * ys**2 + 7 * xs * ys
    order = np.array(v, F32).reshape(1, 2, 2, 2)  # already (row, y, qcol, x)
    lanes = order.reshape(-1)
    text = """FRAG
DCL IN[0]
DCL OUT[0]
  0: DDX OUT[0].x, IN[0].xxxx
  1: DDX_FINE OUT[0].y, IN[0].xxxx
  2: DDY OUT[0].z, IN[0].xxxx
  3: DDY_FINE OUT[0].w, IN[0].xxxx
  4: END
"""
    out, _ = run(text, [lanes4(lanes)], 8, quad_shape=(1, 2))
    # quad 0 pixels: (0.5,0.5)=27.5 (1.5,0.5)=37 (0.5,1.5)=231 (1.5,1.5)=247.5
    # coarse ddx uses the second row for the whole quad (16.5), fine each row
    assert fl(out[0][0])[0:2] + fl(out[0][0])[4:6] == [16.5] * 4
    assert fl(out[0][1])[0:2] + fl(out[0][1])[4:6] == [9.5, 9.5, 16.5, 16.5]
    # coarse ddy uses the left column (203.5), fine each column
    assert fl(out[0][2])[0:2] + fl(out[0][2])[4:6] == [203.5] * 4
    assert fl(out[0][3])[0:2] + fl(out[0][3])[4:6] == [203.5, 210.5, 203.5, 210.5]
    # quad 1 pixels (2.5..3.5): row y=0.5: 36.25+... ; check coarse ddx = 3*(3.5^2-2.5^2)+7*1.5
    assert fl(out[0][0])[2] == 3 * (3.5**2 - 2.5**2) + 7 * 1.5


def test_derivative_of_uniform_is_zero():
    text = "FRAG\nDCL OUT[0]\nIMM[0] FLT32 {3.0, 0, 0, 0}\n  0: DDX OUT[0], IMM[0]\n  1: END\n"
    out, _ = run(text, [], 4, quad_shape=(1, 1))
    assert fl(out[0][0]) == [0.0] * 4


# -- textures (a fake sampler that records requests) ----------------------------------------


class FakeTextures:
    def __init__(self):
        self.requests: list[TexRequest] = []

    def execute(self, req: TexRequest):
        self.requests.append(req)
        n = req.n
        if req.op in ("size", "samples"):
            return [np.int32(7), np.int32(8), np.int32(9), np.int32(10)]
        return [np.full(n, 0.25 * (k + 1), F32) for k in range(4)]


def tex_run(text: str, inputs, n=2):
    fake = FakeTextures()
    out, _ = run(text, inputs, n, textures=fake)
    return fake.requests, out


def test_tex_family_decoding():
    coords = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [2.0, 0.5]]
    reqs, out = tex_run(
        """FRAG
DCL IN[0]
DCL OUT[0..3]
DCL SAMP[0]
DCL SAMP[3]
DCL SVIEW[0], 2D, FLOAT
  0: TEX OUT[0], IN[0], SAMP[0], 2D
  1: TXP OUT[1], IN[0], SAMP[3], SHADOW2D
  2: TXB OUT[2], IN[0], SAMP[0], 3D
  3: TXL OUT[3].yw, IN[0], SAMP[0], CUBEARRAY
  4: END
""",
        [coords],
    )
    tex, txp, txb, txl = reqs
    assert (tex.op, tex.unit, tex.sampler, tex.target) == ("sample", 0, 0, "2D")
    assert fl(tex.s) == [1.0, 2.0] and fl(tex.t) == [3.0, 4.0] and tex.r is None
    assert (txp.unit, txp.target) == (3, "SHADOW2D")
    assert fl(txp.s) == [0.5, 4.0] and fl(txp.t) == [1.5, 8.0] and fl(txp.ref) == [2.5, 12.0]
    assert fl(txb.r) == [5.0, 6.0] and fl(txb.bias) == [2.0, 0.5]  # bias from src0.w
    assert fl(txl.layer) == [2.0, 0.5] and fl(txl.lod) == [2.0, 0.5]
    assert fl(out[0][1]) == [0.5, 0.5]
    assert fl(out[3][0]) == [0.0, 0.0] and fl(out[3][1]) == [0.5, 0.5]


def test_tex2_txd_txf_txq_tg4_lodq():
    f = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    reqs, out = tex_run(
        """FRAG
DCL IN[0..2]
DCL OUT[0..6]
DCL SAMP[1]
IMM[0] INT32 {1, 2, 3, 4}
IMM[1] UINT32 {2, 0, 0, 0}
  0: TEX2 OUT[0], IN[0], IN[1], SAMP[1], SHADOWCUBEARRAY
  1: TXD OUT[1], IN[0], IN[1], IN[2], SAMP[1], 2D, IMM[0].xyz
  2: TXF OUT[2], IMM[0], SAMP[1], 2D_ARRAY
  3: TXF OUT[3], IMM[0], SAMP[1], 2D_MSAA
  4: TXQ OUT[4], IMM[0].yyyy, SAMP[1], 2D
  5: TG4 OUT[5], IN[0], IMM[1].xxxx, SAMP[1], 2D
  6: LODQ OUT[6], IN[0], SAMP[1], 2D
  7: END
""",
        [f, [[9.0, 9.5], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], f],
    )
    tex2, txd, txf, txfms, txq, tg4, lodq = reqs
    assert fl(tex2.layer) == [7.0, 8.0] and fl(tex2.ref) == [9.0, 9.5]
    assert [fl(d) for d in txd.ddx] == [[9.0, 9.5], [0.0, 0.0]]
    assert [int(o) for o in txd.offset] == [1, 2, 3]
    assert txf.op == "fetch" and [int(txf.s), int(txf.t), int(txf.layer), int(txf.lod)] == [
        1,
        2,
        3,
        4,
    ]
    assert txfms.lod is None and int(txfms.sample) == 4
    assert txq.op == "size" and int(txq.lod) == 2
    assert ints(out[4][0]) == [7, 7] and ints(out[4][3]) == [10, 10]
    assert tg4.op == "gather" and int(tg4.component) == 2
    assert lodq.op == "lod"
    assert fl(out[6][0]) == [0.25, 0.25] and fl(out[6][2]) == [0.0, 0.0]  # only x, y written


def test_sample_family_uses_sview_declaration_and_swizzle():
    f = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    reqs, out = tex_run(
        """FRAG
DCL IN[0..1]
DCL OUT[0..3]
DCL SAMP[2]
DCL SVIEW[1], 2D_ARRAY, FLOAT
DCL SVIEW[4], CUBE, FLOAT
  0: SAMPLE OUT[0], IN[0], SVIEW[1].wzyx, SAMP[2]
  1: SAMPLE_C OUT[1], IN[0], SVIEW[4], SAMP[2], IN[1].xxxx
  2: SAMPLE_L OUT[2], IN[0], SVIEW[1], SAMP[2], IN[1].yyyy
  3: SVIEWINFO OUT[3], IN[1].zzzz, SVIEW[4]
  4: END
""",
        [f, [[0.5, 0.5], [2.0, 3.0], [0.0, 0.0], [0.0, 0.0]]],
    )
    sample, cmp, lod, info = reqs
    assert (sample.unit, sample.sampler, sample.target) == (1, 2, "2D_ARRAY")
    assert fl(sample.layer) == [5.0, 6.0]
    assert fl(out[0][0]) == [1.0, 1.0] and fl(out[0][3]) == [0.25, 0.25]  # .wzyx
    assert cmp.target == "SHADOWCUBE" and fl(cmp.ref) == [0.5, 0.5]
    assert fl(lod.lod) == [2.0, 3.0]
    assert info.op == "size" and info.target == "CUBE" and info.unit == 4


def test_indirect_sampler_splits_per_unit():
    reqs, _ = tex_run(
        """FRAG
DCL IN[0]
DCL OUT[0]
DCL SAMP[0..3]
DCL ADDR[0]
  0: ARL ADDR[0].x, IN[0].xxxx
  1: TEX OUT[0], IN[0], SAMP[ADDR[0].x+1], 2D
  2: END
""",
        [[[0.0, 2.0, 0.0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]],
        n=3,
    )
    assert sorted(r.unit for r in reqs) == [1, 3]


def test_texture_without_texture_units_reads_zero():
    """No ExecEnv.textures: every texture operation reads zero, as an unbound
    sampler view does (llvmpipe's rule)."""
    outs, _ = run(
        "FRAG\nDCL IN[0]\nDCL OUT[0]\nDCL SAMP[0]\n  0: TEX OUT[0], IN[0], SAMP[0], 2D\n  1: END\n",
        [lanes4([0.5, 0.25])],
        2,
    )
    assert [ints(c) for c in outs[0]] == [[0, 0]] * 4


# -- memory ----------------------------------------------------------------------------------


def test_buffer_load_store_and_bounds():
    buf = np.arange(32, dtype=np.uint8)
    mem = ReferenceMemory(buffers={0: buf})
    text = """COMP
DCL BUFFER[0]
DCL SV[0], THREAD_ID
DCL TEMP[0..1]
IMM[0] UINT32 {4, 0, 0, 0}
IMM[1] UINT32 {0xAABBCCDD, 0x11223344, 0, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: LOAD TEMP[1].xy, BUFFER[0], TEMP[0].xxxx
  2: STORE BUFFER[0].x, TEMP[0].xxxx, IMM[1].xxxx
  3: END
"""
    # 0x... literal is not TGSI: use decimal words
    text = text.replace("0xAABBCCDD", str(0xAABBCCDD)).replace("0x11223344", str(0x11223344))
    text = text.replace("  3: END", "  3: MOV TEMP[1].z, TEMP[1].xxxx\n  4: END")
    tid = np.array([0, 1, 6, 7, 8], I32)
    compile_shader(text)(
        ExecEnv(n=5, system_values={"THREAD_ID": [tid, tid, tid, tid]}, memory=mem)
    )
    # lanes 0, 1, 6, 7 store at offsets 0, 4, 24, 28; lane 4 (offset 32) is out of bounds
    words = buf.view("<u4")
    assert [int(w) for w in words] == [
        0xAABBCCDD,
        0xAABBCCDD,
        0x0B0A0908,
        0x0F0E0D0C,
        0x13121110,
        0x17161514,
        0xAABBCCDD,
        0xAABBCCDD,
    ]


def test_load_values_and_out_of_range_read_zero():
    buf = np.arange(16, dtype=np.uint8)
    mem = ReferenceMemory(buffers={2: buf})
    text = """COMP
DCL BUFFER[2]
DCL SV[0], THREAD_ID
DCL OUT[0]
  0: LOAD OUT[0].xy, BUFFER[2], SV[0].xxxx
  1: END
"""
    off = np.array([0, 8, 9, 12], I32)
    res = compile_shader(text)(ExecEnv(n=4, system_values={"THREAD_ID": [off] * 4}, memory=mem))
    x = np.asarray(res.outputs[0][0]).view(U32)
    y = np.asarray(res.outputs[0][1]).view(U32)
    assert [int(v) for v in x] == [0x03020100, 0x0B0A0908, 0, 0]  # 9 + 8 > 16 and 12 + 8 > 16
    assert [int(v) for v in y] == [0x07060504, 0x0F0E0D0C, 0, 0]


def test_atomics_apply_in_lane_order_with_old_values():
    buf = np.zeros(16, np.uint8)
    mem = ReferenceMemory(buffers={0: buf})
    text = """COMP
DCL BUFFER[0]
DCL SV[0], THREAD_ID
DCL OUT[0..1]
IMM[0] UINT32 {0, 1, 4, 5}
  0: ATOMUADD OUT[0].x, BUFFER[0], IMM[0].xxxx, IMM[0].yyyy
  1: ATOMUMAX OUT[1].x, BUFFER[0], IMM[0].zzzz, SV[0].xxxx
  2: END
"""
    tid = np.array([3, 9, 1, 9, 4], I32)
    res = compile_shader(text)(ExecEnv(n=5, system_values={"THREAD_ID": [tid] * 4}, memory=mem))
    assert [int(v) for v in np.asarray(res.outputs[0][0]).view(U32)] == [0, 1, 2, 3, 4]
    assert [int(v) for v in np.asarray(res.outputs[1][0]).view(U32)] == [0, 3, 9, 9, 9]
    assert [int(w) for w in buf.view("<u4")] == [5, 9, 0, 0]


@pytest.mark.parametrize(
    "op,operand,compare,start,old,final",
    [
        # lanes 0..3 all on one word; operands per lane
        ("ATOMXCHG", [7, 8, 9, 10], None, 1, [1, 7, 8, 9], 10),
        ("ATOMCAS", [5, 6, 7, 8], [1, 5, 0, 6], 1, [1, 5, 6, 6], 8),
        ("ATOMAND", [0xF0, 0x3C, 0xFF, 0x0F], None, 0xFF, [0xFF, 0xF0, 0x30, 0x30], 0),
        ("ATOMOR", [1, 2, 4, 8], None, 0, [0, 1, 3, 7], 15),
        ("ATOMXOR", [1, 3, 1, 3], None, 0, [0, 1, 2, 3], 0),
        ("ATOMUMIN", [5, 2, 9, 1], None, 4, [4, 4, 2, 2], 1),
        (
            "ATOMIMIN",
            [-5 & 0xFFFFFFFF, 2, 9, 1],
            None,
            4,
            [4] + [-5 & 0xFFFFFFFF] * 3,
            -5 & 0xFFFFFFFF,
        ),
        ("ATOMIMAX", [-5 & 0xFFFFFFFF, 2, 9, 1], None, 4, [4, 4, 4, 9], 9),
        ("ATOMINC_WRAP", [2, 2, 2, 2], None, 1, [1, 2, 0, 1], 2),
        ("ATOMDEC_WRAP", [2, 2, 2, 2], None, 1, [1, 0, 2, 1], 0),
        (
            "ATOMFADD",
            [f2b(0.5), f2b(0.25), f2b(1.0), f2b(-2.0)],
            None,
            f2b(1.0),
            [f2b(1.0), f2b(1.5), f2b(1.75), f2b(2.75)],
            f2b(0.75),
        ),
    ],
)
def test_atomic_ops_sequential_semantics(op, operand, compare, start, old, final):
    buf = np.zeros(8, np.uint8)
    buf.view("<u4")[1] = start
    mem = ReferenceMemory(buffers={0: buf})
    # ATOMCAS dst, res, addr, compare, new: IN[1] carries the comparison values
    srcs = "IN[1].xxxx, IN[0].xxxx" if compare is not None else "IN[0].xxxx"
    text = f"""COMP
DCL IN[0..1]
DCL BUFFER[0]
DCL OUT[0]
IMM[0] UINT32 {{4, 0, 0, 0}}
  0: {op} OUT[0].x, BUFFER[0], IMM[0].xxxx, {srcs}
  1: END
"""
    ins = [[np.array(operand, U32).view(F32)] * 4]
    ins.append([np.array(compare or [0] * 4, U32).view(F32)] * 4)
    res = compile_shader(text)(ExecEnv(n=4, inputs=ins, memory=mem))
    assert [int(v) for v in np.asarray(res.outputs[0][0]).view(U32)] == [
        w & 0xFFFFFFFF for w in old
    ]
    assert int(buf.view("<u4")[1]) == final & 0xFFFFFFFF


def test_stores_and_atomics_skip_inactive_killed_and_helper_lanes():
    buf = np.zeros(32, np.uint8)
    mem = ReferenceMemory(buffers={0: buf})
    text = """FRAG
DCL IN[0]
DCL BUFFER[0]
DCL OUT[0]
DCL TEMP[0]
IMM[0] UINT32 {4, 1, 0, 0}
IMM[1] FLT32 {0.5, 0, 0, 0}
  0: F2U TEMP[0].x, IN[0].xxxx
  1: UMUL TEMP[0].y, TEMP[0].xxxx, IMM[0].xxxx
  2: KILL_IF IN[0].yyyy
  3: IF IN[0].zzzz :0
  4:   STORE BUFFER[0].x, TEMP[0].yyyy, IMM[0].yyyy
  5:   ATOMUADD OUT[0].x, BUFFER[0], IMM[0].zzzz, IMM[0].yyyy
  6: ENDIF
  7: END
"""
    lane = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    killed = [0.0, -1.0, 0.0, 0.0, 0.0, 0.0]
    active = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    helper = np.array([False, False, False, False, True, False])
    ins = [[np.array(lane, F32), np.array(killed, F32), np.array(active, F32), np.zeros(6, F32)]]
    compile_shader(text)(ExecEnv(n=6, inputs=ins, memory=mem, helper_mask=helper))
    words = [int(w) for w in buf.view("<u4")]
    # word 0 is both lane 0's STORE target and the counter: lanes 0, 3, 5 land
    assert words == [1 + 3, 0, 0, 1, 0, 1, 0, 0]


def test_shared_memory_and_resq():
    mem = ReferenceMemory(memory={0: np.zeros(64, np.uint8)}, buffers={1: np.zeros(12, np.uint8)})
    text = """COMP
DCL MEMORY[0], SHARED
DCL BUFFER[1]
DCL SV[0], THREAD_ID
DCL OUT[0..1]
DCL TEMP[0]
IMM[0] UINT32 {4, 0, 0, 0}
  0: UMUL TEMP[0].x, SV[0].xxxx, IMM[0].xxxx
  1: STORE MEMORY[0].x, TEMP[0].xxxx, SV[0].xxxx
  2: BARRIER
  3: MEMBAR IMM[0].xxxx
  4: LOAD OUT[0].x, MEMORY[0], IMM[0].xxxx
  5: RESQ OUT[1].x, BUFFER[1]
  6: END
"""
    tid = np.arange(4, dtype=I32)
    res = compile_shader(text)(ExecEnv(n=4, system_values={"THREAD_ID": [tid] * 4}, memory=mem))
    assert [int(v) for v in np.asarray(res.outputs[0][0]).view(U32)] == [1, 1, 1, 1]
    assert [int(v) for v in np.broadcast_to(np.asarray(res.outputs[1][0]).view(U32), (4,))] == [
        12
    ] * 4


def test_image_load_store_atomic():
    img = ReferenceImage(np.zeros((1, 2, 3, 1), np.uint32), kind="uint")
    mem = ReferenceMemory(images={0: img})
    text = """COMP
DCL IMAGE[0], 2D, PIPE_FORMAT_R32_UINT, WR
DCL IN[0]
DCL OUT[0..1]
IMM[0] UINT32 {1, 1, 0, 0}
IMM[1] UINT32 {5, 0, 0, 0}
  0: STORE IMAGE[0], IN[0], IN[0].zzzz, 2D, PIPE_FORMAT_R32_UINT
  1: ATOMUADD OUT[0].x, IMAGE[0], IMM[0], IMM[1].xxxx, 2D, PIPE_FORMAT_R32_UINT
  2: LOAD OUT[1], IMAGE[0], IN[0], 2D, PIPE_FORMAT_R32_UINT
  3: END
"""
    x = np.array([0, 1, 2, 7], I32)
    y = np.array([0, 1, 1, 0], I32)
    v = np.array([10, 20, 30, 40], I32)
    ins = [[x.view(F32), y.view(F32), v.view(F32), np.zeros(4, F32)]]
    res = compile_shader(text)(ExecEnv(n=4, inputs=ins, memory=mem))
    assert img.data[0, :, :, 0].tolist() == [[10, 0, 0], [0, 20 + 20, 30]]
    assert [int(o) for o in np.asarray(res.outputs[0][0]).view(U32)] == [20, 25, 30, 35]
    loaded = [[int(o) for o in np.asarray(c).view(U32)] for c in res.outputs[1]]
    assert loaded[0] == [10, 40, 30, 0]  # (7, 0) is outside the 3x2 image
    assert loaded[3] == [1, 1, 1, 0]  # missing alpha reads integer 1


def test_memory_without_binding_is_a_clear_error():
    text = (
        "COMP\nDCL BUFFER[0]\nDCL TEMP[0]\n  0: LOAD TEMP[0], BUFFER[0], TEMP[0].xxxx\n  1: END\n"
    )
    with pytest.raises(ShaderRuntimeError, match="memory is not set"):
        compile_shader(text)(ExecEnv(n=1))


# -- geometry shader output ------------------------------------------------------------------


def test_gs_emit_and_endprim_per_lane():
    text = """GEOM
PROPERTY GS_INPUT_PRIMITIVE TRIANGLES
PROPERTY GS_OUTPUT_PRIMITIVE TRIANGLE_STRIP
PROPERTY GS_MAX_OUTPUT_VERTICES 3
DCL IN[][0], POSITION
DCL OUT[0], POSITION
DCL TEMP[0]
IMM[0] UINT32 {0, 0, 0, 0}
IMM[1] FLT32 {1.0, 0.0, 0.0, 0.0}
  0: MOV OUT[0], IN[0][0]
  1: EMIT IMM[0].xxxx
  2: MOV OUT[0], IN[1][0]
  3: IF IN[2][0].wwww :0
  4:   EMIT IMM[0].xxxx
  5:   ENDPRIM IMM[0].xxxx
  6: ENDIF
  7: ADD OUT[0].x, OUT[0].xxxx, IMM[1].xxxx
  8: EMIT IMM[0].xxxx
  9: EMIT IMM[0].xxxx
 10: END
"""

    def vtx(xs, w):
        return [[np.array(xs, F32), np.zeros(2, F32), np.zeros(2, F32), np.array(w, F32)]]

    verts = [vtx([1.0, 2.0], [1, 1]), vtx([10.0, 20.0], [1, 1]), vtx([0.0, 0.0], [1.0, 0.0])]
    res = compile_shader(text)(ExecEnv(n=2, vertices=verts))
    ev = res.emitted
    assert all(isinstance(e, GsEvent) for e in ev)

    # lane 0: v(1), v(10), end, v(11) [the 4th EMIT exceeds max 3], final end
    # lane 1: v(2), v(21), v(21), final end
    def trace(lane):
        out = []
        for e in ev:
            if e.mask[lane]:
                if e.kind == "vertex":
                    out.append(float(np.broadcast_to(e.outputs[0][0], (2,))[lane]))
                else:
                    out.append("end")
        return out

    assert trace(0) == [1.0, 10.0, "end", 11.0, "end"]
    assert trace(1) == [2.0, 21.0, 21.0, "end"]


# -- more control flow ------------------------------------------------------------------------


def test_ifc_callnz_and_kilp():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {1.0, 2.0, 0.0, 0.0}
  0: IFC IN[0].xxxx
  1:   MOV OUT[0].x, IMM[0].xxxx
  2: ENDIF
  3: CALLNZ IN[0].yyyy :7
  4: IF IN[0].zzzz :0
  5:   KILP
  6: ENDIF
  7: END
  8: BGNSUB
  9:   MOV OUT[0].y, IMM[0].yyyy
 10: ENDSUB
"""
    # CALLNZ's label must name the BGNSUB: fix the target to 8.
    text = text.replace(":7", ":8")
    x = [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    out, res = run(text, [x], 3)
    assert fl(out[0][0]) == [1.0, 0.0, 1.0]
    assert fl(out[0][1]) == [0.0, 2.0, 2.0]
    assert list(res.kill) == [False, False, True]


def test_ret_inside_loop_inside_subroutine_called_from_loop():
    # sub: loop { t += 1; if (t >= limit) return; }  -- called twice from a loop of 2
    text = """FRAG
DCL IN[0]
DCL OUT[0]
DCL TEMP[0..1]
IMM[0] FLT32 {0.0, 1.0, 2.0, 10.0}
  0: MOV TEMP[0], IMM[0].xxxx
  1: BGNLOOP :0
  2:   SGE TEMP[1].x, TEMP[0].yyyy, IMM[0].zzzz
  3:   IF TEMP[1].xxxx :0
  4:     BRK
  5:   ENDIF
  6:   ADD TEMP[0].y, TEMP[0].yyyy, IMM[0].yyyy
  7:   CAL :11
  8: ENDLOOP :0
  9: MOV OUT[0], TEMP[0]
 10: END
 11: BGNSUB
 12:   BGNLOOP :0
 13:     ADD TEMP[0].x, TEMP[0].xxxx, IMM[0].yyyy
 14:     SGE TEMP[1].y, TEMP[0].xxxx, IN[0].xxxx
 15:     IF TEMP[1].yyyy :0
 16:       RET
 17:     ENDIF
 18:     ADD TEMP[0].z, TEMP[0].zzzz, IMM[0].yyyy
 19:   ENDLOOP :0
 20: ENDSUB
"""
    limit = [1.0, 3.0, 5.0]
    out, _ = run(text, [lanes4(limit)], 3)

    def replay(lim):
        t = z = 0.0
        for _call in range(2):
            while True:
                t += 1
                if t >= lim:
                    break
                z += 1
        return t, z

    assert fl(out[0][0]) == [replay(v)[0] for v in limit]
    assert fl(out[0][2]) == [replay(v)[1] for v in limit]
    assert fl(out[0][1]) == [2.0] * 3


def test_nested_calls_return_to_the_right_place():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
IMM[0] FLT32 {1.0, 10.0, 100.0, 0.0}
  0: CAL :3
  1: ADD OUT[0].x, OUT[0].xxxx, IMM[0].zzzz
  2: END
  3: BGNSUB
  4:   CAL :9
  5:   IF IN[0].xxxx :0
  6:     RET
  7:   ENDIF
  8:   ADD OUT[0].x, OUT[0].xxxx, IMM[0].yyyy
  9: ENDSUB
 10: BGNSUB
 11:   ADD OUT[0].x, OUT[0].xxxx, IMM[0].xxxx
 12:   RET
 13:   ADD OUT[0].x, OUT[0].xxxx, IMM[0].xxxx
 14: ENDSUB
"""
    text = text.replace("CAL :9", "CAL :10")
    out, _ = run(text, [lanes4([0.0, 1.0])], 2)
    assert fl(out[0][0]) == [111.0, 101.0]


def test_switch_on_uniform_selector_without_default():
    text = SWITCH_TEXT.replace(
        "  8:   DEFAULT\n  9:     UADD TEMP[1].x, TEMP[1].xxxx, IMM[1].wwww\n", ""
    )
    text = text.replace("F2I TEMP[0].x, IN[0].xxxx", "MOV TEMP[0].x, IMM[0].wwww")
    out, _ = run(text, [lanes4([0.0, 0.0])], 2)
    # case 3 (the last) adds 1 and falls out of the switch
    assert ints(out[0][0]) == [1, 1]


# -- interpolation, helpers, clock -----------------------------------------------------------


def test_interp_opcodes():
    text = """FRAG
DCL IN[0], GENERIC[0], LINEAR
DCL IN[1], GENERIC[1], CONSTANT
DCL OUT[0..2]
IMM[0] FLT32 {0.25, -0.5, 0.0, 0.0}
IMM[1] INT32 {0, 0, 0, 0}
  0: INTERP_CENTROID OUT[0], IN[0]
  1: INTERP_SAMPLE OUT[1], IN[0], IMM[1].xxxx
  2: INTERP_OFFSET OUT[2].xy, IN[0], IMM[0]
  3: INTERP_OFFSET OUT[2].z, IN[1], IMM[0]
  4: END
"""
    # a linear input over one quad: v = 2x + 8y at pixel centres
    xs = np.array([0.5, 1.5, 0.5, 1.5])
    ys = np.array([0.5, 0.5, 1.5, 1.5])
    v = list(2 * xs + 8 * ys)
    out, _ = run(text, [lanes4(v), lanes4([3.0] * 4)], 4, quad_shape=(1, 1))
    assert fl(out[0][0]) == v and fl(out[1][0]) == v
    # offset (0.25, -0.5): v + 2 * 0.25 + 8 * -0.5
    assert fl(out[2][0]) == [x - 3.5 for x in v]
    assert fl(out[2][2]) == [3.0] * 4
    with pytest.raises(Exception, match="PERSPECTIVE"):
        compile_shader(text.replace("LINEAR", "PERSPECTIVE"))


def test_read_helper_and_clock():
    text = "FRAG\nDCL OUT[0..1]\n  0: READ_HELPER OUT[0]\n  1: CLOCK OUT[1]\n  2: END\n"
    import time

    before = time.perf_counter_ns()
    out, _ = run(text, [], 3, helper_mask=np.array([False, True, False]))
    after = time.perf_counter_ns()
    assert [int(v) for v in np.asarray(out[0][0], F32).view(U32)] == [0, 0xFFFFFFFF, 0]
    lo = int(np.asarray(out[1][0], F32).view(U32)[0])
    hi = int(np.asarray(out[1][1], F32).view(U32)[0])
    assert before <= (hi << 32 | lo) <= after


# -- more texture decoding -----------------------------------------------------------------


def test_sample_variants_and_queries():
    f = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
    g = [[0.5, 0.25], [1.5, 1.25], [2.5, 2.25], [3.5, 3.25]]
    reqs, out = tex_run(
        """FRAG
DCL IN[0..2]
DCL OUT[0..9]
DCL SAMP[0]
DCL SVIEW[0], 2D, FLOAT
DCL SVIEW[1], 2D_MSAA, UINT
IMM[0] INT32 {3, 4, 5, 2}
  0: SAMPLE_B OUT[0], IN[0], SVIEW[0], SAMP[0], IN[1].yyyy
  1: SAMPLE_D OUT[1], IN[0], SVIEW[0], SAMP[0], IN[1], IN[2]
  2: SAMPLE_C_LZ OUT[2], IN[0], SVIEW[0], SAMP[0], IN[1].xxxx
  3: GATHER4 OUT[3], IN[0], SVIEW[0].yyyy, SAMP[0]
  4: SAMPLE_I OUT[4], IMM[0], SVIEW[0]
  5: SAMPLE_I_MS OUT[5], IMM[0], SVIEW[1], IMM[0].wwww
  6: LOD OUT[6], IN[0], SVIEW[0].yxzw, SAMP[0]
  7: TXQS OUT[7], SAMP[0], 2D_MSAA
  8: TXB2 OUT[8], IN[0], IN[1], SAMP[0], CUBEARRAY
  9: TXL2 OUT[9], IN[0], IN[1], SAMP[0], 2D
 10: END
""",
        [f, g, f],
    )
    sb, sd, clz, g4, si, sims, lod, txqs, txb2, txl2 = reqs
    assert fl(sb.bias) == [1.5, 1.25] and sb.unit == 0 and sb.sampler == 0
    assert [fl(d) for d in sd.ddx] == [[0.5, 0.25], [1.5, 1.25]]
    assert [fl(d) for d in sd.ddy] == [[1.0, 2.0], [3.0, 4.0]]
    assert clz.target == "SHADOW2D" and float(clz.lod) == 0.0 and fl(clz.ref) == [0.5, 0.25]
    assert g4.op == "gather" and fl(out[3][0]) == [0.5, 0.5]  # .yyyy swizzle of the result
    assert si.op == "fetch" and [int(si.s), int(si.t), int(si.lod)] == [3, 4, 2]
    assert sims.target == "2D_MSAA" and int(sims.sample) == 2 and sims.lod is None
    assert lod.op == "lod" and fl(out[6][0]) == [0.5, 0.5] and fl(out[6][1]) == [0.25, 0.25]
    assert fl(out[6][2]) == [0.0, 0.0]  # swizzle components z, w read 0
    assert txqs.op == "samples" and ints(out[7][0]) == [7, 7]
    assert fl(txb2.layer) == [7.0, 8.0] and fl(txb2.bias) == [0.5, 0.25]
    assert fl(txl2.lod) == [0.5, 0.25]


def test_gs_vertex_inputs_with_indirect_vertex():
    text = """GEOM
PROPERTY GS_INPUT_PRIMITIVE LINES
DCL IN[][0]
DCL OUT[0]
DCL ADDR[0]
  0: UARL ADDR[0].x, IN[0][0].yyyy
  1: MOV OUT[0], IN[ADDR[0].x][0].xxxx
  2: END
"""
    sel = np.array([1, 0, 5], I32).view(F32)
    verts = [
        [[np.array([1.0, 2.0, 3.0], F32), sel, np.zeros(3, F32), np.zeros(3, F32)]],
        [[np.array([10.0, 20.0, 30.0], F32), sel, np.zeros(3, F32), np.zeros(3, F32)]],
    ]
    res = compile_shader(text)(ExecEnv(n=3, vertices=verts))
    assert fl(res.outputs[0][0]) == [10.0, 2.0, 0.0]  # vertex 5 does not exist


def test_image_resq_and_declaration_target():
    img = ReferenceImage(np.zeros((4, 3, 5, 4), np.float32))
    mem = ReferenceMemory(images={2: img})
    text = """COMP
DCL IMAGE[2], 2D_ARRAY, PIPE_FORMAT_R32G32B32A32_FLOAT
DCL OUT[0..1]
IMM[0] INT32 {4, 2, 3, 0}
IMM[1] FLT32 {0.5, 1.5, 2.5, 3.5}
  0: RESQ OUT[0], IMAGE[2]
  1: STORE IMAGE[2].yw, IMM[0], IMM[1]
  2: LOAD OUT[1], IMAGE[2], IMM[0]
  3: END
"""
    res = compile_shader(text)(ExecEnv(n=1, memory=mem))
    assert [int(np.asarray(c, F32).view(U32).reshape(-1)[0]) for c in res.outputs[0]] == [
        5,
        3,
        4,
        0,
    ]
    assert img.data[3, 2, 4].tolist() == [0.0, 1.5, 0.0, 3.5]
    assert [float(np.asarray(c, F32).reshape(-1)[0]) for c in res.outputs[1]] == [
        0.0,
        1.5,
        0.0,
        3.5,
    ]


def test_kil_demote_nop():
    text = """FRAG
DCL IN[0]
DCL OUT[0]
  0: NOP
  1: KIL IN[0]
  2: IF IN[0].wwww :0
  3:   DEMOTE
  4: ENDIF
  5: MOV OUT[0], IN[0]
  6: END
"""
    x = [[1.0, 1.0, -2.0], [1.0, 1.0, 0.0], [1.0, -0.5, 0.0], [0.0, 0.0, 0.0]]
    out, res = run(text, [x], 3)
    assert list(res.kill) == [False, True, True]
    x[3] = [1.0, 0.0, 0.0]
    out, res = run(text, [x], 3)
    assert list(res.kill) == [True, True, True]
    assert fl(out[0][0]) == [1.0, 1.0, -2.0]


def test_zero_lanes():
    out, _ = run(CALL_TEXT, [lanes4([])], 0)
    assert fl(out[0][0]) == []


def test_exponential_inlining_is_refused():
    # 16 subroutines, each calling the next twice: 2^16 inlined copies
    insts = ["CAL :2", "END"]
    for k in range(16):
        nxt = 2 + 4 * (k + 1)
        body = [f"CAL :{nxt}", f"CAL :{nxt}"] if k < 15 else ["ADD TEMP[0], TEMP[0], IMM[0]", "NOP"]
        insts += ["BGNSUB", *body, "ENDSUB"]
    text = "FRAG\nDCL TEMP[0]\nIMM[0] FLT32 {1.0, 0, 0, 0}\n"
    text += "".join(f"{i}: {x}\n" for i, x in enumerate(insts))
    with pytest.raises(ShaderLimitError, match="CAL inlines each subroutine where it is called"):
        compile_shader(text)


def test_load_from_constant_buffer_bytes():
    text = """COMP
DCL CONST[1][0..1]
DCL SV[0], THREAD_ID
DCL OUT[0]
  0: LOAD OUT[0].xy, CONST[1], SV[0].xxxx
  1: END
"""
    c1 = np.arange(32, dtype=np.uint8)
    off = np.array([0, 6, 24, 28], I32)
    res = compile_shader(text)(
        ExecEnv(n=4, consts=[None, c1], system_values={"THREAD_ID": [off] * 4})
    )
    x = [int(v) for v in np.asarray(res.outputs[0][0]).view(U32)]
    # unaligned offsets read bytes as they lie; 28 + 8 > 32 reads zeros
    assert x == [0x03020100, 0x09080706, 0x1B1A1918, 0]

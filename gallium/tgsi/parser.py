"""TGSI text parser: the grammar of Mesa's ``tgsi_text.c``.

``parse(text)`` returns a :class:`~gallium.tgsi.shader.Shader` or raises
:class:`TgsiSyntaxError` carrying the 1-based line and column and what was
expected there.  The parser follows tgsi_text statement by statement:

* a header (VERT, FRAG, GEOM, COMP, TESS_CTRL, TESS_EVAL), then statements
  separated by white space: ``DCL``, ``IMM``, ``PROPERTY`` and instructions,
  each instruction optionally preceded by a label ``N:``;
* operands ``-|FILE[dim][index](array).swizzle|`` with 2-D indices and
  indirect addressing ``FILE[ADDR[0].x+3]``; source swizzles have four
  components, texel offsets three, write masks keep x, y, z, w order;
* declarations with ranges, usage masks, ``ARRAY(n)``, semantics,
  interpolation, location, ``INVARIANT``, sampler-view and image attributes;
* immediates of FLT32/UINT32/INT32 (four values) and FLT64/UINT64/INT64 (two).

Numbers are read as the C library tgsi_text relies on reads them: floats as
glibc's strtof/strtod (correct rounding, hex floats, ``inf``, ``nan`` and
``nan(0x...)`` payloads), 64-bit integers as strtoll/strtoull (base 0,
saturating), indices and UINT32/INT32 values with unsigned wrap-around.

Where tgsi_text is sloppy the parser is strict: a malformed immediate body is
an error (tgsi_text prints the error and carries on), and memory qualifiers
are accepted on every ATOM* opcode (tgsi_text only marks LOAD..ATOMIMAX and
RESQ as memory instructions).  Carriage returns count as white space.

Nothing in here touches threads or numpy state; it is a pure function of the
text, fuzzed by the test suite to raise nothing but ``TgsiSyntaxError``.  It
runs in time linear in the text (line numbers are counted incrementally), and
an error message quotes at most ``QUOTE_LIMIT`` characters of the text.

``parse(text, limits=...)`` also checks the program against a screen's
:class:`~gallium.tgsi.limits.ShaderLimits` as it goes: a register, a
declaration range, the immediates, the instructions or the nesting of control
flow beyond a limit is a ``TgsiSyntaxError`` at that number's line and column,
raised before the rest of the text is read (the drivers parse this way).
"""

from __future__ import annotations

import re
import struct
from fractions import Fraction

from ..pipe.errors import PipeValueError
from .limits import (
    DeclarationSet,
    ShaderLimits,
    depth_error,
    instructions_error,
    operand_error,
    register_error,
)
from .shader import (
    Declaration,
    Dst,
    Immediate,
    Indirect,
    Instruction,
    Property,
    Register,
    Shader,
    Src,
    TexOffset,
)
from .tokens import (
    FILES,
    IMMEDIATE_TYPES,
    INTERPOLATIONS,
    LOCATIONS,
    MEMORY_QUALIFIERS,
    MEMORY_TYPES,
    OPCODES,
    PRIMITIVE_VERTICES,
    PROCESSORS,
    PROPERTIES,
    PROPERTY_VALUE_NAMES,
    RETURN_TYPES,
    SEMANTICS,
    TEXTURE_TARGETS,
)

MEMORY_OPCODES = frozenset(
    {"LOAD", "STORE", "RESQ", "IMG2HND", "SAMP2HND", "BARRIER"}
    | {name for name, info in OPCODES.items() if name.startswith("ATOM")}
)
SAMPLE_OPCODES = frozenset(
    {
        "SAMPLE",
        "SAMPLE_I",
        "SAMPLE_I_MS",
        "SAMPLE_B",
        "SAMPLE_C",
        "SAMPLE_C_LZ",
        "SAMPLE_D",
        "SAMPLE_L",
        "GATHER4",
    }
)

_WHITE = " \t\n\r"
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WORD = re.compile(r"[A-Za-z0-9_]+")  # keywords such as 2D_ARRAY may start with a digit
_DIGITS = re.compile(r"[0-9]+")
_FLOAT = re.compile(
    r"[+-]?(?:"
    r"inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    r"|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r")",
    re.IGNORECASE,
)
_C_INT = re.compile(r"[+-]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_OPENERS = frozenset({"IF", "UIF", "IFC", "BGNLOOP", "SWITCH"})
_CLOSERS = frozenset({"ENDIF", "ENDLOOP", "ENDSWITCH"})

QUOTE_LIMIT = 40  # characters of the program quoted in an error message


def quote(word: str) -> str:
    """``word`` as an error message quotes it: cut (with its length said) when long."""
    if len(word) <= QUOTE_LIMIT:
        return f"`{word}'"
    return f"`{word[: QUOTE_LIMIT - 8]}...' ({len(word)} characters)"


class TgsiSyntaxError(PipeValueError):
    """TGSI text that does not parse.  ``line``/``column`` are 1-based."""

    def __init__(self, message: str, line: int, column: int, expected: str | None = None):
        self.message = message
        self.line = line
        self.column = column
        self.expected = expected
        where = f"TGSI line {line}, column {column}"
        text = message
        if expected is not None and f"expected {expected}" not in message:
            text = f"{message}; expected {expected}" if message else f"expected {expected}"
        super().__init__(f"{where}: {text}")


def parse(text: str, limits: ShaderLimits | None = None) -> Shader:
    """Parse TGSI text into a :class:`Shader`; with ``limits``, refuse what is
    beyond them (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"TGSI text must be str; got {type(text).__name__}")
    return _Parser(text, limits).run()


class _Parser:
    def __init__(self, text: str, limits: ShaderLimits | None = None) -> None:
        self.s = text
        self.n = len(text)
        self.pos = 0
        self.limits = limits
        self.declared = DeclarationSet()
        self.depth = 0  # open IF/UIF/BGNLOOP/SWITCH
        self._line_pos = 0  # line numbers: the newlines before _line_pos are counted
        self._line_no = 1
        self.processor = ""
        self.implied_array_size = 0
        self.decls: list[Declaration] = []
        self.imms: list[Immediate] = []
        self.props: list[Property] = []
        self.insts: list[Instruction] = []

    # -- low-level scanning ------------------------------------------------------

    def error(self, message: str, expected: str | None = None, pos: int | None = None):
        p = self.pos if pos is None else pos
        line = self._line_of(p)
        col = p - (self.s.rfind("\n", 0, p) + 1) + 1
        if expected is not None and not message:
            message = f"expected {expected}"
        return TgsiSyntaxError(message, line, col, expected)

    def line(self) -> int:
        return self._line_of(self.pos)

    def _line_of(self, p: int) -> int:
        """The 1-based line of offset ``p``, counting only the newlines since the
        last offset asked for (the parser moves forward, so every newline is
        counted once)."""
        if p < self._line_pos:
            return self.s.count("\n", 0, p) + 1  # (an error behind the cursor: once)
        self._line_no += self.s.count("\n", self._line_pos, p)
        self._line_pos = p
        return self._line_no

    def limit_error(self, message: str | None, pos: int) -> None:
        if message is not None:
            raise self.error(message, pos=pos)

    def peek(self) -> str:
        return self.s[self.pos] if self.pos < self.n else ""

    def white(self) -> bool:
        start = self.pos
        s, n, p = self.s, self.n, self.pos
        while p < n and s[p] in _WHITE:
            p += 1
        self.pos = p
        return p > start

    def at_white_peek(self) -> str:
        """The next non-white character, without consuming anything."""
        p = self.pos
        while p < self.n and self.s[p] in _WHITE:
            p += 1
        return self.s[p] if p < self.n else ""

    def expect_char(self, ch: str, what: str | None = None) -> None:
        self.white()
        if self.peek() != ch:
            raise self.error("", what or f"`{ch}'")
        self.pos += 1

    def try_char(self, ch: str) -> bool:
        """Consume optional white space and ``ch`` if ``ch`` comes next."""
        p = self.pos
        self.white()
        if self.peek() == ch:
            self.pos += 1
            return True
        self.pos = p
        return False

    def ident(self) -> str | None:
        m = _IDENT.match(self.s, self.pos)
        return m.group(0) if m else None

    def match_word(self, words) -> str | None:
        """Match one of ``words`` (case-insensitive, whole word) at the cursor."""
        m = _WORD.match(self.s, self.pos)
        if m is None:
            return None
        word = m.group(0)
        up = word.upper()
        if up in words:
            self.pos += len(word)
            return up
        return None

    def uint(self, what: str = "literal unsigned integer") -> int:
        value = self.opt_uint()
        if value is None:
            raise self.error("", what)
        return value

    def opt_uint(self) -> int | None:
        m = _DIGITS.match(self.s, self.pos)
        if not m:
            return None
        self.pos = m.end()
        return _digits_mod(m.group(0), 1 << 32)  # C unsigned arithmetic wraps

    def int32(self, what: str = "literal integer") -> int:
        sign = 1
        if self.peek() in "+-":
            sign = -1 if self.peek() == "-" else 1
            self.pos += 1
        value = self.uint(what)
        value = (value * sign) & 0xFFFFFFFF
        return value - (1 << 32) if value >= 1 << 31 else value

    # -- statements --------------------------------------------------------------

    def run(self) -> Shader:
        self.white()
        proc = self.match_word(PROCESSORS)
        if proc is None:
            raise self.error("unknown header", "one of " + ", ".join(PROCESSORS))
        self.processor = proc
        if proc in ("TESS_CTRL", "TESS_EVAL"):
            self.implied_array_size = 32
        while self.pos < self.n:
            if not self.white():
                raise self.error("syntax error: statements must be separated by white space")
            if self.pos >= self.n:
                break
            start = self.pos
            m = _DIGITS.match(self.s, self.pos)
            if m:
                self.pos = m.end()
                if self.try_char(":"):
                    self.white()
                    self.instruction(labelled=True)
                    continue
                self.pos = start
            word = (self.ident() or "").upper()
            if word == "DCL":
                self.pos += 3
                self.declaration()
            elif word == "IMM":
                self.pos += 3
                self.immediate()
            elif word == "PROPERTY":
                self.pos += 8
                self.property_()
            else:
                self.instruction(labelled=False)
        return Shader(
            processor=self.processor,
            declarations=tuple(self.decls),
            immediates=tuple(self.imms),
            properties=tuple(self.props),
            instructions=tuple(self.insts),
        )

    # -- operands ------------------------------------------------------------------

    def file(self) -> str:
        f = self.match_word(FILES)
        if f is None:
            raise self.error("unknown register file", "a register file (" + ", ".join(FILES) + ")")
        return f

    def bracket(self) -> tuple[int, Indirect | None]:
        """Inside ``[`` ... ``]`` (the ``[`` already eaten), plus an ``(array)`` suffix."""
        self.white()
        indirect = None
        ind_file = self.match_word(FILES)
        if ind_file is not None:
            self.expect_char("[")
            self.white()
            ind_index = self.uint()
            self.expect_char("]")
            self.white()
            comp = 0
            if self.peek() == ".":
                self.pos += 1
                self.white()
                c = self.peek().upper()
                if c not in "XYZW" or not c:
                    raise self.error("", "indirect register swizzle component `x', `y', `z' or `w'")
                comp = "XYZW".index(c)
                self.pos += 1
                self.white()
            index = 0
            if self.peek() in ("+", "-") and self.peek():
                index = self.int32()
            indirect = Indirect(ind_file, ind_index, comp)
        else:
            index = self.uint()
        self.expect_char("]")
        if self.peek() == "(":
            self.pos += 1
            self.white()
            array_id = self.uint()
            self.expect_char(")")
            if indirect is not None:
                indirect = Indirect(indirect.file, indirect.index, indirect.component, array_id)
        return index, indirect

    def register(self) -> Register:
        start = self.pos
        file = self.file()
        self.expect_char("[")
        index, indirect = self.bracket()
        p = self.pos
        self.white()
        if self.peek() == "[":
            self.pos += 1
            index2, indirect2 = self.bracket()
            reg = Register(file, index2, indirect2, dimension=index, dim_indirect=indirect)
        else:
            self.pos = p
            reg = Register(file, index, indirect)
        if self.limits is not None:
            self.limit_error(operand_error(self.limits, reg), start)
        return reg

    def swizzle(self, count: int) -> tuple[int, ...] | None:
        p = self.pos
        self.white()
        if self.peek() != ".":
            self.pos = p
            return None
        self.pos += 1
        self.white()
        out = []
        for _ in range(count):
            c = self.peek().upper()
            if not c or c not in "XYZW":
                raise self.error("", "register swizzle component `x', `y', `z' or `w'")
            out.append("XYZW".index(c))
            self.pos += 1
        return tuple(out)

    def writemask(self) -> int:
        p = self.pos
        self.white()
        if self.peek() != ".":
            self.pos = p
            return 0xF
        self.pos += 1
        self.white()
        mask = 0
        for bit, c in enumerate("XYZW"):
            if self.peek().upper() == c:
                mask |= 1 << bit
                self.pos += 1
        if mask == 0:
            raise self.error("", "write mask")
        return mask

    def dst(self) -> Dst:
        reg = self.register()
        return Dst(reg, self.writemask())

    def src(self) -> Src:
        negate = absolute = False
        if self.peek() == "-":
            negate = True
            self.pos += 1
            self.white()
        if self.peek() == "|":
            absolute = True
            self.pos += 1
            self.white()
        reg = self.register()
        sw = self.swizzle(4) or (0, 1, 2, 3)
        if absolute:
            self.expect_char("|")
        return Src(reg, sw, negate, absolute)  # type: ignore[arg-type]

    # -- instructions -------------------------------------------------------------

    def instruction(self, labelled: bool) -> None:
        start = self.pos
        line = self.line()
        word = self.ident()
        if word is None:
            expected = "an opcode" if labelled else "`DCL', `IMM', `PROPERTY', a label or an opcode"
            raise self.error("", expected)
        up = word.upper()
        saturate = precise = False
        name = up
        if name not in OPCODES:
            if name.endswith("_PRECISE") and name[:-8] in OPCODES:
                name, precise = name[:-8], True
            elif name.endswith("_SAT_PRECISE") and name[:-12] in OPCODES:
                name, saturate, precise = name[:-12], True, True
            elif name.endswith("_SAT") and name[:-4] in OPCODES:
                name, saturate = name[:-4], True
        info = OPCODES.get(name)
        if info is None:
            kind = "unknown opcode" if labelled else "unknown statement"
            raise self.error(f"{kind} {quote(word)}", "an opcode", pos=start)
        if self.limits is not None:
            self.limit_error(instructions_error(self.limits, len(self.insts) + 1), start)
            if name in _OPENERS:
                self.depth += 1
                self.limit_error(depth_error(self.limits, name, self.depth), start)
            elif name in _CLOSERS:
                self.depth = max(0, self.depth - 1)
        self.pos += len(word)
        n_ops = info.num_dst + info.num_src + (1 if info.is_tex else 0)
        if n_ops and self.pos < self.n and self.peek() not in _WHITE:
            raise self.error("", "white space after the opcode")
        num_src = info.num_src
        if info.min_src is not None and info.min_src < num_src and not self._operand_follows():
            num_src = info.min_src
            n_ops = info.num_dst + num_src
        dsts: list[Dst] = []
        srcs: list[Src] = []
        texture = None
        for i in range(n_ops):
            self.white()
            if i > 0:
                if self.peek() != ",":
                    raise self.error("", "`,'")
                self.pos += 1
                self.white()
            if i < info.num_dst:
                dsts.append(self.dst())
            elif i < info.num_dst + num_src:
                srcs.append(self.src())
            else:
                texture = self.match_word(TEXTURE_TARGETS)
                if texture is None:
                    raise self.error("", "texture target")
        has_texture = info.is_tex or name in SAMPLE_OPCODES
        offsets: list[TexOffset] = []
        while has_texture and len(offsets) < 4 and self._comma_then(self._register_follows):
            reg = self.register()
            sw = self.swizzle(3) or (0, 1, 2)
            offsets.append(TexOffset(reg, sw))  # type: ignore[arg-type]
        qualifiers: list[str] = []
        mem_texture = mem_format = None
        if name in MEMORY_OPCODES:
            while self._comma_then(lambda: True):
                q = self.match_word(MEMORY_QUALIFIERS)
                if q is not None:
                    if q not in qualifiers:
                        qualifiers.append(q)
                    continue
                t = self.match_word(TEXTURE_TARGETS)
                if t is not None:
                    mem_texture = t
                    continue
                f = self.format_name()
                if f is not None:
                    mem_format = f
                    continue
                raise self.error("", "memory qualifier, texture target, or format")
        label = None
        if info.is_branch and self.try_char(":"):
            self.white()
            label = self.uint("a label")
        self.insts.append(
            Instruction(
                opcode=name,
                dst=tuple(dsts),
                src=tuple(srcs),
                saturate=saturate,
                precise=precise,
                texture=texture,
                tex_offsets=tuple(offsets),
                memory_qualifiers=tuple(q for q in MEMORY_QUALIFIERS if q in qualifiers),
                memory_texture=mem_texture,
                memory_format=mem_format,
                label=label,
                line=line,
            )
        )

    def _operand_follows(self) -> bool:
        p = self.pos
        self.white()
        ok = self.peek() in ("-", "|") or self._register_follows()
        self.pos = p
        return ok

    def _register_follows(self) -> bool:
        p = self.pos
        f = self.match_word(FILES)
        ok = f is not None and self.at_white_peek() == "["
        self.pos = p
        return ok

    def _comma_then(self, predicate) -> bool:
        """Consume ``, `` if a comma comes next and ``predicate`` holds after it."""
        p = self.pos
        self.white()
        if self.peek() != ",":
            self.pos = p
            return False
        self.pos += 1
        self.white()
        if not predicate():
            self.pos = p
            return False
        return True

    def format_name(self) -> str | None:
        word = self.ident()
        if word is None:
            return None
        up = word.upper()
        if up.startswith("PIPE_FORMAT_"):
            from ..pipe.enums import Format

            if up[len("PIPE_FORMAT_") :] in Format.__members__:
                self.pos += len(word)
                return up
        return None

    # -- declarations --------------------------------------------------------------

    def dcl_bracket(self) -> tuple[int, int]:
        self.white()
        self._first_pos = self._last_pos = self.pos
        first = self.opt_uint()
        if first is None:
            if self.peek() == "]" and self.implied_array_size:
                self.pos += 1
                return 0, self.implied_array_size - 1
            raise self.error("", "literal unsigned integer")
        last = first
        self.white()
        if self.s.startswith("..", self.pos):
            self.pos += 2
            self.white()
            self._last_pos = self.pos
            last = self.uint("literal integer")
            self.white()
        if self.peek() != "]":
            raise self.error("", "`]' or `..'")
        self.pos += 1
        if last < first:
            raise self.error(f"declaration range {first}..{last} is empty", "first <= last")
        return first, last

    def declaration(self) -> None:
        line = self.line()
        if not self.white():
            raise self.error("syntax error", "white space after DCL")
        file_pos = self.pos
        file = self.file()
        self.expect_char("[")
        first, last = self.dcl_bracket()
        positions = (self._first_pos, self._last_pos)
        dimension = None
        p = self.pos
        self.white()
        if self.peek() == "[":
            self.pos += 1
            f2, l2 = self.dcl_bracket()
            per_vertex = (
                (self.processor == "GEOM" and file == "IN")
                or (self.processor == "TESS_EVAL" and file == "IN")
                or (self.processor == "TESS_CTRL" and file in ("IN", "OUT"))
            )
            if self.limits is not None:  # the buffer, or the last vertex
                vertex = first if not per_vertex else last
                msg = register_error(self.limits, file, 0, vertex)
                self.limit_error(msg, positions[0] if not per_vertex else positions[1])
            if not per_vertex:
                dimension = first
            first, last = f2, l2
            positions = (self._first_pos, self._last_pos)
        else:
            self.pos = p
        if self.limits is not None:
            for index, pos in zip((first, last), positions):
                self.limit_error(register_error(self.limits, file, index), pos)
            self.limit_error(self.declared.add(file, dimension, first, last), file_pos)
        usage = self.writemask()
        kw: dict = {}
        is_vs_input = file == "IN" and self.processor == "VERT"

        if self._comma_word(("ARRAY",)):
            self.expect_char("(")
            self.white()
            kw["array_id"] = self.int32("`,'")
            self.expect_char(")")

        if not is_vs_input:
            if file in ("IMAGE", "SVIEW") and self._comma_then(lambda: True):
                target = self.match_word(TEXTURE_TARGETS)
                if target is None:
                    raise self.error("", "texture target")
                if file == "IMAGE":
                    kw["image_target"] = target
                    while True:
                        if self._comma_word(("RAW",)):
                            kw["image_raw"] = True
                        elif self._comma_word(("WR",)):
                            kw["image_writable"] = True
                        elif self._comma_then(lambda: self.format_name() is not None):
                            kw["image_format"] = self.s[self._last_word_start() : self.pos].upper()
                        else:
                            break
                else:
                    kw["sview_target"] = target
                    self.expect_char(",")
                    self.white()
                    types: list[str] = []
                    for j in range(4):
                        rt = self.match_word(RETURN_TYPES)
                        if rt is None:
                            if j == 0 or j > 2:
                                raise self.error("", "type name (" + ", ".join(RETURN_TYPES) + ")")
                            break
                        types.append(rt)
                        if j < 3 and not self._comma_then(self._return_type_follows):
                            break
                    if len(types) < 4:
                        types = [types[0]] * 4
                    kw["return_types"] = tuple(types)
            elif file == "BUFFER":
                if self._comma_word(("ATOMIC",)):
                    kw["atomic"] = True
            elif file == "MEMORY":
                mem = self._comma_word(MEMORY_TYPES)
                if mem is not None:
                    kw["mem_type"] = mem
            else:
                if self._comma_word(("LOCAL",)):
                    kw["local"] = True
                sem = self._comma_word(SEMANTICS)
                if sem is not None:
                    kw["semantic"] = sem
                    p = self.pos
                    self.white()
                    if self.peek() == "[":
                        self.pos += 1
                        self.white()
                        kw["semantic_index"] = self.uint("literal integer")
                        self.expect_char("]")
                    else:
                        self.pos = p

        if file == "OUT" and self.processor == "GEOM" and self._comma_word(("STREAM",)):
            self.expect_char("(")
            streams = []
            for i in range(4):
                self.white()
                streams.append(self.uint("literal integer"))
                if i < 3:
                    self.expect_char(",")
            self.expect_char(")")
            kw["streams"] = tuple(streams)

        if not is_vs_input:
            interp = self._comma_word(INTERPOLATIONS)
            if interp is not None:
                kw["interpolate"] = interp
            location = self._comma_word(LOCATIONS)
            if location is not None:
                kw["location"] = location
            if self._comma_then(lambda: True):
                if self.match_word(("INVARIANT",)):
                    kw["invariant"] = True
                else:
                    raise self.error("", "semantic, interpolate attribute, or invariant")

        self.decls.append(
            Declaration(
                file=file,
                first=first,
                last=last,
                dimension=dimension,
                usage_mask=usage,
                line=line,
                **kw,
            )
        )

    def _comma_word(self, words) -> str | None:
        """Consume ``, WORD`` when WORD is one of ``words``; return it (or None)."""
        p = self.pos
        self.white()
        if self.peek() == ",":
            self.pos += 1
            self.white()
            word = self.match_word(words)
            if word is not None:
                return word
        self.pos = p
        return None

    def _return_type_follows(self) -> bool:
        word = self.ident()
        return word is not None and word.upper() in RETURN_TYPES

    def _last_word_start(self) -> int:
        p = self.pos
        while p > 0 and (self.s[p - 1].isalnum() or self.s[p - 1] == "_"):
            p -= 1
        return p

    # -- immediates and properties --------------------------------------------------

    def immediate(self) -> None:
        line = self.line()
        if self.limits is not None and len(self.imms) >= self.limits.immediates:
            n = self.limits.immediates
            message = f"IMM[{n}] is beyond numpipe's limit of {n} immediates"
            raise self.error(message, pos=self.pos - 3)
        if self.peek() == "[":
            self.pos += 1
            self.white()
            at = self.pos
            idx = self.uint()
            if idx != len(self.imms):
                raise self.error(
                    f"immediates must be sorted: IMM[{idx}] where IMM[{len(self.imms)}] is next",
                    f"IMM[{len(self.imms)}]",
                    pos=at,
                )
            self.expect_char("]")
        if not self.white():
            raise self.error("syntax error", "white space before the immediate type")
        itype = self.match_word(IMMEDIATE_TYPES)
        if itype is None:
            raise self.error("", "immediate type (" + ", ".join(IMMEDIATE_TYPES) + ")")
        self.expect_char("{")
        words: list[int] = []
        count = 4 if itype in ("FLT32", "UINT32", "INT32") else 2
        for i in range(count):
            self.white()
            if i > 0:
                if self.peek() != ",":
                    raise self.error("", "`,'")
                self.pos += 1
                self.white()
            words.extend(self.immediate_value(itype))
        self.expect_char("}")
        self.imms.append(Immediate(itype, tuple(words), line=line))  # type: ignore[arg-type]

    def immediate_value(self, itype: str) -> list[int]:
        if itype == "FLT32":
            m = _FLOAT.match(self.s, self.pos)
            if not m:
                raise self.error("", "immediate constant")
            self.pos = m.end()
            return [_strtof_bits(m.group(0))]
        if itype == "UINT32":
            return [self.uint("immediate constant")]
        if itype == "INT32":
            return [self.int32("immediate constant") & 0xFFFFFFFF]
        if itype == "FLT64":
            m = _FLOAT.match(self.s, self.pos)
            if not m:
                raise self.error("", "immediate constant")
            self.pos = m.end()
            raw = struct.pack("<Q", _strtod_bits(m.group(0)))
        else:
            m = _C_INT.match(self.s, self.pos)
            if not m:
                raise self.error("", "immediate constant")
            self.pos = m.end()
            value = _c_int(m.group(0))
            if itype == "INT64":
                value = max(-(1 << 63), min((1 << 63) - 1, value))
                raw = struct.pack("<q", value)
            else:
                if abs(value) > (1 << 64) - 1:  # strtoull: ULLONG_MAX whatever the sign
                    value = (1 << 64) - 1
                raw = struct.pack("<Q", value & ((1 << 64) - 1))
        lo, hi = struct.unpack("<2I", raw)
        return [lo, hi]

    def property_(self) -> None:
        line = self.line()
        if not self.white():
            raise self.error("syntax error", "white space after PROPERTY")
        word = self.ident()
        if word is None:
            raise self.error("syntax error", "a property name")
        name = word.upper()
        if name not in PROPERTIES:
            raise self.error(f"unknown property {quote(word)}", "a property name")
        self.pos += len(word)
        self.white()
        names = PROPERTY_VALUE_NAMES.get(name)
        value: int | str
        if names is not None:
            v = self.match_word(names)
            if v is None:
                raise self.error(f"unknown value for {name}", "one of " + ", ".join(names))
            value = v
            if name == "GS_INPUT_PRIMITIVE" and self.processor == "GEOM":
                self.implied_array_size = PRIMITIVE_VERTICES[v]
        else:
            value = self.uint("unsigned integer as property")
        self.props.append(Property(name, value, line=line))


# -- number conversion helpers (C strtof / strtod / strtoll semantics) ------------


def _digits_mod(digits: str, modulus: int) -> int:
    """Decimal digit string modulo ``modulus``, for any length of string."""
    value = 0
    for i in range(0, len(digits), 1000):
        chunk = digits[i : i + 1000]
        value = (value * pow(10, len(chunk), modulus) + int(chunk)) % modulus
    return value


_SIG_DIGITS = 800  # far more than any float needs to round correctly


def _decimal_fraction(body: str) -> Fraction | None:
    """Exact value of an unsigned decimal literal; None if it overflows everything."""
    mant, _, exp_text = body.partition("e")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    exp = -len(frac)
    if exp_text:
        exp_str = exp_text.lstrip("+-")
        if len(exp_str) > 6:
            huge = exp_text.startswith("-")
            return Fraction(0) if huge else (None if digits else Fraction(0))
        exp += int(exp_text)
    if not digits:
        return Fraction(0)
    if len(digits) > _SIG_DIGITS:
        rest = digits[_SIG_DIGITS:]
        exp += len(rest)
        digits = digits[:_SIG_DIGITS] + ("1" if rest.strip("0") else "0")
        exp -= 1
    if exp + len(digits) > 400:
        return None
    if exp + len(digits) < -400:
        return Fraction(0)
    return Fraction(int(digits)) * Fraction(10) ** exp


def _hex_fraction(body: str) -> Fraction | None:
    """Value of an unsigned hex float literal like ``0x1.8p+3``, exact up to a
    sticky last digit (far below the precision of any float); None if huge."""
    mant, _, exp_text = body[2:].partition("p")
    whole, _, frac = mant.partition(".")
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    if exp_text and len(exp_text.lstrip("+-")) > 6:
        return Fraction(0) if exp_text.startswith("-") else None
    exp2 = (int(exp_text) if exp_text else 0) - 4 * len(frac)
    if len(digits) > 40:  # 160 bits: keep them plus one sticky digit
        sticky = "1" if digits[40:].strip("0") else "0"
        exp2 += 4 * (len(digits) - 41)
        digits = digits[:40] + sticky
    mantissa = int(digits, 16)
    magnitude = mantissa.bit_length() + exp2
    if magnitude > 1100:
        return None
    if magnitude < -1200:
        return Fraction(0)
    return Fraction(mantissa) * Fraction(2) ** exp2


def _nan_payload(body: str, bits: int) -> int:
    """glibc's strtof/strtod ``nan(n-char-sequence)``: the sequence, read as a C
    integer (base 0), sets the low ``bits`` mantissa bits; anything else (or
    no sequence) gives the default payload 0."""
    m = re.fullmatch(r"nan\((0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)\)", body, re.IGNORECASE)
    if m is None:
        return 0
    seq = m.group(1)
    if seq[:2].lower() == "0x":
        value = int(seq[2:], 16) if len(seq) < 40 else (1 << 64) - 1
    elif len(seq) > 1 and seq[0] == "0":
        value = int(seq, 8) if len(seq) < 40 else (1 << 64) - 1
    else:
        value = int(seq) if len(seq) < 40 else (1 << 64) - 1
    value = min(value, (1 << 64) - 1)  # strtoull saturates
    return value & ((1 << bits) - 1)


def _strtod_bits(text: str) -> int:
    """Round a C double literal exactly as strtod does; the IEEE bits."""
    t = text.lower()
    negative = t.startswith("-")
    body = t.lstrip("+-")
    if body.startswith("inf"):
        bits = 0x7FF0000000000000
    elif body.startswith("nan"):
        bits = 0x7FF8000000000000 | _nan_payload(body, 51)
    else:
        exact = _hex_fraction(body) if body.startswith("0x") else _decimal_fraction(body)
        if exact is None:
            bits = 0x7FF0000000000000
        else:
            try:
                bits = struct.unpack("<Q", struct.pack("<d", float(exact)))[0]
            except OverflowError:
                bits = 0x7FF0000000000000
    if negative:
        bits |= 1 << 63
    return bits


def _strtof_bits(text: str) -> int:
    """Round a C float literal to float32 exactly as strtof does (nearest, ties even)."""
    t = text.lower()
    negative = t.startswith("-")
    body = t.lstrip("+-")
    if body.startswith("inf"):
        bits = 0x7F800000
    elif body.startswith("nan"):
        bits = 0x7FC00000 | _nan_payload(body, 22)
    else:
        exact = _hex_fraction(body) if body.startswith("0x") else _decimal_fraction(body)
        bits = 0x7F800000 if exact is None else _fraction_to_f32_bits(exact)
    if negative:
        bits |= 0x80000000
    return bits


def _fraction_to_f32_bits(x: Fraction) -> int:
    """Nearest float32 (ties to even) of a non-negative exact value, as raw bits."""
    if x == 0:
        return 0
    # Largest finite float32 plus half an ulp rounds to infinity.
    if x >= Fraction(2) ** 128 - Fraction(2) ** 103:
        return 0x7F800000
    # Binary exponent e with 2**e <= x < 2**(e+1).
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    e = max(e, -126)  # subnormals share the smallest exponent
    quantum = Fraction(2) ** (e - 23)  # one ulp at this exponent
    q, r = divmod(x, quantum)
    q = int(q)
    half = quantum / 2
    if r > half or (r == half and q % 2 == 1):
        q += 1
    # q counts ulps: rebuild the float32 bits.
    if e == -126 and q < (1 << 23):
        return q  # subnormal
    if q == 1 << 24:  # rounding carried into the next binade
        q >>= 1
        e += 1
    if e > 127:
        return 0x7F800000
    return ((e + 127) << 23) | (q - (1 << 23))


def _c_int(text: str) -> int:
    """A C integer literal (strtoll base 0); values far beyond 64 bits come back
    as 2**70 with their sign, for the caller to saturate."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    if body.lower().startswith("0x"):
        digits, base = body[2:], 16
    elif len(body) > 1 and body.startswith("0"):
        digits, base = body[1:], 8
    else:
        digits, base = body, 10
    digits = digits.lstrip("0") or "0"
    if len(digits) > 30:  # beyond 64 bits in any base
        return sign * (1 << 70)
    return sign * int(digits, base)

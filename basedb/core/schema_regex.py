"""JSON Schema patterns (ECMA-262 regular expressions) run on RE2, a linear-time engine.

    search = compile_pattern("^[a-z]+$").search    # PatternUnsupported if RE2 cannot run it
    pattern_problem("(a)\\1")                         # "a backreference (\\1)": why not

A backtracking engine (Python's `re`, ECMA-262's own) takes time exponential in the
text for patterns such as `^(a+)+$`, and a function's inputSchema is written by a site's
author while its params are sent by anyone: on a shared server one call would stall
every other. RE2 matches in time linear in the text, always, and refuses what it cannot
do that way: backreferences and lookaround (and repetition counts above 1000).

The pattern is read as ECMA-262 says (JSON Schema's dialect) and rewritten into RE2's
syntax where the two differ:

- `\\d`, `\\w`, `\\b` are ASCII-only in both (Python's `re` made them Unicode-aware);
- `\\s` / `\\S` are ECMA's white space and line terminators (RE2's `\\s` is ASCII only);
- `.` matches anything but the line terminators \\n, \\r, U+2028 and U+2029;
- `\\uXXXX`, `\\u{X…}` (a surrogate pair as its one character), `\\cX`, `\\0` become
  `\\x{…}`; an escaped letter without meaning in ECMA-262 (`\\a`, `\\e`, `\\z`) is that
  letter, as ECMA-262 reads it;
- `[]` matches nothing and `[^]` any character; `(?<name>…)` is a named group;
- `$` is the end of the text only (Python's also matched before a final newline).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

MAX_REPEAT = 1000  # RE2's largest repetition count
# ECMA-262 WhiteSpace and LineTerminator code points, as ranges.
_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
          (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
          (0xFEFF, 0xFEFF))
_LAST = 0x10FFFF


def _ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\x{{{low:x}}}" if low == high else f"\\x{{{low:x}}}-\\x{{{high:x}}}"
                   for low, high in ranges)


def _complement(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out, start = [], 0
    for low, high in ranges:
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= _LAST:
        out.append((start, _LAST))
    return tuple(out)


_SPACE_CLASS = _ranges(_SPACE)
_NOT_SPACE_CLASS = _ranges(_complement(_SPACE))
_ANY = f"[{_ranges(((0, _LAST),))}]"
_DOT = "[^\\n\\r\\x{2028}\\x{2029}]"
# Escapes that mean the same in ECMA-262 and RE2.
_SAME = frozenset("dDwWfnrtv")
_DIGITS = frozenset("0123456789")
_HEX = frozenset("0123456789abcdefABCDEF")


class PatternUnsupported(ValueError):
    """A pattern RE2 cannot run in linear time (or that is not a regular expression)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` cannot run on the linear-time engine, or None when it can."""
    try:
        compile_pattern(pattern)
    except PatternUnsupported as exc:
        return exc.reason
    return None


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """`pattern` compiled by RE2 (its `.search(text)` is None when it does not match);
    raises PatternUnsupported."""
    # Lazy: RE2 loads with the first pattern, not with every command.
    import re2  # noqa: PLC0415

    options = re2.Options()
    options.log_errors = False  # RE2 would also print the refusal on stderr
    try:
        return re2.compile(translate(pattern), options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise PatternUnsupported(f"RE2 cannot compile it ({text})") from None


def translate(pattern: str) -> str:
    """The ECMA-262 `pattern` in RE2's syntax; raises PatternUnsupported for what RE2
    cannot run (backreferences, lookaround, counts above MAX_REPEAT)."""
    return _Translator(pattern).run()


class _Translator:
    def __init__(self, pattern: str) -> None:
        self.src = pattern
        self.at = 0
        self.out: list[str] = []

    def run(self) -> str:
        while self.at < len(self.src):
            char = self.src[self.at]
            if char == "\\":
                self.out.append(self._escape(in_class=False))
            elif char == "[":
                self.out.append(self._char_class())
            elif char == "(":
                self.out.append(self._group())
            elif char == ".":
                self.at += 1
                self.out.append(_DOT)
            elif char == "{":
                self.out.append(self._braces())
            else:
                self.at += 1
                self.out.append(char)
        return "".join(self.out)

    def _group(self) -> str:
        rest = self.src[self.at:]
        for opening, what in (("(?=", "a lookahead (?=…)"), ("(?!", "a negative lookahead (?!…)"),
                              ("(?<=", "a lookbehind (?<=…)"),
                              ("(?<!", "a negative lookbehind (?<!…)")):
            if rest.startswith(opening):
                raise PatternUnsupported(f"{what}, which needs a backtracking engine")
        if rest.startswith("(?<"):
            self.at += 3
            return "(?P<"
        self.at += 1
        return "("

    def _braces(self) -> str:
        """`{n}`, `{n,}`, `{n,m}` as a count (checked against MAX_REPEAT), else a
        literal brace (ECMA-262 Annex B)."""
        end = self.src.find("}", self.at)
        inside = self.src[self.at + 1:end] if end > 0 else ""
        parts = inside.split(",")
        if end > 0 and 1 <= len(parts) <= 2 and parts[0].isdigit() and (
                len(parts) == 1 or parts[1] == "" or parts[1].isdigit()):
            if any(part and int(part) > MAX_REPEAT for part in parts):
                raise PatternUnsupported(f"a repetition count above {MAX_REPEAT} "
                                         f"({{{inside}}})")
            self.at = end + 1
            return "{" + inside + "}"
        self.at += 1
        return "\\{"

    def _char_class(self) -> str:
        self.at += 1
        negated = self.src.startswith("^", self.at)
        if negated:
            self.at += 1
        if self.src.startswith("]", self.at):  # [] matches nothing, [^] anything
            self.at += 1
            return _ANY if negated else f"[^{_ANY[1:]}"
        parts: list[str] = []
        while self.at < len(self.src) and self.src[self.at] != "]":
            char = self.src[self.at]
            if char == "\\":
                parts.append(self._escape(in_class=True))
            elif char in "[&~":  # literal in ECMA-262, special (or reserved) in RE2
                self.at += 1
                parts.append("\\" + char)
            else:
                self.at += 1
                parts.append(char)
        if self.at >= len(self.src):
            raise PatternUnsupported("a character class [ without its closing ]")
        self.at += 1
        return "[" + ("^" if negated else "") + "".join(parts) + "]"

    def _escape(self, *, in_class: bool) -> str:
        src, at = self.src, self.at
        if at + 1 >= len(src):
            raise PatternUnsupported("a lone \\ at the end")
        char = src[at + 1]
        self.at = at + 2
        if char in _SAME:
            return "\\" + char
        if char in "sS":
            chars = _SPACE_CLASS if char == "s" else _NOT_SPACE_CLASS
            return chars if in_class else f"[{chars}]"
        if char in "bB":
            if in_class:
                return "\\x{8}" if char == "b" else "B"
            return "\\" + char
        if char == "0" and not (at + 2 < len(src) and src[at + 2] in _DIGITS):
            return "\\x{0}"
        if char in _DIGITS:
            raise PatternUnsupported(f"a backreference (\\{char}), which needs a "
                                     "backtracking engine")
        if char == "k" and src.startswith("<", at + 2):
            raise PatternUnsupported("a named backreference (\\k<…>), which needs a "
                                     "backtracking engine")
        if char == "x" and all(c in _HEX for c in src[at + 2:at + 4]) and at + 4 <= len(src):
            self.at = at + 4
            return f"\\x{{{src[at + 2:at + 4]}}}"
        if char == "u":
            return self._code_point(at)
        if char == "c" and at + 2 < len(src) and src[at + 2].isascii() and src[at + 2].isalpha():
            self.at = at + 3
            return f"\\x{{{ord(src[at + 2]) % 32:x}}}"
        if char in "pP" and src.startswith("{", at + 2):
            end = src.find("}", at + 2)
            if end < 0:
                raise PatternUnsupported(f"\\{char}{{ without its closing }}")
            self.at = end + 1
            return src[at:end + 1]  # a Unicode property: RE2 knows the general ones
        # Anything else stands for itself (ECMA-262's identity escapes).
        return _literal(char)

    def _code_point(self, at: int) -> str:
        src = self.src
        if src.startswith("{", at + 2):
            end = src.find("}", at + 2)
            digits = src[at + 3:end] if end > 0 else ""
            if not digits or any(c not in _HEX for c in digits) or int(digits, 16) > _LAST:
                raise PatternUnsupported("\\u{…} that is not a code point")
            self.at = end + 1
            return _point(int(digits, 16))
        digits = src[at + 2:at + 6]
        if len(digits) < 4 or any(c not in _HEX for c in digits):
            return "u"  # ECMA-262 Annex B: a \u not followed by four hex digits is "u"
        value = int(digits, 16)
        self.at = at + 6
        low = src[at + 8:at + 12] if src.startswith("\\u", at + 6) else ""
        if 0xD800 <= value <= 0xDBFF and len(low) == 4 and all(c in _HEX for c in low) and (
                0xDC00 <= int(low, 16) <= 0xDFFF):
            self.at = at + 12
            return _point(0x10000 + ((value - 0xD800) << 10) + int(low, 16) - 0xDC00)
        return _point(value)


def _point(value: int) -> str:
    if 0xD800 <= value <= 0xDFFF:
        raise PatternUnsupported(f"a lone surrogate (\\u{value:04x}), which no valid text "
                                 "contains")
    return f"\\x{{{value:x}}}"


def _literal(char: str) -> str:
    if char.isascii() and not char.isalnum() and char != "_":
        return "\\" + char
    return _point(ord(char)) if not char.isascii() else char

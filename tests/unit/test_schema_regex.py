"""JSON Schema patterns on RE2 (basedb.core.schema_regex): read as ECMA-262 reads them,
matched in linear time, and refused when only a backtracking engine could run them."""

from __future__ import annotations

import pytest

from basedb.core.json_schema import schema_patterns
from basedb.core.schema_regex import PatternUnsupported, compile_pattern, pattern_problem


def matches(pattern: str, text: str) -> bool:
    return compile_pattern(pattern).search(text) is not None


@pytest.mark.parametrize(("pattern", "text", "expected"), [
    ("^(a+)+$", "a" * 100_000 + "!", False),  # exponential for a backtracking engine
    ("^(a+)+$", "a" * 100_000, True),
    ("^[a-z]+$", "abc\n", False),  # $ is the end of the text (Python's re: before a \n)
    (r"\d", "٣", False),  # ASCII digits only, as in ECMA-262
    (r"\w", "é", False),
    (r"\s", "\u00a0", True),  # ECMA-262 white space, beyond ASCII
    (r"\s", "\u2028", True),
    (r"[\S]", "\u00a0", False),
    (r"[\S]", "x", True),
    ("^.$", "\u2028", False),  # . stops at every line terminator
    ("^.$", "\r", False),
    ("^.$", "é", True),
    (r"\u00e9", "é", True),
    (r"\uD83D\uDE00", "😀", True),  # a surrogate pair is its one character
    (r"\u{1F600}", "😀", True),
    (r"\cJ", "\n", True),
    (r"\0", "\x00", True),
    ("[]", "a", False),
    ("[^]", "\n", True),
    ("{foo}", "{foo}", True),  # not a count: literal braces
    ("a{2}", "aa", True),
    (r"(?<year>\d{4})", "2024", True),
    (r"[\w-]+$", "a-b", True),
    (r"\/", "/", True),
    (r"\e", "e", True),  # an escaped letter without meaning is the letter
    (r"[\b]", "\b", True),
    (r"\bword\b", "a word here", True),
])
def test_patterns_mean_what_ecma_262_says(pattern: str, text: str, expected: bool) -> None:
    assert matches(pattern, text) is expected


@pytest.mark.parametrize(("pattern", "said"), [
    (r"(a)\1", "backreference"), (r"(?<x>a)\k<x>", "named backreference"),
    ("(?=a)", "lookahead"), ("(?!a)", "negative lookahead"), ("(?<=a)b", "lookbehind"),
    ("(?<!a)b", "negative lookbehind"), ("a{1001}", "above 1000"),
    (r"\uD800", "lone surrogate"), ("[a", "closing ]"), ("(", "RE2 cannot compile"),
])
def test_what_needs_backtracking_is_refused_with_a_reason(pattern: str, said: str) -> None:
    problem = pattern_problem(pattern)
    assert problem is not None and said in problem
    with pytest.raises(PatternUnsupported):
        compile_pattern(pattern)


def test_every_pattern_of_a_schema_is_found_where_it_is_written() -> None:
    schema = {"type": "object", "properties": {
        "pattern": {"type": "string", "pattern": "^a"},  # a property named pattern
        "b": {"items": [{"pattern": "^b"}], "anyOf": [{"not": {"pattern": "^c"}}]}},
        "patternProperties": {"^x-": {"pattern": "^d"}},
        "$defs": {"e": {"pattern": "^e"}}, "enum": [{"pattern": "^not-a-schema"}]}
    assert sorted(schema_patterns(schema)) == sorted([
        (("properties", "pattern", "pattern"), "^a"),
        (("properties", "b", "items", 0, "pattern"), "^b"),
        (("properties", "b", "anyOf", 0, "not", "pattern"), "^c"),
        (("patternProperties", "^x-"), "^x-"),
        (("patternProperties", "^x-", "pattern"), "^d"),
        (("$defs", "e", "pattern"), "^e")])

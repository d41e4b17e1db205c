"""Ranked search over short documents (a site's functions): tokens and Okapi BM25.

    index = SearchIndex([("listTasks", {"id": "listTasks", "description": "Lists …"}), …])
    index.search("overdue tasks")        # [(key, score), …], best first

Tokens are what a person would type: identifiers split at camelCase, digits and
punctuation (`listOrderItems` → list, order, items), lower-cased, each word also
indexed in a crude singular (`items` → item) so that "invoice" finds "listInvoices".
Text in Chinese, Japanese or Korean has no spaces between words, so each run of those
characters becomes its character bigrams (and a lone character stays a token): "审批流程"
→ 审批, 批流, 流程, which a query for "审批" matches without a dictionary.

Ranking is BM25 (k1 = 1.2, b = 0.75) over the document's tokens, where each field
counts `weight` times: an id and a table name say more about what a function is for
than a word in the middle of its description. Documents matching more of the query's
distinct words come first (someone who typed two words wants both), then by the BM25
sum; documents matching none are left out. The index is built once per listing and is linear in the
total text, which at a few thousand functions is a few milliseconds.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

K1 = 1.2
B = 0.75
FIELD_WEIGHTS: Mapping[str, int] = {"id": 3, "table": 2, "params": 1, "description": 1}

_CJK = (r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff")
_RUN_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9\u00c0-\u024f]+")
_CJK_RE = re.compile(rf"[{_CJK}]")
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z\u00c0-\u024f]+|[A-Z]+|\d+")


def words(text: str) -> list[str]:
    """The lower-cased words of `text`; runs of CJK characters as their bigrams."""
    out: list[str] = []
    for run in _RUN_RE.findall(text):
        if _CJK_RE.match(run):
            out += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
        else:
            out += [part.lower() for part in _CAMEL_RE.findall(run)] or [run.lower()]
    return out


def singular(word: str) -> str:
    """A crude English singular, enough to match listInvoices with "invoice"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    """The index terms of `text`: each word in its singular form."""
    return [singular(word) for word in words(text)]


@lru_cache(maxsize=4096)
def name_tokens(name: str) -> tuple[str, ...]:
    """`tokens` of a table's name, kept: every function of a site is matched against
    every table, so the few names are tokenized once, not once per function."""
    return tuple(tokens(name))


class SearchIndex:
    """BM25 over documents made of weighted fields (FIELD_WEIGHTS)."""

    def __init__(self, documents: Iterable[tuple[str, Mapping[str, str]]]) -> None:
        self._terms: dict[str, Counter[str]] = {}
        for key, fields in documents:
            counts: Counter[str] = Counter()
            for name, text in fields.items():
                weight = FIELD_WEIGHTS.get(name, 1)
                for term in tokens(text):
                    counts[term] += weight
            self._terms[key] = counts
        self._lengths = {key: sum(c.values()) for key, c in self._terms.items()}
        total = sum(self._lengths.values())
        self._average = total / len(self._lengths) if self._lengths else 0.0
        self._frequency: Counter[str] = Counter()
        for counts in self._terms.values():
            self._frequency.update(counts.keys())

    def _idf(self, term: str) -> float:
        n, found = len(self._terms), self._frequency.get(term, 0)
        return math.log(1 + (n - found + 0.5) / (found + 0.5))

    def search(self, query: str, keys: Sequence[str] | None = None
               ) -> list[tuple[str, float]]:
        """The documents (of `keys`, default all) matching a term of `query`, best first
        (most query words matched, then score); ties in id order."""
        terms = list(dict.fromkeys(tokens(query)))
        if not terms:
            return []
        idf = {term: self._idf(term) for term in terms}
        scored = []
        for key in keys if keys is not None else list(self._terms):
            counts = self._terms.get(key)
            if not counts:
                continue
            norm = K1 * (1 - B + B * self._lengths[key] / (self._average or 1))
            matched = [t for t in terms if t in counts]
            score = sum(idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in matched)
            if score > 0:
                scored.append((len(matched), key, score))
        scored.sort(key=lambda item: (-item[0], -item[2], item[1]))
        return [(key, score) for _, key, score in scored]


def named_table(text: str, table_names: Sequence[str]) -> str | None:
    """The table whose name appears, as whole words, in `text` (an id like
    exportOrderItems, or a sentence): the one named first, the longest name where two
    start at the same word (Order Items over Orders); None when none is named."""
    found = tuple(tokens(text))
    best: tuple[int, int, str] | None = None
    for name in table_names:
        wanted = name_tokens(name)
        size = len(wanted)
        if not size:
            continue
        start = next((i for i in range(len(found) - size + 1)
                      if found[i:i + size] == wanted), None)
        if start is not None and (best is None or (start, -size) < best[:2]):
            best = (start, -size, name)
    return best[2] if best else None

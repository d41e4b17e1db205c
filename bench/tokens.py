"""A documented estimate of how many tokens a model reads for a text, without a
tokenizer: about four characters per token for ASCII text (the usual figure for
English and code in BPE vocabularies) and one per character beyond ASCII (a Chinese
character is one token or more in common vocabularies). Figures made with it are
comparable with each other, and within some tens of per cent of a real tokenizer.
"""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    ascii_chars = sum(1 for char in text if ord(char) < 128)
    return round(ascii_chars / 4) + (len(text) - ascii_chars)

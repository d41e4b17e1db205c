"""The Agent Skills format, as basedb writes it.

A skill is a directory `<name>/` holding `SKILL.md`: YAML frontmatter, then a Markdown
body. The frontmatter has `name` (1–64 characters of `[a-z0-9-]`, no leading, trailing
or doubled hyphen, equal to the directory name) and `description` (at most 1024
characters saying what the skill does and when to use it); anything else goes under
`metadata`, a map of strings.

Both the platform, which renders a site's Skill, and the client, which installs it
(and may have to rename it), use these rules; the module imports nothing heavy at load
(PyYAML only inside the frontmatter functions).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

NAME_MAX = 64
DESCRIPTION_MAX = 1024
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")
SITE_NAME_PREFIX = "site-"
_TOKEN_SLUG_CHARS = 16
_SUFFIX_CHARS = 6
_FRONTMATTER_RE = re.compile(r"\A---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
# Places where a clipped text may end without cutting a word or a clause in half.
_BREAKS = " \t\n,;:，、；：。.!?！？)）]"


def is_valid_name(name: object) -> bool:
    """Whether `name` is a legal skill name."""
    return isinstance(name, str) and 0 < len(name) <= NAME_MAX and bool(NAME_RE.match(name))


def slugify(text: str, limit: int = NAME_MAX) -> str:
    """`text` as lowercase ASCII words joined by single hyphens, at most `limit` long
    (cut at a hyphen when one is near the end). Accents are dropped ("Café" → "cafe");
    characters with no ASCII form (CJK, emoji) become separators."""
    decomposed = unicodedata.normalize("NFKD", text)
    ascii_text = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) <= limit:
        return slug
    cut = slug[:limit]
    hyphen = cut.rfind("-")
    if hyphen >= limit * 2 // 3:
        cut = cut[:hyphen]
    return cut.strip("-")


def has_non_ascii_words(text: str) -> bool:
    """Whether `text` has letters or digits that have no ASCII form (e.g. a Chinese
    title), once accents are removed."""
    decomposed = unicodedata.normalize("NFKD", text)
    return any(ch.isalnum() and not ch.isascii() for ch in decomposed
               if not unicodedata.combining(ch))


def site_skill_name(title: str, app_token: str) -> str:
    """The skill name of a site: the ASCII slug of its title; for a title written in
    another script (whose slug would lose most of it), "site-" and a slug of the app
    token, which stays the same for the life of the site."""
    if not has_non_ascii_words(title):
        slug = slugify(title)
        if slug:
            return slug
    token_slug = slugify(app_token, _TOKEN_SLUG_CHARS).replace("-", "")
    return SITE_NAME_PREFIX + (token_slug or token_hash(app_token))


def token_hash(app_token: str, length: int = _SUFFIX_CHARS) -> str:
    """A short, stable hex digest of an app token."""
    return hashlib.sha256(app_token.encode("utf-8")).hexdigest()[:length]


def suffixed_name(name: str, app_token: str) -> str:
    """`name` with a short suffix from the site token's hash, kept within NAME_MAX: the
    name a site's skill takes when another site's skill already holds `name`."""
    suffix = token_hash(app_token)
    stem = name[: NAME_MAX - len(suffix) - 1].strip("-")
    return f"{stem}-{suffix}" if stem else suffix


def one_line(text: str) -> str:
    """`text` with every run of whitespace (newlines included) turned into one space."""
    return " ".join(text.split())


def clip_text(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, ending with "…" at a word or clause
    boundary when one lies in the last third, so a reader never sees half a word."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1]
    boundary = max(cut.rfind(ch) for ch in _BREAKS)
    if boundary >= (limit * 2) // 3:
        cut = cut[: boundary + 1]
    return cut.rstrip(" \t\n,;:，、；：") + "…"


# ------------------------------------------------------------------------ frontmatter


def render_frontmatter(front: Mapping[str, Any]) -> str:
    """`front` as a frontmatter block (`---`, YAML, `---`), keys in the given order."""
    # Lazy: PyYAML loads only when a Skill is written or read.
    import yaml  # noqa: PLC0415

    text = yaml.safe_dump(dict(front), sort_keys=False, allow_unicode=True,
                          default_flow_style=False, width=10**6)
    return f"---\n{text}---\n"


def split_frontmatter(markdown: str) -> tuple[dict[str, Any], str] | None:
    """(frontmatter, body) of a SKILL.md, or None when it has no frontmatter mapping."""
    # Lazy: PyYAML loads only when a Skill is written or read.
    import yaml  # noqa: PLC0415

    match = _FRONTMATTER_RE.match(markdown)
    if match is None:
        return None
    try:
        front = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    if not isinstance(front, dict):
        return None
    return front, markdown[match.end():]


def frontmatter_problems(front: Mapping[str, Any], *, directory: str | None = None
                         ) -> list[str]:
    """What makes `front` an invalid skill frontmatter (empty when it is valid)."""
    problems = []
    name = front.get("name")
    if not is_valid_name(name):
        problems.append(f"name {name!r} is not 1-{NAME_MAX} characters of [a-z0-9-] without "
                        "leading, trailing or doubled hyphens")
    elif directory is not None and name != directory:
        problems.append(f"name {name!r} differs from its directory {directory!r}")
    description = front.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append("description is missing or empty")
    elif len(description) > DESCRIPTION_MAX:
        problems.append(f"description has {len(description)} characters (at most "
                        f"{DESCRIPTION_MAX})")
    allowed = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    extra = sorted(str(key) for key in front if key not in allowed)
    if extra:
        problems.append(f"fields {', '.join(extra)} belong under metadata")
    metadata = front.get("metadata")
    if metadata is not None and not (isinstance(metadata, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())):
        problems.append("metadata must map strings to strings")
    return problems

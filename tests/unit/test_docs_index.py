"""docs/README.md indexes every document in docs/, and every link in the README and the
docs points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_the_index_lists_every_document() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    listed = set(LINK.findall(index))
    documents = {path.name for path in DOCS.iterdir()
                 if path.is_file() and path.name != "README.md"}
    assert documents - listed == set(), "add these to docs/README.md"


def test_relative_links_lead_to_files() -> None:
    broken = []
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []

"""basedb: an open implementation of the Base Database site-builder CLI."""

from __future__ import annotations

__version__ = "0.1.0"

# The name on the package index. The command and the import name are `basedb`, but
# PyPI's `basedb` is an unrelated project: install hints must name this one.
DISTRIBUTION = "basedb-cli"


def install_command(extra: str | None = None) -> str:
    """The pip command that installs basedb (with an optional extra), e.g.
    `pip install 'basedb-cli[fast]'`."""
    return f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {DISTRIBUTION}"


__all__ = ["DISTRIBUTION", "__version__", "install_command"]

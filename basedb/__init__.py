"""basedb: an open implementation of the Base Database site-builder CLI."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

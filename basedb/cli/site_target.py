"""Which site a site command acts on, and the client to reach it: `--app-token`, else
the appToken of the workspace at or above `-C DIR` (or the current directory). The
deployments commands define them; the other site commands share them from here."""

from __future__ import annotations

from basedb.cli.deployments import app_token_option, connect_to, site_of

resolve_site = site_of
connect = connect_to

__all__ = ["app_token_option", "connect", "resolve_site"]

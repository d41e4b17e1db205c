"""Lark / Feishu: brands and hosts, error classes, identities and how to obtain them.

    brands      feishu / lark -> open and accounts hosts (BASEDB_LARK_*_URL override them)
    codes       Lark's error codes and lark-cli's classification of them
    secrets     where app secrets and user tokens are kept (keyring or 0600 files)
    tenant      the bot identity: app id + secret -> tenant access token, cached
    oauth       the user identity: device flow, token refresh, user info
    credentials the token a request carries, renewed before it expires
    larkcli     a transport that runs an installed lark-cli for every request

Everything here follows lark-cli's source (github larksuite/cli); each module names the
files it follows. May import: basedb.core, and httpx.
"""

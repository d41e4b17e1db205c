"""The platform's web layer: HTTP in and out.

`http` turns a request into a `Call` for a handler and its result or `ApiFailure` into an
envelope; `app` builds the Starlette app from `routes/`; `pages` and `sessions` serve
deployed pages and their sign-in; `openapi` documents every route.

May import: basedb.platform.domain, basedb.platform.storage, basedb.check,
basedb.sql, basedb.workspace, basedb.core.
"""

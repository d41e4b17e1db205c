"""The platform's web layer: HTTP in and out.

`gate` is what every request passes first (log id, host and body guards, access log);
`http` turns a request into a `Call` for a handler (`context` is what handlers share,
`bodies` reads and parses request bodies) and its result or `ApiFailure` into an
envelope (`responses`); `app` builds the Starlette app from `routes/`; `pages` and
`sessions` serve deployed pages and their sign-in; `openapi` documents every route.

May import: basedb.platform.domain, basedb.platform.storage, basedb.check,
basedb.sql, basedb.workspace, basedb.core.
"""

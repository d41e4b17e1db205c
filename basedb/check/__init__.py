"""`basedb check`: validators that turn a loaded workspace into findings.

Pure analysis: SQL is parsed and resolved against the catalog (sqlglot), never run; no
database, no network. Reporters render one `CheckResult` as text, JSON, GitHub
annotations or SARIF. May import: basedb.sql (its front end, not `basedb.sql.sqlite`),
basedb.workspace, basedb.core.
"""

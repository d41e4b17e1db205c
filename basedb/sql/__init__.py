"""The SQL engine of Database Functions: PostgreSQL's dialect, checked, typed and run on
SQLite with PostgreSQL's semantics.

    analysis      one main.sql parsed (`parse`), gated to a read-only SELECT, resolved
                  and typed
    resolve       name resolution and parameter bindings (scopes from `scope`, WITH
                  clauses from `ctes`)
    typing*       PostgreSQL's types and rules for every expression (`pgtypes`,
                  `pgvalues`, `pgcasts`)
    functions     the functions of the subset; `constructs` the constructs; `reference`
                  renders both as docs/sql.md
    model         what an analysis produces (problems, output columns, resolution)
    sqlite/       the SQLite back end: translation of typed PostgreSQL to SQLite, the
                  `bdb_` functions that give SQLite PostgreSQL's semantics, and the
                  read-only connection and authorizer a compiled statement runs under

`basedb.check` uses the front end (everything but `sqlite/`) to judge a workspace; the
platform's storage compiles an analysis for its physical tables with the back end
(`basedb.platform.storage.sql_compile`) and runs it. The front end is pure analysis: it
never opens a database. May import: basedb.workspace, basedb.core; only `sqlite/`
imports sqlite3, and only the platform imports `sqlite/` (pyproject.toml's contracts).
"""

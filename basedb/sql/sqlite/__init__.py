"""The SQLite back end of the SQL engine: what runs a typed PostgreSQL query on SQLite
with PostgreSQL's results.

    translate     typed PostgreSQL expressions as SQLite expressions (`translate_calls`
                  for function calls, `nodes` for the node builders)
    udf           the `bdb_` functions registered on a connection (`udf_values`,
                  `udf_text`, `udf_time`, `udf_aggregates`)
    query         a compiled statement, its parameters, the read-only connection and
                  the authorizer it runs under

May import: the front end of basedb.sql, basedb.workspace, basedb.core, and sqlite3.
Only the platform imports this package: `basedb.check` stays pure analysis.
"""

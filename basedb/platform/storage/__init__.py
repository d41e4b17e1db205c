"""The platform's storage: the SQLite database and what is written into it.

    store         connections and transactions (WAL; one connection per thread)
    schema        the meta tables, as an ordered list of migrations
    physical      how Base tables and fields map to SQLite tables and columns
    cells         cell validation and encoding
    indexes       indexes for the equality filters of deployed Database Functions
    sql_compile   an analysed Database Function compiled to one SQLite statement (the
                  SQL engine, basedb.sql, translates; this maps names to `physical`)
    sql_rewrite   the rewrite of Base names to physical names behind it
    sql_results   result cells decoded by the field they come from
    ids           id and time formats
    platform_log  the log of what callers are not shown, by log id

May import: basedb.sql, basedb.workspace, basedb.core.
"""

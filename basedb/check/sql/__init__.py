"""SQL analysis for Database Functions.

`analysis.analyze_sql` checks one main.sql; `rules.check_database_functions` turns the
analyses of a workspace into findings; `functions` lists the SQL functions the subset
allows (the platform's compiler, `basedb.platform.storage.sql_compile`, maps the same
table to SQLite). This package imports nothing heavy: sqlglot loads with `analysis`.
"""

"""SQL analysis and SQLite compilation for Database Functions.

`analysis.analyze_sql` checks one main.sql; `rules.check_database_functions` turns the
analyses of a workspace into findings; `compile.compile_for_sqlite` rewrites an analysed
query for the local platform; `functions` lists the SQL functions both may allow. This
package imports nothing heavy: sqlglot loads with `analysis` and `compile`.
"""

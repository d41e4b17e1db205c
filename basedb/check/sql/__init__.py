"""`check`'s rules over the SQL engine's analyses of Database Functions.

`rules.check_database_functions` analyses every main.sql of a workspace with
`basedb.sql.analysis.analyze_sql` and turns the analyses into findings; `cache` keeps
analyses on disk between runs; `workers` spreads the analysis of a large workspace over
processes. This package imports nothing heavy: sqlglot loads with the analysis.
"""

SELECT "Title" AS title FROM "Tasks" WHERE ($1 IS NULL OR "Priority" = $1)

SELECT "Title" AS title FROM "Tasks" WHERE "Project" = $1

SELECT "Title" AS title FROM "Tasks" WHERE "Status" = $1

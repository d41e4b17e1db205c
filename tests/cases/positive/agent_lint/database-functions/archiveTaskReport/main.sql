SELECT "Title" AS title FROM "Tasks" WHERE "Archived" = true

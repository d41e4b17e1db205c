SELECT "Title" AS title FROM "Tasks" ORDER BY "Updated" DESC LIMIT $1

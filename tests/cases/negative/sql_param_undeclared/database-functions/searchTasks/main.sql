SELECT "Title" AS title
FROM "Tasks"
WHERE "Title" = $1
  AND "Notes" = $2

SELECT "Title" AS title
FROM "Tasks"
WHERE "Title" = $1
  OR "Notes" LIKE $2

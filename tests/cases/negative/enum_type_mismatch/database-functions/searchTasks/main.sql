SELECT "Title" AS title
FROM "Tasks"
WHERE "Estimate" >= $1

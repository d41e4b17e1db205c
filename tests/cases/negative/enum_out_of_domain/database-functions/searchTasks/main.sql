SELECT t."Title" AS title
FROM "Tasks" AS t
WHERE t."Status" = $1

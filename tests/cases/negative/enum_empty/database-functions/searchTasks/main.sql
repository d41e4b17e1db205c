SELECT "record_id" AS task_id, "Title" AS title
FROM "Tasks"
WHERE "Title" = $1

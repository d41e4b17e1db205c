SELECT "record_id" AS task_id FROM "Tasks" WHERE "Title" = $1

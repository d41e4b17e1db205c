SELECT t."record_id" AS task_id,
       t."Title" AS title,
       t."Status" AS status,
       t."Priority" AS priority,
       t."Due" AS due
FROM "Tasks" AS t
WHERE t."Project" = $1
  AND t."Status" = $2
ORDER BY t."Due"
LIMIT 50 OFFSET $3

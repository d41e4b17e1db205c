SELECT t."record_id" AS task_id,
       t."Title" AS title,
       t."Status" AS status
FROM "Tasks" AS t
WHERE t."Priority" = $1
  AND ($2 IS NULL OR t."Status" = $2)
  AND ($3 IS NULL OR t."Title" LIKE '%' || $3 || '%')
ORDER BY t."No"

WITH open_tasks AS (
  SELECT t."record_id" AS task_id,
         t."Project" AS project_id
  FROM "Tasks" AS t
  WHERE t."Status" <> 'Done'
),
commented AS (
  SELECT DISTINCT c."Task" AS task_id
  FROM "Comments" AS c
  WHERE c."Author" = CURRENT_USER_ID()
)
SELECT p."record_id" AS project_id,
       p."Name" AS name,
       COUNT(o.task_id) AS open_count,
       (SELECT COUNT(*) FROM "Tasks" AS t2 WHERE t2."Project" = p."record_id") AS all_count
FROM "Projects" AS p
LEFT JOIN open_tasks AS o ON o.project_id = p."record_id"
WHERE p."Status" = $1
  AND EXISTS (SELECT 1 FROM commented AS cm WHERE cm.task_id = o.task_id)
GROUP BY p."record_id", p."Name"
ORDER BY open_count DESC
LIMIT $2

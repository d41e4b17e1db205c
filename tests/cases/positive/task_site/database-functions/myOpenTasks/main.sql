SELECT t."record_id" AS task_id,
       t."Title" AS title,
       t."Due" AS due
FROM "Tasks" AS t
WHERE t."Assignee" = CURRENT_USER_ID()
  AND t."Status" <> 'Done'
  AND t."Archived" = FALSE
ORDER BY t."Due"

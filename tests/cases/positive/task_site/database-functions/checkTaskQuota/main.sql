SELECT COUNT(*) AS doing_count
FROM "Tasks"
WHERE "Assignee" = CURRENT_USER_ID()
  AND "Status" = 'Doing'

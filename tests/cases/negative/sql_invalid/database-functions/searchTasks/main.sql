SELECT t."Status" AS status, t."Title" AS title, COUNT(*) AS n
FROM "Tasks" AS t
GROUP BY t."Status"

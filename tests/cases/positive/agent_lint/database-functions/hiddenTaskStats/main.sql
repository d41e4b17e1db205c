SELECT "Status" AS status, count(*) AS n FROM "Tasks" GROUP BY "Status"

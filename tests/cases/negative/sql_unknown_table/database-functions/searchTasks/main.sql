SELECT t."Title" AS title
FROM "Tasks" AS t
CROSS JOIN "Sprints" AS s

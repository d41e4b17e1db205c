SELECT t."Title" AS title FROM "Tasks" AS t

SELECT "Title" AS title FROM "Tasks";
SELECT "Name" AS name FROM "Projects";

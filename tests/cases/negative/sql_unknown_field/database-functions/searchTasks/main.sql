SELECT "Title" AS title, "Points" AS points
FROM "Tasks"

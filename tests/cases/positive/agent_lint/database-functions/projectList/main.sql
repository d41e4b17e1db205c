SELECT "Name" AS name FROM "Projects" ORDER BY "Name"

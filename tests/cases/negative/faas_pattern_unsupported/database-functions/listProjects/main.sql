SELECT p."record_id" AS project_id,
       p."Name" AS name,
       p."Status" AS status
FROM "Projects" AS p
WHERE p."Status" = $1
ORDER BY p."Name"

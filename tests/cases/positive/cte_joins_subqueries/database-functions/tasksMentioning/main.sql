SELECT t."Title" AS title,
       t."Due" AS due,
       pr."Name" AS project
FROM "Tasks" AS t
INNER JOIN "Projects" AS pr ON t."Project" = pr."record_id"
WHERE t."record_id" IN (
  SELECT c."Task"
  FROM "Comments" AS c
  WHERE c."Body" LIKE '%' || $1 || '%'
)
ORDER BY t."Due" NULLS LAST

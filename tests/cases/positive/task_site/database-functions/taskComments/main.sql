SELECT c."Body" AS body,
       c."Author" AS author,
       c."Created" AS created_at
FROM "Comments" AS c
WHERE c."Task" = $1
ORDER BY c."Created" DESC

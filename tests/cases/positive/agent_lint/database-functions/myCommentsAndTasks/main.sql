SELECT c."Body" AS body FROM "Comments" AS c

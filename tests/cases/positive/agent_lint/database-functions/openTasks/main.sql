SELECT "Title" AS title FROM "Tasks" WHERE "Status" <> 'Done'

SELECT
  m.record_id AS member_id,
  m."姓名" AS name,
  m."部门" AS department,
  m."邮箱" AS email
FROM "成员" AS m
WHERE m."在职" = TRUE
ORDER BY m."部门", m."姓名"

-- The caller's member record, with their submission for the period when there is one
-- (LEFT JOIN: a member who has not submitted yet still gets a row, with null submission
-- columns). The latest submission wins if a duplicate slipped in.
SELECT
  m.record_id AS member_id,
  m."姓名" AS member_name,
  m."部门" AS department,
  s.record_id AS submission_id,
  s."休假意向" AS intent,
  s."开始日期" AS start_date,
  s."结束日期" AS end_date,
  s."天数" AS days,
  s."备注" AS remark,
  s."填报时间" AS submitted_at
FROM "成员" AS m
LEFT JOIN "休假填报" AS s ON s."成员" = m.record_id AND s."周期" = $1
WHERE m."用户" = CURRENT_USER_ID()
ORDER BY s."填报时间" DESC
LIMIT 1

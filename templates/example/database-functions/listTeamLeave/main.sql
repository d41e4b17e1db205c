-- One page of a period's submissions; $2 is the number of rows to skip.
SELECT
  s.record_id AS submission_id,
  m.record_id AS member_id,
  m."姓名" AS member_name,
  m."部门" AS department,
  s."休假意向" AS intent,
  s."开始日期" AS start_date,
  s."结束日期" AS end_date,
  s."天数" AS days,
  s."备注" AS remark,
  s."填报时间" AS submitted_at
FROM "休假填报" AS s
JOIN "成员" AS m ON s."成员" = m.record_id
WHERE s."周期" = $1
ORDER BY m."部门", m."姓名", s.record_id
LIMIT 200 OFFSET $2

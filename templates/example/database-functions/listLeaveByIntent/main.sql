-- Submissions of every period with one intent, most recent period first.
SELECT
  s.record_id AS submission_id,
  p.record_id AS period_id,
  p."标题" AS period_title,
  m."姓名" AS member_name,
  m."部门" AS department,
  s."休假意向" AS intent,
  s."开始日期" AS start_date,
  s."结束日期" AS end_date,
  s."天数" AS days,
  s."备注" AS remark
FROM "休假填报" AS s
JOIN "报备周期" AS p ON s."周期" = p.record_id
JOIN "成员" AS m ON s."成员" = m.record_id
WHERE s."休假意向" = $1
ORDER BY p."开始日期" DESC, m."部门", m."姓名", s.record_id
LIMIT 200 OFFSET $2

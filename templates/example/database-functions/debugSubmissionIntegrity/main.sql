-- Maintenance query: submissions that the page and the stats would misread.
SELECT
  s.record_id AS submission_id,
  p."标题" AS period_title,
  m."姓名" AS member_name,
  s."休假意向" AS intent,
  s."开始日期" AS start_date,
  s."结束日期" AS end_date,
  s."天数" AS days,
  CASE
    WHEN p.record_id IS NULL THEN 'period_missing'
    WHEN m.record_id IS NULL THEN 'member_missing'
    WHEN s."休假意向" = '需要休假' AND (s."开始日期" IS NULL OR s."结束日期" IS NULL)
      THEN 'dates_missing'
    WHEN s."结束日期" < s."开始日期" THEN 'end_before_start'
    ELSE 'member_inactive'
  END AS problem
FROM "休假填报" AS s
LEFT JOIN "报备周期" AS p ON s."周期" = p.record_id
LEFT JOIN "成员" AS m ON s."成员" = m.record_id
WHERE p.record_id IS NULL
  OR m.record_id IS NULL
  OR (s."休假意向" = '需要休假' AND (s."开始日期" IS NULL OR s."结束日期" IS NULL))
  OR s."结束日期" < s."开始日期"
  OR (m."在职" = FALSE AND p."状态" = '开放')
ORDER BY s.record_id

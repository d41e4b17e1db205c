SELECT
  m."部门" AS department,
  COUNT(*) AS submissions,
  SUM(CASE WHEN s."休假意向" = '需要休假' THEN 1 ELSE 0 END) AS members_on_leave,
  COALESCE(SUM(s."天数"), 0) AS total_days
FROM "休假填报" AS s
JOIN "成员" AS m ON s."成员" = m.record_id
WHERE s."周期" = $1
GROUP BY m."部门"
ORDER BY m."部门"

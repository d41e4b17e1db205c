-- Open periods first, then the most recent ones.
SELECT
  p.record_id AS period_id,
  p."标题" AS title,
  p."开始日期" AS start_date,
  p."结束日期" AS end_date,
  p."状态" AS status,
  p."说明" AS note
FROM "报备周期" AS p
ORDER BY
  CASE WHEN p."状态" = '开放' THEN 0 ELSE 1 END,
  p."开始日期" DESC

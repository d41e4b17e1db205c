SELECT "record_id" AS period_id,
       "周期名称" AS title,
       "开始日期" AS start_at,
       "结束日期" AS end_at
FROM "报备周期"
WHERE "状态" = $1
ORDER BY "开始日期" DESC

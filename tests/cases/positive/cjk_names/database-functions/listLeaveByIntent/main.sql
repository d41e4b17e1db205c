SELECT l."record_id" AS leave_id,
       l."成员" AS member,
       l."天数" AS days,
       p."周期名称" AS period_title
FROM "休假填报" AS l
JOIN "报备周期" AS p ON l."周期" = p."record_id"
WHERE l."休假意向" = $1
ORDER BY l."提交时间" DESC

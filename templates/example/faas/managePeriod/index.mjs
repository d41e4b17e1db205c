// managePeriod: create a leave-reporting period, or close one.
//
// The platform validates the input against inputSchema before this handler runs
// (action, the create/close branches, date format), so only the rules a schema cannot
// express live here: the caller must be an active member (FaaS writes are not bound by
// Mutation declarations, so the handler checks who is calling), a date must exist on
// the calendar, the end must not precede the start, and one period spans at most
// MAX_PERIOD_DAYS days.
//
// Errors follow the platform's message template so that an agent can tell which
// parameter to fix and that nothing was written:
//   <Reason>. Parameter: <pointer> (received <value>). Fix: <…>. Executed: no. Retry: …

const PERIODS = "报备周期";
const MEMBERS = "成员";
const STATUS_OPEN = "开放";
const STATUS_CLOSED = "已关闭";
const MAX_PERIOD_DAYS = 180;
const DAY_MS = 24 * 60 * 60 * 1000;

const PAGE_SIZE = 200; // the most ctx.records.list returns per call

const INVALID_INPUT = 40001;
const NOT_A_MEMBER = 40301;
const PERIOD_NOT_FOUND = 40401;

export default async function managePeriod(input, ctx) {
  if (!(await isActiveMember(ctx))) {
    return failure(NOT_A_MEMBER, "只有成员名单中的在职成员可以管理报备周期", "/params/action",
      input.action, "先调用 registerMember 登记为成员，或请在职成员操作", [],
      "retry after access is granted");
  }
  if (input.action === "create") {
    return createPeriod(input, ctx);
  }
  if (input.action === "close") {
    return closePeriod(input, ctx);
  }
  return failure(INVALID_INPUT, "未知的操作", "/params/action", input.action,
    "action 传 create 创建周期，或传 close 关闭周期", ["create", "close"]);
}

async function createPeriod(input, ctx) {
  const title = input.title.trim();
  if (title === "") {
    return failure(INVALID_INPUT, "标题不能为空白", "/params/title", input.title,
      "填写报备周期的业务名称，例如 2027 春节休假报备");
  }
  const start = parseDate(input.start);
  if (start === null) {
    return failure(INVALID_INPUT, "开始日期不是有效的日历日期", "/params/start", input.start,
      "使用存在的日期，格式 YYYY-MM-DD");
  }
  const end = parseDate(input.end);
  if (end === null) {
    return failure(INVALID_INPUT, "结束日期不是有效的日历日期", "/params/end", input.end,
      "使用存在的日期，格式 YYYY-MM-DD");
  }
  if (end < start) {
    return failure(INVALID_INPUT, "结束日期早于开始日期", "/params/end", input.end,
      `结束日期不早于 ${input.start}，单期最多 ${MAX_PERIOD_DAYS} 天`);
  }
  const days = Math.round((end - start) / DAY_MS) + 1;
  if (days > MAX_PERIOD_DAYS) {
    const latest = formatDate(new Date(start.getTime() + (MAX_PERIOD_DAYS - 1) * DAY_MS));
    return failure(INVALID_INPUT, `周期共 ${days} 天，超过单期上限 ${MAX_PERIOD_DAYS} 天`,
      "/params/end", input.end, `结束日期不晚于 ${latest}，或拆成多个周期`);
  }

  const fields = {
    "标题": title,
    "开始日期": `${input.start} 00:00:00`,
    "结束日期": `${input.end} 00:00:00`,
    "状态": STATUS_OPEN,
  };
  if (typeof input.note === "string" && input.note.trim() !== "") {
    fields["说明"] = input.note.trim();
  }
  const created = await ctx.records.create(PERIODS, fields);
  return {
    code: 0,
    msg: "ok",
    data: { periodId: created.record_id, title, start: input.start, end: input.end, days,
      status: STATUS_OPEN },
  };
}

async function closePeriod(input, ctx) {
  let period;
  try {
    period = await ctx.records.get(PERIODS, input.periodId);
  } catch (error) {
    if (error?.code === "record_not_found") {
      return failure(PERIOD_NOT_FOUND, "报备周期不存在", "/params/periodId", input.periodId,
        "先调用 listPeriods，从 rows[].period_id 选择记录 ID，不传周期标题");
    }
    throw error;
  }
  const title = period.fields["标题"];
  // Closing twice is harmless: report the state instead of writing it again.
  const alreadyClosed = period.fields["状态"] === STATUS_CLOSED;
  if (!alreadyClosed) {
    await ctx.records.update(PERIODS, input.periodId, { "状态": STATUS_CLOSED });
  }
  return {
    code: 0,
    msg: "ok",
    data: { periodId: input.periodId, title, status: STATUS_CLOSED, changed: !alreadyClosed },
  };
}

// Whether the caller is a member whose 在职 box is ticked. The member list is small, so
// reading it page by page is cheaper than keeping a second copy of who may manage periods.
async function isActiveMember(ctx) {
  for (let offset = 0; ; offset += PAGE_SIZE) {
    const page = await ctx.records.list(MEMBERS, { offset, limit: PAGE_SIZE });
    const user = page.fields.indexOf("用户");
    const active = page.fields.indexOf("在职");
    const found = page.data.some((row) => row[active] === true
      && (row[user] ?? []).some((cell) => cell.id === ctx.caller.userId));
    if (found) {
      return true;
    }
    if (!page.has_more) {
      return false;
    }
  }
}

// "YYYY-MM-DD" to a UTC midnight Date, or null when the day does not exist
// (the schema pattern accepts 2027-02-30; the calendar does not).
function parseDate(text) {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (match === null) {
    return null;
  }
  const [year, month, day] = match.slice(1).map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1
    && date.getUTCDate() === day;
  return exists ? date : null;
}

function formatDate(date) {
  return date.toISOString().slice(0, 10);
}

// A result for a call that was rejected before anything was written.
function failure(code, reason, parameter, received, fix, candidates = [],
  retry = "retry after fixing") {
  const shown = received === undefined || received === null
    ? "null" : JSON.stringify(String(received).slice(0, 64));
  const offer = candidates.length > 0 ? `; Candidates: ${candidates.slice(0, 3).join(", ")}` : "";
  const msg = `${reason}. Parameter: ${parameter} (received ${shown}). Fix: ${fix}${offer}. `
    + `Executed: no. Retry: ${retry}.`;
  return { code, msg: msg.slice(0, 500), data: { parameter } };
}

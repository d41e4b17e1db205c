// Team leave reporting page. Reads go through Database Functions, simple writes through
// Mutations, and period management through the managePeriod FaaS; the page never talks
// to Base directly. Every call runs as the signed-in user.
import {
  invokeDatabaseFunction,
  invokeFaaS,
  invokeMutation,
  startBaseApp,
} from "@lark-base-open/base-database-app-sdk/page";

const PAGE_SIZE = 200; // listTeamLeave returns at most this many rows per call
const OPEN = "开放";
const ON_LEAVE = "需要休假";

const state = {
  periods: [],
  period: null, // the selected row of listPeriods
  me: null, // the caller's row of getMySubmission, or null when not a member
  teamOffset: 0,
};

const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- data access

// Database Functions answer {rows: [...]}.
async function query(functionId, params = {}) {
  const data = await invokeDatabaseFunction(functionId, params);
  return Array.isArray(data?.rows) ? data.rows : [];
}

// ------------------------------------------------------------------ feedback

function announce(message) {
  $("status").textContent = message;
}

function showError(error) {
  const box = $("error");
  box.textContent = error instanceof Error ? error.message : String(error);
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

// Runs an action with its button disabled, reporting failures instead of throwing.
async function busy(button, action) {
  clearError();
  if (button) button.disabled = true;
  try {
    await action();
  } catch (error) {
    showError(error);
  } finally {
    if (button) button.disabled = false;
  }
}

// ------------------------------------------------------------------- helpers

// Base datetime cells are "YYYY-MM-DD HH:MM:SS"; the page shows the date part.
function dateOf(cell) {
  return typeof cell === "string" && cell.length >= 10 ? cell.slice(0, 10) : "";
}

function rangeText(start, end) {
  const from = dateOf(start);
  const to = dateOf(end);
  if (!from && !to) return "—";
  if (from === to) return from;
  return `${from || "?"} 至 ${to || "待定"}`;
}

// Monday to Friday between two YYYY-MM-DD dates, both included.
function workingDays(start, end) {
  const from = new Date(`${start}T00:00:00Z`);
  const to = new Date(`${end}T00:00:00Z`);
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || to < from) return null;
  let count = 0;
  for (let day = from; day <= to; day = new Date(day.getTime() + 86_400_000)) {
    const weekday = day.getUTCDay();
    if (weekday !== 0 && weekday !== 6) count += 1;
  }
  return count;
}

function cell(text, className) {
  const td = document.createElement("td");
  td.textContent = text ?? "";
  if (className) td.className = className;
  return td;
}

function intentBadge(intent) {
  const span = document.createElement("span");
  span.className = intent === ON_LEAVE ? "badge leave" : "badge";
  span.textContent = intent ?? "—";
  return span;
}

// ------------------------------------------------------------------- periods

async function loadPeriods(selectId) {
  state.periods = await query("listPeriods");
  const select = $("period-select");
  select.replaceChildren();
  for (const period of state.periods) {
    const option = document.createElement("option");
    option.value = period.period_id;
    option.textContent = `${period.title}（${period.status}）`;
    select.append(option);
  }
  select.disabled = state.periods.length === 0;
  if (state.periods.length === 0) {
    announce("还没有报备周期，可在下方“管理报备周期”中创建。");
    return;
  }
  const wanted = state.periods.find((p) => p.period_id === selectId) ?? state.periods[0];
  select.value = wanted.period_id;
  await selectPeriod(wanted.period_id);
}

async function selectPeriod(periodId) {
  state.period = state.periods.find((p) => p.period_id === periodId) ?? null;
  const period = state.period;
  $("period-details").hidden = period === null;
  if (period === null) return;
  $("period-range").textContent = rangeText(period.start_date, period.end_date);
  $("period-status").textContent = period.status;
  $("period-status").className = period.status === OPEN ? "badge open" : "badge";
  $("period-note").textContent = period.note || "—";
  await Promise.all([loadMine(), loadTeam(true), loadStats()]);
  announce(`已载入 ${period.title}`);
}

// ---------------------------------------------------------------- my report

async function loadMine() {
  const rows = await query("getMySubmission", { periodId: state.period.period_id });
  state.me = rows[0] ?? null;
  renderMine();
}

function renderMine() {
  const me = state.me;
  const open = state.period?.status === OPEN;
  const submitted = me !== null && me.submission_id !== null && me.submission_id !== undefined;
  $("not-member").hidden = me !== null;
  $("my-submission").hidden = !submitted;
  $("leave-form").hidden = me === null || submitted || !open;
  $("period-closed").hidden = open;
  $("remark-form").hidden = !open;
  if (submitted) {
    $("mine-intent").replaceChildren(intentBadge(me.intent));
    $("mine-range").textContent = rangeText(me.start_date, me.end_date);
    $("mine-days").textContent = me.days ?? "—";
    $("mine-remark").textContent = me.remark || "—";
    $("remark-input").value = me.remark ?? "";
  }
}

function syncIntentFields() {
  const onLeave = $("leave-form").elements.intent.value === ON_LEAVE;
  for (const id of ["start-date", "end-date", "days"]) {
    $(id).disabled = !onLeave;
    $(id).required = onLeave;
  }
}

function suggestDays() {
  const start = $("start-date").value;
  const end = $("end-date").value;
  if (!start || !end) return;
  const days = workingDays(start, end);
  if (days !== null) $("days").value = String(days);
}

async function submitLeave(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const fields = form.elements;
  const onLeave = fields.intent.value === ON_LEAVE;
  if (onLeave && fields.endDate.value < fields.startDate.value) {
    showError("结束日期不能早于开始日期。");
    fields.endDate.focus();
    return;
  }
  await busy(form.querySelector("button[type=submit]"), async () => {
    const params = {
      periodId: state.period.period_id,
      memberId: state.me.member_id,
      intent: fields.intent.value,
      remark: fields.remark.value.trim() || null,
    };
    if (onLeave) {
      params.startDate = fields.startDate.value;
      params.endDate = fields.endDate.value;
      params.days = Number(fields.days.value);
    } else {
      params.days = 0;
    }
    await invokeMutation("submitLeave", params);
    form.reset();
    syncIntentFields();
    await Promise.all([loadMine(), loadTeam(true), loadStats()]);
    announce("填报已提交。");
  });
}

async function saveRemark(event) {
  event.preventDefault();
  const remark = $("remark-input").value.trim();
  await busy(event.submitter, async () => {
    // An empty box means "clear", which a Mutation only does through its clear flag.
    const params = remark
      ? { recordId: state.me.submission_id, remark }
      : { recordId: state.me.submission_id, clearRemark: true };
    await invokeMutation("updateLeaveRemark", params);
    await Promise.all([loadMine(), loadTeam(true)]);
    announce(remark ? "备注已保存。" : "备注已清空。");
  });
}

async function clearRemark(event) {
  await busy(event.currentTarget, async () => {
    await invokeMutation("updateLeaveRemark", {
      recordId: state.me.submission_id,
      clearRemark: true,
    });
    await Promise.all([loadMine(), loadTeam(true)]);
    announce("备注已清空。");
  });
}

async function withdraw(event) {
  if (!window.confirm("撤回后这条填报会被删除，确定撤回吗？")) return;
  await busy(event.currentTarget, async () => {
    await invokeMutation("deleteSubmissions", { recordIds: [state.me.submission_id] });
    await Promise.all([loadMine(), loadTeam(true), loadStats()]);
    announce("填报已撤回，可以重新填写。");
  });
}

async function register(event) {
  event.preventDefault();
  const fields = event.currentTarget.elements;
  await busy(event.submitter, async () => {
    await invokeMutation("registerMember", {
      name: fields.name.value.trim(),
      department: fields.department.value,
      email: fields.email.value.trim() || null,
    });
    await loadMine();
    announce("已登记为成员。");
  });
}

// --------------------------------------------------------------------- team

async function loadTeam(fromStart) {
  if (fromStart) {
    state.teamOffset = 0;
    $("team-rows").replaceChildren();
  }
  const rows = await query("listTeamLeave", {
    periodId: state.period.period_id,
    offset: state.teamOffset,
  });
  const body = $("team-rows");
  for (const row of rows) {
    const tr = document.createElement("tr");
    const intent = document.createElement("td");
    intent.append(intentBadge(row.intent));
    tr.append(
      cell(row.member_name),
      cell(row.department),
      intent,
      cell(row.intent === ON_LEAVE ? rangeText(row.start_date, row.end_date) : "—"),
      cell(row.days ?? "—", "num"),
      cell(row.remark || ""),
    );
    body.append(tr);
  }
  state.teamOffset += rows.length;
  $("team-empty").hidden = state.teamOffset > 0;
  $("load-more").hidden = rows.length < PAGE_SIZE;
}

async function loadStats() {
  const rows = await query("leaveStatsByDepartment", { periodId: state.period.period_id });
  const box = $("stats");
  box.replaceChildren();
  for (const row of rows) {
    const item = document.createElement("div");
    item.className = "stat";
    const name = document.createElement("strong");
    name.textContent = row.department || "未分部门";
    const detail = document.createElement("span");
    detail.textContent =
      `${row.submissions} 人填报 · ${row.members_on_leave} 人休假 · 共 ${row.total_days} 天`;
    item.append(name, detail);
    box.append(item);
  }
}

// ------------------------------------------------------------------ periods admin

async function createPeriod(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const fields = form.elements;
  await busy(event.submitter, async () => {
    const input = {
      action: "create",
      title: fields.title.value.trim(),
      start: fields.start.value,
      end: fields.end.value,
    };
    if (fields.note.value.trim()) input.note = fields.note.value.trim();
    const created = await invokeFaaS("managePeriod", input);
    form.reset();
    await loadPeriods(created?.periodId);
    announce(`已创建周期 ${input.title}`);
  });
}

async function closePeriod(event) {
  const period = state.period;
  if (period === null) return;
  if (!window.confirm(`关闭“${period.title}”后成员不能再填报，确定关闭吗？`)) return;
  await busy(event.currentTarget, async () => {
    await invokeFaaS("managePeriod", { action: "close", periodId: period.period_id });
    await loadPeriods(period.period_id);
    announce(`已关闭 ${period.title}`);
  });
}

// --------------------------------------------------------------------- wiring

function wire() {
  $("period-select").addEventListener("change", (event) => {
    busy(null, () => selectPeriod(event.currentTarget.value));
  });
  $("leave-form").addEventListener("submit", submitLeave);
  $("leave-form").addEventListener("change", (event) => {
    if (event.target.name === "intent") syncIntentFields();
    if (event.target.type === "date") suggestDays();
  });
  $("remark-form").addEventListener("submit", saveRemark);
  $("clear-remark").addEventListener("click", clearRemark);
  $("withdraw").addEventListener("click", withdraw);
  $("register-form").addEventListener("submit", register);
  $("load-more").addEventListener("click", (event) => {
    busy(event.currentTarget, () => loadTeam(false));
  });
  $("period-form").addEventListener("submit", createPeriod);
  $("close-period").addEventListener("click", closePeriod);
}

// The page's entry: wires the form once the document is ready, loads the periods, then
// reports ready to a frame that holds the page.
startBaseApp(async () => {
  wire();
  syncIntentFields();
  await busy(null, () => loadPeriods(null));
});

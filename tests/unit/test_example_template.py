"""The example template is consistent with itself: declarations, Base schema, page, FaaS.

These tests read the template directly, so they hold whatever the validators say; the
`basedb check` run over a fresh example workspace lives in tests/cli/test_init.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from basedb.core.resources import TEMPLATE_SCHEMA_FILE, template_dir
from basedb.workspace.scaffold import load_template_schema
from basedb.workspace.template_schema import TemplateSchema

EXAMPLE = template_dir("example")
SCHEMA: TemplateSchema = load_template_schema(EXAMPLE / TEMPLATE_SCHEMA_FILE)


def declarations(kind_dir: str) -> dict[str, dict[str, Any]]:
    return {p.parent.name: json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((EXAMPLE / kind_dir).glob("*/function.json"))}


DATABASE_FUNCTIONS = declarations("database-functions")
MUTATIONS = declarations("mutations")
FAAS = declarations("faas")
AI_FUNCTIONS = declarations("ai")
ALL = {**DATABASE_FUNCTIONS, **MUTATIONS, **FAAS, **AI_FUNCTIONS}
# Functions an agent can call first to obtain an id (what reference params must name).
SUPPLIERS = set(DATABASE_FUNCTIONS) | set(FAAS)


def field_options(table: str, field: str) -> tuple[str, ...]:
    t = SCHEMA.table(table)
    assert t is not None, table
    f = t.field(field)
    assert f is not None, f"{table}.{field}"
    return f.options


def params_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc.get("meta", {}).get("params", []) or doc.get("spec", {}).get("params", [])


def test_the_example_has_the_functions_its_readme_lists() -> None:
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    assert len(DATABASE_FUNCTIONS) >= 5 and len(MUTATIONS) >= 2
    assert set(FAAS) == {"managePeriod"} and set(AI_FUNCTIONS) == {"summarizeLeave"}
    for function_id in ALL:
        assert f"`{function_id}`" in readme, function_id


def test_the_readme_speaks_english_and_chinese_in_step() -> None:
    """One README (the file site.zip ships and pull restores), in both languages."""
    readme = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    english, chinese = readme.split("\n## English\n", 1)[1].split("\n## 中文\n", 1)
    for part in (english, chinese):
        for function_id in ALL:
            assert f"`{function_id}`" in part, function_id
    headings = [len(re.findall(r"^### ", part, re.M)) for part in (english, chinese)]
    assert headings[0] == headings[1] >= 5
    assert english.count("```bash") == chinese.count("```bash") == 1
    prose = re.sub(r"\([^)]*\)", "", re.sub(r"`[^`\n]*`", "", english))
    assert not re.search(r"[\u4e00-\u9fff]{6,}", prose), (
        "the English part reads in English (Chinese names of tables and fields aside)")


def test_agent_tools_excludes_only_the_diagnostic_query() -> None:
    policy = json.loads((EXAMPLE / "agent-tools.json").read_text(encoding="utf-8"))
    assert policy == {"exclude": ["debugSubmissionIntegrity"]}
    assert "debugSubmissionIntegrity" in DATABASE_FUNCTIONS


# ---------------------------------------------------------------- declarations


def test_mutations_name_only_existing_tables_fields_and_params() -> None:
    for function_id, doc in MUTATIONS.items():
        spec = doc["spec"]
        table = SCHEMA.table(spec["table"])
        assert table is not None, function_id
        declared = {p["name"] for p in spec["params"]}
        for section in ("set", "clear", "precondition"):
            for field_name, value in spec.get(section, {}).items():
                assert table.field(field_name) is not None, (function_id, field_name)
                if isinstance(value, str) and value.startswith("$"):
                    assert value[1:] in declared, (function_id, value)
        if "recordId" in spec:
            assert spec["recordId"][1:] in declared


def test_mutation_enums_are_options_of_the_fields_they_write() -> None:
    checked = 0
    for doc in MUTATIONS.values():
        spec = doc["spec"]
        targets = {v[1:]: f for f, v in spec.get("set", {}).items()
                   if isinstance(v, str) and v.startswith("$")}
        for param in spec["params"]:
            if "enum" in param:
                options = field_options(spec["table"], targets[param["name"]])
                assert set(param["enum"]) <= set(options), param["name"]
                checked += 1
    assert checked >= 2


def _sql_tree(function_id: str) -> Any:
    import sqlglot

    sql = (EXAMPLE / "database-functions" / function_id / "main.sql").read_text(encoding="utf-8")
    [tree] = sqlglot.parse(sql, read="postgres")
    return tree


@pytest.mark.parametrize("function_id", sorted(DATABASE_FUNCTIONS))
def test_sql_names_only_existing_tables_and_fields(function_id: str) -> None:
    from sqlglot import exp

    tree = _sql_tree(function_id)
    aliases: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        assert SCHEMA.table(table.name) is not None, table.name
        aliases[table.alias_or_name] = table.name
    assert aliases, "a Database Function must read at least one table"
    output_names = {e.alias for e in tree.expressions if e.alias}
    for column in tree.find_all(exp.Column):
        if not column.table:
            assert column.name in output_names, f"unqualified column {column.name!r}"
            continue
        table = SCHEMA.table(aliases[column.table])
        assert table is not None
        assert column.name == "record_id" or table.field(column.name) is not None, (
            f"{table.name}.{column.name}")


@pytest.mark.parametrize("function_id", sorted(DATABASE_FUNCTIONS))
def test_sql_uses_every_declared_param_and_no_other(function_id: str) -> None:
    from sqlglot import exp

    declared = len(params_of(DATABASE_FUNCTIONS[function_id]))
    used = {int(p.name) for p in _sql_tree(function_id).find_all(exp.Parameter)}
    assert used == set(range(1, declared + 1))


def test_sql_enums_are_options_of_the_compared_field() -> None:
    from sqlglot import exp

    checked = 0
    for function_id, doc in DATABASE_FUNCTIONS.items():
        tree = _sql_tree(function_id)
        aliases = {t.alias_or_name: t.name for t in tree.find_all(exp.Table)}
        for eq in tree.find_all(exp.EQ):
            column, other = eq.left, eq.right
            if not (isinstance(column, exp.Column) and isinstance(other, exp.Parameter)):
                continue
            param = params_of(doc)[int(other.name) - 1]
            if "enum" in param:
                options = field_options(aliases[column.table], column.name)
                assert set(param["enum"]) <= set(options), (function_id, param["name"])
                checked += 1
    assert checked >= 1


def test_descriptions_say_enough_and_reference_params_name_their_source() -> None:
    for function_id, doc in ALL.items():
        assert len(doc["description"].strip()) >= 8, function_id
        if function_id in DATABASE_FUNCTIONS or function_id in MUTATIONS:
            for param in params_of(doc):
                text = param["description"].strip()
                assert len(text) >= 8, (function_id, param["name"])
                if param["kind"] == "RECORD_ID" or param["name"].endswith(("Id", "Ids")):
                    named = {f for f in SUPPLIERS - {function_id}
                             if re.search(rf"\b{f}\b", text)}
                    assert named, f"{function_id}.{param['name']} names no supplier"


def test_faas_schema_gives_every_property_a_description_and_oneof_branches() -> None:
    schema = FAAS["managePeriod"]["inputSchema"]
    assert schema["type"] == "object"
    assert all(p.get("description") for p in schema["properties"].values())
    branches = {tuple(b["properties"]["action"]["enum"]): b["required"] for b in schema["oneOf"]}
    assert branches == {("create",): ["title", "start", "end"], ("close",): ["periodId"]}


# ---------------------------------------------------------------------- page


def test_page_calls_only_declared_functions_of_the_right_kind() -> None:
    app = (EXAMPLE / "src" / "app.js").read_text(encoding="utf-8")
    # Upstream's module name (served pages resolve it through their import map), and
    # upstream's entry.
    assert re.search(r'from "@lark-base-open/base-database-app-sdk/page"', app)
    assert re.search(r"^startBaseApp\(", app, re.M)
    calls = {
        "query": DATABASE_FUNCTIONS,
        "invokeDatabaseFunction": DATABASE_FUNCTIONS,
        "invokeMutation": MUTATIONS,
        "invokeFaaS": FAAS,
    }
    seen: set[str] = set()
    for caller, kind in calls.items():
        for function_id in re.findall(rf'\b{caller}\("([A-Za-z0-9_]+)"', app):
            assert function_id in kind, f"{caller}({function_id!r})"
            seen.add(function_id)
    assert {"listPeriods", "listTeamLeave", "getMySubmission", "submitLeave",
            "managePeriod"} <= seen


def test_page_html_loads_its_script_and_styles() -> None:
    html = (EXAMPLE / "src" / "index.html").read_text(encoding="utf-8")
    assert '<script type="module" src="./app.js">' in html
    assert 'href="./style.css"' in html
    assert '<html lang="zh-CN">' in html
    departments = re.findall(r'<option value="([^"]+)">', html)
    assert departments == list(field_options("成员", "部门"))


# ----------------------------------------------------------------------- FaaS

# A stand-in for the platform's ctx (basedb/platform/domain/runtimes/faas/runner.mjs): the same
# call shapes, cell encodings and error codes, over two small in-memory tables.
HANDLER_DRIVER = """
const { default: handler } = await import(process.argv[1]);
const [inputs, callerId] = JSON.parse(process.argv[2]);
const members = [
  [[{ id: "ou_lead" }], true], [[{ id: "ou_gone" }], false], [null, true],
];
const periods = {
  recOpen1: { "标题": "2027 春节休假报备", "状态": "开放" },
  recShut1: { "标题": "2026 国庆节休假报备", "状态": "已关闭" },
};
const writes = [];
const notFound = (id) => Object.assign(new Error(`Record ${id} is not in table`),
  { code: "record_not_found" });
const ctx = { caller: { userId: callerId, name: "测试" }, records: {
  list: async (table, { offset = 0, limit = 100 } = {}) => {
    if (table !== "成员") throw new Error(`unexpected list of ${table}`);
    const data = members.slice(offset, offset + Math.min(limit, 2));
    return { fields: ["姓名", "用户", "在职"], record_id_list: [],
      data: data.map(([user, active]) => ["某人", user, active]),
      has_more: offset + data.length < members.length, total: members.length };
  },
  get: async (table, id) => {
    if (!(id in periods)) throw notFound(id);
    return { record_id: id, fields: { ...periods[id] } };
  },
  create: async (table, fields) => {
    writes.push({ op: "create", table, fields });
    return { record_id: "recNew1", fields };
  },
  update: async (table, id, fields) => {
    if (!(id in periods)) throw notFound(id);
    writes.push({ op: "update", table, id, fields });
    return { record_id: id, fields: { ...periods[id], ...fields } };
  },
}};
const results = [];
for (const input of inputs) results.push(await handler(input, ctx));
console.log(JSON.stringify({ results, writes }));
"""

MSG_TEMPLATE = re.compile(
    r"^.+\. Parameter: /params/\w+ \(received .{1,66}\)\. Fix: .+\. "
    r"Executed: no\. Retry: retry after fixing\.$")


@pytest.fixture(scope="module")
def run_handler() -> Any:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")

    def run(*inputs: dict[str, Any], caller: str = "ou_lead") -> dict[str, Any]:
        handler = (EXAMPLE / "faas" / "managePeriod" / "index.mjs").as_uri()
        done = subprocess.run(
            [node, "--input-type=module", "-e", HANDLER_DRIVER, handler,
             json.dumps([inputs, caller])],
            capture_output=True, text=True, timeout=30, check=True)
        return json.loads(done.stdout)

    return run


def test_handler_creates_an_open_period(run_handler: Any) -> None:
    out = run_handler({"action": "create", "title": " 2027 春节休假报备 ", "start": "2027-01-25",
                       "end": "2027-02-21", "note": "以公司通知为准"})
    [result] = out["results"]
    assert result["code"] == 0
    assert result["data"] == {"periodId": "recNew1", "title": "2027 春节休假报备",
                              "start": "2027-01-25", "end": "2027-02-21", "days": 28,
                              "status": "开放"}
    assert out["writes"] == [{"op": "create", "table": "报备周期", "fields": {
        "标题": "2027 春节休假报备", "开始日期": "2027-01-25 00:00:00",
        "结束日期": "2027-02-21 00:00:00", "状态": "开放", "说明": "以公司通知为准"}}]
    periods = SCHEMA.table("报备周期")
    assert periods is not None
    assert set(out["writes"][0]["fields"]) <= {f.name for f in periods.fields}


@pytest.mark.parametrize(("start", "end", "parameter", "reason"), [
    ("2027-02-20", "2027-01-10", "/params/end", "结束日期早于开始日期"),
    ("2027-02-30", "2027-03-10", "/params/start", "不是有效的日历日期"),
    ("2027-01-01", "2027-06-30", "/params/end", "超过单期上限 180 天"),
])
def test_handler_rejects_cross_field_violations(run_handler: Any, start: str, end: str,
                                                parameter: str, reason: str) -> None:
    out = run_handler({"action": "create", "title": "x", "start": start, "end": end})
    [result] = out["results"]
    assert result["code"] != 0
    assert reason in result["msg"] and f"Parameter: {parameter} " in result["msg"]
    assert MSG_TEMPLATE.match(result["msg"]), result["msg"]
    assert len(result["msg"]) <= 500
    assert out["writes"] == []


def test_handler_accepts_exactly_180_days(run_handler: Any) -> None:
    out = run_handler({"action": "create", "title": "x", "start": "2027-01-01",
                       "end": "2027-06-29"})
    assert out["results"][0]["code"] == 0 and out["results"][0]["data"]["days"] == 180


def test_handler_closes_a_period_and_reports_an_unknown_one(run_handler: Any) -> None:
    out = run_handler({"action": "close", "periodId": "recOpen1"},
                      {"action": "close", "periodId": "recShut1"},
                      {"action": "close", "periodId": "recGone"})
    closed, again, missing = out["results"]
    assert closed == {"code": 0, "msg": "ok", "data": {
        "periodId": "recOpen1", "title": "2027 春节休假报备", "status": "已关闭",
        "changed": True}}
    assert again["code"] == 0 and again["data"]["changed"] is False
    assert out["writes"] == [{"op": "update", "table": "报备周期", "id": "recOpen1",
                              "fields": {"状态": "已关闭"}}]
    assert missing["code"] != 0 and "listPeriods" in missing["msg"]
    assert MSG_TEMPLATE.match(missing["msg"]), missing["msg"]


@pytest.mark.parametrize("caller", ["ou_gone", "ou_stranger"])
def test_handler_refuses_callers_who_are_not_active_members(run_handler: Any,
                                                            caller: str) -> None:
    out = run_handler({"action": "create", "title": "x", "start": "2027-01-01",
                       "end": "2027-01-02"},
                      {"action": "close", "periodId": "recOpen1"}, caller=caller)
    for result in out["results"]:
        assert result["code"] != 0
        assert "registerMember" in result["msg"]
        assert result["msg"].endswith("Executed: no. Retry: retry after access is granted.")
    assert out["writes"] == []


def test_page_script_is_valid_javascript(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    copy = tmp_path / "app.mjs"
    copy.write_bytes((EXAMPLE / "src" / "app.js").read_bytes())
    subprocess.run([node, "--check", str(copy)], check=True, capture_output=True, timeout=30)

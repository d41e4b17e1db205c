from __future__ import annotations

from pathlib import Path
from typing import Any

from basedb.check.mutations import check_mutations
from basedb.protocol.findings import Finding, Hint
from tests.unit._builders import catalog, check_context, field, table

CATALOG = catalog(
    table("Tasks",
          field("Title", "text"),
          field("Status", "select", options=["Open", "Done", "Blocked"]),
          field("Tags", "select", multiple=True, options=["urgent", "later"]),
          field("Owner", "user"),
          field("Project", "link", linkTable="tblProjects"),
          field("Score", "formula"),
          field("No", "auto_number"),
          field("Remark", "text"),
          field("Creator", "created_by")),
    table("Projects", field("Name", "text"), table_id="tblProjects"),
)

DESC = "Describes the value well enough for agents"


def param(name: str, kind: str = "TEXT", **extra: Any) -> dict[str, Any]:
    return {"name": name, "kind": kind, "description": DESC, **extra}


def mutation(spec: dict[str, Any]) -> dict[str, Any]:
    full = {"table": "Tasks", "action": "create", "params": [], "set": {}, **spec}
    return {"name": "m", "description": "Writes one task for the caller.", "spec": full}


def run(tmp_path: Path, spec: dict[str, Any], *, catalog_doc: Any = CATALOG,
        functions: dict[str, Any] | None = None) -> tuple[list[Finding], list[Hint]]:
    ctx = check_context(tmp_path, catalog=catalog_doc,
                        functions={"mutations/m": mutation(spec), **(functions or {})})
    check_mutations(ctx)
    return ctx.errors, ctx.hints


def codes(items: list[Finding] | list[Hint]) -> list[tuple[str, str]]:
    return sorted((i.code, i.pointer) for i in items)


def test_valid_create_update_delete(tmp_path: Path) -> None:
    errors, hints = run(tmp_path / "c", {
        "params": [param("title"), param("status", enum=["Open", "Done"])],
        "set": {"Title": "$title", "Status": "$status", "Owner": "@current_user",
                "Tags": ["urgent"]},
    })
    assert errors == [] and hints == []
    errors, hints = run(tmp_path / "u", {
        "action": "update",
        "params": [param("recordId", "RECORD_ID", list=True,
                         description="Task record ids from listTasks rows[].record_id"),
                   param("clearRemark", "BOOL")],
        "recordId": "$recordId",
        "set": {"Status": "Done"},
        "precondition": {"Status": "Open", "Creator": "@current_user"},
        "clear": {"Remark": "$clearRemark"},
    }, functions={"database-functions/listTasks": {
        "name": "listTasks", "description": "Lists tasks with their record ids.",
        "meta": {"params": []}}})
    assert errors == [] and hints == []
    errors, _ = run(tmp_path / "d", {"action": "delete", "recordId": "$id",
                                     "params": [param("id", "TEXT")]})
    assert errors == []


def test_unknown_table_suggests_close_names(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"table": "Task", "set": {"Whatever": "x"}})
    assert codes(errors) == [("MUTATION_TABLE_UNKNOWN", "/spec/table")]
    assert "'Tasks'" in errors[0].message and errors[0].fix


def test_unknown_fields_in_set_precondition_clear(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$id",
        "params": [param("id", "RECORD_ID"), param("c", "BOOL")],
        "set": {"Titel": "x"}, "precondition": {"state": "Open"}, "clear": {"Remarks": "$c"},
    })
    assert codes(errors) == [("MUTATION_FIELD_UNKNOWN", "/spec/clear/Remarks"),
                             ("MUTATION_FIELD_UNKNOWN", "/spec/precondition/state"),
                             ("MUTATION_FIELD_UNKNOWN", "/spec/set/Titel")]
    by_pointer = {e.pointer: e for e in errors}
    assert "'Title'" in by_pointer["/spec/set/Titel"].message
    assert "'Remark'" in by_pointer["/spec/clear/Remarks"].message


def test_read_only_fields(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$id",
        "params": [param("id", "RECORD_ID"), param("c", "BOOL")],
        "set": {"Score": 3, "No": 1, "record_id": "rec1", "Creator": "@current_user"},
        "clear": {"Score": "$c"},
        "precondition": {"Score": 3, "record_id": "rec1"},  # reading them is fine
    })
    assert codes(errors) == [("MUTATION_FIELD_READONLY", "/spec/clear/Score"),
                             ("MUTATION_FIELD_READONLY", "/spec/set/Creator"),
                             ("MUTATION_FIELD_READONLY", "/spec/set/No"),
                             ("MUTATION_FIELD_READONLY", "/spec/set/Score"),
                             ("MUTATION_FIELD_READONLY", "/spec/set/record_id")]
    by_pointer = {e.pointer: e for e in errors}
    assert "formula" in by_pointer["/spec/set/Score"].message
    assert "recordId" in (by_pointer["/spec/set/record_id"].fix or "")


def test_literal_values_outside_options(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$id", "params": [param("id", "RECORD_ID")],
        "set": {"Status": "open", "Tags": ["urgent", "soon"], "Title": "anything"},
        "precondition": {"Status": 3},
    })
    assert codes(errors) == [("ENUM_OUT_OF_DOMAIN", "/spec/precondition/Status"),
                             ("ENUM_OUT_OF_DOMAIN", "/spec/set/Status"),
                             ("ENUM_OUT_OF_DOMAIN", "/spec/set/Tags/1")]
    by_pointer = {e.pointer: e for e in errors}
    status = by_pointer["/spec/set/Status"]
    assert "Literal value 'open' is not an option of field Tasks.Status" in status.message
    assert "'Open'" in (status.fix or "")


def test_undeclared_param_references(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$recordID",
        "params": [param("recordId", "RECORD_ID"), param("title")],
        "set": {"Title": "$titel", "Remark": "$5 off"},  # "$5 off" is a literal
        "precondition": {"Status": "$expected"},
        "clear": {"Remark": "$clearIt"},
    })
    assert codes(errors) == [("MUTATION_PARAM_UNDECLARED", "/spec/clear/Remark"),
                             ("MUTATION_PARAM_UNDECLARED", "/spec/precondition/Status"),
                             ("MUTATION_PARAM_UNDECLARED", "/spec/recordId"),
                             ("MUTATION_PARAM_UNDECLARED", "/spec/set/Title")]
    by_pointer = {e.pointer: e for e in errors}
    assert "Did you mean 'title'?" in by_pointer["/spec/set/Title"].message
    assert "Did you mean 'recordId'?" in by_pointer["/spec/recordId"].message


def test_current_user_only_on_user_fields(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"set": {"Title": "@current_user", "Owner": "@current_user"},
                               "precondition": {"Status": "@current_user"}})
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/precondition/Status"),
                             ("DECLARATION_INVALID", "/spec/set/Title")]
    assert "only fits user fields" in errors[0].message and errors[0].fix


def test_clear_needs_a_bool_param_reference(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$id",
        "params": [param("id", "RECORD_ID"), param("remark"), param("flags", "BOOL", list=True)],
        "clear": {"Remark": True, "Title": "$remark", "Status": "$flags"},
    })
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/clear/Remark"),
                             ("DECLARATION_INVALID", "/spec/clear/Status"),
                             ("DECLARATION_INVALID", "/spec/clear/Title")]
    assert all("BOOL" in e.message and e.fix for e in errors)


def test_record_id_param_kind(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"action": "update", "recordId": "$id",
                               "params": [param("id", "INT")], "set": {"Title": "x"}})
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/recordId")]
    assert "RECORD_ID" in errors[0].message
    errors, _ = run(tmp_path / "bad-ref", {"action": "delete", "recordId": "$1",
                                           "params": []})
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/recordId")]


def test_batch_record_ids(tmp_path: Path) -> None:
    for i, p in enumerate([param("ids", "RECORD_ID", list=True), param("ids", "TEXT[]")]):
        errors, _ = run(tmp_path / str(i), {"action": "delete", "recordId": "$ids",
                                            "params": [p]})
        assert errors == []


def test_enum_param_bound_to_select_field_is_checked(tmp_path: Path) -> None:
    errors, hints = run(tmp_path, {
        "params": [param("status", enum=["Open", "Closed"]), param("tags", "TEXT[]")],
        "set": {"Status": "$status", "Tags": "$tags"},
    })
    assert codes(errors) == [("ENUM_OUT_OF_DOMAIN", "/spec/params/0/enum/1")]
    assert codes(hints) == [("option_field_unconstrained", "/spec/params/1")]
    assert hints[0].to_dict()["options"] == ["urgent", "later"]


def test_precondition_params_are_bound_too(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "action": "update", "recordId": "$id",
        "params": [param("id", "RECORD_ID", description="Task id from listTasks"),
                   param("expected", enum=["Open", "Gone"])],
        "precondition": {"Status": "$expected"}, "set": {"Title": "x"},
    }, functions={"database-functions/listTasks": {
        "name": "listTasks", "description": "Lists tasks with their record ids.",
        "meta": {"params": []}}})
    assert codes(errors) == [("ENUM_OUT_OF_DOMAIN", "/spec/params/1/enum/1")]


def test_reference_value_hint_for_record_id_and_link(tmp_path: Path) -> None:
    _, hints = run(tmp_path, {
        "action": "update", "recordId": "$id",
        "params": [param("id", "RECORD_ID"), param("project")],
        "set": {"Project": "$project"},
    })
    assert codes(hints) == [("reference_value_hint", "/spec/params/0/description"),
                            ("reference_value_hint", "/spec/params/1/description")]


def test_unused_params(tmp_path: Path) -> None:
    _, hints = run(tmp_path, {"params": [param("title"), param("spare")],
                              "set": {"Title": "$title"}})
    assert codes(hints) == [("param_unused", "/spec/params/1")]
    assert hints[0].param == "spare"


def test_without_catalog_only_reference_rules_apply(tmp_path: Path) -> None:
    errors, hints = run(tmp_path, {
        "table": "Nowhere", "params": [param("title"), param("spare")],
        "set": {"Ghost": "$title", "Other": "$missing", "Status": "nope"},
    }, catalog_doc={"tables": "not a list"})
    assert codes(errors) == [("MUTATION_PARAM_UNDECLARED", "/spec/set/Other")]
    assert codes(hints) == [("param_unused", "/spec/params/1")]


def test_broken_spec_is_left_to_the_loader(tmp_path: Path) -> None:
    ctx = check_context(tmp_path, catalog=CATALOG, functions={"mutations/m": {
        "name": "m", "description": "Broken mutation spec.", "spec": {"table": "Tasks"}}})
    check_mutations(ctx)
    assert ctx.errors == [] and ctx.hints == []
    assert any(f.code == "DECLARATION_INVALID" for f in ctx.workspace.load_findings)


def test_a_missing_record_id_is_named_in_plain_english(tmp_path: Path) -> None:
    for action, article in (("update", "An"), ("delete", "A")):
        spec = mutation({"action": action, "params": [param("id", "RECORD_ID")]})["spec"]
        ctx = check_context(tmp_path / action, catalog=CATALOG, functions={"mutations/m": {
            "name": "m", "description": "Writes one task for the caller.", "spec": spec}})
        messages = [f.message for f in ctx.workspace.load_findings
                    if f.pointer == "/spec/recordId"]
        assert messages == [f"{article} {action} mutation needs /spec/recordId set to a "
                            "\"$param\" reference."]


def test_a_param_of_a_kind_the_field_cannot_hold_is_refused(tmp_path: Path) -> None:
    # These pass deploy and then fail on every call, blaming the caller's value.
    errors, _ = run(tmp_path, {
        "params": [param("title", "NUMBER"), param("remark", "BOOL"),
                   param("owner", "INT"), param("tags", "TEXT", list=True),
                   param("status", "TEXT[]")],
        "set": {"Title": "$title", "Remark": "$remark", "Owner": "$owner",
                "Status": "$status", "Tags": "$tags"}})
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/set/Owner"),
                             ("DECLARATION_INVALID", "/spec/set/Remark"),
                             ("DECLARATION_INVALID", "/spec/set/Status"),
                             ("DECLARATION_INVALID", "/spec/set/Title")]
    by_pointer = {e.pointer: e for e in errors}
    assert by_pointer["/spec/set/Title"].message == (
        "/spec/set/Title writes $title into Tasks.Title, but a NUMBER value cannot be stored "
        "in a text field: every call would fail.")
    assert "list of TEXT value cannot be stored in a select field" in (
        by_pointer["/spec/set/Status"].message)
    assert "a kind that fits this field (USER_ID)" in (by_pointer["/spec/set/Owner"].fix or "")
    assert "(TEXT, one option name)" in (by_pointer["/spec/set/Status"].fix or "")


def test_params_that_can_fit_are_left_to_the_platform(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {
        "params": [param("title"), param("status"), param("tags", "TEXT[]"),
                   param("owner", "USER_ID"), param("project", "RECORD_ID", list=True)],
        "set": {"Title": "$title", "Status": "$status", "Tags": "$tags",
                "Owner": "$owner", "Project": "$project"}})
    assert errors == []


def test_a_literal_of_the_wrong_json_type_is_refused(tmp_path: Path) -> None:
    errors, _ = run(tmp_path, {"set": {"Title": 5, "Remark": None,
                                       "Project": "rec123", "Owner": [{"id": "ou_1"}]}})
    assert codes(errors) == [("DECLARATION_INVALID", "/spec/set/Project"),
                             ("DECLARATION_INVALID", "/spec/set/Title")]
    by_pointer = {e.pointer: e for e in errors}
    assert by_pointer["/spec/set/Title"].message == (
        "/spec/set/Title is a number, but Tasks.Title is a text field that stores a string: "
        "every call would fail.")
    assert '[{"id": "…"}]' in by_pointer["/spec/set/Project"].message

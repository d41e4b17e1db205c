"""The schema file of `basedb init --schema FILE`: the tables (and sample records) of a
new Base, in JSON or YAML (docs/schema-file.md).

It is the template's `_template.json` format with the title optional::

    tables:
      - name: 项目
        fields:
          - {name: 名称, type: text}
          - {name: 状态, type: select, options: [进行中, 已完成]}
      - name: 任务
        fields:
          - {name: 标题, type: text, description: 一句话说明要做的事}
          - {name: 项目, type: link, linkTable: 项目}
          - {name: 负责人, type: user, multiple: true}
    records:            # optional sample records, as in _template.json
      项目: [{_key: p1, 名称: 官网改版, 状态: 进行中}]
      任务: [{标题: 首页设计, 项目: [p1], 负责人: ["@current_user"]}]

Files ending in .yaml or .yml are read as YAML, every other file as JSON. Errors name the
file and the JSON Pointer of the wrong value (code SCHEMA_INVALID).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from basedb.core.errors import InputError
from basedb.workspace import files
from basedb.workspace.declarations import json_type
from basedb.workspace.template_schema import TemplateSchema, parse_template_schema

YAML_SUFFIXES = (".yaml", ".yml")
UNTITLED = "未命名站点"
"""The title of a schema file that names none (init's --name normally gives one)."""


class _SchemaLoader(yaml.SafeLoader):
    """YAML's safe loader, reading dates as the strings they are written as (a datetime
    cell is "YYYY-MM-DD HH:mm:ss" text, as in JSON)."""


_SchemaLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def load_schema_file(path: Path) -> tuple[TemplateSchema, bool]:
    """The schema of `path`, and whether the file names a title of its own."""
    label = str(path)
    doc = _read(path, label)
    if not isinstance(doc, dict):
        raise InputError(f"{label}: the document must be an object with \"tables\", not "
                         f"{json_type(doc)}.", code="SCHEMA_INVALID",
                         hint="Write {\"tables\": [{\"name\": …, \"fields\": [...]}]} "
                              "(docs/schema-file.md).")
    titled = "title" in doc
    try:
        schema = parse_template_schema(doc if titled else {**doc, "title": UNTITLED},
                                       label=label)
    except InputError as error:
        raise InputError(error.message, code="SCHEMA_INVALID",
                         hint=f"{error.hint} The format is in docs/schema-file.md.") from None
    return schema, titled


def _read(path: Path, label: str) -> Any:
    if path.suffix.lower() not in YAML_SUFFIXES:
        try:
            return files.read_json(path, label=label, limit=files.LIMIT_CATALOG)
        except files.FileProblem as problem:
            raise InputError(problem.message, code="SCHEMA_INVALID", hint=problem.fix) from None
    try:
        text = files.read_text(path, label=label, limit=files.LIMIT_CATALOG)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="SCHEMA_INVALID", hint=problem.fix) from None
    try:
        return yaml.load(text, Loader=_SchemaLoader)  # a SafeLoader: builds plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or "malformed YAML"
        raise InputError(f"{label} is not valid YAML{where}: {reason}.",
                         code="SCHEMA_INVALID",
                         hint="Fix the YAML there (or write the schema as JSON).") from None

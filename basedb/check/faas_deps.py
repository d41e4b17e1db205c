"""Third-party npm dependencies of a FaaS handler, judged by upstream's dependency policy.

A handler declares its npm dependencies in a `package.json` beside `index.mjs`
(`faas/<id>/package.json`, its `dependencies`). Upstream's rule: an ordinary registry
version (a version, range or dist-tag, also behind an `npm:` alias) is allowed by
default; a restricted source (git, GitHub shorthand, a URL, a file or link path, a
workspace protocol) is allowed only when one regular expression of the policy's
`allowedValues` matches the whole value. Anything else is FAAS_DEPENDENCY_NOT_ALLOWED.

Upstream resolves allowed dependencies at deploy into the handler's bundle. basedb's
platform runs `index.mjs` as the only file of a handler and does not bundle yet, so a
dependency the policy allows is still FAAS_DEPENDENCY_NOT_BUNDLED, whose Fix is the
working path today: bundle the handler into one `index.mjs` and keep the package under
`devDependencies` (which are not deployed). docs/upstream.md says what is missing.

`allowedValues` is the target site's policy on upstream's server; basedb's platform has
no per-site policy, so it is read from $BASEDB_POLICY_ENV (a JSON array of
regular expressions) where check runs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from basedb.check.context import CheckContext
from basedb.core import environment
from basedb.protocol.findings import Finding, pointer
from basedb.workspace.model import FaaS

PACKAGE_FILE = "package.json"
POLICY_ENV = environment.FAAS_ALLOWED_DEPENDENCIES

MAX_PACKAGE_BYTES = 1024 * 1024
# npm package names: optional @scope/, lower-case URL-safe characters.
_NAME_RE = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*\Z")
# A registry version: a version, a range (operators, x-ranges, hyphen and || ranges) or
# a dist-tag; no protocol, no path, no slash.
_RANGE_RE = re.compile(r"^[\w.^~<>=|*+ -]*\Z")
_ALIAS_RE = re.compile(r"^npm:((?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)(?:@(.*))?\Z")
_BUNDLE_FIX = (
    "basedb runs index.mjs as the handler's only file and does not bundle dependencies yet: "
    "bundle the handler into one file (e.g. `npx esbuild handler.mjs --bundle "
    "--format=esm --platform=node --outfile=index.mjs`) and move the package to "
    "devDependencies, which are not deployed")


def _patterns(count: int) -> str:
    return "pattern" if count == 1 else "patterns"


def is_registry_version(spec: str) -> bool:
    """Whether `spec` names a version on the registry (upstream: allowed by default)."""
    alias = _ALIAS_RE.match(spec)
    if alias is not None:
        return is_registry_version(alias.group(2) or "")
    return ":" not in spec and "/" not in spec and _RANGE_RE.match(spec) is not None


def allowed_values() -> tuple[list[re.Pattern[str]], str | None]:
    """The policy's compiled `allowedValues`, and the problem with the setting if any."""
    raw = os.environ.get(environment.FAAS_ALLOWED_DEPENDENCIES, "").strip()
    if not raw:
        return [], None
    try:
        values = json.loads(raw)
    except ValueError:
        values = None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        return [], f"${POLICY_ENV} must be a JSON array of regular expressions"
    patterns: list[re.Pattern[str]] = []
    for value in values:
        try:
            patterns.append(re.compile(value))
        except re.error as error:
            return [], (f"${POLICY_ENV} has {value!r}, which is not a "
                        f"regular expression ({error})")
    return patterns, None


def check_faas_dependencies(ctx: CheckContext) -> None:
    """Add findings for the package.json of every FaaS that has one."""
    root = ctx.workspace.root
    patterns, problem = allowed_values()
    for function_id in sorted(ctx.workspace.declarations):
        decl = ctx.workspace.declarations[function_id]
        if not isinstance(decl, FaaS):
            continue
        rel = f"{Path(decl.file).parent.as_posix()}/{PACKAGE_FILE}"
        path = root / rel
        if path.is_file():
            ctx.extend(_check_package(path, rel, function_id, patterns, problem))


def _check_package(path: Path, rel: str, function_id: str, patterns: list[re.Pattern[str]],
                   problem: str | None) -> Iterator[Finding]:
    def invalid(message: str, at: str = "") -> Finding:
        return Finding("FAAS_PACKAGE_INVALID", message, rel, at, function_id,
                       fix='Write {"dependencies": {"name": "version range"}} as JSON, e.g. '
                           '{"dependencies": {"dayjs": "^1.11.10"}}.')

    try:
        if path.stat().st_size > MAX_PACKAGE_BYTES:
            yield invalid(f"{PACKAGE_FILE} is larger than 1 MiB.")
            return
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        yield invalid(f"{PACKAGE_FILE} cannot be read as JSON: {error}.")
        return
    if not isinstance(doc, Mapping):
        yield invalid(f"{PACKAGE_FILE} must be a JSON object.")
        return
    dependencies = doc.get("dependencies")
    if dependencies is None:
        return
    if not isinstance(dependencies, Mapping):
        yield invalid("dependencies must be an object of package names and versions.",
                      pointer("dependencies"))
        return
    for name, spec in dependencies.items():
        at = pointer("dependencies", name)
        if not isinstance(name, str) or not _NAME_RE.match(name):
            yield invalid(f"{json.dumps(name, ensure_ascii=False)} is not an npm package "
                          "name.", at)
        elif not isinstance(spec, str):
            yield invalid(f"The version of {name} must be a string.", at)
        elif not is_registry_version(spec) and not any(p.fullmatch(spec) for p in patterns):
            policy = (f" ({problem})" if problem else
                      f" (none of the {len(patterns)} {_patterns(len(patterns))} in "
                      f"${POLICY_ENV} matches all of it)" if patterns else "")
            yield Finding(
                "FAAS_DEPENDENCY_NOT_ALLOWED",
                f"{name} comes from {json.dumps(spec, ensure_ascii=False)}, a restricted "
                f"source that the dependency policy does not allow{policy}.", rel, at,
                function_id,
                fix="Use a registry version such as \"^1.2.3\", or have the site's policy "
                    f"allow the source: a regular expression in "
                    f"${POLICY_ENV} that matches the whole value.")
        else:
            yield Finding(
                "FAAS_DEPENDENCY_NOT_BUNDLED",
                f"{name}@{spec} is allowed by the dependency policy, but the platform would "
                "not find it when the handler runs.", rel, at, function_id,
                fix=_BUNDLE_FIX + ".")

"""`basedb deploy` (preview) on the embedded platform at 200, 1,000 and 5,000 functions,
then a redeploy with nothing changed, against the floor `basedb deploy --dry-run`: the
same CLI checking the workspace and building site.zip, with nothing sent.

The workspaces are bench/deploy_artifact.py's (20 tables of plain field types, 60% SQL,
25% Mutations, 15% FaaS and a Page), bound to tables created on the platform with those
names and types. Each measured first deploy goes to a site of its own, so it is a first
deploy every time; the redeploy then sends the same files to that site again (a new
preview: deploy never skips). All three run as fresh processes, one after the other in
each round, so a burst of load hits all of them alike.

Figures: each size's first deploy against its dry run; the no-change redeploy against
the first deploy (≤ 0.15×: unchanged functions are neither re-sent nor re-planned); and
linearity — the marginal time per function from the middle size to the largest against
that from the smallest to the middle (≤ 1.25×; quadratic work shows as a growing ratio).
A size the platform refuses (too many functions) is reported, not timed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.deploy_artifact import measure_fingerprint_and_zip, write_generated_workspace
from bench.registry import BenchContext, BenchError, BenchResult, Figure, Target, register
from bench.timing import Samples, run_process

SIZES = (200, 1_000, 5_000)
QUICK_SIZES = (100, 200, 400)
REDEPLOY_TARGET = Target(0.15, "ratio")
LINEAR_TARGET = Target(1.25, "ratio")
CONFIG_FILE = "base-database.jsonc"
_APP_TOKEN_RE = re.compile(r'"appToken":\s*"[^"]*"')


@dataclass(slots=True)
class Size:
    functions: int
    first: Samples
    again: Samples
    floor: Samples
    outcome: dict[str, Any] | None = None
    refused: str | None = None


@register("deploy", "basedb deploy (preview) at 200, 1,000 and 5,000 functions and a "
                    "no-change redeploy vs. deploy --dry-run (check + site.zip), fresh "
                    "processes")
def deploy_benchmark(ctx: BenchContext) -> BenchResult:
    sizes = [deploy_size(ctx, count, runs=_runs(ctx, count))
             for count in (QUICK_SIZES if ctx.settings.quick else SIZES)]
    measured = [size for size in sizes if size.refused is None]
    if not measured:
        raise BenchError(f"the platform refused every size: {sizes[0].refused}")
    figures: list[Figure] = []
    for size in measured:
        figures.append(Figure(f"preview-{size.functions}", size.first, size.floor))
        figures.append(Figure(f"redeploy-{size.functions}", size.again, size.first,
                              REDEPLOY_TARGET))
    if len(measured) == 3:
        figures.append(linearity(*measured))
    smallest = measured[0]
    assert smallest.outcome is not None
    artifact = measure_fingerprint_and_zip(smallest.functions,
                                           root=ctx.scratch / "deploy-artifact")
    details = {"sizes": [{"functions": size.functions, "refused": size.refused,
                          "round": size.outcome} for size in sizes],
               "tables": 20, "artifactInProcess": artifact}
    notes = [f"deploy: {smallest.functions} functions, {smallest.outcome['files']} files, "
             f"site.zip {smallest.outcome['bytes']:,} bytes; collect + fingerprint + zip "
             f"alone take {artifact['totalSeconds'] * 1000:.1f} ms in-process. Each first "
             "deploy goes to a new site; the redeploy sends the same files to it again."]
    notes += [f"  {size.functions:,} functions: not measured, the platform refused the "
              f"deploy: {size.refused}" for size in sizes if size.refused]
    return BenchResult("deploy", figures, details=details, notes=notes)


def _runs(ctx: BenchContext, count: int) -> int:
    return ctx.settings.runs if count <= 1_000 else max(2, ctx.settings.runs // 3)


def deploy_size(ctx: BenchContext, count: int, *, runs: int) -> Size:
    """`runs` rounds (after one warm-up round) of deploy, redeploy and dry run."""
    root = write_generated_workspace(ctx.scratch / f"deploy-workspace-{count}", count)
    sites = provision(ctx, root, count=runs + 1)
    deploy = [*ctx.basedb, "deploy", "--json", "-C", str(root)]
    dry_run = [*ctx.basedb, "deploy", "--dry-run", "--json", "-C", str(root)]
    size = Size(count, Samples(f"basedb deploy, {count:,} functions (new site)", deploy),
                Samples(f"basedb deploy, {count:,} functions, nothing changed", deploy),
                Samples(f"floor: deploy --dry-run, {count:,} functions", dry_run))
    ctx.log(f"deploy: {count:,} functions, {runs} rounds of deploy, redeploy and dry run …")
    for round_number, app_token in enumerate(sites):
        point_workspace_at(root, app_token)
        seconds_first, done_first = run_process(deploy, env=ctx.env, ok=frozenset({0, 1}),
                                                capture=True)
        if done_first.returncode != 0:
            size.refused = _refusal(done_first.stdout, done_first.stderr)
            return size
        seconds_again, done_again = run_process(deploy, env=ctx.env, ok=frozenset({0}),
                                                capture=True)
        seconds_floor, done_floor = run_process(dry_run, env=ctx.env, ok=frozenset({0}),
                                                capture=True)
        outcome = _verified(app_token, done_first.stdout, done_again.stdout, done_floor.stdout)
        if round_number == 0:
            continue
        size.first.seconds.append(seconds_first)
        size.again.seconds.append(seconds_again)
        size.floor.seconds.append(seconds_floor)
        size.outcome = size.outcome or outcome
    return size


def _refusal(stdout: str, stderr: str) -> str:
    try:
        error = json.loads(stdout).get("error") or {}
    except (json.JSONDecodeError, AttributeError):
        error = {}
    text = error.get("message") or stderr.strip() or stdout.strip()
    return text.splitlines()[0][:300] if text else "no message"


def linearity(small: Size, middle: Size, large: Size) -> Figure:
    """Marginal seconds per function, middle → large, against small → middle."""
    def marginal(lower: Size, upper: Size) -> list[float]:
        steps = upper.functions - lower.functions
        return [(upper.first.median - lower.first.median) / steps]

    return Figure("linearity",
                  Samples(f"s per function, {middle.functions:,} → {large.functions:,}",
                          seconds=marginal(middle, large)),
                  Samples(f"s per function, {small.functions:,} → {middle.functions:,}",
                          seconds=marginal(small, middle)),
                  LINEAR_TARGET)


def provision(ctx: BenchContext, root: Path, *, count: int) -> list[str]:
    """Create the tables of the workspace's catalog.json on the embedded platform (same
    names, types and options),
    `count` sites bound to them, and write the live catalog and binding into the
    workspace; returns the sites' app tokens."""
    from basedb.client.client import EMBEDDED_BASE_URL, Client
    from basedb.client.transport import InProcessTransport
    from basedb.platform import open_platform

    platform = open_platform(Path(ctx.env["BASEDB_DATA_DIR"]))
    try:
        with Client(base_url=EMBEDDED_BASE_URL, token=platform.owner_token,
                    transport=InProcessTransport(platform.app)) as client:
            base = client.request("POST", "/bases", json={"name": "Bench"})["data"]["base_token"]
            table_ids = [client.request("POST", f"/bases/{base}/tables", json={
                "name": table["name"], "fields": [_field_body(f) for f in table["fields"]]},
                )["data"]["id"] for table in _tables(root)]
            sites = []
            for number in range(count):
                app = client.request("POST", "/sites/create", json={
                    "title": f"Bench {number}"})["data"]["appToken"]
                client.request("POST", f"/sites/{app}/bind_base",
                               json={"baseToken": base, "tableIds": table_ids})
                sites.append(app)
            catalog = client.request("GET", f"/sites/{sites[0]}/catalog")["data"]
    finally:
        platform.close()
    (root / "catalog.json").write_text(json.dumps(catalog, ensure_ascii=False, indent=2) + "\n",
                                       encoding="utf-8")
    config = json.loads((root / CONFIG_FILE).read_text(encoding="utf-8"))
    config["binding"] = {"baseToken": base, "tableIds": table_ids}
    (root / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return sites


def _tables(root: Path) -> list[dict[str, Any]]:
    catalog = json.loads((root / "catalog.json").read_text(encoding="utf-8"))
    tables: list[dict[str, Any]] = catalog["tables"]
    return tables


def _field_body(field: dict[str, Any]) -> dict[str, Any]:
    body = {"name": field["name"], "type": field["type"]}
    for key in ("multiple", "options"):
        if key in field:
            body[key] = field[key]
    return body


def point_workspace_at(root: Path, app_token: str) -> None:
    path = root / CONFIG_FILE
    text, replaced = _APP_TOKEN_RE.subn(f'"appToken": "{app_token}"',
                                        path.read_text(encoding="utf-8"), count=1)
    if replaced != 1:
        raise BenchError(f"{path} has no appToken to point at the benchmark site")
    path.write_text(text, encoding="utf-8")


def _verified(app_token: str, first: str, again: str, dry_run: str) -> dict[str, Any]:
    """Both deploys created a preview of the site, from the files the dry run built."""
    try:
        documents = [json.loads(text) for text in (first, again, dry_run)]
    except json.JSONDecodeError as error:
        raise BenchError(f"basedb deploy --json printed no JSON ({error})") from None
    made_first, made_again, planned = documents
    for made in (made_first, made_again):
        if made.get("appToken") != app_token or not made.get("deploymentId"):
            raise BenchError(f"deploy did not create a preview of {app_token}: "
                             f"{json.dumps(made)[:300]}")
    if made_first["deploymentId"] == made_again["deploymentId"]:
        raise BenchError("the redeploy reported the first deploy's deploymentId")
    if not made_first["fingerprint"] == made_again["fingerprint"] == planned["fingerprint"]:
        raise BenchError("deploy and deploy --dry-run built different fingerprints")
    return {"appToken": app_token, "files": planned["files"], "bytes": planned["bytes"],
            "hints": len(made_first.get("functionHints") or [])}

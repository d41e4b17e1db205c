"""The page SDK under upstream's name: the import map in every HTML page the platform and
`basedb dev` serve, one module behind the three names, its declarations, and the npm
package `basedb sdk pack` writes (installed with npm, imported by Node.js, bundled by
esbuild and type-checked by tsc against generated contracts)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from basedb.cli import cli
from basedb.contracts import generate
from basedb.contracts.sdk_package import build_tarball, tarball_name
from basedb.core import page_sdk
from basedb.platform import LocalPlatform
from basedb.workspace import load_workspace
from tests.platform.conftest import Api
from tests.platform.release_support import SITE_FILES, TaskSite, deploy, functions_body, task_site
from tests.platform.test_pages import page_host, sign_in
from tests.tools import npm_tool
from tests.unit._contracts_fixture import write_representative_workspace

IMPORT_MAP_RE = re.compile(r'<script type="importmap">(.*?)</script>')
EXPORT_RE = re.compile(r"^export (?:async )?(?:function\*?|const|class) (\w+)", re.M)
DECLARED_RE = re.compile(r"^export declare (?:function|const|class) (\w+)", re.M)


def import_map_of(html: str) -> dict[str, str]:
    found = IMPORT_MAP_RE.search(html)
    assert found is not None, html
    imports: dict[str, str] = json.loads(found.group(1))["imports"]
    return imports


# ------------------------------------------------------------------ import map


@pytest.mark.parametrize(("html", "expected_prefix"), [
    (b"<!doctype html><html lang=en><head><meta charset=utf-8><script type=module src=a.js>"
     b"</script></head>", b"<!doctype html><html lang=en><head>"),
    (b"<!DOCTYPE html><HEAD>x", b"<!DOCTYPE html><HEAD>"),
    (b"<!doctype html><html><header>x</header>", b"<!doctype html><html>"),
    (b"<!doctype html><title>t</title><script type=module src=a.js></script>",
     b"<!doctype html>"),
    (b"<p>fragment</p>", b""),
])
def test_the_import_map_precedes_every_script(html: bytes, expected_prefix: bytes) -> None:
    injected = page_sdk.inject_import_map(html)
    assert injected.startswith(expected_prefix + page_sdk.IMPORT_MAP_TAG)
    assert injected.replace(page_sdk.IMPORT_MAP_TAG, b"", 1) == html


def test_both_names_map_to_the_one_module_url() -> None:
    imports = import_map_of(page_sdk.IMPORT_MAP_TAG.decode())
    assert imports == {"@lark-base-open/base-database-app-sdk/page": "/_basedb/runtime.js",
                       "database-runtime": "/_basedb/runtime.js"}


def test_served_pages_carry_the_import_map_and_scripts_do_not(
        platform: LocalPlatform, api: Api) -> None:
    site: TaskSite = task_site(api)
    api.ok("PUT", f"/sites/{site.app_token}/draft/functions", json=functions_body())
    deploy(api, site.app_token)
    with TestClient(platform.app, base_url=f"http://{page_host(site.app_token)}") as tab:
        sign_in(tab, platform.owner_token)
        page = tab.get(f"/sites/{site.app_token}/preview/")
        script = tab.get(f"/sites/{site.app_token}/preview/app.js")
        runtime = tab.get("/_basedb/runtime.js")
        again = tab.get(f"/sites/{site.app_token}/preview/",
                        headers={"If-None-Match": page.headers["etag"]})
    assert page.status_code == 200
    assert import_map_of(page.text)["database-runtime"] == "/_basedb/runtime.js"
    assert page.text.index("importmap") < page.text.index("<script type=module")
    # The ETag names the map too: a page cached before the map changed is sent again.
    assert page_sdk.IMPORT_MAP_DIGEST in page.headers["etag"] and again.status_code == 304
    assert script.content == SITE_FILES["src/app.js"]
    assert runtime.content == page_sdk.runtime_source()


def test_dev_server_pages_carry_the_import_map(tmp_path: Path) -> None:
    from basedb.dev.events import Broadcaster
    from basedb.dev.server import DevServerConfig, build_dev_app

    src = tmp_path / "src"
    src.mkdir()
    (src / "index.html").write_bytes(SITE_FILES["src/index.html"])
    config = DevServerConfig(app_token="PrjDev", page_root=src, invoke=lambda *_: None,  # type: ignore[arg-type,return-value]
                             viewer=dict, events=Broadcaster(), status=dict,
                             session_id="s", hosts={"testserver"})
    with TestClient(build_dev_app(config)) as client:
        page = client.get("/sites/PrjDev/")
        runtime = client.get("/_basedb/runtime.js")
    assert import_map_of(page.text)["@lark-base-open/base-database-app-sdk/page"] \
        == "/_basedb/runtime.js"
    assert page.text.index("importmap") < page.text.index("/_basedb/dev/client.js")
    assert runtime.content == page_sdk.runtime_source()


# ---------------------------------------------------------------- declarations


def test_every_export_is_declared_and_nothing_else() -> None:
    exported = set(EXPORT_RE.findall(page_sdk.runtime_source().decode()))
    declared = set(DECLARED_RE.findall(page_sdk.declarations_source().decode()))
    assert {"startBaseApp", "invokeDatabaseFunction", "callSiteAIFunction",
            "invokeSiteAIFunctionStream", "waitForSiteAIMediaTask", "siteToken"} <= exported
    assert exported == declared


# ---------------------------------------------------------------- npm package


def test_pack_is_byte_identical_and_npm_shaped() -> None:
    data = build_tarball()
    assert data == build_tarball()
    with tarfile.open(fileobj=__import__("io").BytesIO(data)) as tar:
        names = tar.getnames()
        manifest = json.loads(tar.extractfile("package/package.json").read())  # type: ignore[union-attr]
        module = tar.extractfile("package/page.js").read()  # type: ignore[union-attr]
    assert names == sorted(names) and all(n.startswith("package/") for n in names)
    assert manifest["name"] == page_sdk.SDK_PACKAGE
    assert manifest["exports"]["./page"] == {"types": "./page.d.ts", "default": "./page.js"}
    assert module == page_sdk.runtime_source()


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """A page project with the packed SDK installed by npm (from the file: no network)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs Node.js and npm")
    result = CliRunner().invoke(cli, ["sdk", "pack", "--out", str(tmp_path / "vendor"),
                                       "--json"])
    assert result.exit_code == 0, result.output
    packed = json.loads(result.output)
    assert Path(packed["path"]).name == tarball_name()
    project = tmp_path / "page"
    project.mkdir()
    (project / "package.json").write_text('{"name": "page", "private": true}')
    done = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund",
                           packed["path"]], cwd=project, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return project


def test_npm_installs_the_pack_and_node_imports_it_by_upstream_name(installed: Path) -> None:
    script = ("const m = await import('@lark-base-open/base-database-app-sdk/page');"
              "console.log(JSON.stringify(Object.keys(m).sort()));")
    done = subprocess.run(["node", "--input-type=module", "-e", script], cwd=installed,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    exported = set(EXPORT_RE.findall(page_sdk.runtime_source().decode()))
    assert set(json.loads(done.stdout)) == exported


def test_esbuild_bundles_a_page_that_imports_the_upstream_name(installed: Path) -> None:
    esbuild = npm_tool("esbuild")  # pinned in .ci/tools; skipped with a reason when missing
    (installed / "main.js").write_text(
        "import { startBaseApp, invokeDatabaseFunction } from "
        "'@lark-base-open/base-database-app-sdk/page';\n"
        "startBaseApp(() => invokeDatabaseFunction('listTasks', {}));\n")
    done = subprocess.run([str(esbuild), "main.js", "--bundle", "--format=esm",
                           "--outfile=out.js"], cwd=installed, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    bundle = (installed / "out.js").read_text()
    # The module is inside the bundle: nothing is left to resolve at load time.
    assert not re.search(r"^\s*import\b", bundle, re.M) and "X-Basedb-Page" in bundle


USAGE_TS = """\
import {
  invokeDatabaseFunction, invokeMutation, invokeSiteAIFunctionStream, startBaseApp,
  waitForSiteAIMediaTask, createSiteAIMediaTask, BasedbError, siteToken,
} from '@lark-base-open/base-database-app-sdk/page';
import {
  DatabaseFunctionParameterOptions, type DatabaseFunctionInputMap, type MutationInputMap,
} from './generated/function-inputs';

// The reference's example, verbatim.
const intentOptions = DatabaseFunctionParameterOptions.listLeaveByIntent.intentName;
type IntentName = (typeof intentOptions)[number];
export const loadByIntent = (intentName: IntentName) =>
  invokeDatabaseFunction('listLeaveByIntent', { intentName });

type Rows = { rows: Array<{ title: string }> };
startBaseApp(async ({ env }) => {
  const data = await invokeDatabaseFunction<Rows, DatabaseFunctionInputMap['listLeaveByIntent']>(
    'listLeaveByIntent', { intentName: '需要休假' });
  const first: string | undefined = data.rows[0]?.title;
  const written = await invokeMutation<{ recordIds: string[] }, MutationInputMap['createLeave']>(
    'createLeave', { title: 't', intent: '需要休假', owner: 'ou_1' });
  for await (const chunk of invokeSiteAIFunctionStream('summarize', { q: 1 })) {
    if (chunk.type === 'delta') console.log(chunk.delta.length);
    else console.log(chunk.text, chunk.usage);
  }
  const task = await createSiteAIMediaTask('drawCover', { prompt: 'x' });
  const done = await waitForSiteAIMediaTask(task.taskId, { intervalMs: 500 });
  const url: string | undefined = done.result?.media[0]?.url;
  return [env, first, written.recordIds, url, siteToken];
}).catch((error: unknown) => {
  if (error instanceof BasedbError) console.log(error.code, error.msg, error.logId);
});

type ByIntent = DatabaseFunctionInputMap['listLeaveByIntent'];
// @ts-expect-error not one of the declared options
invokeDatabaseFunction<Rows, ByIntent>('listLeaveByIntent', { intentName: '随便' });
// @ts-expect-error params are named, never positional
invokeDatabaseFunction('listLeaveByIntent', 'x');
"""


@pytest.mark.slow
def test_declarations_type_check_with_generated_contracts(installed: Path,
                                                          tmp_path: Path) -> None:
    tsc = npm_tool("tsc")  # pinned in .ci/tools; skipped with a reason when missing
    ws = load_workspace(write_representative_workspace(tmp_path / "ws"))
    (installed / "generated").mkdir()
    (installed / "generated" / "function-inputs.ts").write_bytes(generate(ws).data)
    (installed / "usage.ts").write_text(USAGE_TS, encoding="utf-8")
    done = subprocess.run([str(tsc), "--noEmit", "--strict", "--target", "es2022",
                           "--lib", "es2022,dom", "--module", "esnext",
                           "--moduleResolution", "bundler", "usage.ts"], cwd=installed,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pack_refuses_an_unwritable_out(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = CliRunner().invoke(cli, ["sdk", "pack", "--out", str(blocker / "sub")])
    assert result.exit_code == 2 and "--out" in result.output

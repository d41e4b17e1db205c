"""Every command, in hostile situations: never a traceback, always a documented exit code
(0-4; 5 is reserved for bugs), a message that names what is wrong, and no token printed
except by `basedb auth token`.

The commands are found by walking `basedb.cli.cli` (as the CLI reference does), so a new
command is swept without anyone remembering to add it. Situations: outside any
workspace; a workspace whose base-database.jsonc is malformed, binary or a directory;
an unknown profile and a profile whose endpoint is a closed loopback port, each named
by --profile and by the workspace's `profile`; and garbage option values.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from basedb.cli import cli
from basedb.cli.reference import iter_commands
from basedb.client.profiles import Profile, save_profile
from basedb.platform import open_platform

CASE = Path(__file__).resolve().parents[1] / "cases" / "positive" / "task_site"
DEAD_TOKEN = "bdb_dead_profile_token_0123456789abcdef"
UNKNOWN_PROFILE = "nosuch"
DEAD_PROFILE = "dead"
DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4}


def leaf_commands() -> list[tuple[str, click.Command]]:
    root = click.Context(cli, info_name="basedb", **cli.context_settings)
    return [(path.removeprefix("basedb "), command)
            for path, command, _ in iter_commands(cli, root)
            if not isinstance(command, click.Group)]


COMMANDS = leaf_commands()

# What a command needs on its command line to get past argument parsing.
REQUIRED_ARGS: dict[str, list[str]] = {
    "api": ["GET", "/users/me"],
    "lark-cli": ["--", "api", "GET", "/users/me"],
    "deployments rollback": ["--yes", "dpl_missing"],
    "init": ["new-site"],
    "base create": ["Scratch"],
    "table create": ["任务"],
    "table delete": ["任务", "--yes"],
    "field list": ["任务"],
    "field create": ["任务", "标题", "--type", "text"],
    "field update": ["任务", "标题", "--name", "题目"],
    "field delete": ["任务", "标题", "--yes"],
    "bind": ["任务"],
    "unbind": ["Tasks", "--yes"],
    "link": ["--create"],
    "serve": ["--port", "0"],
    "dev": ["--port", "0"],
    "secrets set": ["API_KEY"],
    "secrets unset": ["API_KEY"],
    "sites delete": ["--yes", "PrjMissing"],
    "ai-functions get": ["summarizeLeave"],
    "ai-functions invoke": ["summarizeLeave"],
}
# Runs the whole journey wherever it is started; once (outside a workspace) is enough.
SLOW = {"demo"}


def options_of(command: click.Command) -> set[str]:
    return {name for param in command.params for name in getattr(param, "opts", [])}


def free_loopback_port() -> int:
    """A port nothing listens on (bound for a moment, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@dataclass
class Sweep:
    """The isolated world of one test: homes, a dead profile, the platform's token."""

    root: Path
    owner_token: str
    dead_endpoint: str

    def run(self, args: list[str], cwd: Path) -> Result:
        previous = Path.cwd()
        os.chdir(cwd)
        try:
            return CliRunner().invoke(cli, args, prog_name="basedb", input="")
        finally:
            os.chdir(previous)


@pytest.fixture
def sweep(tmp_path: Path, isolated_dirs: dict[str, Path],
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Sweep]:
    for name in ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    # The long-running commands parse, validate and set up for real; only the blocking
    # loop is left out (serving is covered by test_serve, test_mcp and test_dev_cli).
    import uvicorn

    import basedb.agent_tools.mcp_server as mcp_server
    from basedb.dev.run import DevRunner
    from basedb.platform.web import serving

    async def no_dev_loop(self: DevRunner) -> None:
        return None

    monkeypatch.setattr(serving, "run", lambda server, sock: None)
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr(DevRunner, "serve", no_dev_loop)
    monkeypatch.setattr(mcp_server, "run_stdio", lambda tools: None)
    dead_endpoint = f"http://127.0.0.1:{free_loopback_port()}"
    save_profile(Profile(DEAD_PROFILE, dead_endpoint, DEAD_TOKEN))
    platform = open_platform(isolated_dirs["data"])
    yield Sweep(tmp_path, platform.owner_token, dead_endpoint)
    platform.close()


# ------------------------------------------------------------------------ situations


def _empty(root: Path) -> Path:
    directory = root / "here"
    directory.mkdir()
    return directory


def _config(write: Callable[[Path], object]) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        directory = _empty(root)
        write(directory / "base-database.jsonc")
        return directory

    return make


def _site_with_profile(profile: str | None) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        directory = root / "site"
        shutil.copytree(CASE, directory)
        shutil.rmtree(directory / "expected.json", ignore_errors=True)
        if profile is not None:
            config = directory / "base-database.jsonc"
            text = config.read_text(encoding="utf-8")
            config.write_text(text.replace('"title":', f'"profile": "{profile}",\n  "title":',
                                           1), encoding="utf-8")
        return directory

    return make


@dataclass(frozen=True)
class Situation:
    name: str
    make: Callable[[Path], Path]  # the working directory, under the test's tmp dir
    profile_option: str | None = None  # given as --profile (commands that take it only)
    names: tuple[str, ...] = ()  # a failure's message contains one of these


SITUATIONS = [
    Situation("outside a workspace", _empty, names=("No base-database.jsonc found",)),
    Situation("malformed config", _config(lambda p: p.write_text('{"appToken": ')),
              names=("base-database.jsonc is not valid JSONC: unexpected end of input at "
                     "line 1 column 14",)),
    Situation("binary config", _config(lambda p: p.write_bytes(b"\x00\xff\xfe{")),
              names=("base-database.jsonc is binary",)),
    Situation("config is a directory", _config(lambda p: p.mkdir()),
              names=("base-database.jsonc is a directory",)),
    Situation("unknown --profile", _site_with_profile(None), UNKNOWN_PROFILE,
              names=(f"Unknown profile '{UNKNOWN_PROFILE}'",)),
    Situation("unknown workspace profile", _site_with_profile(UNKNOWN_PROFILE),
              names=(f"Unknown profile '{UNKNOWN_PROFILE}'",)),
    Situation("unreachable --profile", _site_with_profile(None), DEAD_PROFILE,
              names=("Could not reach http://127.0.0.1:",)),
    Situation("unreachable workspace profile", _site_with_profile(DEAD_PROFILE),
              names=("Could not reach http://127.0.0.1:",)),
]

# Failures that are about the command line itself, whatever the situation.
COMMAND_NAMES: dict[str, tuple[str, ...]] = {
    "auth logout": ("The local profile has no stored login",),
    "auth login": ("Say where to sign in",),
    # Needs no workspace: the site named is reported missing instead.
    "sites delete": ("Site PrjMissing was not found",),
}


def cases() -> Iterator[object]:
    for situation in SITUATIONS:
        for name, command in COMMANDS:
            if name in SLOW and situation is not SITUATIONS[0]:
                continue
            if situation.profile_option and "--profile" not in options_of(command):
                continue  # the workspace-profile situations cover it
            yield pytest.param(situation, name, id=f"{situation.name}: basedb {name}")


def assert_clean(sweep: Sweep, args: list[str], result: Result, *,
                 names: tuple[str, ...]) -> None:
    output = result.stdout + result.stderr
    shown = f"basedb {' '.join(args)} -> exit {result.exit_code}\n{output}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{shown}\nraised {result.exception!r}") from result.exception
    assert "Traceback" not in output, shown
    assert "unexpected error" not in output, shown
    assert result.exit_code in DOCUMENTED_EXIT_CODES, shown
    if args[:2] != ["auth", "token"]:
        assert sweep.owner_token not in output, f"the owner token was printed: {shown}"
        assert DEAD_TOKEN not in output, f"a profile's token was printed: {shown}"
    if result.exit_code != 0:
        assert any(name in output for name in names), \
            f"the message does not say what is wrong (expected one of {names}): {shown}"


@pytest.mark.parametrize(("situation", "name"), list(cases()))
@pytest.mark.parametrize("json_mode", [False, True], ids=["text", "json"])
def test_every_command_fails_cleanly(sweep: Sweep, situation: Situation, name: str,
                                     json_mode: bool) -> None:
    command = dict(COMMANDS)[name]
    options = options_of(command)
    if json_mode and "--json" not in options:
        pytest.skip("the command has no --json")
    args = name.split()
    if situation.profile_option:
        args += ["--profile", situation.profile_option]
    if json_mode:
        args.append("--json")
    args += REQUIRED_ARGS.get(name, [])
    result = sweep.run(args, situation.make(sweep.root))
    assert_clean(sweep, args, result, names=situation.names + COMMAND_NAMES.get(name, ()))


def test_every_command_with_required_arguments_is_given_them() -> None:
    for name, command in COMMANDS:
        required = [param.name for param in command.params if param.required]
        if required:
            assert name in REQUIRED_ARGS or name in COMMAND_NAMES, (name, required)


def test_the_sweep_reaches_every_command() -> None:
    swept = {name for _, name in (case.values for case in cases())}  # type: ignore[attr-defined]
    assert swept == {name for name, _ in COMMANDS}
    assert len(swept) >= 20  # the walk found the lazily loaded commands


# --------------------------------------------------------------------- garbage values


@dataclass(frozen=True)
class Garbage:
    args: tuple[str, ...]  # {file}, {dir}, {binary}, {missing} and {dead} are filled in
    exit_code: int
    names: tuple[str, ...]


GARBAGE = [
    # JSON options
    Garbage(("api", "GET", "/users/me", "--params", "{"), 2,
            ("--params is not valid JSON", "line 1 column 2")),
    Garbage(("api", "GET", "/users/me", "--params", '{"a": NaN}'), 2,
            ("NaN is not a JSON value",)),
    Garbage(("api", "POST", "/x", "--data", "@{missing}"), 2, ("does not exist",)),
    Garbage(("api", "POST", "/x", "--data", "@{dir}"), 2, ("is a directory",)),
    Garbage(("api", "POST", "/x", "--data", "@{binary}"), 2, ("is binary",)),
    Garbage(("api", "POST", "/x", "--data", "-"), 2, ("read nothing from stdin",)),
    # request paths that are not paths
    Garbage(("api", "GET", "http://[::1"), 2, ("is not a valid URL path",)),
    Garbage(("api", "GET", "/x\x01y"), 2, ("contains control characters",)),
    Garbage(("api", "GET", "/sites/../../etc"), 2, ("'..' segment",)),
    Garbage(("lark-cli", "--", "api", "GET", "/sites/../x"), 2, ("'..' segment",)),
    # site and app tokens
    Garbage(("mcp", "--site", "http://[::1"), 2, ("is neither an app token nor a site link",)),
    Garbage(("agent-tools", "list", "--site", "../../etc"), 2, ("neither an app token",)),
    Garbage(("deployments", "list", "--app-token", "a b/c"), 2,
            ("'a b/c' is not an app token",)),
    Garbage(("deployments", "status", "--app-token", "../x"), 2, ("'../x' is not an app token",)),
    Garbage(("deployments", "rollback", "--yes", "--app-token", "%00", "dpl_x"), 2,
            ("'%00' is not an app token",)),
    Garbage(("pull", "{missing}", "--app-token", "../../x"), 2,
            ("'../../x' is not an app token",)),
    # paths
    Garbage(("check", "-C", "{missing}"), 2, ("is not a directory",)),
    Garbage(("check", "-C", "{file}"), 2, ("is a file",)),
    Garbage(("check", "--output", "{dir}"), 2, ("is a directory",)),
    Garbage(("check", "--output", "{missing}/deeper/report.json"), 2,
            ("Cannot write the report",)),
    Garbage(("contracts", "generate", "-C", "{file}"), 2, ("is a file",)),
    Garbage(("init", "{file}"), 2, ("exists and is not a directory",)),
    Garbage(("init", "{missing}", "--template", "../../etc"), 2, ("Unknown template",)),
    Garbage(("init", "{missing}", "--base-token", "not a token"), 2, ("is not a Base token",)),
    Garbage(("demo", "{file}"), 2, ("exists and is not a directory",)),
    Garbage(("pull", "{file}", "--app-token", "Prjx"), 2, ("is a file",)),
    Garbage(("serve", "--data", "{file}"), 2, ("is a file",)),
    Garbage(("serve", "--host", "no such host"), 2, ("Refusing to listen on no such host",)),
    Garbage(("skill", "install", "--dir", "{file}"), 2, ("is a file",)),
    Garbage(("agent-tools", "skill", "install", "--dir", "{file}"), 2, ("is a file",)),
    # profiles
    Garbage(("auth", "login", "--endpoint", "not a url", "--token", "bdb_x"), 2,
            ("is not an http(s) URL",)),
    Garbage(("auth", "login", "--endpoint", "{dead}", "--token", "bdb_x", "--profile",
             "bad name!"), 2, ("Profile name 'bad name!' is not valid",)),
    Garbage(("auth", "login", "--endpoint", "{dead}", "--token", DEAD_TOKEN), 4,
            ("Could not reach http://127.0.0.1:",)),
]


@pytest.mark.parametrize("garbage", GARBAGE, ids=lambda g: " ".join(g.args))
def test_garbage_option_values_are_named(sweep: Sweep, garbage: Garbage) -> None:
    (sweep.root / "a-file.txt").write_text("x")
    (sweep.root / "a-dir").mkdir()
    (sweep.root / "binary.json").write_bytes(b"\x00\xff")
    places = {"{file}": str(sweep.root / "a-file.txt"), "{dir}": str(sweep.root / "a-dir"),
              "{binary}": str(sweep.root / "binary.json"),
              "{missing}": str(sweep.root / "missing"), "{dead}": sweep.dead_endpoint}
    args = []
    for arg in garbage.args:
        for placeholder, value in places.items():
            arg = arg.replace(placeholder, value)
        args.append(arg)
    result = sweep.run(args, _site_with_profile(None)(sweep.root))
    assert_clean(sweep, args, result, names=garbage.names)
    assert result.exit_code == garbage.exit_code, (args, result.stdout + result.stderr)


# ---------------------------------------------------------- broken basedb directories


def _file_instead_of(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")


BROKEN_DIRS = [
    pytest.param("config", _file_instead_of,
                 ("auth", "login", "--endpoint", "http://127.0.0.1:9", "--token", "bdb_x",
                  "--no-verify", "--profile", "other"),
                 "config.json: {dir} is a file, not a directory", id="config dir is a file"),
    pytest.param("data", _file_instead_of, ("api", "GET", "/users/me"),
                 "as the platform data dir: {dir} is a file, not a directory",
                 id="data dir is a file"),
    pytest.param("data", lambda path: (path / "owner.token").mkdir(parents=True),
                 ("auth", "status"), "Cannot write the platform owner token",
                 id="owner.token is a directory"),
    pytest.param("state", _file_instead_of, ("skill", "install", "--target", "codex"),
                 "Cannot record the install in {dir}", id="state dir is a file"),
]


@pytest.mark.parametrize(("which", "break_it", "args", "message"), BROKEN_DIRS)
def test_broken_basedb_directories_are_named(
        tmp_path: Path, isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
        which: str, break_it: Callable[[Path], None], args: tuple[str, ...],
        message: str) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    break_it(isolated_dirs[which])
    result = Sweep(tmp_path, "no token yet", "").run(list(args), _empty(tmp_path))
    output = result.stdout + result.stderr
    assert result.exit_code == 2, output
    assert message.format(dir=isolated_dirs[which]) in output, output
    assert "unexpected error" not in output and "Traceback" not in output


# ------------------------------------------------------------- usage errors in JSON mode


@pytest.mark.parametrize(("args", "message"), [
    (("deploy", "--json", "--no-such-option"), "No such option '--no-such-option'."),
    (("check", "--format", "json", "-X"), "No such option '-X'."),
    (("check", "--json", "--format", "text"), "--json conflicts with --format text"),
    (("contracts", "generate", "--json", "--lang", "rust"), "Invalid value for '--lang'"),
    (("deployments", "status", "--json", "dpl1", "dpl2"), "unexpected extra argument"),
])
# `basedb api` answers its command-line errors as lark-cli does (`Error: …`, exit 1):
# tests/cli/test_api_cli.py.
def test_usage_errors_in_json_mode_are_error_envelopes(tmp_path: Path, args: tuple[str, ...],
                                                       message: str) -> None:
    result = Sweep(tmp_path, "no token yet", "").run(list(args), _empty(tmp_path))
    assert result.exit_code == 2 and result.stdout == ""
    envelope = json.loads(result.stderr)
    assert envelope["ok"] is False
    assert (envelope["error"]["type"], envelope["error"]["code"]) == ("validation", "USAGE")
    assert message in envelope["error"]["message"]
    assert f"basedb {args[0]}" in envelope["error"]["hint"]


def test_usage_errors_in_text_mode_keep_the_usage_line(tmp_path: Path) -> None:
    result = Sweep(tmp_path, "no token yet", "").run(["deploy", "--no-such-option"],
                                                     _empty(tmp_path))
    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: basedb deploy [OPTIONS]")

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from basedb.core import site_zip
from basedb.core.errors import InputError, InternalError, WorkspaceNotFound
from basedb.core.site_zip import InputFile, fingerprint, fingerprint_hex, path_problem
from basedb.core.site_zip.manifest import _path_rule_broken
from basedb.workspace import inputs as manifest
from basedb.workspace.inputs import collect_inputs, is_excluded_name
from tests.unit._builders import write_workspace

SQL = "SELECT \"Title\" FROM \"Tasks\"\n"
LIST_TASKS = {"name": "listTasks", "description": "Lists the tasks of the team.",
              "meta": {"params": []}}


def workspace(root: Path, **files: str | bytes) -> Path:
    return write_workspace(
        root,
        functions={"database-functions/listTasks": LIST_TASKS},
        files={"database-functions/listTasks/main.sql": SQL, "README.md": "# Tasks\n",
               "src/index.html": "<h1>Tasks</h1>\n", **files},
        agent_tools={"exclude": []},
    )


def paths(root: Path) -> list[str]:
    return [item.path for item in collect_inputs(root)]


# ----------------------------------------------------------------------------- collect


def test_collects_the_allowlisted_files_sorted(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{
        "mutations/createTask/function.json": "{}",
        "faas/notify/function.json": "{}", "faas/notify/index.mjs": "export default 1\n",
        "ai/summary/function.json": "{}", "src/generated/function-inputs.ts": "//\n",
        "src/assets/logo.svg": "<svg/>",
    })
    assert paths(root) == [
        "README.md", "agent-tools.json", "ai/summary/function.json", "base-database.jsonc",
        "catalog.json", "database-functions/listTasks/function.json",
        "database-functions/listTasks/main.sql", "faas/notify/function.json",
        "faas/notify/index.mjs", "mutations/createTask/function.json",
        "src/assets/logo.svg", "src/generated/function-inputs.ts", "src/index.html",
    ]


def test_input_files_carry_contents_and_hash(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    readme = next(item for item in collect_inputs(root) if item.path == "README.md")
    assert readme.data == b"# Tasks\n"
    assert readme.size == 8
    assert readme.sha256 == hashlib.sha256(b"# Tasks\n").hexdigest()


@pytest.mark.parametrize("junk", [
    ".gitignore", "package.json", "notes.txt", "dist/app.js", "tests/x.py",      # not listed
    ".base-database-cli/state/deployments.json", ".git/HEAD",                      # state, VCS
    "src/.git/config", "src/.hg/hgrc", "src/.svn/entries",                         # nested VCS
    "src/node_modules/lib/index.js", "faas/notify/node_modules/x/index.js",
    "src/__pycache__/x.cpython-311.pyc", "src/tool.pyc",
    "src/.DS_Store", "src/Icon\r", "src/Thumbs.db", "src/desktop.ini", "src/._index.html",
    "src/.index.html.swp", "src/index.html.swp", "src/index.html.swo", "src/.app.js.swn",
    "src/index.html~", "src/#index.html#", "src/.#index.html",
    "src/.env", "src/.env.local", "faas/notify/.env.production",
])
def test_excluded_files_never_ship(tmp_path: Path, junk: str) -> None:
    root = workspace(tmp_path / "ws", **{junk: "x", "faas/notify/index.mjs": "x"})
    shipped = paths(root)
    assert junk not in shipped
    assert "faas/notify/index.mjs" in shipped


def test_hidden_files_that_are_not_junk_ship(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{"src/.well-known/security.txt": "x",
                                         "src/.nojekyll": "", "src/app.swf.txt": "x"})
    assert {"src/.well-known/security.txt", "src/.nojekyll", "src/app.swf.txt"} <= set(
        paths(root))


def test_is_excluded_name_keeps_ordinary_names() -> None:
    for name in ("index.html", "environment.js", "env", "main.sql", "a~b", "swp"):
        assert not is_excluded_name(name), name


def test_a_workspace_without_config_is_not_a_workspace(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "index.html").write_text("x")
    with pytest.raises(WorkspaceNotFound):
        collect_inputs(tmp_path)
    with pytest.raises(WorkspaceNotFound):
        collect_inputs(tmp_path / "missing")


def test_src_must_be_a_directory_and_catalog_a_file(tmp_path: Path) -> None:
    root = workspace(tmp_path / "a")
    (root / "src" / "index.html").unlink()
    (root / "src").rmdir()
    (root / "src").write_text("not a dir")
    with pytest.raises(InputError, match=r"^src is not a directory"):
        collect_inputs(root)

    root = workspace(tmp_path / "b")
    (root / "catalog.json").unlink()
    (root / "catalog.json").mkdir()
    with pytest.raises(InputError, match=r"^catalog.json is a directory"):
        collect_inputs(root)


# ---------------------------------------------------------------------------- symlinks


def test_symlink_within_the_workspace_ships_its_target(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{"src/shared/theme.css": "body{}\n"})
    (root / "src" / "theme.css").symlink_to("shared/theme.css")
    (root / "src" / "docs").symlink_to("../database-functions")
    inputs = {item.path: item.data for item in collect_inputs(root)}
    assert inputs["src/theme.css"] == b"body{}\n"
    assert inputs["src/docs/listTasks/main.sql"] == SQL.encode()


def test_symlink_outside_the_workspace_is_refused_by_name(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    root = workspace(tmp_path / "ws")
    (root / "src" / "leak.txt").symlink_to(outside)
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    assert caught.value.code == "INPUT_SYMLINK"
    assert "src/leak.txt" in caught.value.message
    assert "outside the workspace" in caught.value.message


def test_top_level_directory_symlinked_outside_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "index.html").write_text("x")
    root = workspace(tmp_path / "ws")
    (root / "src" / "index.html").unlink()
    (root / "src").rmdir()
    (root / "src").symlink_to(elsewhere)
    with pytest.raises(InputError, match=r"^src is a symlink .* outside the workspace"):
        collect_inputs(root)


def test_dangling_symlink_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    (root / "src" / "gone.js").symlink_to("nowhere.js")
    with pytest.raises(InputError, match=r"src/gone.js is a symlink to nowhere.js, which "
                                         "does not exist"):
        collect_inputs(root)


def test_file_symlink_loop_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    (root / "src" / "a").symlink_to("b")
    (root / "src" / "b").symlink_to("a")
    with pytest.raises(InputError, match=r"src/a is a symlink loop"):
        collect_inputs(root)


def test_directory_symlink_cycle_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{"src/pages/home.html": "x"})
    (root / "src" / "pages" / "up").symlink_to("..")
    with pytest.raises(InputError, match=r"src/pages/up is a symlink loop"):
        collect_inputs(root)


def test_symlink_into_local_state_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{".git/config": "[core]\n"})
    (root / "src" / "config").symlink_to("../.git/config")
    with pytest.raises(InputError, match=r"src/config is a symlink into .git/config"):
        collect_inputs(root)


def test_junk_symlinks_are_skipped_before_being_followed(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    # Emacs lock files are dangling symlinks; they must not break a deploy.
    (root / "src" / ".#index.html").symlink_to("user@host.1234:1700000000")
    assert "src/index.html" in paths(root)


# ---------------------------------------------------------------- special and unreadable


def test_fifo_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    os.mkfifo(root / "src" / "pipe")
    with pytest.raises(InputError, match=r"src/pipe is a FIFO, socket or device"):
        collect_inputs(root)


def test_unreadable_file_is_refused_with_its_name(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    root = workspace(tmp_path / "ws")
    real_open = os.open

    def deny(path: str, flags: int, *args: int, **kwargs: int) -> int:
        if str(path).endswith("index.html"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    assert caught.value.code == "INPUT_UNREADABLE"
    assert caught.value.message == "src/index.html cannot be read: permission denied."
    assert "readable" in (caught.value.hint or "")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files regardless of mode")
def test_unreadable_file_on_disk_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    (root / "src" / "index.html").chmod(0)
    with pytest.raises(InputError, match=r"src/index\.html cannot be read"):
        collect_inputs(root)


@pytest.mark.parametrize("name", ["back\\slash.js", "c:drive.js", "new\nline.js"])
def test_names_pull_could_not_restore_are_refused(tmp_path: Path, name: str) -> None:
    root = workspace(tmp_path / "ws")
    (root / "src" / name).write_text("x")
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    assert caught.value.code == "INPUT_INVALID"
    assert "src/" in caught.value.message


def test_non_utf8_name_is_refused(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws")
    with open(os.path.join(os.fsencode(root / "src"), b"caf\xe9.js"), "wb") as handle:
        handle.write(b"x")
    with pytest.raises(InputError, match="is not valid UTF-8"):
        collect_inputs(root)


@pytest.mark.parametrize(("first", "second"), [
    ("src/Logo.svg", "src/logo.svg"), ("src/caf\u00e9.js", "src/cafe\u0301.js"),
    ("src/Pages/a.html", "src/pages/a.html"),
])
def test_names_that_collide_on_other_systems_are_refused(tmp_path: Path, first: str,
                                                         second: str) -> None:
    root = workspace(tmp_path / "ws", **{first: "1", second: "2"})
    with pytest.raises(InputError, match="differ only in letter case or Unicode form"):
        collect_inputs(root)


@pytest.mark.parametrize(("path", "problem"), [
    ("", "is empty"),
    ("/etc/passwd", "is an absolute path"),
    ("a/../../b", "has a '..' path segment"),
    ("./a", "has a '.' path segment"),
    ("a//b", "has an empty path segment"),
    ("a\\..\\b", "contains a backslash"),
    ("C:/x", "contains a colon"),
    ("a\x00b", "contains control characters"),
    ("x" * 256, "has a name longer than 255 bytes"),
    ("/".join(["abcdefgh"] * 120), "is longer than 1024 bytes"),
])
def test_path_problem(path: str, problem: str) -> None:
    found = path_problem(path)
    assert found is not None and found.startswith(problem)


def test_path_problem_accepts_ordinary_paths() -> None:
    for path in ("src/index.html", "README.md", "src/中文/页面.html", "a/.b/c~d"):
        assert path_problem(path) is None


# ------------------------------------------------------------------------------ limits


def test_too_many_files_names_the_numbers_and_busiest_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MAX_INPUT_FILES", 10)
    root = workspace(tmp_path / "ws", **{f"src/img/{i}.png": "x" for i in range(12)})
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    error = caught.value
    assert error.code == "INPUT_TOO_MANY_FILES"
    assert error.message == ("The workspace has 19 input files; at most 10 can be deployed.")
    assert error.hint is not None and error.hint.startswith("The most files are in src/img/ (12)")
    assert error.detail == {"files": 19, "limit": 10}


def test_runaway_tree_stops_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MAX_INPUT_FILES", 3)
    monkeypatch.setattr(manifest, "_COUNT_STOP", 8)
    root = workspace(tmp_path / "ws", **{f"src/{i}.js": "x" for i in range(30)})
    with pytest.raises(InputError, match=r"^The workspace has more than 8 input files"):
        collect_inputs(root)


def test_too_many_bytes_names_the_total_and_largest_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(manifest, "MAX_INPUT_BYTES", 4096)
    root = workspace(tmp_path / "ws", **{"src/video.mp4": b"v" * 3000,
                                         "src/poster.png": b"p" * 2000})
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    error = caught.value
    assert error.code == "INPUT_TOO_LARGE"
    assert error.message.startswith("The workspace's input files total 5.")
    assert error.message.endswith("at most 4.0 KB can be deployed.")
    assert error.hint is not None
    assert error.hint.startswith("The largest are src/video.mp4 (2.9 KB), src/poster.png")
    assert error.detail["limit"] == 4096


def test_at_the_limits_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = workspace(tmp_path / "ws")
    inputs = collect_inputs(root)
    monkeypatch.setattr(manifest, "MAX_INPUT_FILES", len(inputs))
    monkeypatch.setattr(manifest, "MAX_INPUT_BYTES", sum(item.size for item in inputs))
    assert [item.path for item in collect_inputs(root)] == [item.path for item in inputs]


# ------------------------------------------------------------------------- fingerprint


def test_fingerprint_is_the_sha256_of_the_canonical_manifest() -> None:
    inputs = [InputFile.of("src/b.js", b"b"), InputFile.of("README.md", b"readme")]
    files = [{"path": "README.md", "sha256": hashlib.sha256(b"readme").hexdigest(), "size": 6},
             {"path": "src/b.js", "sha256": hashlib.sha256(b"b").hexdigest(), "size": 1}]
    canonical = json.dumps({"files": files}, separators=(",", ":"), sort_keys=True)
    expected = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    assert fingerprint(inputs) == expected
    assert fingerprint(reversed(inputs)) == expected
    assert fingerprint_hex(expected) == expected.removeprefix("sha256:")


def test_fingerprint_ignores_mtime_mode_and_creation_order(tmp_path: Path) -> None:
    files = {"src/a.js": "a", "src/z/y.js": "y", "src/m.css": "m"}
    first = workspace(tmp_path / "one", **files)
    second = workspace(tmp_path / "two", **dict(reversed(list(files.items()))))
    os.utime(second / "src" / "a.js", (time.time() - 86400, time.time() - 86400))
    (second / "src" / "m.css").chmod(0o600)
    (second / "src" / "z" / "y.js").chmod(0o755)
    assert fingerprint(collect_inputs(first)) == fingerprint(collect_inputs(second))


def test_fingerprint_changes_with_any_byte_or_path(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", **{"src/app.js": "let a = 1;\n"})
    base = fingerprint(collect_inputs(root))

    (root / "src" / "app.js").write_text("let a = 2;\n")
    changed_byte = fingerprint(collect_inputs(root))
    (root / "src" / "app.js").write_text("let a = 1;\n")
    assert fingerprint(collect_inputs(root)) == base

    (root / "src" / "app.js").rename(root / "src" / "main.js")
    renamed = fingerprint(collect_inputs(root))
    (root / "src" / "main.js").rename(root / "src" / "app.js")

    (root / "src" / "empty.txt").write_text("")
    added_empty = fingerprint(collect_inputs(root))

    assert len({base, changed_byte, renamed, added_empty}) == 4
    assert all(site_zip.FINGERPRINT_RE.match(value) for value in (base, renamed))


def test_duplicate_inputs_are_a_bug() -> None:
    with pytest.raises(InternalError):
        fingerprint([InputFile.of("a", b"1"), InputFile.of("a", b"2")])


@pytest.mark.parametrize("value", ["", "sha256:", "sha256:" + "A" * 64, "md5:" + "a" * 64,
                                   "sha256:" + "a" * 63])
def test_fingerprint_hex_rejects_malformed(value: str) -> None:
    with pytest.raises(InputError, match="is not a fingerprint"):
        fingerprint_hex(value)


def test_a_file_that_grew_since_it_was_listed_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"0123456789")
    assert manifest._read("f.txt", str(path), budget=1000, listed_size=3) == b"0123456789"
    assert manifest._read("f.txt", str(path), budget=5, listed_size=3) == b"012345"
    assert manifest._read("f.txt", str(path), budget=1000, listed_size=20) == b"0123456789"


def test_a_file_read_in_pieces_is_read_whole(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"0123456789")
    real_read = os.read
    monkeypatch.setattr(os, "read", lambda fd, size: real_read(fd, min(size, 3)))
    assert manifest._read("f.txt", str(path), budget=1000, listed_size=10) == b"0123456789"
    assert manifest._read("f.txt", str(path), budget=1000, listed_size=4) == b"0123456789"
    assert manifest._read("f.txt", str(path), budget=5, listed_size=4) == b"012345"


def test_a_directory_in_place_of_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    with pytest.raises(InputError) as caught:
        manifest._read("src/d", str(tmp_path / "d"), budget=1000, listed_size=3)
    assert caught.value.code == "INPUT_UNREADABLE"
    assert caught.value.message == "src/d is a directory, not a regular file."


_PATH_PIECES = ["a", "Z", "9", "_", "-", ".", "..", "...", "/", "//", "", ":", "\\", "é",
                "\x01", "\x7f", "~", " ", "\ud800", "x" * 120]


@given(st.lists(st.sampled_from(_PATH_PIECES), max_size=12))
def test_the_plain_path_shortcut_agrees_with_every_rule(pieces: list[str]) -> None:
    path = "".join(pieces)
    assert path_problem(path) == _path_rule_broken(path)


@pytest.mark.parametrize("path", [".", "..", "a/./b", "a/../b", "./a", "a/..", "/a", "a/",
                                  "a//b", "a" * 256, "a/" * 600 + "b"])
def test_plain_looking_paths_that_break_a_rule_are_refused(path: str) -> None:
    assert path_problem(path) is not None
    assert path_problem(path) == _path_rule_broken(path)


def _when_listed(monkeypatch: pytest.MonkeyPatch, folder: Path, change: Any) -> None:
    """Run `change` once `folder`'s parent has been listed, before `folder` is entered."""
    real_scandir = os.scandir
    changed: list[bool] = []

    def scandir(path: Any) -> Any:
        if isinstance(path, str | os.PathLike) and Path(path) == folder and not changed:
            changed.append(True)
            change()
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)


def test_a_directory_removed_after_its_parent_was_listed_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = workspace(tmp_path / "ws", **{"src/gone/a.js": "x"})
    _when_listed(monkeypatch, root / "src" / "gone",
                 lambda: shutil.rmtree(root / "src" / "gone"))
    assert "src/gone/a.js" not in paths(root)
    assert "src/index.html" in paths(root)


def test_a_directory_replaced_by_a_file_after_listing_ships_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = workspace(tmp_path / "ws", **{"src/turned/a.js": "x"})

    def replace_with_file() -> None:
        shutil.rmtree(root / "src" / "turned")
        (root / "src" / "turned").write_text("now a file")

    _when_listed(monkeypatch, root / "src" / "turned", replace_with_file)
    found = {item.path: item.data for item in collect_inputs(root)}
    assert found["src/turned"] == b"now a file" and "src/turned/a.js" not in found


def test_a_directory_loop_through_plain_directories_is_refused(tmp_path: Path) -> None:
    # src/deep/x is first reached through a link to it, then again through a link to its
    # parent and the plain directory x below it.
    root = workspace(tmp_path / "ws")
    (root / "src" / "deep" / "x").mkdir(parents=True)
    (root / "src" / "a").mkdir()
    (root / "src" / "a" / "to-x").symlink_to(root / "src" / "deep" / "x")
    (root / "src" / "deep" / "x" / "to-deep").symlink_to(root / "src" / "deep")
    with pytest.raises(InputError) as caught:
        collect_inputs(root)
    # named where it first comes round, at the plain directory, not one link further
    assert caught.value.message == ("src/a/to-x/to-deep/x is a symlink loop (it leads back "
                                    "to itself).")

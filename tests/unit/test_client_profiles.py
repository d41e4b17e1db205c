"""Profiles: storage in config.json, resolution order, workspace preference."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from basedb.client import profiles
from basedb.client.profiles import (
    LOCAL,
    Profile,
    current_profile,
    delete_profile,
    get_profile,
    load_profiles,
    normalize_endpoint,
    resolve_profile,
    save_profile,
    workspace_profile,
)
from basedb.core.errors import InputError, UsageError, WorkspaceNotFound

TOKEN = "bdb_secret_token_value_123456"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def write_workspace(root: Path, config: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "base-database.jsonc").write_text(config, encoding="utf-8")
    return root


def test_no_config_means_only_local() -> None:
    assert load_profiles() == {}
    assert profiles.known_profile_names() == ["local"]
    assert resolve_profile(None, None) == LOCAL
    assert LOCAL.embedded and LOCAL.token is None


def test_save_and_load_round_trip(isolated_dirs: dict[str, Path]) -> None:
    path = save_profile(Profile("prod", "http://127.0.0.1:8787", TOKEN))
    assert path == isolated_dirs["config"] / "config.json"
    assert load_profiles() == {"prod": Profile("prod", "http://127.0.0.1:8787", TOKEN)}
    doc = json.loads(path.read_text())
    assert doc == {"version": 2, "profiles": {"prod": {"endpoint": "http://127.0.0.1:8787",
                                                       "token": TOKEN}}}


def test_config_file_and_dir_modes(isolated_dirs: dict[str, Path]) -> None:
    config_dir = isolated_dirs["config"]
    config_dir.mkdir(mode=0o755)
    os.chmod(config_dir, 0o755)  # a pre-existing, too-open directory is tightened
    old_umask = os.umask(0o022)
    try:
        path = save_profile(Profile("prod", "http://127.0.0.1:8787", TOKEN))
    finally:
        os.umask(old_umask)
    assert mode(config_dir) == 0o700
    assert mode(path) == 0o600
    # Rewrites keep the mode and leave no temporary files behind.
    save_profile(Profile("staging", "http://127.0.0.1:8788", TOKEN))
    assert mode(path) == 0o600
    assert sorted(p.name for p in config_dir.iterdir()) == ["config.json"]


def test_delete_profile() -> None:
    save_profile(Profile("a", "http://127.0.0.1:1", TOKEN))
    save_profile(Profile("b", "http://127.0.0.1:2", TOKEN))
    assert delete_profile("a") is True
    assert delete_profile("a") is False
    assert list(load_profiles()) == ["b"]


def test_precedence_flag_then_workspace_then_local() -> None:
    save_profile(Profile("flag", "http://127.0.0.1:1", TOKEN))
    save_profile(Profile("ws", "http://127.0.0.1:2", TOKEN))
    assert resolve_profile("flag", "ws").name == "flag"
    assert resolve_profile(None, "ws").name == "ws"
    assert resolve_profile(None, None).name == "local"
    assert resolve_profile("local", "ws") == LOCAL


def test_unknown_profile_lists_known_ones_and_the_fix() -> None:
    save_profile(Profile("prod", "http://127.0.0.1:1", TOKEN))
    with pytest.raises(UsageError) as info:
        get_profile("prd")
    error = info.value
    assert error.exit_code == 2
    assert "'prd'" in error.message and "local, prod" in error.message
    assert "basedb auth login" in (error.hint or "") and "--profile prd" in (error.hint or "")


def test_unknown_workspace_profile_points_at_the_workspace_file() -> None:
    with pytest.raises(UsageError) as info:
        resolve_profile(None, "team")
    assert "base-database.jsonc" in info.value.message


def test_reserved_and_invalid_names() -> None:
    with pytest.raises(UsageError, match="reserved"):
        save_profile(Profile("local", "http://127.0.0.1:1", TOKEN))
    for bad in ("", "has space", "-dash", "x" * 65, "a/b"):
        with pytest.raises(UsageError):
            save_profile(Profile(bad, "http://127.0.0.1:1", TOKEN))


def test_repr_never_shows_the_token() -> None:
    profile = Profile("prod", "http://127.0.0.1:1", TOKEN)
    assert TOKEN not in repr(profile)
    assert TOKEN not in str(profile)


def test_broken_config_file_is_a_clear_input_error(isolated_dirs: dict[str, Path]) -> None:
    config_dir = isolated_dirs["config"]
    config_dir.mkdir()
    (config_dir / "config.json").write_text('{"profiles": {"a": ', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_profiles()
    assert str(config_dir / "config.json") in info.value.message
    assert "line 1" in info.value.message
    (config_dir / "config.json").write_text('{"profiles": {"a": {"token": 1}}}')
    with pytest.raises(InputError, match="/profiles/a"):
        load_profiles()


@pytest.mark.parametrize(("given", "expected"), [
    ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
    ("http://127.0.0.1:8787/", "http://127.0.0.1:8787"),
    ("http://127.0.0.1:8787/open-apis/base/v3", "http://127.0.0.1:8787"),
    ("https://localhost/prefix/", "https://localhost/prefix"),
])
def test_normalize_endpoint(given: str, expected: str) -> None:
    assert normalize_endpoint(given) == expected


@pytest.mark.parametrize("bad", ["127.0.0.1:8787", "ftp://127.0.0.1", "http://", "embedded",
                                 "http://127.0.0.1/?q=1"])
def test_normalize_endpoint_rejects(bad: str) -> None:
    with pytest.raises(UsageError, match="--endpoint"):
        normalize_endpoint(bad)


def test_workspace_profile_reads_jsonc(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "site", """{
      // the team's shared platform
      "appToken": "app1", "profile": "team",
    }""")
    (root / "src").mkdir()
    assert workspace_profile(root / "src") == "team"
    save_profile(Profile("team", "http://127.0.0.1:1", TOKEN))
    assert current_profile(None, root)[0].name == "team"
    assert current_profile(None, root)[1] == "base-database.jsonc"
    assert current_profile("local", root) == (LOCAL, "--profile")


def test_workspace_without_profile_uses_local(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "site", '{"appToken": "app1"}')
    assert workspace_profile(root) is None
    assert current_profile(None, root) == (LOCAL, "default")


def test_no_workspace_from_cwd_means_no_preference(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert workspace_profile(None) is None


def test_explicit_directory_without_workspace_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceNotFound):
        workspace_profile(tmp_path)


def test_broken_workspace_config_is_not_silently_local(tmp_path: Path) -> None:
    root = write_workspace(tmp_path / "site", '{"appToken": ')
    with pytest.raises(InputError) as info:
        workspace_profile(root)
    assert "base-database.jsonc" in info.value.message
    write_workspace(root, '{"appToken": "a", "profile": 3}')
    with pytest.raises(InputError, match="/profile"):
        workspace_profile(root)

"""basedb.core.atomic: whole-file replacement and private directories."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest

from basedb.core.atomic import ensure_private_dir, write_file_atomically


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_text_is_written_as_utf8_with_the_given_mode(tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    write_file_atomically(target, "héllo\n", mode=0o600)
    assert target.read_bytes() == "héllo\n".encode()
    assert mode(target) == 0o600


def test_an_existing_file_is_replaced_and_takes_the_new_mode(tmp_path: Path) -> None:
    target = tmp_path / "data.bin"
    target.write_bytes(b"old")
    os.chmod(target, 0o600)
    write_file_atomically(target, b"\x00new")
    assert target.read_bytes() == b"\x00new"
    assert mode(target) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["data.bin"]


def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "config.json"
    target.write_text("old")

    def failing_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="No space left"):
        write_file_atomically(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["config.json"]


def test_a_missing_directory_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        write_file_atomically(tmp_path / "missing" / "file.txt", "x")


def test_private_dirs_are_created_and_tightened(tmp_path: Path) -> None:
    created = ensure_private_dir(tmp_path / "a" / "b")
    assert created == tmp_path / "a" / "b" and mode(created) == 0o700
    existing = tmp_path / "open"
    existing.mkdir()
    os.chmod(existing, 0o755)
    ensure_private_dir(existing)
    assert mode(existing) == 0o700


def test_a_file_in_the_way_of_a_private_dir_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("x")
    with pytest.raises(NotADirectoryError) as caught:
        ensure_private_dir(blocker)
    assert caught.value.strerror == f"{blocker} is a file, not a directory"

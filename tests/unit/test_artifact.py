from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import struct
import time
import warnings
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from basedb.core.errors import ConflictError, InputError, InternalError
from basedb.core.site_zip import (
    MANIFEST_PATH,
    MAX_ARCHIVE_ENTRIES,
    RATIO_CHECK_FROM,
    InputFile,
    build_site_zip,
    fingerprint,
    read_manifest,
)
from basedb.deploy.artifact import safe_extract
from basedb.workspace.inputs import collect_inputs
from tests.unit._builders import write_workspace

MIB = 1024 * 1024
FILES = {"src/index.html": "<h1>Tasks</h1>\n", "src/app.js": "console.log(1)\n",
         "database-functions/listTasks/main.sql": "SELECT 1\n",
         "database-functions/listTasks/function.json": '{"name": "listTasks"}\n',
         "README.md": "# Tasks\n"}


def workspace(root: Path, files: dict[str, str] | None = None) -> Path:
    return write_workspace(root, files=FILES if files is None else files)


def site_zip(inputs: list[InputFile]) -> bytes:
    return build_site_zip(inputs, fingerprint(inputs))


def sample_inputs() -> list[InputFile]:
    return [InputFile.of(path, text.encode()) for path, text in FILES.items()]


def zip_of(*entries: tuple[str, bytes] | zipfile.ZipInfo | tuple[zipfile.ZipInfo, bytes],
           ) -> bytes:
    """A zip with the given (name, data) or (ZipInfo, data) entries, nothing checked."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names
        with zipfile.ZipFile(buffer, "w") as archive:
            for entry in entries:
                assert isinstance(entry, tuple)
                name, data = entry
                archive.writestr(name, data)
    return buffer.getvalue()


def unix_entry(name: str, mode: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


@dataclass
class RawEntry:
    """A zip entry written byte by byte, so that its header can say anything."""

    name: str
    payload: bytes  # already compressed with `method`
    declared_size: int
    crc: int
    method: int = 8
    flags: int = 0


def raw_zip(*entries: RawEntry) -> bytes:
    body = b""
    central = b""
    for entry in entries:
        name = entry.name.encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, entry.flags, entry.method, 0,
                            0x21, entry.crc, len(entry.payload), entry.declared_size,
                            len(name), 0) + name + entry.payload
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x031E, 20, entry.flags,
                               entry.method, 0, 0x21, entry.crc, len(entry.payload),
                               entry.declared_size, len(name), 0, 0, 0, 0,
                               (stat.S_IFREG | 0o644) << 16, offset) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries),
                      len(central), len(body), 0)
    return body + central + end


def gigabyte_of_zeros() -> RawEntry:
    """1 GiB of zeros as a ~1 MB deflate stream: one fully flushed 1 MiB block, repeated.
    Full flushes reset the compressor, so the copies concatenate into a valid stream."""
    zeros = bytes(MIB)
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    stream = block * 1024 + compressor.flush()
    crc = 0
    for _ in range(1024):
        crc = zlib.crc32(zeros, crc)
    return RawEntry("src/bomb.bin", stream, declared_size=1024 * MIB, crc=crc)


def untouched(target: Path) -> bool:
    return not target.exists() or not any(target.iterdir())


# ------------------------------------------------------------------------------- build


def test_two_builds_are_byte_identical() -> None:
    inputs = sample_inputs()
    assert site_zip(inputs) == site_zip(list(reversed(inputs)))


def test_workspaces_with_different_mtimes_and_creation_order_give_the_same_zip(
        tmp_path: Path) -> None:
    first = workspace(tmp_path / "one")
    second = workspace(tmp_path / "two", dict(reversed(list(FILES.items()))))
    old = time.time() - 7 * 86400
    for path in (second / "src").iterdir():
        os.utime(path, (old, old))
    (second / "src" / "app.js").chmod(0o755)
    one, two = collect_inputs(first), collect_inputs(second)
    assert fingerprint(one) == fingerprint(two)
    assert site_zip(one) == site_zip(two)


def test_entries_are_sorted_dated_1980_0644_and_deflated_at_level_6() -> None:
    inputs = sample_inputs()
    data = site_zip(inputs)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == [MANIFEST_PATH, *sorted(FILES)]
        for info in infos:
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == stat.S_IFREG | 0o644
            assert info.create_system == 3
            assert info.compress_type == zipfile.ZIP_DEFLATED
            assert info.extra == b"" and info.comment == b""
        html = archive.getinfo("src/index.html")
        raw = data[html.header_offset + 30 + len(html.filename):][:html.compress_size]
        level6 = zlib.compressobj(6, zlib.DEFLATED, -15)
        expected = level6.compress(FILES["src/index.html"].encode()) + level6.flush()
        assert raw == expected
        for path, text in FILES.items():
            assert archive.read(path) == text.encode()


def test_manifest_lists_every_file_and_the_fingerprint() -> None:
    inputs = sample_inputs()
    found = read_manifest(site_zip(inputs))
    assert found["fingerprint"] == fingerprint(inputs)
    assert found["files"] == [{"path": p, "sha256": hashlib.sha256(FILES[p].encode())
                               .hexdigest(), "size": len(FILES[p].encode())}
                              for p in sorted(FILES)]


def test_build_refuses_a_wrong_fingerprint_or_reserved_path() -> None:
    inputs = sample_inputs()
    with pytest.raises(InternalError, match="fingerprint does not match"):
        build_site_zip(inputs, "sha256:" + "0" * 64)
    reserved = [*inputs, InputFile.of(".basedb/extra.json", b"{}")]
    with pytest.raises(InternalError, match="reserved"):
        build_site_zip(reserved, fingerprint(reserved))


# ---------------------------------------------------------------------------- manifest


def test_read_manifest_requires_one(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"has no \.basedb/manifest\.json"):
        read_manifest(zip_of(("src/a.js", b"a")))
    with pytest.raises(InputError, match="not a readable zip file"):
        read_manifest(b"PK\x03\x04 truncated")


@pytest.mark.parametrize(("doc", "problem"), [
    ([], "is not a JSON object"),
    ({"files": []}, 'has no valid "fingerprint"'),
    ({"fingerprint": "sha256:" + "0" * 64}, 'has no "files" list'),
    ({"fingerprint": "sha256:" + "0" * 64, "files": [{"path": "../x", "sha256": "0" * 64,
                                                      "size": 1}]}, "safe relative path"),
    ({"fingerprint": "sha256:" + "0" * 64, "files": [{"path": "x", "sha256": "zz",
                                                      "size": 1}]}, "SHA-256"),
    ({"fingerprint": "sha256:" + "0" * 64, "files": [{"path": "x", "sha256": "0" * 64,
                                                      "size": True}]}, "non-negative"),
    ({"fingerprint": "sha256:" + "0" * 64, "files": []}, "does not match its file list"),
])
def test_read_manifest_rejects_malformed(doc: object, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        read_manifest(zip_of((MANIFEST_PATH, json.dumps(doc).encode())))


# ---------------------------------------------------------------------- extract: happy


def test_extract_restores_the_workspace_files(tmp_path: Path) -> None:
    source = workspace(tmp_path / "ws")
    inputs = collect_inputs(source)
    data = site_zip(inputs)
    target = tmp_path / "restored"
    report = safe_extract(data, target, force=False, expected_fingerprint=fingerprint(inputs))
    assert report.created == tuple(item.path for item in inputs)
    assert report.overwritten == () and report.unchanged == ()
    assert report.fingerprint == fingerprint(inputs)
    assert fingerprint(collect_inputs(target)) == fingerprint(inputs)
    assert not (target / ".basedb").exists()
    assert stat.S_IMODE((target / "src" / "app.js").stat().st_mode) == 0o644

    again = safe_extract(data, target, force=False)
    assert again.created == () and again.overwritten == ()
    assert again.unchanged == report.created


def test_extract_without_manifest_still_restores(tmp_path: Path) -> None:
    report = safe_extract(zip_of(("src/a.js", b"a"), ("src/dir/", b"")), tmp_path / "t",
                          force=False)
    assert report.created == ("src/a.js",) and report.fingerprint is None
    assert (tmp_path / "t" / "src" / "a.js").read_bytes() == b"a"


# ------------------------------------------------------------------- extract: refusals


@pytest.mark.parametrize("name", [
    "../evil", "/etc/x", "a/../../b", "src/../../evil", "./src/a.js", "src//a.js",
    "C:/Windows/evil", "C:evil", "..\\evil", "src\\..\\..\\evil", "\\\\server\\share\\x",
    ".git/hooks/pre-commit", "src/.git/config", "src/.hg/hgrc",
    ".base-database-cli/state/deployments.json", ".basedb/other.json", "src/a\x01.js",
])
def test_unsafe_names_are_refused_before_anything_is_written(tmp_path: Path,
                                                             name: str) -> None:
    target = tmp_path / "target"
    data = zip_of(("README.md", b"first"), (name, b"payload"))
    with pytest.raises(InputError) as caught:
        safe_extract(data, target, force=True)
    assert caught.value.code == "ARTIFACT_UNSAFE_PATH"
    assert caught.value.detail["entry"] == name
    assert repr(name) in caught.value.message
    assert untouched(target)
    assert not (tmp_path / "evil").exists()


def test_nul_byte_in_a_name_is_refused(tmp_path: Path) -> None:
    data = zip_of(("src/x.js", b"x"))
    forged = data.replace(b"src/x.js", b"src\x00x.js")
    with pytest.raises(InputError, match="contains a NUL byte"):
        safe_extract(forged, tmp_path / "t", force=True)


@pytest.mark.parametrize(("mode", "problem"), [
    (stat.S_IFLNK | 0o777, "is a symbolic link"),
    (stat.S_IFCHR | 0o666, "is a device, FIFO or other special file"),
    (stat.S_IFBLK | 0o666, "is a device, FIFO or other special file"),
    (stat.S_IFIFO | 0o644, "is a device, FIFO or other special file"),
    (stat.S_IFSOCK | 0o644, "is a device, FIFO or other special file"),
    (stat.S_IFDIR | 0o755, "is marked as a directory"),
])
def test_links_and_special_files_are_refused(tmp_path: Path, mode: int, problem: str) -> None:
    data = zip_of(("README.md", b"ok"), (unix_entry("src/link", mode), b"/etc/passwd"))
    with pytest.raises(InputError, match=problem) as caught:
        safe_extract(data, tmp_path / "t", force=True)
    assert caught.value.detail["entry"] == "src/link"
    assert untouched(tmp_path / "t")


@pytest.mark.parametrize(("first", "second", "problem"), [
    ("src/a.js", "src/a.js", "appears more than once"),
    ("src/a.js", "src/A.js", "only in case or Unicode form"),
    ("src/caf\u00e9.js", "src/cafe\u0301.js", "only in case or Unicode form"),
    ("src/a", "src/a/b.js", "also has it as a file"),
])
def test_colliding_names_are_refused(tmp_path: Path, first: str, second: str,
                                     problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        safe_extract(zip_of((first, b"1"), (second, b"2")), tmp_path / "t", force=True)
    assert untouched(tmp_path / "t")


def test_too_many_entries_are_refused(tmp_path: Path) -> None:
    entries = [(f"src/{i}.txt", b"") for i in range(MAX_ARCHIVE_ENTRIES + 1)]
    with pytest.raises(InputError, match=rf"has {MAX_ARCHIVE_ENTRIES + 1:,} entries; at most "
                                         rf"{MAX_ARCHIVE_ENTRIES:,}"):
        safe_extract(zip_of(*entries), tmp_path / "t", force=True)
    assert untouched(tmp_path / "t")


def test_a_gigabyte_declared_bomb_is_refused_without_inflating(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = gigabyte_of_zeros()
    data = raw_zip(RawEntry("README.md", b"", declared_size=0, crc=0, method=0), bomb)
    assert len(data) < 2 * MIB
    with zipfile.ZipFile(io.BytesIO(data)) as archive:  # a genuine bomb, as declared
        assert archive.getinfo("src/bomb.bin").file_size == 1024 * MIB
        with archive.open("src/bomb.bin") as handle:
            assert handle.read(MIB) == bytes(MIB)
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def recording_open(archive: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(archive, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", recording_open)
    with pytest.raises(InputError) as caught:
        safe_extract(data, tmp_path / "t", force=True)
    monkeypatch.undo()
    assert "src/bomb.bin" not in opened, "refused from its header, never inflated"
    assert caught.value.code == "ARTIFACT_TOO_LARGE"
    assert "more than 100 MB" in caught.value.message
    assert untouched(tmp_path / "t")


def test_many_entries_declaring_too_much_in_total_are_refused(tmp_path: Path) -> None:
    # Each entry alone is plausible (about 130:1); together they declare 120 MB.
    noise = bytes(range(256)) * 1200
    parts = [RawEntry(f"src/part{i}.bin", noise, declared_size=40 * MIB, crc=0)
             for i in range(3)]
    with pytest.raises(InputError, match=r"reached at 'src/part2.bin'"):
        safe_extract(raw_zip(*parts), tmp_path / "t", force=True)


def test_a_bomb_like_compression_ratio_is_refused(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("src/zeros.bin", bytes(20 * MIB))
    with pytest.raises(InputError, match="a ratio only a zip bomb reaches") as caught:
        safe_extract(buffer.getvalue(), tmp_path / "t", force=True)
    assert caught.value.detail["entry"] == "src/zeros.bin"


def test_compressible_sources_below_the_ratio_pass(tmp_path: Path) -> None:
    # A catalog of many near-identical fields: about 300:1, the most a real source reaches.
    fields = [{"fieldId": "fld1", "name": "Title", "type": "text", "options": []}] * 2000
    big = json.dumps({"tables": [{"tableId": "tbl1", "fields": fields}] * 20}).encode()
    inputs = [InputFile.of("catalog.json", big)]
    data = site_zip(inputs)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("catalog.json")
    assert info.file_size > RATIO_CHECK_FROM
    assert info.file_size > 250 * info.compress_size
    report = safe_extract(data, tmp_path / "t", force=False)
    assert report.created == ("catalog.json",)


def test_build_refuses_what_pull_would_take_for_a_bomb() -> None:
    inputs = [InputFile.of("src/blank.bin", bytes(4 * MIB))]
    with pytest.raises(InputError, match=r"src/blank.bin compresses \d+:1") as caught:
        site_zip(inputs)
    assert caught.value.code == "INPUT_TOO_COMPRESSIBLE"


def test_corrupt_data_is_refused(tmp_path: Path) -> None:
    payload = zlib.compress(b"hello world", 6)[2:-4]
    data = raw_zip(RawEntry("src/a.txt", payload, declared_size=11, crc=12345))
    with pytest.raises(InputError, match=r"'src/a.txt' is corrupt"):
        safe_extract(data, tmp_path / "t", force=True)
    stored = raw_zip(RawEntry("src/b.txt", b"abc", declared_size=3000, crc=0, method=0))
    with pytest.raises(InputError, match="stored uncompressed but its two sizes differ"):
        safe_extract(stored, tmp_path / "t", force=True)
    assert untouched(tmp_path / "t")


def test_encrypted_and_unsupported_entries_are_refused(tmp_path: Path) -> None:
    encrypted = raw_zip(RawEntry("src/a.txt", b"x" * 12, declared_size=0, crc=0, method=0,
                                 flags=1))
    with pytest.raises(InputError, match="is encrypted"):
        safe_extract(encrypted, tmp_path / "t", force=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr("src/a.txt", b"x")
    with pytest.raises(InputError, match="compression method 12"):
        safe_extract(buffer.getvalue(), tmp_path / "t", force=True)


def test_not_a_zip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a readable zip file"):
        safe_extract(b"<html>502 Bad Gateway</html>", tmp_path / "t", force=True)


# ------------------------------------------------------------------- extract: manifest


def tampered(inputs: list[InputFile], replace: dict[str, bytes]) -> bytes:
    """The site.zip of `inputs` with some file contents swapped after the manifest."""
    original = site_zip(inputs)
    manifest = zipfile.ZipFile(io.BytesIO(original)).read(MANIFEST_PATH)
    entries = [(MANIFEST_PATH, manifest)]
    entries += [(item.path, replace.get(item.path, item.data))
                for item in inputs]
    return zip_of(*entries)


def test_content_differing_from_the_manifest_is_refused(tmp_path: Path) -> None:
    data = tampered(sample_inputs(), {"src/app.js": b"stealCookies()\n"})
    with pytest.raises(InputError) as caught:
        safe_extract(data, tmp_path / "t", force=True)
    assert caught.value.code == "ARTIFACT_HASH_MISMATCH"
    assert "'src/app.js'" in caught.value.message
    assert untouched(tmp_path / "t")


def test_entries_missing_from_or_extra_to_the_manifest_are_refused(tmp_path: Path) -> None:
    inputs = sample_inputs()
    manifest = zipfile.ZipFile(io.BytesIO(site_zip(inputs))).read(MANIFEST_PATH)
    extra = zip_of((MANIFEST_PATH, manifest), *((i.path, i.data) for i in inputs),
                   ("src/extra.js", b"x"))
    with pytest.raises(InputError, match=r"'src/extra\.js' is not listed"):
        safe_extract(extra, tmp_path / "t", force=True)
    missing = zip_of((MANIFEST_PATH, manifest), *((i.path, i.data) for i in inputs[1:]))
    with pytest.raises(InputError, match=f"'{inputs[0].path}' is listed .* but missing"):
        safe_extract(missing, tmp_path / "t", force=True)


def test_expected_fingerprint_must_match(tmp_path: Path) -> None:
    inputs = sample_inputs()
    other = "sha256:" + "1" * 64
    with pytest.raises(ConflictError) as caught:
        safe_extract(site_zip(inputs), tmp_path / "t", force=True, expected_fingerprint=other)
    assert caught.value.code == "ARTIFACT_FINGERPRINT_MISMATCH"
    assert caught.value.detail == {"expected": other, "actual": fingerprint(inputs)}
    with pytest.raises(ConflictError, match=r"has no \.basedb/manifest\.json"):
        safe_extract(zip_of(("a", b"")), tmp_path / "t", force=True,
                     expected_fingerprint=other)
    with pytest.raises(InputError, match="is not a fingerprint"):
        safe_extract(site_zip(inputs), tmp_path / "t", force=True,
                     expected_fingerprint="abc")
    assert untouched(tmp_path / "t")


# ------------------------------------------------------------ extract: local changes


def test_local_changes_are_protected_unless_forced(tmp_path: Path) -> None:
    data = site_zip(sample_inputs())
    target = tmp_path / "ws"
    (target / "src").mkdir(parents=True)
    (target / "src" / "app.js").write_text("console.log('mine')\n")
    (target / "src" / "index.html").write_text(FILES["src/index.html"])
    (target / "src" / "local-only.js").write_text("keep me\n")

    with pytest.raises(ConflictError) as caught:
        safe_extract(data, target, force=False)
    error = caught.value
    assert error.code == "PULL_LOCAL_CHANGES"
    assert "src/app.js" in error.message and error.detail == {"files": ["src/app.js"]}
    assert error.hint is not None and "--force" in error.hint
    assert not (target / "README.md").exists()  # no partial restore
    assert (target / "src" / "app.js").read_text() == "console.log('mine')\n"

    (target / "src" / "app.js").chmod(0o600)
    report = safe_extract(data, target, force=True)
    assert report.overwritten == ("src/app.js",)
    assert report.unchanged == ("src/index.html",)
    assert "README.md" in report.created
    assert (target / "src" / "app.js").read_text() == FILES["src/app.js"]
    assert stat.S_IMODE((target / "src" / "app.js").stat().st_mode) == 0o600
    assert (target / "src" / "local-only.js").read_text() == "keep me\n"
    assert not [p for p in target.rglob("*.tmp")]


def test_directories_in_the_way_block_even_with_force(tmp_path: Path) -> None:
    data = site_zip(sample_inputs())
    target = tmp_path / "ws"
    (target / "src" / "app.js").mkdir(parents=True)
    with pytest.raises(ConflictError, match="is a directory, where the archive has a file"):
        safe_extract(data, target, force=True)

    other = tmp_path / "other"
    other.mkdir()
    (other / "src").write_text("a file")
    with pytest.raises(ConflictError, match="is a file, where the archive needs a directory"):
        safe_extract(data, other, force=True)
    assert not (other / "README.md").exists()


def test_symlinks_in_the_target_cannot_redirect_writes(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "ws"
    target.mkdir()
    (target / "src").symlink_to(outside)
    with pytest.raises(InputError, match="through a symlink") as caught:
        safe_extract(site_zip(sample_inputs()), target, force=True)
    assert caught.value.code == "ARTIFACT_UNSAFE_PATH"
    assert list(outside.iterdir()) == []
    assert not (target / "README.md").exists()


def test_target_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        safe_extract(site_zip(sample_inputs()), tmp_path / "file", force=True)


def test_benchmark_of_fingerprint_and_zip_runs_on_a_generated_workspace() -> None:
    from bench.deploy_artifact import measure_fingerprint_and_zip

    result = measure_fingerprint_and_zip(20, repeats=2)
    # 12 SQL functions (2 files), 5 Mutations (1), 3 FaaS (2), 3 root files, 3 Page files.
    assert result["files"] == 12 * 2 + 5 + 3 * 2 + 3 + 3
    assert 0 < result["fingerprintSeconds"] <= result["totalSeconds"]
    assert result["zipBytes"] > 0

"""What a dev session makes of saved files, and of the pages it serves."""

from __future__ import annotations

from pathlib import Path

from basedb.dev.changes import classify, relevant, settled_paths
from basedb.dev.server import allowed_hosts, inject_client


def test_saves_are_sorted_into_page_functions_and_workspace(tmp_path: Path) -> None:
    changes = classify(tmp_path, [
        tmp_path / "src" / "app.js",
        tmp_path / "database-functions" / "listTasks" / "main.sql",
        tmp_path / "faas" / "closeTask" / "index.mjs",
        tmp_path / "catalog.json",
    ])
    assert changes.page and changes.workspace and changes.needs_sync
    assert changes.functions == {"listTasks", "closeTask"}
    assert changes.paths == sorted(changes.paths)


def test_local_state_editors_and_strangers_are_ignored(tmp_path: Path) -> None:
    for path in (".base-database-cli/cache/sql-analysis.json", ".git/index",
                 "node_modules/x/index.js", "src/.app.js.swp", "src/app.js~",
                 "src/4913", "README.md", "notes/todo.txt", "src/.#app.js"):
        assert relevant(tmp_path, tmp_path / path) is None, path
    assert relevant(tmp_path, "/elsewhere/src/app.js") is None
    assert not classify(tmp_path, [tmp_path / ".git" / "HEAD"])


def test_a_save_through_a_temporary_file_reports_only_the_file_saved(tmp_path: Path) -> None:
    # `sed -i` writes src/sedAb12Cd and renames it over src/app.js, all in one batch.
    saved = tmp_path / "src" / "app.js"
    saved.parent.mkdir()
    saved.write_text("x", encoding="utf-8")
    temporary = tmp_path / "src" / "sedAb12Cd"
    batch = [("added", temporary), ("modified", temporary), ("deleted", temporary),
             ("added", saved)]
    assert settled_paths(batch) == [saved]
    assert classify(tmp_path, settled_paths(batch)).paths == ["src/app.js"]


def test_a_deleted_file_is_still_a_change(tmp_path: Path) -> None:
    gone = tmp_path / "src" / "old.js"
    assert settled_paths([("deleted", gone)]) == [gone]


def test_writers_temporary_names_are_ignored_even_across_batches(tmp_path: Path) -> None:
    for name in ("sedAb12Cd", ".goutputstream-X1Y2Z3", "app.js___jb_tmp___",
                 "app.js.kate-swp"):
        assert relevant(tmp_path, tmp_path / "src" / name) is None, name
    assert relevant(tmp_path, tmp_path / "src" / "sediment.js") == "src/sediment.js"


def test_a_page_only_save_does_not_sync(tmp_path: Path) -> None:
    changes = classify(tmp_path, [tmp_path / "src" / "index.html"])
    assert changes.page and not changes.needs_sync


def test_the_live_reload_script_goes_before_the_last_body_end() -> None:
    html = b"<html><body><p>x</p><template></body></template></BODY ></html>"
    out = inject_client(html)
    assert out.index(b"/_basedb/dev/client.js") < out.index(b"</BODY >")
    assert out.count(b"<script") == 1
    assert inject_client(b"<p>fragment</p>").endswith(b"</script>")


def test_the_hosts_a_browser_sends_for_loopback() -> None:
    assert allowed_hosts("127.0.0.1", 8790) == {"127.0.0.1:8790", "localhost:8790"}
    assert allowed_hosts("::1", 5) == {"[::1]:5", "localhost:5"}

"""`basedb demo`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from basedb.cli.common import emit_json, json_option, open_client

if TYPE_CHECKING:
    from basedb.deploy.demo import DemoResult


@click.command("demo")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@json_option
def demo_command(directory: Path | None, as_json: bool) -> None:
    """Run the whole journey on the embedded local platform, in DIRECTORY.

    Creates the example site (a team leave planner) with sample data in DIRECTORY
    (default: ./basedb-demo, or ./basedb-demo-2, -3, … when an earlier run left it; a
    DIRECTORY you name must be new or empty), checks it, deploys a preview,
    promotes it to production and calls one of its functions the way an AI agent would.
    Needs no account or configuration: data lives in $BASEDB_DATA_DIR (default: the
    user data dir).
    """
    from basedb.client.profiles import LOCAL
    from basedb.deploy.demo import default_demo_directory, run_demo
    from basedb.workspace.scaffold import ensure_empty_target

    target = directory if directory is not None else default_demo_directory(Path("."))
    ensure_empty_target(target, command="basedb demo", example="another-demo")

    def show(step: str, summary: str) -> None:
        click.echo(f"  {step:<10} {summary}")

    if not as_json:
        click.echo(f"basedb demo: the example site in {target}, on the local platform\n")
    with open_client(LOCAL) as client:
        result = run_demo(target, client, on_step=None if as_json else show)
    if as_json:
        emit_json(result.to_dict())
        return
    _summary(result)


def _summary(result: DemoResult) -> None:
    click.echo(f"\n{result.function_id} ({result.row_count} rows, first "
               f"{len(result.rows)}):")
    for row in result.rows:
        click.echo("  " + "  ".join(f"{key}={value}" for key, value in row.items()
                                   if not key.endswith("_id")))
    click.echo(f"\nProduction URL: {result.prod.base_app_url}")
    click.echo("Open it:")
    for line in result.next_open:
        click.echo(f"  {line}")
    click.echo("Try next:")
    for line in result.next_try:
        click.echo(f"  {line}")

"""`basedb check`."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import workspace_option

FORMATS = ("text", "json", "github", "sarif")


@click.command("check")
@workspace_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="Output format (default: text).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--skip-ai-functions", is_flag=True,
              help="Leave AI Functions out of this run, as `deploy --skip-ai-functions` does.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the report to a file instead of stdout (useful for SARIF).")
@click.pass_context
def check_command(ctx: click.Context, workspace_dir: Path | None, fmt: str | None,
                  as_json: bool, skip_ai_functions: bool, output: Path | None) -> None:
    """Validate the workspace: declarations, SQL, Mutations, FaaS schemas, agent-tools.json.

    Exit status: 0 when there are no errors (hints allowed), 1 with errors, 2 when there
    is no workspace or the usage is wrong.
    """
    if as_json and fmt not in (None, "json"):
        raise click.UsageError("--json conflicts with --format " + str(fmt))
    fmt = "json" if as_json else (fmt or "text")
    if fmt == "json":
        from basedb.cli.common import JSON_MODE_KEY

        ctx.meta[JSON_MODE_KEY] = True

    from basedb.check.reporters import render
    from basedb.check.run import check_workspace
    from basedb.workspace import find_root, load_workspace

    root = find_root(workspace_dir)
    result = check_workspace(load_workspace(root, skip_ai=skip_ai_functions),
                             skip_ai=skip_ai_functions)
    color = output is None and fmt == "text" and click.get_text_stream("stdout").isatty()
    text = render(result, fmt, root=root, color=color)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        click.echo(text, nl=not text.endswith("\n"), color=color)
    for notice in result.notices:
        if fmt != "json":
            click.echo(f"Notice: {notice}", err=True)
    ctx.exit(0 if result.ok else 1)

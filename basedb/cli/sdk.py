"""`basedb sdk pack`: the page SDK as an npm package, for pages that are bundled."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.cli.common import emit_json, json_option
from basedb.cli.groups import HelpfulGroup


@click.group("sdk", cls=HelpfulGroup)
def sdk_group() -> None:
    """The page SDK (@lark-base-open/base-database-app-sdk/page)."""


@sdk_group.command("pack")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True,
              help="The directory to write the tarball into (created if needed).")
@json_option
def pack_command(out_dir: Path, as_json: bool) -> None:
    """Write the page SDK as an npm package tarball that `npm install` accepts.

    Pages that basedb serves as they are need nothing: an import map in every served
    HTML page resolves @lark-base-open/base-database-app-sdk/page (and database-runtime)
    to the platform's /_basedb/runtime.js. A page bundled with npm and vite or esbuild
    resolves the name from node_modules instead; install the tarball there:

    \b
        basedb sdk pack --out vendor
        npm install ./vendor/lark-base-open-base-database-app-sdk-VERSION.tgz

    The package holds the same module (page.js) and its declarations (page.d.ts). The
    tarball is byte-identical for one basedb version.
    """
    from basedb.contracts.sdk_package import pack

    try:
        packed = pack(out_dir)
    except OSError as error:
        from basedb.core.errors import InputError

        raise InputError(f"--out {out_dir}: the tarball could not be written: "
                         f"{error.strerror or error}.", code="SDK_PACK_FAILED",
                         hint="Pass --out a directory you can write to.") from error
    if as_json:
        emit_json(packed.to_dict())
        return
    click.echo(f"Wrote {packed.path} ({packed.name}@{packed.version}).")
    click.echo(f"Install it in the page's project: npm install {packed.path}")

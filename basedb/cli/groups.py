"""The command group class of every `basedb` group: with no subcommand it shows its help.

Click's default for a group called without a subcommand prints the help and exits 2, a
usage error; asking a group what it can do is not one, so basedb exits 0 (as `gh` does).
"""

from __future__ import annotations

import click


class HelpfulGroup(click.Group):
    """A group that answers a bare invocation with its help and exit status 0."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)

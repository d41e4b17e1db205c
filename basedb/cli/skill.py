"""`basedb skill install`: the developer Skill for coding agents."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.agent_tools.install import TARGET_CHOICES
from basedb.cli.agent_tools import show_installed
from basedb.cli.common import emit_json, json_option
from basedb.cli.groups import HelpfulGroup


@click.group("skill", cls=HelpfulGroup)
def skill_group() -> None:
    """The basedb developer Skill (lark-base-database) for coding agents."""


@skill_group.command("install")
@click.option("--target", type=click.Choice(TARGET_CHOICES), default=None,
              help="Which agent's skills root to install into (default: codex).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Install into this skills root instead of an agent's.")
@click.option("--force", is_flag=True,
              help="Replace an existing directory basedb did not install this Skill into.")
@json_option
def install_command(target: str | None, directory: Path | None, force: bool,
                    as_json: bool) -> None:
    """Install the lark-base-database Skill into coding agents.

    The Skill teaches a coding agent to build, check, deploy and call sites with basedb.

    \b
    Targets: codex   $CODEX_HOME/skills (default ~/.codex/skills)
             agents  ~/.agents/skills
             claude  $CLAUDE_CONFIG_DIR/skills (default ~/.claude/skills)

    A directory basedb recorded installing this Skill into is updated in place; any
    other existing directory needs --force. To give agents a published site's
    functions, use `basedb agent-tools skill install` instead.
    """
    from basedb.agent_tools.dev_skill import install_developer_skill
    from basedb.agent_tools.install import target_roots

    result = install_developer_skill(roots=target_roots(target, directory), force=force)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(f"Installed the basedb developer Skill ({result.version}):")
    show_installed(result.installed)

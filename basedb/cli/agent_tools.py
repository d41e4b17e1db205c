"""`basedb agent-tools skill install` and `basedb agent-tools list`."""

from __future__ import annotations

from pathlib import Path

import click

from basedb.agent_tools.install import TARGET_CHOICES, Installed
from basedb.cli.common import (
    connection_options,
    emit_json,
    json_option,
    open_client,
    workspace_option,
)
from basedb.cli.groups import HelpfulGroup

site_option = click.option(
    "--site", default=None, metavar="URL|TOKEN",
    help="The site: its app token or link (default: the site of the current workspace).")


@click.group("agent-tools", cls=HelpfulGroup)
def agent_tools_group() -> None:
    """Let AI agents use the site's published functions: the site Skill, the open list."""


@agent_tools_group.group("skill", cls=HelpfulGroup)
def skill_group() -> None:
    """The site Skill: how local agents discover and call the site's functions."""


@skill_group.command("install")
@site_option
@click.option("--target", type=click.Choice(TARGET_CHOICES), default=None,
              help="Which agent's skills root to install into (default: codex).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Install into this skills root instead of an agent's.")
@click.option("--force", is_flag=True,
              help="Replace an existing directory: one basedb has no record of, or any "
                   "directory of a project install (without --site).")
@json_option
@workspace_option
@connection_options
def install_command(site: str | None, target: str | None, directory: Path | None,
                    force: bool, as_json: bool, workspace_dir: Path | None,
                    profile: str | None) -> None:
    """Install the site's production Skill into local agents.

    The Skill lists the functions open to agents (read or write, what each is for) and
    how to call them; it never stores parameters, so agents read the live description
    before each call. Only production is installable.

    \b
    Targets: codex   $CODEX_HOME/skills (default ~/.codex/skills)
             agents  ~/.agents/skills
             claude  $CLAUDE_CONFIG_DIR/skills (default ~/.claude/skills)

    With --site, any member can install from any directory; running it again updates
    that site's own install, and a same-named skill of another site makes this one take
    a short suffix. Without --site (the workspace's site), an existing directory needs
    --force. Unknown existing directories always need --force.
    """
    from basedb.agent_tools.install import target_roots
    from basedb.agent_tools.site_skill import install_site_skill, resolve_site

    roots = target_roots(target, directory)
    app_token, root = resolve_site(site, workspace_dir)
    from basedb.client.profiles import current_profile

    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        result = install_site_skill(client, app_token=app_token, endpoint=resolved.endpoint,
                                    profile_name=resolved.name, roots=roots, force=force,
                                    from_site=site is not None)
    if as_json:
        emit_json(result.to_dict())
        return
    click.echo(f"Installed the Skill of site {app_token} (production deployment "
               f"{result.skill.deployment_id}, {result.skill.function_count} functions open "
               "to agents):")
    show_installed(result.installed)
    if result.skill.read_function_count:
        click.echo("Check it: ask your agent to describe one read function of the site and "
                   "call it once.")
    else:  # a write or AI call is no check (upstream agent-tools.md)
        click.echo("Not checked: the site has no read function open to agents, so there is "
                   "no safe call to check the install with.")


@agent_tools_group.command("list")
@site_option
@click.option("--env", type=click.Choice(["prod", "preview"]), default="prod",
              show_default=True, help="Which release to list.")
@click.option("--query", default="", metavar="WORDS",
              help="Search: the functions best matching these words, best first (id, "
                   "description, table and parameter names).")
@click.option("--table", default="", metavar="TABLE",
              help="Only functions working on this table (case-insensitive).")
@click.option("--access", type=click.Choice(["read", "write"]), default=None,
              help="Only functions that read, or that may write.")
@click.option("--limit", type=click.IntRange(1, 200), default=20, show_default=True,
              help="With --query: how many matches to show.")
@json_option
@workspace_option
@connection_options
def list_command(site: str | None, env: str, query: str, table: str, access: str | None,
                 limit: int, as_json: bool, workspace_dir: Path | None,
                 profile: str | None) -> None:
    """The site's functions open to agents, with their access and schema status.

    On a site of hundreds of functions, --query finds the ones for a task (ranked, best
    first), and --table and --access narrow the list."""
    from basedb.agent_tools.site_skill import list_open_functions, resolve_site
    from basedb.client.profiles import current_profile

    app_token, root = resolve_site(site, workspace_dir)
    resolved, _ = current_profile(profile, root)
    with open_client(resolved) as client:
        result = list_open_functions(client, app_token, env, query=query, table=table,
                                     access=access, limit=limit)
    if as_json:
        emit_json(result.to_dict())
        return
    functions = result.functions
    if not functions:
        what = "matches the search" if query or table or access else "is open to agents"
        click.echo(f"No function of site {app_token} {what} in {env}.")
        return
    lead = "best matches" if query else "functions"
    click.echo(f"{len(functions)} {lead} of site {app_token} open to agents ({env}, "
               f"deployment {result.deployment_id}):")
    for item in functions:
        description = " ".join(str(item.get("description") or "").split())
        if len(description) > 60:
            description = description[:59] + "…"
        click.echo(f"  {item['functionId']:<24} {item['access']:<5} "
                   f"{item.get('functionType', ''):<17} {item.get('schemaStatus', ''):<13} "
                   f"{description}")


def show_installed(installed: Installed) -> None:
    """Where an install wrote its skills, its notices, and how to read the Skill."""
    for skill in installed.skills:
        click.echo(f"  {skill.target:<7} {skill.name:<24} {skill.path}")
    for notice in installed.notices:
        click.echo(f"Notice: {notice}")
    click.echo(f"Read it: {installed.skill_command}")

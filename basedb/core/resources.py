"""Files shipped with basedb: workspace templates and the developer Skill.

In a source checkout they live at the repository root (`templates/`, `skills/`); a wheel
carries the same trees inside the package as `basedb/_templates` and `basedb/_skills`
(see setup.py). The installed location is tried first, so a stray `templates/` directory
next to an installed package is never mistaken for ours.
"""

from __future__ import annotations

from pathlib import Path

from basedb.core.errors import InputError, InternalError

# The `basedb` package directory (this module lives in basedb/core/).
_PACKAGE_DIR = Path(__file__).resolve().parent.parent
TEMPLATE_SCHEMA_FILE = "_template.json"


def _resource_root(installed_name: str, source_name: str) -> Path:
    installed = _PACKAGE_DIR / installed_name
    if installed.is_dir():
        return installed
    checkout = _PACKAGE_DIR.parent
    source = checkout / source_name
    if source.is_dir() and (checkout / "pyproject.toml").is_file():
        return source
    raise InternalError(
        f"basedb's {source_name}/ directory is missing: looked for {installed} and {source}.",
        code="RESOURCES_MISSING",
        hint="Reinstall basedb; a wheel built from an incomplete checkout lacks its data files.",
    )


def templates_root() -> Path:
    """The directory holding one subdirectory per workspace template."""
    return _resource_root("_templates", "templates")


def template_names() -> list[str]:
    """Names of the shipped templates (directories with a _template.json), sorted."""
    root = templates_root()
    return sorted(p.name for p in root.iterdir()
                  if p.is_dir() and (p / TEMPLATE_SCHEMA_FILE).is_file())


def template_dir(name: str) -> Path:
    """The directory of template `name`; InputError naming the choices if there is none."""
    names = template_names()
    if name not in names:
        raise InputError(
            f"Unknown template {name!r}; available templates: {', '.join(names)}.",
            code="TEMPLATE_UNKNOWN",
            hint=f"Pass --template with one of: {', '.join(names)}.",
        )
    return templates_root() / name


def skills_dir() -> Path:
    """The directory holding the developer Skill(s), e.g. `lark-base-database/SKILL.md`."""
    return _resource_root("_skills", "skills")

"""Package layout that pyproject.toml cannot express on its own.

The workspace templates and the developer Skill live at the repository root
(`templates/`, `skills/`) but ship inside the package as `basedb._templates` and
`basedb._skills`, where `basedb.resources` finds them in an installed wheel. Everything
else about the project is declared in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent
RESOURCE_PACKAGES = {"basedb._templates": "templates", "basedb._skills": "skills"}
# setuptools refuses a mapped directory that does not exist; a checkout lacking one still
# builds, and basedb.resources names the missing directory when it is needed.
SHIPPED = {name: path for name, path in RESOURCE_PACKAGES.items() if (ROOT / path).is_dir()}

setup(
    packages=[*find_packages(include=["basedb", "basedb.*"]), *SHIPPED],
    package_dir=SHIPPED,
)

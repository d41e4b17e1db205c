"""Package layout that pyproject.toml cannot express on its own.

The workspace templates and the developer Skill live at the repository root
(`templates/`, `skills/`) but ship inside the package as `basedb._templates` and
`basedb._skills`, where `basedb.resources` finds them in an installed wheel. Everything
else about the project is declared in pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        *find_packages(include=["basedb", "basedb.*"]),
        "basedb._templates",
        "basedb._skills",
    ],
    package_dir={"basedb._templates": "templates", "basedb._skills": "skills"},
)

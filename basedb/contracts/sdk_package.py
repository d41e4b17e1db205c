"""The page SDK as an npm package, for pages that are bundled (`basedb sdk pack`).

A page served as it is gets the SDK through the import map basedb injects
(basedb.core.page_sdk). A page built with npm and a bundler (vite, esbuild) resolves
`@lark-base-open/base-database-app-sdk/page` from node_modules instead, so basedb writes
that package as a tarball `npm install` accepts:

    package/package.json   name, version (basedb's), "exports": {"./page": …}
    package/page.js        the module served at /_basedb/runtime.js, byte for byte
    package/page.d.ts      its declarations
    package/README.md

The tarball is byte-identical for the same basedb version (sorted entries, fixed times,
owners and modes), so a lockfile's integrity hash stays valid across packs.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

from basedb import __version__
from basedb.core.atomic import write_file_atomically
from basedb.core.frozen import frozen_dataclass
from basedb.core.page_sdk import (
    SDK_PACKAGE,
    SDK_SPECIFIER,
    declarations_source,
    runtime_source,
)

# npm's own tarballs carry this time for every entry (1985-10-26T08:15:00Z).
_NPM_MTIME = 499162500
README = f"""# {SDK_PACKAGE}

The basedb page SDK, packed by `basedb sdk pack` for pages that are bundled. Pages that
basedb serves as they are do not need it: their import map resolves
`{SDK_SPECIFIER}` to the platform's `/_basedb/runtime.js`, the same module.

```js
import {{ startBaseApp, invokeDatabaseFunction }} from "{SDK_SPECIFIER}";

startBaseApp(async () => {{
  const data = await invokeDatabaseFunction("listTasks", {{ status: "Open" }});
}});
```
"""


@frozen_dataclass
class PackedSdk:
    """A written tarball."""

    path: Path
    name: str
    version: str
    sha512: str  # the base64 "integrity" npm records, without its "sha512-" prefix
    size: int

    def to_dict(self) -> dict[str, object]:
        return {"path": str(self.path), "name": self.name, "version": self.version,
                "integrity": "sha512-" + self.sha512, "size": self.size,
                "install": f"npm install {self.path}"}


def package_json() -> bytes:
    manifest = {
        "name": SDK_PACKAGE,
        "version": __version__,
        "description": "The basedb page SDK: startBaseApp, Function calls, AI Functions.",
        "license": "MIT",
        "type": "module",
        "sideEffects": False,
        "exports": {
            "./page": {"types": "./page.d.ts", "default": "./page.js"},
            "./package.json": "./package.json",
        },
    }
    return (json.dumps(manifest, indent=2) + "\n").encode("utf-8")


def tarball_name() -> str:
    """npm pack's name for the package: scope and slash folded into the file name."""
    return f"{SDK_PACKAGE.lstrip('@').replace('/', '-')}-{__version__}.tgz"


def build_tarball() -> bytes:
    """The package as npm pack would write it (gzip of a tar under `package/`)."""
    entries = {
        "package/README.md": README.encode("utf-8"),
        "package/package.json": package_json(),
        "package/page.d.ts": declarations_source(),
        "package/page.js": runtime_source(),
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(entries):
            data = entries[name]
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), _NPM_MTIME, 0o644
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), compresslevel=9, mtime=0)


def pack(out_dir: Path) -> PackedSdk:
    """Write the tarball into `out_dir` (created if needed)."""
    data = build_tarball()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = (out_dir / tarball_name()).resolve()
    write_file_atomically(path, data)
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    return PackedSdk(path=path, name=SDK_PACKAGE, version=__version__, sha512=digest,
                     size=len(data))

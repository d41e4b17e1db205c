"""The floor of the invoke benchmark: the least a Starlette + uvicorn app can do to answer
an invoke — parse the JSON body, bind the parameters, run the same compiled SQL on the
same SQLite file, and answer the rows in the platform's envelope. No authentication, no
site or deployment lookup, no access log, no type conversion.

    python -m bench.peer_app CONFIG.json

CONFIG.json: {"database": path, "sql": the compiled query, "slots": [1-based parameter
number of each `?`], "names": [parameter names in order], "path": the route}. It prints
"listening on http://127.0.0.1:PORT" on stderr once it accepts connections, as
`basedb serve` does, so bench.serve_process can start both alike.
"""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route


def build_app(config: dict[str, Any]) -> Starlette:
    database = Path(config["database"])
    connection = sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True,
                                 isolation_level=None, check_same_thread=False)
    sql: str = config["sql"]
    slots: list[int] = config["slots"]
    names: list[str] = config["names"]

    async def invoke(request: Request) -> Response:
        params = (await request.json())["params"]
        values = [params.get(name) for name in names]
        cursor = connection.execute(sql, [values[slot - 1] for slot in slots])
        columns = [column[0] for column in cursor.description]
        rows = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
        body = json.dumps({"code": 0, "msg": "success", "data": {"rows": rows}},
                          ensure_ascii=False, separators=(",", ":"))
        return Response(body.encode("utf-8"), media_type="application/json")

    return Starlette(routes=[Route(config["path"], invoke, methods=["POST"])])


def main(argv: list[str]) -> None:
    config = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    app = build_app(config)
    # proto must say TCP for asyncio to set TCP_NODELAY (as in `basedb serve`).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(2048)
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    print(f"listening on http://127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.run(sockets=[listener])


if __name__ == "__main__":
    main(sys.argv[1:])

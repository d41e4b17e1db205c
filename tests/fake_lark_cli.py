"""A small stand-in for the `lark-cli` executable, written into a test's PATH.

The real lark-cli is a Go binary its npm package downloads at install time, which this
machine cannot fetch, so tests run this instead. It forwards `lark-cli [--profile P] api
METHOD PATH [--as user|bot] [--params JSON] [--data JSON|-] [--file f=path] [--output
path]` to the stand-in (FAKE_LARK_URL) and answers as lark-cli's source says its `api`
command does (`cmd/api/api.go`, `internal/client/response.go`, `internal/output/`):
the body on stdout, exit 0; a non-zero Lark code as the error envelope on stderr with the
classification's exit code; `auth status` as JSON. Every argv is appended to
FAKE_LARK_LOG so tests see exactly how basedb called it.

Its sign-in: FAKE_LARK_APP_ID / FAKE_LARK_APP_SECRET (a bot, via the tenant token
endpoint) and FAKE_LARK_USER_TOKEN (a user); FAKE_LARK_STATE=not_configured|no_user
makes it report those states instead.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

AUTH = {99991661, 99991671, 99991668, 99991663, 99991677}
PERMISSION = {99991672, 99991676, 99991679, 230027}


def fail(kind: str, message: str, code: int | None = None, detail: Any = None,
         hint: str | None = None, identity: str | None = None, exit_code: int = 1) -> None:
    error: dict[str, Any] = {"type": kind}
    if code:
        error["code"] = code
    error["message"] = message
    if hint:
        error["hint"] = hint
    if detail:
        error["detail"] = detail
    envelope: dict[str, Any] = {"ok": False}
    if identity:
        envelope["identity"] = identity
    envelope["error"] = error
    sys.stderr.write(json.dumps(envelope, indent=2, ensure_ascii=False) + "\n")
    sys.exit(exit_code)


def http(method: str, url: str, body: bytes | None, headers: dict[str, str]) -> tuple[
        int, bytes, dict[str, str]]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read(), {k.lower(): v for k, v in answer.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, error.read(), {k.lower(): v for k, v in error.headers.items()}
    except OSError as error:
        fail("network", f"API call failed: {error}", exit_code=4)
        raise


def token(identity: str) -> str:
    if identity == "user":
        found = os.environ.get("FAKE_LARK_USER_TOKEN")
        if not found:
            fail("auth", "no access token available for user", exit_code=3)
        return str(found)
    body = json.dumps({"app_id": os.environ["FAKE_LARK_APP_ID"],
                       "app_secret": os.environ["FAKE_LARK_APP_SECRET"]}).encode()
    _, raw, _ = http("POST", os.environ["FAKE_LARK_URL"] +
                     "/open-apis/auth/v3/tenant_access_token/internal", body,
                     {"Content-Type": "application/json"})
    return str(json.loads(raw)["tenant_access_token"])


def api(args: list[str]) -> None:
    method, path = args[0].upper(), args[1]
    options: dict[str, str] = {}
    rest = args[2:]
    while rest:
        options[rest[0]] = rest[1]
        rest = rest[2:]
    identity = options.get("--as", "user")
    params = json.loads(options.get("--params", "{}"))
    query = "&".join(f"{k}={v}" for k, values in params.items()
                     for v in (values if isinstance(values, list) else [values]))
    url = os.environ["FAKE_LARK_URL"] + path + (f"?{query}" if query else "")
    headers = {"Authorization": f"Bearer {token(identity)}"}
    body: bytes | None = None
    if "--file" in options:
        field, _, file_path = options["--file"].partition("=")
        fields = json.loads(options.get("--data", "{}"))
        boundary = "fakelarkcliboundary"
        parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                 .encode() for k, v in fields.items()]
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
                     f'filename="{Path(file_path).name}"\r\nContent-Type: '
                     'application/octet-stream\r\n\r\n'.encode() + Path(file_path).read_bytes()
                     + b"\r\n")
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
    elif "--data" in options:
        data = options["--data"]
        body = (sys.stdin.buffer.read() if data == "-" else data.encode())
        headers["Content-Type"] = "application/json"
    status, raw, answer_headers = http(method, url, body, headers)
    ctype = answer_headers.get("content-type", "")
    if "json" not in ctype:
        if status >= 400:
            fail("http_error", f"HTTP {status}: {raw.decode(errors='replace')}",
                 exit_code=4 if status >= 500 else 1, identity=identity)
        target = Path(options.get("--output", "download.bin"))
        target.write_bytes(raw)
        print(json.dumps({"saved_path": str(target.resolve()), "size_bytes": len(raw),
                          "content_type": ctype}, indent=2))
        return
    result = json.loads(raw)
    code = result.get("code", 0) if isinstance(result, dict) else 0
    if code:
        permission = code in PERMISSION
        fail("auth" if code in AUTH else "permission" if permission else
             "rate_limit" if code == 99991400 else "api_error",
             f"Permission denied [{code}]" if permission else
             f"API error: [{code}] {result.get('msg', '')}", code=code,
             detail=result.get("error"), identity=identity,
             exit_code=3 if code in AUTH else 1)
    print(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))


def auth_status() -> None:
    state = os.environ.get("FAKE_LARK_STATE", "")
    if state == "not_configured":
        fail("config", "not configured", hint="run `lark-cli config init --new`", exit_code=2)
    report: dict[str, Any] = {"appId": os.environ.get("FAKE_LARK_APP_ID"), "brand": "feishu",
                              "defaultAs": "auto"}
    if state == "no_user" or not os.environ.get("FAKE_LARK_USER_TOKEN"):
        report.update(identity="bot", note="No user logged in.")
    else:
        report.update(identity="user", userName="Fake User", userOpenId="ou_fake",
                      tokenStatus="valid")
    print(json.dumps(report, indent=2))


def main() -> None:
    argv = sys.argv[1:]
    log = os.environ.get("FAKE_LARK_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(argv) + "\n")
    if argv[:1] == ["--profile"]:
        argv = argv[2:]
    if argv[:1] == ["api"]:
        if os.environ.get("FAKE_LARK_STATE") == "not_configured":
            fail("config", "not configured", exit_code=2)
        api(argv[1:])
    elif argv[:2] == ["auth", "status"]:
        auth_status()
    else:
        print("fake lark-cli: " + " ".join(argv))


if __name__ == "__main__":
    main()

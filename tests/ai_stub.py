"""A small OpenAI-compatible server on 127.0.0.1 for AI Function tests: a real HTTP
server speaking chat completions (plain, and streamed as Server-Sent Events) and image
generations, so the platform's AI runtime is tested over a socket as it meets a model
server.

    with OpenAIStub() as stub:                # stub.base_url → http://127.0.0.1:PORT/v1
        monkeypatch.setenv("BASEDB_AI_BASE_URL", stub.base_url)

A streamed answer sends its first piece, then waits for `stub.release` before the rest
(unless `hold=False`): a test that sees the first piece before releasing the rest has
shown that the answer is relayed as it is written, not gathered first. With `cut=True`
the stream ends after its first piece, as a model server that dies midway.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

PIECES = ("两人", "休假", "，共 3 天。")
MODEL = "stub-model"
IMAGE_URL = "https://images.example/cover.png"
RELEASE_GUARD_S = 60  # a guard against a hang, not a window


class OpenAIStub:
    def __init__(self, *, hold: bool = True, cut: bool = False,
                 hold_images: bool = False) -> None:
        self.hold = hold
        self.hold_images = hold_images  # image answers wait for `release` too
        self.cut = cut  # a stream ends after its first piece, without an end
        self.release = threading.Event()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append((self.path, body))
                if self.path == "/v1/chat/completions" and body.get("stream"):
                    self._stream()
                elif self.path == "/v1/chat/completions":
                    self._json({"id": "c1", "object": "chat.completion", "model": MODEL,
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant",
                                                         "content": "".join(PIECES)}}],
                                "usage": {"total_tokens": 9}})
                elif self.path == "/v1/images/generations":
                    if stub.hold_images:
                        stub.release.wait(RELEASE_GUARD_S)
                    self._json({"created": 1, "data": [{"url": IMAGE_URL}]})
                else:
                    self._json({"error": {"message": "no such route"}}, status=404)

            def _json(self, document: Any, status: int = 200) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for index, piece in enumerate(PIECES):
                    self._chunk({"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                                 "choices": [{"index": 0, "delta": {"content": piece}}]})
                    if index == 0 and stub.cut:
                        self.close_connection = True
                        return  # no terminating chunk: the connection simply ends
                    if index == 0 and stub.hold:
                        stub.release.wait(RELEASE_GUARD_S)
                self._chunk({"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                             "choices": [], "usage": {"total_tokens": 9}})
                self._write(b"data: [DONE]\n\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _chunk(self, document: Any) -> None:
                self._write(f"data: {json.dumps(document, ensure_ascii=False)}\n\n".encode())

            def _write(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

"""A small OpenAI-compatible server on 127.0.0.1 for tests (a thread running http.server).

`FakeOpenAI.script` is a list of actions consumed one per chat request: an int is an HTTP error
status to return, a float is a delay in seconds before answering, a str is the answer, a dict is the
assistant message to send (e.g. with native `tool_calls`), and a callable gets the request body and
returns any of these. When the script is empty the server answers `default`. `/health` and
`/v1/models` answer 200 once `healthy` is true.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, model: str = "fake-model", default: str = "fake answer") -> None:
        self.model = model
        self.default = default
        self.script: list[Any] = []
        self.healthy = True
        self.chat_requests: list[dict[str, Any]] = []
        self.health_checks = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_action(self, body: dict[str, Any]) -> Any:
        with self._lock:
            self.chat_requests.append(body)
            action = self.script.pop(0) if self.script else self.default
        return action(body) if callable(action) else action

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_GET(self) -> None:
                fake.health_checks += 1
                if not fake.healthy:
                    self._send(503, {"error": "starting"})
                elif self.path == "/health":
                    self._send(200, {})
                elif self.path == "/v1/models":
                    self._send(200, {"object": "list", "data": [{"id": fake.model, "object": "model"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                action = fake.next_action(body)
                if isinstance(action, float):
                    time.sleep(action)
                    action = fake.default
                if isinstance(action, int):
                    self._send(action, {"error": {"message": f"fake error {action}", "type": "fake", "code": action}})
                    return
                message = action if isinstance(action, dict) else {"role": "assistant", "content": action}
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                self._send(200, {
                    "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
                    "model": body.get("model", fake.model),
                    "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}],
                    "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
                })

        return Handler


def main(argv: list[str]) -> None:
    """Serve on PORT (argv[0]) as MODEL (argv[1], optional) for SECONDS (argv[2], optional; default: forever)."""
    port = int(argv[0])
    server = FakeOpenAI(model=argv[1] if len(argv) > 1 else "fake-model")
    server._server.server_close()
    server._server = ThreadingHTTPServer(("127.0.0.1", port), server._handler())
    server._server.daemon_threads = True
    print(f"serving {server.model} on {server.api_base}", flush=True)
    if len(argv) > 2:
        threading.Timer(float(argv[2]), server._server.shutdown).start()
    server._server.serve_forever()


if __name__ == "__main__":  # a stand-in server process
    import sys

    main(sys.argv[1:])

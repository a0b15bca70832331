"""A request body limit that counts bytes as they arrive. A ``Transfer-Encoding: chunked`` body
declares no length, so checking the Content-Length header alone let one of 256 MiB be read whole.

Past the limit, reading the body raises a 413 ``HTTPException`` where the route reads it, and the
app's own error handler answers (one JSON line, one log line), like any other bad request. Starlette's
``max_body_size`` does the counting too, but answers in plain text outside the app's handlers.
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class StreamedBodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise HTTPException(413, f"request body over {self.max_bytes} bytes")
            return message

        await self.app(scope, counted_receive, send)

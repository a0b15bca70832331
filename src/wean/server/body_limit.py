"""A request body limit that counts bytes as they arrive, and a time limit on each of its parts.
A ``Transfer-Encoding: chunked`` body declares no length, so checking the Content-Length header
alone let one of 256 MiB be read whole; a body that stops arriving held its request forever.

Past the limit, reading the body raises a 413 ``HTTPException`` where the route reads it (a 408
when a part takes longer than ``timeout_s``), and the app's own error handler answers (one JSON
line, one log line), like any other bad request. Starlette's ``max_body_size`` does the counting
too, but answers in plain text outside the app's handlers.
"""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class StreamedBodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float):
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received = 0
        body_done = False

        async def counted_receive() -> Message:
            nonlocal received, body_done
            if body_done:  # later calls wait for the client to leave: no time limit
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.timeout_s)
            except asyncio.TimeoutError:
                raise HTTPException(408, f"request body stalled: no part of it within {self.timeout_s:g} s") from None
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise HTTPException(413, f"request body over {self.max_bytes} bytes")
            return message

        await self.app(scope, counted_receive, send)

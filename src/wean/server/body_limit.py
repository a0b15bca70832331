"""A request body limit that counts bytes as they arrive, and time limits on each of its parts and
on the whole. A ``Transfer-Encoding: chunked`` body declares no length, so checking the
Content-Length header alone let one of 256 MiB be read whole; a body that stops arriving held its
request forever, and one that trickles a byte at a time, just inside the time allowed each part,
held it as long as its sender liked.

Past the limit, reading the body raises a 413 ``HTTPException`` where the route reads it (a 408
when a part takes longer than ``timeout_s``, or the whole longer than ``deadline_s``), and the
app's own error handler answers (one JSON line, one log line), like any other bad request.
Starlette's ``max_body_size`` does the counting too, but answers in plain text outside the app's
handlers.
"""

from __future__ import annotations

import asyncio

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class StreamedBodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float, deadline_s: float = float("inf")):
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        received = 0
        body_done = False
        deadline = asyncio.get_running_loop().time() + self.deadline_s

        async def counted_receive() -> Message:
            nonlocal received, body_done
            if body_done:  # later calls wait for the client to leave: no time limit
                return await receive()
            left = deadline - asyncio.get_running_loop().time()
            try:
                message = await asyncio.wait_for(receive(), max(min(self.timeout_s, left), 0))
            except asyncio.TimeoutError:
                if left <= self.timeout_s:
                    raise HTTPException(408, f"request body not received within {self.deadline_s:g} s") from None
                raise HTTPException(408, f"request body stalled: no part of it within {self.timeout_s:g} s") from None
            if message["type"] == "http.disconnect":  # the client left, or was closed to make room: one log line
                body_done = True
                raise HTTPException(400, "the connection closed before the request body arrived")
            body_done = not message.get("more_body", False)
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise HTTPException(413, f"request body over {self.max_bytes} bytes")
            return message

        await self.app(scope, counted_receive, send)

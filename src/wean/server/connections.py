"""Connections that cannot hold the server: uvicorn's HTTP/1.1 protocol (h11) with guards it lacks.

- A client gets ``header_timeout_s`` to send a request's headers, from its connection or from the
  first byte of its next request; then a 408 and the connection closes (uvicorn times out only
  idle keep-alive connections, so clients that never finish their headers would hold every file
  descriptor).
- At most ``max_connections`` open: past them, the connection that has waited longest without a
  request in progress, else the one whose request body has been arriving longest (for more than
  ``SLOW_BODY_S`` at under ``MIN_BODY_RATE``: a body sent at once takes milliseconds), is closed
  with a 503 to make room (slow or idle clients give way to working ones). If none is either, the
  newcomer is served all the same, within ``HELD_ROOM`` more, and asks again for room every
  ``SLOW_BODY_S`` while it is open (a burst of slow clients does not turn away the normal ones that
  come in its first second); past that room the newcomer gets the 503.
  A body that trickles in is cut anyway at ``body_deadline_s`` (:mod:`wean.server.body_limit`).
  Refused connections linger briefly (see ``refuse``) within ``REFUSING_ROOM`` + ``BACKLOG`` more;
  past that a newcomer is closed at once.
  :func:`wean.server.app.uvicorn_config` keeps all of it below the open-file limit.
- An answer sent before its request's body was read (413, 401, ...) reaches a client that is still
  sending: the rest of the body is read and dropped (for ``LINGER_S`` at most, while parts keep
  coming within ``body_timeout_s``) before the connection closes. Left unread, it would make the
  kernel reset the connection, and the client lose the answer.
- Every error is JSON, those of the HTTP layer (a malformed request) included.
"""
from __future__ import annotations

import json
import logging
import time

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

LINGER_S = 30.0  # how long a body nobody will read is drained, at most
REFUSED_LINGER_S = 2.0  # how long a refused client's bytes are read and dropped after its answer
REFUSING_ROOM = 32  # connections beyond max_connections that may linger after their refusal
BACKLOG = 128  # connections the kernel queues unaccepted; asyncio accepts up to as many in one go
# a request body still arriving after SLOW_BODY_S at under MIN_BODY_RATE bytes/s is a slow
# client's, which may make room past the connection limit: a body of a few hundred bytes comes with
# its headers, and a large one arrives far faster (256 KB, the default bound, in 0.5 s at 4 Mbit/s)
SLOW_BODY_S = 0.5
MIN_BODY_RATE = 16 * 1024
HELD_ROOM = 32  # connections beyond max_connections served while they wait for a slow body to make room


def json_response(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 response, written below h11: for a connection with no request to answer."""
    body = json.dumps({"error": message}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode("ascii") + body


class _Transport:
    """A connection's transport as uvicorn's request cycle sees it: the close that follows an
    answer to a request whose body is still coming (the request said ``Connection: close``, or
    HTTP/1.0) becomes a drain of that body, like the keep-alive case of on_response_complete."""

    def __init__(self, transport, protocol: "H11Protocol"):
        self._transport, self._protocol = transport, protocol

    def close(self) -> None:
        protocol = self._protocol
        if (protocol.conn.their_state is h11.SEND_BODY and not protocol.draining and not protocol.refused
                and not protocol.shutting_down and not self._transport.is_closing()):
            protocol.start_draining()
        else:
            self._transport.close()

    def __getattr__(self, name: str):
        return getattr(self._transport, name)


def guarded_protocol(header_timeout_s: float, body_timeout_s: float, max_connections: int) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the guards of this module, for ``uvicorn.Config(http=...)``."""

    class GuardedProtocol(H11Protocol):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self.transport = _Transport(transport, self)
            self.shutting_down = False
            self.idle_since = time.monotonic()  # no request in progress since
            self.refused = False
            self.heard = False  # whether it has sent anything (read by data_received)
            self.body_since = None  # when its request's body began to arrive, while it does
            self.body_bytes = 0  # bytes received since then
            self.room_timer = None  # held past the cap: when it next asks for room
            self.header_timer = None
            self.linger_timer = None
            self.draining = False
            self.linger_deadline = 0.0
            # refused connections still lingering, and those closed but not yet gone (a burst of
            # accepts runs before any close completes), fill the room the file limit leaves
            if len(self.connections) > max_connections + REFUSING_ROOM + BACKLOG:
                self.refuse(503, "Service Unavailable", "the server is at its connection limit", linger=False)
                return
            if self.open_count() > max_connections and not self.make_room():
                if self.open_count() > max_connections + HELD_ROOM:  # its request may be on its way: lingered
                    self.refuse(503, "Service Unavailable", f"the server has {max_connections} connections open; "
                                "try again later")
                    return
                self.hold()  # served meanwhile, and room made for it once a body counts as slow
            self.arm_header_timer()

        def hold(self) -> None:
            """Ask for room again every SLOW_BODY_S while this connection is open past the cap."""
            self.room_timer = None
            if self.refused or self.transport.is_closing() or self.make_room():
                return
            self.room_timer = self.loop.call_later(SLOW_BODY_S, self.hold)

        def open_count(self) -> int:
            return sum(not getattr(other, "refused", False) for other in self.connections)

        def make_room(self) -> bool:
            """Past max_connections, close the connection idle longest, else the one whose body
            has been arriving longest (slow); False where none is either."""
            if self.open_count() <= max_connections:
                return True
            others = [other for other in self.connections if other is not self and isinstance(other, GuardedProtocol)]
            idle = [other for other in others if other.idle()]
            slow = [other for other in others if other.slow_body()]
            if idle:  # one whose bytes were all read closes at once without a reset: those first
                evicted = min(idle, key=lambda other: (not other.heard, other.idle_since))
                evicted.refuse(503, "Service Unavailable", "closed to make room: the server is at its connection "
                               "limit", linger=not evicted.heard)
            elif slow:
                evicted = min(slow, key=lambda other: other.body_since)
                evicted.refuse(503, "Service Unavailable", f"closed to make room: the request body took over "
                               f"{SLOW_BODY_S:g} s and the server is at its connection limit")
            return bool(idle or slow)

        def slow_body(self) -> bool:
            """A body arriving for over SLOW_BODY_S at under MIN_BODY_RATE, where the server is not
            the one holding it back (reading paused, or the client waiting for 100 Continue)."""
            if self.body_since is None or self.conn.their_state is not h11.SEND_BODY:
                return False
            age = time.monotonic() - self.body_since
            held_back = self.flow.read_paused or getattr(self.cycle, "waiting_for_100_continue", False)
            return (age > SLOW_BODY_S and self.body_bytes < MIN_BODY_RATE * age and not held_back
                    and not self.draining and not self.refused and not self.transport.is_closing())

        def idle(self) -> bool:
            return (self.conn.their_state is h11.IDLE and not self.draining and not self.refused
                    and not self.transport.is_closing())

        def refuse(self, status: int, reason: str, message: str, linger: bool = True) -> None:
            """Answer and close. Bytes the client sent that nobody read would make the close a
            reset, and the client lose the answer: with ``linger`` (a connection whose bytes may
            not have been read yet) the write side closes first, and what still comes is read
            and dropped for REFUSED_LINGER_S."""
            self.cancel_timers()
            if self.transport.is_closing() or self.refused:
                return
            self.refused = True
            if self.cycle is not None:  # a request under way (its body arriving): it ends unanswered by the app
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.write(json_response(status, reason, message))
            if not linger:
                self.transport.close()
                return
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.flow.resume_reading()
            self.linger_timer = self.loop.call_later(REFUSED_LINGER_S, self.transport.close)

        def eof_received(self) -> bool | None:
            if self.refused:
                self.transport.close()
            return super().eof_received()

        def arm_header_timer(self) -> None:
            if self.header_timer is None:
                self.header_timer = self.loop.call_later(header_timeout_s, self.headers_too_slow)

        def headers_too_slow(self) -> None:
            self.header_timer = None
            if self.conn.their_state is h11.IDLE:  # what it sent was read: no reset to fear
                self.refuse(408, "Request Timeout", f"request headers not received within {header_timeout_s:g} s",
                            linger=False)

        def cancel_timers(self) -> None:
            for timer in (self.header_timer, self.linger_timer, self.room_timer):
                if timer is not None:
                    timer.cancel()
            self.header_timer = self.linger_timer = self.room_timer = None

        def data_received(self, data: bytes) -> None:
            self.heard = True
            if self.refused:
                return
            if self.draining:
                self.conn.receive_data(data)
                self.drain()
                self.arm_linger_timer()
                return
            super().data_received(data)
            if self.transport.is_closing():
                return
            if self.conn.their_state is h11.IDLE:  # the headers are not all here yet
                self.arm_header_timer()
            elif self.header_timer is not None:
                self.header_timer.cancel()
                self.header_timer = None
            if self.conn.their_state is h11.SEND_BODY:
                if self.body_since is None:
                    self.body_since, self.body_bytes = time.monotonic(), 0
                self.body_bytes += len(data)
            else:
                self.body_since = None

        def on_response_complete(self) -> None:
            if self.draining or (self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing()):
                self.server_state.total_requests += 1
                if not self.draining:
                    self.start_draining()
                return
            self.idle_since = time.monotonic()
            super().on_response_complete()

        def start_draining(self) -> None:
            self.draining = True
            if self.cycle is not None:
                self.cycle.body = bytearray()
            self.flow.resume_reading()
            self.linger_deadline = time.monotonic() + LINGER_S
            self.drain()
            self.arm_linger_timer()

        def shutdown(self) -> None:
            self.shutting_down = True
            super().shutdown()

        def arm_linger_timer(self) -> None:
            """Close when the body pauses longer than body_timeout_s, or at the linger deadline."""
            if self.transport.is_closing():
                return
            if self.linger_timer is not None:
                self.linger_timer.cancel()
            wait = min(body_timeout_s, self.linger_deadline - time.monotonic())
            self.linger_timer = self.loop.call_later(max(wait, 0), self.transport.close)

        def drain(self) -> None:
            """Read the body of a request already answered, drop it, and close once it ends."""
            while True:
                try:
                    event = self.conn.next_event()
                except h11.ProtocolError:
                    event = h11.ConnectionClosed()
                if event is h11.NEED_DATA:
                    return
                if not isinstance(event, h11.Data):  # its end, or the client's
                    self.cancel_timers()
                    self.transport.close()
                    return

        def send_400_response(self, msg: str) -> None:
            body = json.dumps({"error": f"not a valid HTTP request: {msg.rstrip('.')}"}).encode()
            headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
            for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                          h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
            self.cancel_timers()
            self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self.cancel_timers()
            super().connection_lost(exc)

    return GuardedProtocol


class QuietAcceptErrors(logging.Filter):
    """asyncio's "socket.accept() out of system resource" (a flood of connections took every file
    descriptor; asyncio waits a second and accepts again) as one line, not a traceback each time."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith("socket.accept() out of system resource"):
            error = record.exc_info[1] if record.exc_info else None
            record.msg = f"socket.accept() out of system resource ({error}): new connections wait a second"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


class RateLimitedLog(logging.Filter):
    """At most ``per_window`` records of one kind per logger in ``window_s`` (a kind: the first
    line of the message template; asyncio's own put a connection's repr on later lines); the rest
    counted, and the count said with the next record let through. Broken connections in numbers
    otherwise log a line each, without end."""

    def __init__(self, per_window: int = 5, window_s: float = 60.0):
        super().__init__()
        self.per_window, self.window_s = per_window, window_s
        self.seen: dict[tuple[str, str], list] = {}  # kind -> [window start, records in it, dropped]

    def filter(self, record: logging.LogRecord) -> bool:
        now = time.monotonic()
        if len(self.seen) > 1000:  # kinds whose window has passed, and nothing dropped to report
            self.seen = {kind: entry for kind, entry in self.seen.items()
                         if now - entry[0] <= self.window_s or entry[2]}
        kind = (record.name, str(record.msg).split("\n", 1)[0][:200])
        entry = self.seen.setdefault(kind, [now, 0, 0])
        if now - entry[0] > self.window_s:
            entry[0], entry[1] = now, 0
        entry[1] += 1
        if entry[1] > self.per_window:
            entry[2] += 1
            return False
        if entry[2]:
            record.msg = f"{record.msg} ({entry[2]} more like this were not logged)"
            entry[2] = 0
        return True

"""`memcli mcp`'s stdio transport: one JSON-RPC message a line. Unlike the SDK's own, Ctrl-C stops
it at once even while the client keeps stdin open (stdin is read on a daemon thread), and when
the client closes stdin the requests received are still answered (for up to DRAIN seconds).
While it serves, fd 0 reads the null device and fd 1 writes to stderr: nothing a tool or a child
prints can corrupt the wire."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

DRAIN = 60.0  # seconds the answers in flight still get once stdin is closed
LONG_LIVED = {"subscriptions/listen"}  # requests that stay open for the whole connection


class _InFlight:
    """Ids of the requests received and not yet answered."""

    def __init__(self):
        self.ids: set = set()
        self.empty = anyio.Event()
        self.empty.set()

    def add(self, request_id) -> None:
        if self.empty.is_set():
            self.empty = anyio.Event()
        self.ids.add(request_id)

    def done(self, request_id) -> None:
        self.ids.discard(request_id)
        if not self.ids:
            self.empty.set()


def _claim() -> tuple[int, int, Callable[[], None]]:
    """(the wire's input fd, its output fd, restore): meanwhile fd 0 reads /dev/null, fd 1 writes to stderr."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore():
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    return wire_in, wire_out, restore


def _reader(fd: int, send, token) -> None:
    """On a daemon thread: each line of fd into the event loop, then None at end of file."""
    stream = os.fdopen(fd, "rb", closefd=False)
    try:
        for line in iter(stream.readline, b""):
            anyio.from_thread.run(send, line, token=token)
        anyio.from_thread.run(send, None, token=token)
    except Exception:  # the loop is gone (the server stopped): nothing left to deliver to
        pass


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


async def serve(lowlevel_server, drain: float = DRAIN) -> None:
    """Serve the SDK's low-level server on stdin and stdout until stdin closes and what is in flight is
    answered; SIGINT ends the input at once and raises KeyboardInterrupt after."""
    wire_in, wire_out, restore = _claim()
    lines_send, lines_recv = anyio.create_memory_object_stream[bytes | None](16)
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
    inflight = _InFlight()
    interrupted = anyio.Event()
    threading.Thread(
        target=_reader,
        args=(wire_in, lines_send.send, anyio.lowlevel.current_token()),
        name="memcli mcp stdin",
        daemon=True,
    ).start()

    async def read():
        async with read_send:
            try:
                async for line in lines_recv:
                    if line is None:
                        break
                    try:
                        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except Exception as exc:  # the server answers a line that is not JSON-RPC
                        await read_send.send(exc)
                        continue
                    if isinstance(message, types.JSONRPCRequest) and message.method not in LONG_LIVED:
                        inflight.add(message.id)
                    elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
                        inflight.done((message.params or {}).get("requestId"))
                    await read_send.send(SessionMessage(message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the server stopped listening
            if not interrupted.is_set():
                with anyio.move_on_after(drain):  # stdin closed: answer what was asked first
                    await inflight.empty.wait()

    async def write():
        async with write_recv:
            async for item in write_recv:
                message = item.message
                data = message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
                _write(wire_out, data)
                if isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)):
                    inflight.done(message.id)

    async def on_interrupt():
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupted.set()
                lines_recv.close()  # the input ends here; the server winds down as at end of file
                return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(write)
            async with anyio.create_task_group() as watch:
                if sys.platform != "win32":  # no signal receiver there; Ctrl-C ends the process as it always did
                    watch.start_soon(on_interrupt)
                await lowlevel_server.run(read_recv, write_send, lowlevel_server.create_initialization_options())
                watch.cancel_scope.cancel()
    finally:
        restore()
    if interrupted.is_set():
        raise KeyboardInterrupt

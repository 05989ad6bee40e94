"""The stdio transport: the SDK's own (`mcp.client.stdio`), with a reader that bounds what one line may cost.

The SDK's reader joins every chunk to the line read so far, so a line costs time that grows with the square of
its length: a 60 MB answer took longer than any timeout, on the event loop. Here each line goes through a
`LineCutter` (`sidespin.mcp.lines`) as its bytes arrive, in a worker thread when they come in bulk, and only the
line it hands back, bounded, is parsed. The process is started, stopped and killed (with its whole process group)
by the SDK's own functions, exactly as `stdio_client` does.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable
from typing import TextIO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from loguru import logger
from mcp.client import stdio as sdk
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from sidespin.mcp.lines import Cut, LineCutter

__all__ = ["Limits", "bounded_stdio_client"]

_IN_THREAD = 64 * 1024  # a chunk this large, or a line this long so far, is scanned and parsed off the event loop


class Limits:
    """What one line of a server may hold (see `LineCutter`); `on_cut` is told of every line cut."""

    def __init__(self, *, max_string: int, max_data: int, max_tools: int, max_line: int,
                 on_cut: Callable[[Cut], None] | None = None) -> None:
        self.max_string, self.max_data, self.max_tools, self.max_line = max_string, max_data, max_tools, max_line
        self.on_cut = on_cut

    def cutter(self) -> LineCutter:
        return LineCutter(max_string=self.max_string, max_data=self.max_data, max_tools=self.max_tools,
                          max_line=self.max_line)


def _parse(line: bytes) -> SessionMessage | Exception:
    """One line as a message; a line that is no JSON-RPC message is handed to the session as the error it is."""
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as error:
        logger.warning("MCP_LINE_UNREADABLE {} bytes: {}", len(line), str(error)[:200])
        return error


async def _read(cutter: LineCutter, chunk: bytes) -> list[tuple[Cut, SessionMessage | Exception]]:
    """The lines `chunk` completes, each with its message; in a worker thread when it is bulky work."""
    def work() -> list[tuple[Cut, SessionMessage | Exception]]:
        return [(cut, _parse(cut.line)) for cut in cutter.feed(chunk) if cut.line.strip()]

    if len(chunk) + cutter.pending >= _IN_THREAD:
        return await anyio.to_thread.run_sync(work)
    return work()


@contextlib.asynccontextmanager
async def bounded_stdio_client(
    server: sdk.StdioServerParameters, limits: Limits, errlog: TextIO
) -> AsyncGenerator[TransportStreams, None]:
    """`mcp.client.stdio.stdio_client`, whose reader cuts every line to `limits` before it is parsed."""
    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command, args=server.args, env=sdk.get_default_environment() | (server.env or {}), errlog=errlog,
        cwd=server.cwd,
    )
    # no awaits until the task group is entered, or a cancellation in the gap would leak the live process
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout, "the server is started with a stdout pipe"
        cutter = limits.cutter()
        try:
            async with read_stream_writer:
                try:
                    async for chunk in process.stdout:
                        for cut, message in await _read(cutter, chunk):
                            if cut.cut and limits.on_cut is not None:
                                limits.on_cut(cut)
                            try:
                                await read_stream_writer.send(message)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return
                finally:
                    await sdk._drain_stdout(process)
        except anyio.ClosedResourceError:
            pass  # our own shutdown closed the stdout stream under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                logger.exception("MCP_STDOUT_FAILED reading the server's stdout failed mid-session")

    async def stdin_writer() -> None:
        assert process.stdin, "the server is started with a stdin pipe"
        try:
            async with write_stream_reader:
                async for session_message in write_stream_reader:
                    json = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_stream_writer.aclose()  # the session sees the connection end, no request hangs forever
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(sdk._WRITER_FLUSH_TIMEOUT) as flush_scope:
            await writer_done.wait()
        if flush_scope.cancelled_caught:
            await anyio.lowlevel.cancel_shielded_checkpoint()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_stream_writer, write_stream_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):  # the server process must not outlive a cancelled caller
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()

"""A gateway served by uvicorn inside the test's own event loop, so a test can look at the
server's tasks (`asyncio.all_tasks()`) and objects between steps; `run_server` (conftest) runs it
in a thread instead."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import uvicorn
from starlette.types import ASGIApp


@contextlib.asynccontextmanager
async def serve_in_loop(app: ASGIApp) -> AsyncIterator[str]:
    """Serve `app` on a free loopback port in this event loop; yields the base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]), name="test-uvicorn")
    try:
        while not server.started:  # uvicorn has no event for it; it starts within a few loop turns
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()

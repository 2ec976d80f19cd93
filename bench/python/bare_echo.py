"""bench/invoke's bare Python baseline: a `websockets` echo server, the Python twin of
bench/support/ws-echo-server.mjs. Each text frame is parsed as JSON ({id, data}) and answered with a
JSON frame {id, data} carrying the same id. No compression, the default asyncio loop (as the SDK).
websockets >= 13: the asyncio server; 10 to 12: the legacy `websockets.serve` (handler(ws, path)).
Prints {"ready":true,"url":…} once listening; stops on SIGTERM or stdin EOF.
"""

from __future__ import annotations

import asyncio
import json

import websockets
from _child import ready, stop_event

try:
    from websockets.asyncio.server import serve  # websockets >= 13
except ImportError:  # websockets 10 to 12
    serve = websockets.serve


async def echo(ws, path=None):  # the legacy server passes the request path too
    try:
        async for raw in ws:
            msg = json.loads(raw)
            await ws.send(json.dumps({"id": msg["id"], "data": msg["data"]}))
    except websockets.ConnectionClosed:  # the bench's client terminates its socket at the end
        pass


async def main() -> None:
    stop = stop_event()
    async with serve(echo, "127.0.0.1", 0, compression=None) as server:
        port = server.sockets[0].getsockname()[1]
        ready(url=f"ws://127.0.0.1:{port}", websockets=websockets.__version__)
        await stop.wait()


asyncio.run(main())

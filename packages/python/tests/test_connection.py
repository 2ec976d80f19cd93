"""The connection: reconnect with full replay through an engine restart, and a fake engine that
misbehaves (bad frames, a clean close) to show the worker stays alive and reconnects."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import flint
import pytest
import websockets
from flint import FlintInvocationError

from support import connect, provided, unique, wait_for


async def test_reconnects_through_an_engine_restart_and_replays_everything(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::survivor")
        path = f"/py/{uuid.uuid4().hex[:8]}/alive"

        @worker.function(fid)
        async def survivor(data: Any) -> dict:
            return {"alive": True}

        ref = worker.register_trigger("http", fid, {"api_path": path, "http_method": "GET"})
        await ref.ready
        disconnects: list[int] = []
        worker.on("disconnected", lambda: disconnects.append(1))
        await asyncio.to_thread(engine.restart)
        await wait_for(lambda: disconnects, what="the disconnect")
        await worker.wait_connected(10)
        # The function is registered again on the new engine, with its trigger.
        await provided(worker, fid)
        assert await worker.trigger("node::call", {"function_id": fid, "payload": {}}) == {"alive": True}

        async def served() -> bool:
            from support import request

            status, _, body = await asyncio.to_thread(request, "GET", engine.http + path)
            return status == 200 and json.loads(body) == {"alive": True}

        await wait_for(served, what="the HTTP route on the restarted engine")


async def test_a_call_made_while_disconnected_is_sent_once_connected(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::later")
        worker.register_function(fid, lambda data: {"got": data})
        await provided(worker, fid)
        restart = asyncio.create_task(asyncio.to_thread(engine.restart))
        await wait_for(lambda: not worker.connected, what="the disconnect")
        # Queued while disconnected; on the next connection the registrations go first, then the call.
        result = await worker.trigger(fid, {"queued": True}, timeout=15)
        assert result == {"got": {"queued": True}}
        await restart


class FakeEngine:
    """A bridge that answers with whatever a test wants: garbage, a clean close, a result."""

    def __init__(self) -> None:
        self.connections = 0
        self.frames: list[dict[str, Any]] = []
        self.behaviour = "garbage-then-close"
        self.server: Any = None

    async def handle(self, ws: Any, path: str | None = None) -> None:
        self.connections += 1
        await ws.send(json.dumps({"type": "workerregistered", "worker_id": f"w{self.connections}"}))
        if self.connections == 1:
            await ws.send("this is not JSON")
            await ws.send("[1, 2, 3]")
            await ws.send(json.dumps({"type": "invocationresult", "invocation_id": "nobody-waits-for-this"}))
            await ws.send(json.dumps({"type": "from-the-future", "x": 1}))
            await asyncio.sleep(0.1)
            await ws.close(1000, "bye")  # a clean close: the worker must reconnect all the same
            return
        async for text in ws:
            frame = json.loads(text)
            self.frames.append(frame)
            if frame.get("type") == "invokefunction" and frame.get("invocation_id"):
                answer = {"type": "invocationresult", "invocation_id": frame["invocation_id"], "function_id": frame["function_id"], "result": "pong"}
                await ws.send(json.dumps(answer))

    async def __aenter__(self) -> str:
        self.server = await websockets.serve(self.handle, "127.0.0.1", 0)
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await self.server.wait_closed()


async def test_bad_frames_are_dropped_and_a_clean_close_still_reconnects() -> None:
    fake = FakeEngine()
    async with fake as url:
        worker = await connect(url)
        try:
            worker.register_function("fake::fn", lambda data: data)
            await wait_for(lambda: fake.connections >= 2 and worker.connected, what="the reconnect after a clean close")
            assert worker.worker_id == "w2"
            assert await worker.trigger("anything", {}) == "pong"
            types = [f["type"] for f in fake.frames]
            assert "registerfunction" in types  # replayed on the new connection
        finally:
            await worker.shutdown()


async def test_reconnecting_gives_up_after_max_retries_and_pending_calls_fail() -> None:
    worker = await flint.connect(
        "ws://127.0.0.1:9", wait=False, reconnect=flint.ReconnectOptions(initial_delay=0.01, max_retries=2), connect_timeout=5
    )
    try:
        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger("x::y", {})
        assert caught.value.code == "not_connected"
        assert worker.connection_state == "failed"
        assert "gave up after 2 reconnect attempts" in caught.value.message
    finally:
        await worker.shutdown()


async def test_graceful_shutdown_lets_running_handlers_finish(engine) -> None:
    worker = await connect(engine.bridge)
    fid = unique("py::finishing")
    started = asyncio.Event()

    @worker.function(fid)
    async def finishing(data: Any) -> str:
        started.set()
        await asyncio.sleep(0.3)
        return "finished"

    async with await connect(engine.bridge) as caller:
        call = asyncio.create_task(caller.trigger(fid, {}))
        await started.wait()
        await worker.shutdown(grace=5)
        assert await call == "finished"

"""examples/python-worker/worker.py runs as its README says, against the test engine."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from support import connect, provided, request

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "python-worker" / "worker.py"


async def test_the_python_worker_example(engine) -> None:
    env = {**os.environ, "FLINT_URL": engine.bridge, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = await asyncio.create_subprocess_exec(sys.executable, str(EXAMPLE), env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 15)
        assert b"python-greeter connected" in line, line
        async with await connect(engine.bridge) as worker:
            greeted = await worker.trigger("greet::hello", {"name": "Ada", "language": "de", "excited": True})
            assert greeted == {"message": "Hallo, Ada!", "language": "de"}
            # Its route calls node::decorate, which the example's Node side provides; without it: 503.
            status, _, body = await asyncio.to_thread(request, "GET", engine.http + "/greet/Ada?language=fr")
            assert status == 503 and "node::decorate" in json.loads(body)["error"]
            worker.register_function("node::decorate", lambda data: {"text": f"* {data['text']} *"})
            await provided(worker, "node::decorate")  # the registration reaches the engine before the request
            status, _, body = await asyncio.to_thread(request, "GET", engine.http + "/greet/Ada?language=fr")
            assert status == 200
            assert json.loads(body)["decorated"] == {"text": "* Bonjour, Ada. *"}
            status, headers, body = await asyncio.to_thread(request, "GET", engine.http + "/greet/Ada/stream")
            assert headers["content-type"] == "text/event-stream"
            assert body.decode().count("event: greeting") == 3
    finally:
        proc.terminate()
        assert await asyncio.wait_for(proc.wait(), 10) == 0

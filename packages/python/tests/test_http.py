"""HTTP routes served by Python functions: whole answers, streamed bodies, Server-Sent Events, uploads."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid

import flint
from flint import ApiResponse, HttpRequest, HttpResponse

from support import connect, request, unique, wait_for


@dataclasses.dataclass
class Tick:
    n: int


async def route(worker: flint.Worker, function_id: str, handler, path: str, method: str = "GET") -> None:
    worker.register_function(function_id, handler)
    ref = worker.register_trigger("http", function_id, {"api_path": path, "http_method": method})
    assert await ref.ready == flint.TriggerStatus(parked=False)


async def test_a_plain_handler_answers_with_an_api_response(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/users/:id"

        async def get_user(req: dict) -> ApiResponse:
            return ApiResponse(
                status_code=202,
                headers={"x-runtime": "python"},
                body={"id": req["path_params"]["id"], "q": req["query_params"].get("q"), "method": req["method"]},
            )

        await route(worker, unique("py::user"), get_user, path)
        status, headers, body = await asyncio.to_thread(request, "GET", engine.http + path.replace(":id", "42") + "?q=x")
        assert status == 202
        assert headers["x-runtime"] == "python"
        assert json.loads(body) == {"id": "42", "q": "x", "method": "GET"}


async def test_http_wrapper_streams_status_headers_and_chunks(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/download"

        @flint.http
        async def download(req: HttpRequest, res: HttpResponse) -> None:
            res.set_status(201)
            res.set_headers({"content-type": "text/plain", "x-path": req.path})
            for i in range(3):
                await res.write(f"line {i}\n")
            await res.write(b"x" * 100_000)  # more than one channel frame

        await route(worker, unique("py::download"), download, path)
        status, headers, body = await asyncio.to_thread(request, "GET", engine.http + path)
        assert status == 201
        assert headers["content-type"] == "text/plain"
        assert headers["x-path"] == path
        assert body == b"line 0\nline 1\nline 2\n" + b"x" * 100_000


async def test_server_sent_events(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/events"

        @flint.http
        async def events(req: HttpRequest, res: HttpResponse) -> None:
            await res.sse(Tick(1), event="tick", id=1)
            await res.sse("two\nlines")
            await res.close()

        await route(worker, unique("py::events"), events, path)
        status, headers, body = await asyncio.to_thread(request, "GET", engine.http + path)
        assert status == 200
        assert headers["content-type"] == "text/event-stream"
        assert body.decode() == 'id: 1\nevent: tick\ndata: {"n":1}\n\ndata: two\ndata: lines\n\n'


async def test_the_wrapper_may_return_a_whole_answer_and_read_the_json_body(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/orders"

        @flint.http
        async def create(req: HttpRequest, res: HttpResponse) -> ApiResponse:
            return ApiResponse(status_code=201, body={"created": req.body})

        await route(worker, unique("py::create"), create, path, "POST")
        status, _, body = await asyncio.to_thread(request, "POST", engine.http + path, {"sku": "A"})
        assert status == 201
        assert json.loads(body) == {"created": {"sku": "A"}}


async def test_a_raw_request_body_is_read_from_its_channel(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/upload"

        @flint.http
        async def upload(req: HttpRequest, res: HttpResponse) -> dict:
            assert req.request_body is not None
            data = await req.request_body.read_all()
            return {"status_code": 200, "body": {"bytes": len(data), "head": data[:5].decode()}}

        await route(worker, unique("py::upload"), upload, path, "POST")
        payload = ("hello" + "." * 200_000).encode()

        def send() -> tuple[int, dict[str, str], bytes]:
            import urllib.request

            req = urllib.request.Request(engine.http + path, data=payload, method="POST", headers={"content-type": "application/octet-stream"})
            with urllib.request.urlopen(req, timeout=10) as res:
                return res.status, dict(res.headers), res.read()

        status, _, body = await asyncio.to_thread(send)
        assert status == 200
        assert json.loads(body) == {"bytes": len(payload), "head": "hello"}


async def test_a_failing_route_handler_is_a_500_with_its_code(engine) -> None:
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/fails"

        @flint.http
        async def fails(req: HttpRequest, res: HttpResponse) -> None:
            raise flint.FlintError("out_of_stock", "nothing left")

        await route(worker, unique("py::fails"), fails, path)
        status, _, body = await asyncio.to_thread(request, "GET", engine.http + path)
        answer = json.loads(body)
        assert status == 500
        assert answer["code"] == "out_of_stock"
        assert answer["error"] == "nothing left"


async def test_streamed_responses_take_spare_channel_sockets_once_one_was_used(engine) -> None:
    async def spares() -> int:
        stats = await asyncio.to_thread(engine.stats)
        return int(stats["spareChannelSockets"])

    async def spares_is(n: int) -> bool:
        return await spares() == n

    before = await spares()
    async with await connect(engine.bridge) as worker:
        path = f"/py/{uuid.uuid4().hex[:8]}/count"

        @flint.http
        async def count(req: HttpRequest, res: HttpResponse) -> None:
            for i in range(int(req.query_params["n"])):
                await res.sse({"i": i}, id=i)
            await res.close()

        def expected(n: int) -> str:
            return "".join(f'id: {i}\ndata: {{"i":{i}}}\n\n' for i in range(n))

        await route(worker, unique("py::count"), count, path)
        assert await spares() == before  # none until a channel is used
        status, _, body = await asyncio.to_thread(request, "GET", engine.http + path + "?n=3")
        assert (status, body.decode()) == (200, expected(3))
        await wait_for(lambda: spares_is(before + 1), what="a spare after the first stream")
        for n in (10, 100, 1000):
            status, _, body = await asyncio.to_thread(request, "GET", engine.http + path + f"?n={n}")
            assert (status, body.decode()) == (200, expected(n))
            # The stream took the spare (bound: no longer counted), and the worker opened the next one.
            await wait_for(lambda: spares_is(before + 1), what="the spare to be replaced")
        # Streams starting together grow the pool, up to four: four handlers wait for each other before writing
        # (the first takes the spare, each of the others finds none and asks for one more).
        gate_path = f"/py/{uuid.uuid4().hex[:8]}/together"
        arrived = 0
        all_here = asyncio.Event()

        @flint.http
        async def together(req: HttpRequest, res: HttpResponse) -> None:
            nonlocal arrived
            arrived += 1
            if arrived == 4:
                all_here.set()
            await all_here.wait()
            await res.sse({"i": 0}, id=0)
            await res.close()

        await route(worker, unique("py::together"), together, gate_path)
        answers = await asyncio.gather(*(asyncio.to_thread(request, "GET", engine.http + gate_path) for _ in range(4)))
        assert [a[2].decode() for a in answers] == [expected(1)] * 4
        await wait_for(lambda: spares_is(before + 4), what="four spares")

        # A channel the worker creates itself goes through a spare too.
        channel = await worker.create_channel()
        await channel.writer.write(b"through a spare")
        await channel.writer.close()
        assert await channel.reader.read_all() == b"through a spare"
        # No channel for half the engine's spare_channel_idle_ms (2 s here): the worker closes its spares
        # itself, keeps none, and the next channel opens a socket of its own and starts the pool again.
        await wait_for(lambda: spares_is(before), timeout=5.0, what="the idle spares to be closed")
        await asyncio.sleep(0.3)
        assert await spares() == before
        status, _, body = await asyncio.to_thread(request, "GET", engine.http + path + "?n=2")
        assert (status, body.decode()) == (200, expected(2))
        await wait_for(lambda: spares_is(before + 1), what="a spare again")
    await wait_for(lambda: spares_is(before), what="the spares to close with the worker")

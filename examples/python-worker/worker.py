"""A Flint worker in Python: a typed function and an HTTP route that calls a Node function.

    PYTHONPATH=packages/python/src python3 examples/python-worker/worker.py

It connects to $FLINT_URL (default ws://127.0.0.1:49134) and registers:

- greet::hello   takes a Greeting, returns a Greeted (formats made from the dataclasses)
- greet::http    GET /greet/:name?language=de  greets with greet::hello's logic, then has the Node
                 function node::decorate (examples/python-worker/node_caller.mjs) dress it up
- greet::stream  GET /greet/:name/stream  the greeting in every language, as Server-Sent Events

Stop it with Ctrl+C (or SIGTERM): running calls finish, then it disconnects.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Literal

import flint

Language = Literal["en", "de", "fr"]
HELLO: dict[str, str] = {"en": "Hello", "de": "Hallo", "fr": "Bonjour"}

log = logging.getLogger("greeter")


@dataclass
class Greeting:
    """Who to greet, and in which language."""

    name: str
    language: Language = "en"
    excited: bool = False


@dataclass
class Greeted:
    message: str
    language: Language


def greet(greeting: Greeting) -> Greeted:
    end = "!" if greeting.excited else "."
    return Greeted(f"{HELLO[greeting.language]}, {greeting.name}{end}", greeting.language)


async def main() -> None:
    async with flint.connect(name="python-greeter") as worker:
        # Log records of the "greeter" logger also go to the engine's log, with the trace of the call.
        log.addHandler(flint.LogHandler(worker, service_name="python-greeter"))

        @worker.function("greet::hello", description="Greets someone by name, in English, German or French")
        async def hello(greeting: Greeting) -> Greeted:
            log.info("greeting %s in %s", greeting.name, greeting.language)
            return greet(greeting)

        @worker.function("greet::http", description="GET /greet/:name?language=de")
        async def greet_http(req: dict):  # the ApiRequest: path_params, query_params, headers, body …
            language = req["query_params"].get("language", "en")
            if language not in HELLO:
                return flint.ApiResponse(400, body={"error": f"unknown language {language!r}", "known": list(HELLO)})
            greeted = greet(Greeting(req["path_params"]["name"], language))
            try:
                decorated = await worker.trigger("node::decorate", {"text": greeted.message}, timeout=5)
            except flint.FlintInvocationError as err:
                if err.code != "function_not_found":
                    raise
                return flint.ApiResponse(503, body={"error": "node::decorate is not registered: start node_caller.mjs"})
            return flint.ApiResponse(200, body={"greeting": greeted, "decorated": decorated})

        @worker.function("greet::stream")
        @flint.http
        async def greet_stream(req: flint.HttpRequest, res: flint.HttpResponse) -> None:
            for language in HELLO:
                if res.closed:  # the client went away
                    return
                greeted = greet(Greeting(req.path_params["name"], language))
                await res.sse(greeted, event="greeting")  # data: the dataclass as JSON
                await asyncio.sleep(0.5)

        for function_id, path in (("greet::http", "/greet/:name"), ("greet::stream", "/greet/:name/stream")):
            route = worker.register_trigger("http", function_id, {"api_path": path, "http_method": "GET"})
            await route.ready  # raises TriggerRegistrationError if the engine refuses the route

        print(f"python-greeter connected to {worker.url}: greet::hello, GET /greet/:name, GET /greet/:name/stream", flush=True)
        await worker.serve_forever()  # until Ctrl+C or SIGTERM, then a graceful shutdown


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    asyncio.run(main())

"""Formats from annotations, payload conversion into the annotated types, and results into JSON."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import uuid
from decimal import Decimal
from typing import Any, Literal, NamedTuple, Optional, TypedDict

import flint
import pytest
from flint import FlintInvocationError, PayloadMismatch, json_schema
from flint._convert import NotSerializable, decode, dumps

from support import connect, provided, unique


class Size(enum.Enum):
    S = "s"
    M = "m"


@dataclasses.dataclass
class Item:
    sku: str
    qty: int = 1


@dataclasses.dataclass
class Order:
    """An order to place."""

    id: uuid.UUID
    items: list[Item]
    size: Size
    express: bool = False
    note: Optional[str] = None
    placed: Optional[dt.datetime] = None


@dataclasses.dataclass
class Tree:
    name: str
    children: list[Tree] = dataclasses.field(default_factory=list)


class Address(TypedDict):
    street: str
    zip: str


class Point(NamedTuple):
    x: float
    y: float


DIALECT = "https://json-schema.org/draft/2020-12/schema"


def test_primitives_containers_and_unions() -> None:
    assert json_schema(str) == {"$schema": DIALECT, "type": "string"}
    assert json_schema(list[int])["items"] == {"type": "integer"}
    assert json_schema(dict[str, list[float]])["additionalProperties"] == {"type": "array", "items": {"type": "number"}}
    assert json_schema(Optional[int])["type"] == ["integer", "null"]
    assert json_schema(int | str)["type"] == ["integer", "string"]
    assert json_schema(Literal["a", "b"])["enum"] == ["a", "b"]
    assert json_schema(Literal["only"]) == {"$schema": DIALECT, "const": "only", "type": "string"}
    assert json_schema(tuple[int, str])["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert json_schema(set[str]) == {"$schema": DIALECT, "type": "array", "uniqueItems": True, "items": {"type": "string"}}
    assert json_schema(dt.datetime)["format"] == "date-time"
    assert json_schema(Any) == {"$schema": DIALECT}


def test_dataclasses_become_objects_with_defs_for_nested_types() -> None:
    schema = json_schema(Order)
    assert schema["title"] == "Order"
    assert schema["description"] == "An order to place."
    assert schema["required"] == ["id", "items", "size"]
    assert schema["properties"]["items"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    assert schema["properties"]["size"] == {"$ref": "#/$defs/Size"}
    assert schema["properties"]["note"] == {"type": ["string", "null"], "default": None}
    assert schema["properties"]["placed"]["anyOf"] == [{"type": "string", "format": "date-time"}, {"type": "null"}]
    assert schema["$defs"]["Item"]["required"] == ["sku"]
    assert schema["$defs"]["Size"] == {"title": "Size", "enum": ["s", "m"], "type": "string"}
    # A result always has every field.
    assert json_schema(Order, "serialization")["required"] == ["id", "items", "size", "express", "note", "placed"]


def test_optional_and_recursive_named_types_keep_their_refs() -> None:
    nullable = json_schema(Optional[Item])
    assert nullable["anyOf"] == [{"$ref": "#/$defs/Item"}, {"type": "null"}]
    assert "Item" in nullable["$defs"]
    tree = json_schema(Tree)
    assert tree["$ref"] == "#/$defs/Tree"
    assert tree["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    many = json_schema(list[Item])
    assert many["items"] == {"$ref": "#/$defs/Item"} and "Item" in many["$defs"]


def test_typed_dicts_and_named_tuples() -> None:
    assert json_schema(Address)["required"] == ["street", "zip"]
    point = json_schema(Point)
    assert point["prefixItems"] == [{"type": "number"}, {"type": "number"}]


def test_types_without_a_json_form_are_refused() -> None:
    class Opaque:
        pass

    with pytest.raises(TypeError, match="Opaque has no JSON Schema form"):
        json_schema(Opaque)


def test_decode_builds_the_annotated_values() -> None:
    order_id = uuid.uuid4()
    order = decode(
        {"id": str(order_id), "items": [{"sku": "A"}, {"sku": "B", "qty": 3}], "size": "m", "placed": "2026-11-26T10:00:00+01:00", "extra": 1},
        Order,
    )
    assert order == Order(order_id, [Item("A"), Item("B", 3)], Size.M, placed=dt.datetime.fromisoformat("2026-11-26T10:00:00+01:00"))
    assert decode([1, 2.0], tuple[int, int]) == (1, 2)
    assert decode({"1": "x"}, dict[int, str]) == {1: "x"}
    assert decode("3.10", Decimal) == Decimal("3.10")
    assert decode({"street": "Main", "zip": "1"}, Address) == {"street": "Main", "zip": "1"}
    assert decode([1, 2], Point) == Point(1.0, 2.0)
    assert decode(None, Optional[Item]) is None


@pytest.mark.parametrize(
    ("value", "tp", "message"),
    [
        ({"id": "x", "items": [], "size": "s"}, Order, "id: expected UUID text, got string \"x\""),
        ({"id": str(uuid.UUID(int=1)), "items": [{"sku": "A", "qty": "2"}], "size": "s"}, Order, 'items[0].qty: expected integer, got string "2"'),
        ({"id": str(uuid.UUID(int=1)), "items": [{}], "size": "s"}, Order, "items[0].sku: required field is missing"),
        ({"id": str(uuid.UUID(int=1)), "items": [], "size": "xl"}, Order, 'size: expected one of "s", "m", got string "xl"'),
        ("a", Literal["b", "c"], 'payload: expected one of "b", "c", got string "a"'),
        (None, Item, "payload: expected object (Item), got null"),
        ({"a": True}, dict[str, int], "a: expected integer, got boolean true"),
    ],
)
def test_decode_names_the_field_that_does_not_fit(value: Any, tp: Any, message: str) -> None:
    with pytest.raises(PayloadMismatch) as caught:
        decode(value, tp)
    assert str(caught.value) == message


def test_dumps_writes_rich_types_and_names_what_it_cannot() -> None:
    order = Order(uuid.UUID(int=5), [Item("A")], Size.S, placed=dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc))
    text = dumps({"order": order, "price": Decimal("1.50"), "tags": {"x"}, "raw": b"\x00\x01"})
    assert '"size":"s"' in text and '"placed":"2026-01-02T03:04:05+00:00"' in text
    assert '"price":"1.50"' in text and '"tags":["x"]' in text and '"raw":"AAE="' in text
    with pytest.raises(NotSerializable) as caught:
        dumps({"rows": [1, {"when": object()}]}, "result")
    assert caught.value.path == "result.rows[1].when"
    with pytest.raises(NotSerializable, match="nan is not a JSON number"):
        dumps({"x": float("nan")}, "result")


def test_pydantic_models_when_installed() -> None:
    pydantic = pytest.importorskip("pydantic", reason="pydantic is not installed (optional)")

    class Customer(pydantic.BaseModel):
        name: str
        age: int = 0

    schema = json_schema(Customer)
    assert schema["properties"]["name"]["type"] == "string"
    assert schema["required"] == ["name"]
    assert decode({"name": "Ada", "age": 36}, Customer) == Customer(name="Ada", age=36)
    with pytest.raises(PayloadMismatch) as caught:
        decode({"name": "Ada", "age": "old"}, Customer)
    assert caught.value.path == "age"
    assert dumps(Customer(name="Ada")) == '{"name":"Ada","age":0}'


async def test_the_engine_lists_the_formats_and_refuses_payloads_that_do_not_fit(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::place")

        @worker.function(fid)
        async def place(order: Order) -> Item:
            assert isinstance(order, Order) and isinstance(order.items[0], Item) and order.size is Size.S
            return order.items[0]

        listed = await provided(worker, fid)
        assert listed["request_format"]["title"] == "Order"
        assert listed["request_format"]["$defs"]["Item"]["properties"]["qty"] == {"type": "integer", "default": 1}
        assert listed["response_format"]["required"] == ["sku", "qty"]
        good = {"id": str(uuid.uuid4()), "items": [{"sku": "A", "qty": 2}], "size": "s"}
        assert await worker.trigger(fid, good) == {"sku": "A", "qty": 2}
        # Node callers get typed conversion too.
        assert await worker.trigger("node::call", {"function_id": fid, "payload": good}) == {"sku": "A", "qty": 2}
        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {**good, "items": [{"sku": "A", "qty": "two"}]})
        assert caught.value.code == "invalid_payload"
        assert "qty" in caught.value.message


async def test_the_sdk_names_the_field_when_the_engine_does_not_validate(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::typed")

        @worker.function(fid, request_format=None)  # nothing for the engine to check: the SDK converts
        async def typed(order: Order) -> int:
            return len(order.items)

        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {"id": str(uuid.uuid4()), "items": [{"sku": 5}], "size": "s"})
        assert caught.value.code == "invalid_payload"
        assert caught.value.message == f'{fid}: invalid payload at items[0].sku: expected string, got number 5'


async def test_explicit_formats_override_and_none_sends_none(engine) -> None:
    async with await connect(engine.bridge) as worker:
        explicit, bare = unique("py::explicit"), unique("py::bare")
        worker.register_function(explicit, lambda n: n, request_format={"type": "integer", "minimum": 0})

        @worker.function(bare, request_format=None, response_format=None)
        def plain(n: int) -> int:
            return n

        assert (await provided(worker, explicit))["request_format"] == {"type": "integer", "minimum": 0}
        listed = await provided(worker, bare)
        assert listed["request_format"] is None and listed["response_format"] is None


async def test_an_unserialisable_result_is_a_clear_error(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::opaque")

        @worker.function(fid)
        async def opaque(data: dict) -> Any:
            return {"ok": True, "handle": open}

        with pytest.raises(FlintInvocationError) as caught:
            await worker.trigger(fid, {})
        assert caught.value.code == "result_not_serializable"
        assert "result.handle" in caught.value.message


async def test_results_keep_none_and_null_payloads_arrive_as_none(engine) -> None:
    async with await connect(engine.bridge) as worker:
        fid = unique("py::nones")

        @worker.function(fid)
        async def nones(data: Optional[dict]) -> Any:
            return {"got": data, "list": [None]}

        assert await worker.trigger(fid, None) == {"got": None, "list": [None]}
        assert await worker.trigger(fid, {"a": None}) == {"got": {"a": None}, "list": [None]}


async def test_unresolvable_annotations_are_refused_at_registration(engine) -> None:
    async with await connect(engine.bridge) as worker:

        def handler(data: "NotDefinedAnywhere") -> None:  # noqa: F821
            return None

        with pytest.raises(TypeError, match="cannot resolve the annotations"):
            worker.register_function(unique("py::unresolved"), handler)
        # With both formats given, the annotations are not needed: the payload arrives as it is.
        fid = unique("py::explicit-both")
        worker.register_function(fid, lambda data: data, request_format={"type": "object"}, response_format=None)

        def typed(data: "NotDefinedAnywhere") -> "AlsoNotDefined":  # noqa: F821
            return data

        other = unique("py::explicit-typed")
        worker.register_function(other, typed, request_format={"type": "object"}, response_format=None)
        assert await worker.trigger(other, {"a": 1}) == {"a": 1}
        _ = flint


def test_api_response_results_have_a_schema_of_what_is_sent() -> None:
    schema = json_schema(flint.ApiResponse, "serialization")
    assert schema["required"] == ["status_code"]
    assert dumps(flint.ApiResponse(body={"a": 1})) == '{"status_code":200,"body":{"a":1}}'

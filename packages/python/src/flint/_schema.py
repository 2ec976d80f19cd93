"""JSON Schema (draft 2020-12) from Python type annotations.

A handler's first parameter gives its ``request_format`` and its return annotation its
``response_format``. Understood: primitives, ``None``, ``Any``, ``list``/``set``/``tuple``/``dict`` and
their ``typing``/``collections.abc`` forms, ``Optional`` and unions, ``Literal``, ``Enum``,
dataclasses, ``TypedDict``, ``NamedTuple``, ``datetime``/``date``/``time``/``timedelta``, ``UUID``,
``Decimal``, ``bytes``, ``Annotated``/``NewType``, and pydantic models when pydantic is installed.
Named types (dataclasses, TypedDicts, enums, models) go to one top-level ``$defs`` and are referenced
with ``$ref``, so nested and recursive types keep working, and ``Optional[Model]`` stays nullable.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import typing
import uuid
from decimal import Decimal
from typing import Any, Literal, get_args, get_origin

from ._types import (
    NONE_TYPE,
    def_name,
    is_dataclass_type,
    is_literal,
    is_typed_dict,
    is_union,
    pydantic_version,
    type_hints,
    unwrap,
)

__all__ = ["Mode", "UnsupportedType", "json_schema"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"

Mode = Literal["validation", "serialization"]

_ARRAYS = (list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection)
_SETS = (set, frozenset, cabc.Set, cabc.MutableSet)
_MAPS = (dict, cabc.Mapping, cabc.MutableMapping)


class UnsupportedType(TypeError):
    """An annotation that has no JSON form (an arbitrary class, a callable …)."""


def json_schema(tp: Any, mode: Mode = "validation") -> dict[str, Any]:
    """The schema of values of type ``tp``, with ``$schema`` and the ``$defs`` it needs.

    ``validation`` describes what a payload may be (fields with defaults are optional);
    ``serialization`` what a result will be (every dataclass field is present).
    """
    builder = _Builder(mode)
    root = builder.schema(tp)
    # A named type at the top is shown inline when nothing else refers to it (the common case).
    ref = root.get("$ref") if len(root) == 1 else None
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if builder.uses[name] == 1:
            root = builder.defs.pop(name)
    out: dict[str, Any] = {"$schema": DIALECT, **root}
    if builder.defs:
        out["$defs"] = builder.defs
    return out


class _Builder:
    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.defs: dict[str, dict[str, Any]] = {}
        self.names: dict[Any, str] = {}
        self.uses: dict[str, int] = {}

    def schema(self, tp: Any) -> dict[str, Any]:
        tp = unwrap(tp)
        if tp is Any or tp is object or isinstance(tp, typing.TypeVar):
            return {}
        if tp is None or tp is NONE_TYPE:
            return {"type": "null"}
        if tp is bool:
            return {"type": "boolean"}
        if tp is int:
            return {"type": "integer"}
        if tp is float:
            return {"type": "number"}
        if tp is str:
            return {"type": "string"}
        custom = getattr(tp, "__flint_schema__", None)
        if isinstance(tp, type) and callable(custom):
            return dict(custom())
        simple = _scalar(tp, self.mode)
        if simple is not None:
            return simple
        if is_union(tp):
            return _union([self.schema(member) for member in get_args(tp)])
        if is_literal(tp):
            return _enum_schema(list(get_args(tp)))
        origin = get_origin(tp)
        args = get_args(tp)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self.named(tp, lambda: {"title": tp.__name__, **_enum_schema([m.value for m in tp])})
        if is_dataclass_type(tp):
            return self.named(tp, lambda: self.dataclass(tp))
        if is_typed_dict(tp):
            return self.named(tp, lambda: self.typed_dict(tp))
        if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
            return self.named(tp, lambda: self.named_tuple(tp))
        if pydantic_version(tp):
            return self.pydantic(tp)
        container = origin if origin is not None else tp
        if container is tuple:
            return self.tuple(args)
        if container in _SETS:
            out: dict[str, Any] = {"type": "array", "uniqueItems": True}
            if args:
                out["items"] = self.schema(args[0])
            return out
        if container in _MAPS:
            out = {"type": "object"}
            if len(args) == 2:
                values = self.schema(args[1])
                if values:
                    out["additionalProperties"] = values
            return out
        if container in _ARRAYS or container is cabc.Sequence:
            out = {"type": "array"}
            if args:
                items = self.schema(args[0])
                if items:
                    out["items"] = items
            return out
        raise UnsupportedType(f"{_show(tp)} has no JSON Schema form")

    def named(self, tp: Any, make: typing.Callable[[], dict[str, Any]]) -> dict[str, Any]:
        name = self.names.get(tp)
        if name is None:
            name = def_name(tp)
            while name in self.defs:  # two types of one name from different modules
                name += "_"
            self.names[tp] = name
            self.defs[name] = {}  # reserved first: a recursive type refers to itself while it is built
            self.uses[name] = 0
            self.defs[name] = make()
        self.uses[name] += 1
        return {"$ref": f"#/$defs/{name}"}

    def dataclass(self, tp: type) -> dict[str, Any]:
        hints = type_hints(tp)
        properties: dict[str, Any] = {}
        required: list[str] = []
        for f in dataclasses.fields(tp):
            if self.mode == "validation" and not f.init:
                continue
            prop = self.schema(hints.get(f.name, Any))
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            if f.default is not dataclasses.MISSING and _jsonable(f.default):
                prop = {**prop, "default": _default_json(f.default)}
            properties[f.name] = prop
            if self.mode == "serialization" or not has_default:
                required.append(f.name)
        return _object(tp, properties, required)

    def typed_dict(self, tp: Any) -> dict[str, Any]:
        hints = type_hints(tp)
        properties = {name: self.schema(hint) for name, hint in hints.items()}
        required = [name for name in hints if name in getattr(tp, "__required_keys__", hints.keys())]
        return _object(tp, properties, required)

    def named_tuple(self, tp: Any) -> dict[str, Any]:
        hints = type_hints(tp)
        items = [self.schema(hints.get(name, Any)) for name in tp._fields]
        defaults = getattr(tp, "_field_defaults", {})
        min_items = len([name for name in tp._fields if name not in defaults]) if self.mode == "validation" else len(items)
        return {"title": tp.__name__, "type": "array", "prefixItems": items, "minItems": min_items, "maxItems": len(items)}

    def tuple(self, args: tuple[Any, ...]) -> dict[str, Any]:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            items = self.schema(args[0])
            return {"type": "array", "items": items} if items else {"type": "array"}
        if args == ((),):  # tuple[()]
            return {"type": "array", "maxItems": 0}
        return {"type": "array", "prefixItems": [self.schema(a) for a in args], "minItems": len(args), "maxItems": len(args)}

    def pydantic(self, tp: Any) -> dict[str, Any]:
        template = "#/$defs/{model}"
        if pydantic_version(tp) == 2:
            raw: dict[str, Any] = tp.model_json_schema(ref_template=template, mode=self.mode)
            nested = raw.pop("$defs", {})
        else:
            raw = dict(tp.schema(ref_template=template))
            nested = raw.pop("definitions", {})
        for name, schema in nested.items():
            self.defs.setdefault(name, schema)
            self.uses.setdefault(name, 1)
        return self.named(tp, lambda: raw)


def _object(tp: Any, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"title": tp.__name__, "type": "object", "properties": properties}
    if required:
        out["required"] = required
    doc = _own_doc(tp)
    if doc:
        out["description"] = doc
    return out


def _own_doc(tp: Any) -> str | None:
    doc = getattr(tp, "__doc__", None)
    if not isinstance(doc, str):
        return None
    doc = doc.strip()
    # dataclasses and NamedTuples write their signature as the docstring when the class has none.
    if not doc or doc.startswith(f"{tp.__name__}(") or doc == "dict() -> new empty dictionary":
        return None
    return doc


def _scalar(tp: Any, mode: Mode) -> dict[str, Any] | None:
    if tp is dt.datetime:
        return {"type": "string", "format": "date-time"}
    if tp is dt.date:
        return {"type": "string", "format": "date"}
    if tp is dt.time:
        return {"type": "string", "format": "time"}
    if tp is dt.timedelta:
        return {"type": "number", "description": "seconds"}
    if tp is uuid.UUID:
        return {"type": "string", "format": "uuid"}
    if tp is Decimal:
        # Sent as a string (no precision lost); a number is accepted too.
        return {"type": "string"} if mode == "serialization" else {"type": ["number", "string"]}
    if tp in (bytes, bytearray):
        return {"type": "string", "contentEncoding": "base64"}
    return None


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"const": values[0]} if len(values) == 1 else {"enum": values}
    kinds = {_json_type(v) for v in values}
    if len(kinds) == 1 and None not in kinds:
        out["type"] = kinds.pop()
    return out


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


def _union(members: list[dict[str, Any]]) -> dict[str, Any]:
    if any(m == {} for m in members):
        return {}
    # Plain types merge into one `type` list: Optional[int] is {"type": ["integer", "null"]}.
    if all(set(m) == {"type"} for m in members):
        kinds: list[str] = []
        for m in members:
            for kind in m["type"] if isinstance(m["type"], list) else [m["type"]]:
                if kind not in kinds:
                    kinds.append(kind)
        return {"type": kinds[0] if len(kinds) == 1 else kinds}
    unique: list[dict[str, Any]] = []
    for m in members:
        if m not in unique:
            unique.append(m)
    return unique[0] if len(unique) == 1 else {"anyOf": unique}


def _jsonable(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, enum.Enum):
        return _jsonable(value.value)
    if isinstance(value, (list, tuple)):
        return all(_jsonable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _jsonable(v) for k, v in value.items())
    return False


def _default_json(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return list(value)
    return value


def _show(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)

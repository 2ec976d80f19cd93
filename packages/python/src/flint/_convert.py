"""Payloads into annotated types, and results into JSON.

``decode`` checks a payload against a handler's annotation and builds the annotated value (a
dataclass arrives as a dataclass, an Enum as its member, a ``datetime`` from its ISO text); a
mismatch raises :class:`PayloadMismatch` naming the field (``items[0].qty``). ``dumps`` writes JSON,
turning dataclasses, enums, dates, UUIDs, decimals, bytes, sets and pydantic models into their JSON
form; anything else raises :class:`NotSerializable` naming where it sits in the value.
"""

from __future__ import annotations

import base64
import collections.abc as cabc
import dataclasses
import datetime as dt
import enum
import json
import math
import typing
import uuid
from decimal import Decimal, InvalidOperation
from typing import Any, get_args, get_origin

from ._types import (
    NONE_TYPE,
    is_dataclass_type,
    is_literal,
    is_typed_dict,
    is_union,
    pydantic_version,
    type_hints,
    unwrap,
)

__all__ = ["NotSerializable", "PayloadMismatch", "decode", "dumps", "to_json_value"]


class PayloadMismatch(ValueError):
    """A payload that does not fit the annotation; ``path`` names the field (empty: the payload itself)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'payload'}: {problem}")
        self.path = path
        self.problem = problem


class NotSerializable(TypeError):
    """A value with no JSON form; ``path`` says where it sits."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path


# ---------------------------------------------------------------------------------------------- decode


def decode(value: Any, tp: Any, path: str = "") -> Any:
    """``value`` (parsed JSON) as an instance of ``tp``; raises PayloadMismatch."""
    tp = unwrap(tp)
    if tp is Any or tp is object or isinstance(tp, typing.TypeVar):
        return value
    if tp is None or tp is NONE_TYPE:
        if value is None:
            return None
        raise _expected(path, "null", value)
    if value is None and not _accepts_none(tp):
        raise _expected(path, _describe(tp), value)
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _expected(path, "boolean", value)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise _expected(path, "integer", value)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise _expected(path, "number", value)
    if tp is str:
        if isinstance(value, str):
            return value
        raise _expected(path, "string", value)
    if is_union(tp):
        return _decode_union(value, get_args(tp), path)
    if is_literal(tp):
        allowed = get_args(tp)
        for option in allowed:
            if value == option and type(value) is type(option):
                return option
        raise PayloadMismatch(path, f"expected one of {_list(allowed)}, got {_show(value)}")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if member.value == value and type(member.value) is type(value):
                return member
        raise PayloadMismatch(path, f"expected one of {_list([m.value for m in tp])}, got {_show(value)}")
    if isinstance(tp, type) and hasattr(tp, "__flint_schema__") and isinstance(value, tp):
        return value  # a channel end the SDK already made from its ref
    scalar = _decode_scalar(value, tp, path)
    if scalar is not _NO:
        return scalar
    if is_dataclass_type(tp):
        return _decode_dataclass(value, tp, path)
    if is_typed_dict(tp):
        return _decode_typed_dict(value, tp, path)
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):
        hints = type_hints(tp)
        items = _decode_tuple_items(value, [hints.get(n, Any) for n in tp._fields], path, len(getattr(tp, "_field_defaults", {})))
        return tp(*items)
    version = pydantic_version(tp)
    if version:
        return _decode_pydantic(value, tp, version, path)
    origin = get_origin(tp)
    args = get_args(tp)
    container = origin if origin is not None else tp
    if container is tuple:
        if args and not (len(args) == 2 and args[1] is Ellipsis) and args != ((),):
            return tuple(_decode_tuple_items(value, list(args), path, 0))
        item = args[0] if args and args != ((),) else Any
        return tuple(_decode_list(value, item, path))
    if container in (set, frozenset, cabc.Set, cabc.MutableSet):
        items = _decode_list(value, args[0] if args else Any, path)
        try:
            return frozenset(items) if container is frozenset else set(items)
        except TypeError as err:
            raise PayloadMismatch(path, f"items cannot be in a set ({err})") from None
    if container in (dict, cabc.Mapping, cabc.MutableMapping):
        if not isinstance(value, dict):
            raise _expected(path, "object", value)
        key_type, value_type = (args[0], args[1]) if len(args) == 2 else (Any, Any)
        return {_decode_key(k, key_type, path): decode(v, value_type, _field(path, k)) for k, v in value.items()}
    if container in (list, cabc.Sequence, cabc.MutableSequence, cabc.Iterable, cabc.Collection):
        return _decode_list(value, args[0] if args else Any, path)
    # A type with no JSON form cannot be the annotation of a registered handler (registration refuses it).
    return value


_NO = object()


def _decode_scalar(value: Any, tp: Any, path: str) -> Any:
    if tp is dt.datetime or tp is dt.date or tp is dt.time:
        if not isinstance(value, str):
            raise _expected(path, f"ISO-8601 {tp.__name__} text", value)
        try:
            return tp.fromisoformat(value)
        except ValueError:
            raise PayloadMismatch(path, f"expected ISO-8601 {tp.__name__} text, got {_show(value)}") from None
    if tp is dt.timedelta:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return dt.timedelta(seconds=value)
        raise _expected(path, "number of seconds", value)
    if tp is uuid.UUID:
        try:
            return uuid.UUID(value) if isinstance(value, str) else _fail()
        except ValueError:
            raise _expected(path, "UUID text", value) from None
    if tp is Decimal:
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            try:
                return Decimal(str(value))
            except InvalidOperation:
                pass
        raise _expected(path, "decimal number or numeric text", value)
    if tp is bytes or tp is bytearray:
        if isinstance(value, str):
            try:
                raw = base64.b64decode(value, validate=True)
                return raw if tp is bytes else bytearray(raw)
            except ValueError:
                pass
        raise _expected(path, "base64 text", value)
    return _NO


def _fail() -> Any:
    raise ValueError


def _decode_union(value: Any, members: tuple[Any, ...], path: str) -> Any:
    if value is None and any(m is NONE_TYPE or m is None for m in members):
        return None
    deepest: PayloadMismatch | None = None
    for member in members:
        if member is NONE_TYPE or member is None:
            continue
        try:
            return decode(value, member, path)
        except PayloadMismatch as err:
            # The member that got furthest into the value explains the mismatch best.
            if deepest is None or len(err.path) > len(deepest.path):
                deepest = err
    if deepest is not None and deepest.path != path:
        raise deepest
    raise PayloadMismatch(path, f"expected {' or '.join(_describe(m) for m in members)}, got {_show(value)}")


def _decode_list(value: Any, item: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise _expected(path, "array", value)
    return [decode(v, item, f"{path}[{i}]") for i, v in enumerate(value)]


def _decode_tuple_items(value: Any, types: list[Any], path: str, optional: int) -> list[Any]:
    if not isinstance(value, list):
        raise _expected(path, "array", value)
    if not len(types) - optional <= len(value) <= len(types):
        count = str(len(types)) if optional == 0 else f"{len(types) - optional} to {len(types)}"
        raise PayloadMismatch(path, f"expected an array of {count} items, got {len(value)}")
    return [decode(v, t, f"{path}[{i}]") for i, (v, t) in enumerate(zip(value, types))]


def _decode_key(key: str, tp: Any, path: str) -> Any:
    tp = unwrap(tp)
    if tp is int:
        try:
            return int(key)
        except ValueError:
            raise PayloadMismatch(_field(path, key), "key is not an integer") from None
    if tp in (Any, str, object):
        return key
    return decode(key, tp, _field(path, key))


def _decode_dataclass(value: Any, tp: type, path: str) -> Any:
    if not isinstance(value, dict):
        raise _expected(path, f"object ({tp.__name__})", value)
    hints = type_hints(tp)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(tp):
        if not f.init:
            continue
        if f.name in value:
            kwargs[f.name] = decode(value[f.name], hints.get(f.name, Any), _field(path, f.name))
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise PayloadMismatch(_field(path, f.name), "required field is missing")
    try:
        return tp(**kwargs)
    except (TypeError, ValueError) as err:  # a __post_init__ check
        raise PayloadMismatch(path, f"{tp.__name__}: {err}") from None


def _decode_typed_dict(value: Any, tp: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _expected(path, f"object ({tp.__name__})", value)
    hints = type_hints(tp)
    required = getattr(tp, "__required_keys__", frozenset(hints))
    out = dict(value)
    for name, hint in hints.items():
        if name in value:
            out[name] = decode(value[name], hint, _field(path, name))
        elif name in required:
            raise PayloadMismatch(_field(path, name), "required field is missing")
    return out


def _decode_pydantic(value: Any, tp: Any, version: int, path: str) -> Any:
    import pydantic

    try:
        return tp.model_validate(value) if version == 2 else tp.parse_obj(value)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        where = path
        for part in first.get("loc", ()):
            where = f"{where}[{part}]" if isinstance(part, int) else _field(where, str(part))
        raise PayloadMismatch(where, str(first.get("msg", "invalid"))) from None


def _accepts_none(tp: Any) -> bool:
    if is_union(tp):
        return any(m is NONE_TYPE or m is None or _accepts_none(unwrap(m)) for m in get_args(tp))
    if is_literal(tp):
        return None in get_args(tp)
    return tp is Any or tp is object or pydantic_version(tp) > 0


def _field(path: str, name: Any) -> str:
    text = str(name)
    if text.isidentifier():
        return f"{path}.{text}" if path else text
    return path + "[" + json.dumps(text) + "]"


def _expected(path: str, what: str, value: Any) -> PayloadMismatch:
    return PayloadMismatch(path, f"expected {what}, got {_show(value)}")


def _show(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean " + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {json.dumps(value[:40] + ('…' if len(value) > 40 else ''), ensure_ascii=False)}"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _list(values: Any) -> str:
    return ", ".join(json.dumps(v) if not isinstance(v, enum.Enum) else json.dumps(v.value) for v in values)


def _describe(tp: Any) -> str:
    tp = unwrap(tp)
    names = {bool: "boolean", int: "integer", float: "number", str: "string", NONE_TYPE: "null", type(None): "null"}
    if tp in names:
        return names[tp]
    if is_dataclass_type(tp) or is_typed_dict(tp):
        return f"object ({tp.__name__})"
    origin = get_origin(tp) or tp
    if origin in (list, tuple, set, frozenset, cabc.Sequence):
        return "array"
    if origin in (dict, cabc.Mapping):
        return "object"
    return getattr(tp, "__name__", str(tp))


# ----------------------------------------------------------------------------------------------- encode


def dumps(value: Any, root: str = "value") -> str:
    """Compact JSON of ``value``; raises NotSerializable naming where (under ``root``) an unserialisable part sits."""
    try:
        return json.dumps(value, default=_default, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as err:
        raise NotSerializable(*_locate(value, root, err)) from None


def to_json_value(value: Any) -> Any:
    """``value`` made of JSON types only (dicts, lists, strings, numbers, booleans, None)."""
    return json.loads(dumps(value))


def _default(obj: Any) -> Any:
    custom = getattr(obj, "__flint_json__", None)
    if custom is not None and not isinstance(obj, type):
        return custom()
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if isinstance(obj, enum.Enum):
        return obj.value
    if isinstance(obj, (dt.datetime, dt.date, dt.time)):
        return obj.isoformat()
    if isinstance(obj, dt.timedelta):
        return obj.total_seconds()
    if isinstance(obj, (uuid.UUID, Decimal)):
        return str(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(obj)).decode("ascii")
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    version = pydantic_version(type(obj))
    if version == 2:
        return obj.model_dump(mode="json")
    if version == 1:
        return json.loads(obj.json())
    raise TypeError(f"a value of type {type(obj).__name__} has no JSON form")


def _locate(value: Any, path: str, err: BaseException, depth: int = 0) -> tuple[str, str]:
    """The path of the first part of ``value`` json cannot write, and why."""
    if depth > 200:
        return path, "the value is nested too deeply (or refers to itself)"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return path, f"{value!r} is not a JSON number"
    if value is None or isinstance(value, (str, int, float, bool)):
        return path, str(err)
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, (str, int, float, bool)) and k is not None:
                return path, f"key {k!r} is a {type(k).__name__}; JSON keys are text"
            found = _try(v)
            if found is not None:
                return _locate(v, _field(path, k), found, depth + 1)
        return path, str(err)
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found = _try(v)
            if found is not None:
                return _locate(v, f"{path}[{i}]", found, depth + 1)
        return path, str(err)
    try:
        converted = _default(value)
    except TypeError as inner:
        return path, f"{inner} (make it a dict, a dataclass or a JSON type)"
    return _locate(converted, path, err, depth + 1)


def _try(value: Any) -> BaseException | None:
    try:
        json.dumps(value, default=_default, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        return err
    return None

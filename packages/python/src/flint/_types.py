"""Looking through annotations: the few questions both the schema maker and the converter ask."""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

try:  # typing_extensions' TypedDict is a different class on some versions
    from typing import is_typeddict
except ImportError:  # pragma: no cover - Python < 3.10
    def is_typeddict(tp: object) -> bool:
        return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__")


NONE_TYPE = type(None)
_ALIAS: Any = getattr(typing, "TypeAliasType", None)  # Python 3.12's `type X = ...`


def unwrap(tp: Any) -> Any:
    """``Annotated[X, ...]`` → X, ``NewType`` → its supertype, ``TypeAliasType`` → its value."""
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            tp = get_args(tp)[0]
        elif hasattr(tp, "__supertype__"):
            tp = tp.__supertype__
        elif _ALIAS is not None and isinstance(tp, _ALIAS):
            tp = tp.__value__
        else:
            return tp


def is_union(tp: Any) -> bool:
    origin = get_origin(tp)
    return origin is Union or origin is types.UnionType


def is_literal(tp: Any) -> bool:
    return get_origin(tp) is Literal


def is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def pydantic_version(tp: Any) -> int:
    """2 or 1 for a pydantic model class, 0 for anything else (pydantic is optional)."""
    if not isinstance(tp, type):
        return 0
    pydantic = sys.modules.get("pydantic")
    if pydantic is None:
        return 0
    base = getattr(pydantic, "BaseModel", None)
    if base is None or not issubclass(tp, base):
        return 0
    return 2 if hasattr(tp, "model_json_schema") else 1


def type_hints(obj: Any) -> dict[str, Any]:
    """Resolved annotations (string annotations included) of a class or function."""
    return typing.get_type_hints(obj, include_extras=True)


def def_name(tp: Any) -> str:
    """The name of a named type in ``$defs``: its qualified name, dots made underscores."""
    return str(getattr(tp, "__qualname__", getattr(tp, "__name__", "Type"))).replace(".", "_").replace("<locals>_", "")


def is_typed_dict(tp: Any) -> bool:
    return is_typeddict(tp)

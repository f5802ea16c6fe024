"""Validated parameter models.

Every model, actuator and plugin declares its parameters as a subclass of :class:`ParamsBase`
(pydantic v2): unknown keys are rejected, instances are immutable, units live in the field
metadata (``Field(..., json_schema_extra={"unit": "m/s"})`` or the :func:`field` shortcut).
:func:`validate` turns pydantic's errors into :class:`~marinesim.core.errors.ConfigError` with
``file:line:column: dotted.path: message`` and a did-you-mean for unknown keys.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from marinesim.core.errors import ConfigError, suggest

__all__ = ["Marks", "ParamsBase", "field", "field_units", "validate"]

#: Mapping from a dotted path ("entities.0.motion.params.turn_rate") to (line, column), 1-based.
Marks = Mapping[str, tuple[int, int]]

P = TypeVar("P", bound="ParamsBase")


def _bool_for_number(annotation: Any, value: Any) -> bool:
    """True when ``value`` holds a bool where ``annotation`` asks for a number (int/float)."""
    if annotation in (float, int):
        return isinstance(value, bool)
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin in (Union, UnionType):
        kinds = [a for a in args if a is not type(None)]
        if any(a is bool or a is str or a is Any for a in kinds):
            return False
        return any(_bool_for_number(a, value) for a in kinds)
    if origin in (tuple, list) and isinstance(value, list | tuple):
        items = [a for a in args if a is not Ellipsis]
        if not items:
            return False
        return any(
            _bool_for_number(items[min(i, len(items) - 1)], v) for i, v in enumerate(value)
        )
    return False


class ParamsBase(BaseModel):
    """Base of every parameter model: ``extra="forbid"``, frozen, finite floats only.

    A boolean where a number is expected (``dt: true``) is an error, not 1.0.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for name, fld in cls.model_fields.items():
                if name in data and _bool_for_number(fld.annotation, data[name]):
                    raise ValueError(f"{name}: expected a number, got a boolean ({data[name]!r})")
        return data


def field(default: Any = ..., *, unit: str = "", description: str = "", **kwargs: Any) -> Any:
    """A pydantic ``Field`` with a ``unit`` in its metadata.

    Parameters
    ----------
    default : Any
        Default value (``...`` = required).
    unit : str
        SI unit ("m", "m/s", "deg", "%", "" for dimensionless).
    description : str
        One line shown by ``--example`` and ``plugins show``.
    """
    extra = dict(kwargs.pop("json_schema_extra", {}) or {})
    extra["unit"] = unit
    return Field(default, description=description, json_schema_extra=extra, **kwargs)


def field_units(model: type[BaseModel]) -> dict[str, str]:
    """Map each field of ``model`` to its unit string ("" when none was declared)."""
    out: dict[str, str] = {}
    for name, info in model.model_fields.items():
        extra = info.json_schema_extra
        out[name] = str(extra.get("unit", "")) if isinstance(extra, dict) else ""
    return out


def _mark_for(marks: Marks | None, path: str) -> tuple[int | None, int | None]:
    if not marks:
        return None, None
    probe = path
    while True:
        if probe in marks:
            return marks[probe]
        if "." not in probe:
            return None, None
        probe = probe.rsplit(".", 1)[0]


def _unwrap_optional(tp: Any) -> Any:
    """``X | None`` → ``X`` (other unions unchanged)."""
    args = [a for a in get_args(tp) if a is not type(None)]
    if get_origin(tp) in (Union, UnionType) and len(args) == 1:
        return args[0]
    return tp


def _known_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model an error location points into."""
    current: Any = model
    for part in loc[:-1]:
        current = _unwrap_optional(current)
        if isinstance(part, int) or str(part).isdigit():
            # list/tuple/dict element: step into the element type
            args = get_args(current)
            if not args:
                return []
            current = args[-1]
            continue
        if isinstance(current, type) and issubclass(current, BaseModel):
            info = current.model_fields.get(str(part))
            if info is None:
                return []
            current = info.annotation
        else:
            args = [a for a in get_args(current) if isinstance(a, type) and issubclass(a, BaseModel)]
            if len(args) != 1 or str(part) not in args[0].model_fields:
                return []
            current = args[0].model_fields[str(part)].annotation
    current = _unwrap_optional(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def validate(
    model: type[P],
    data: Mapping[str, Any] | None,
    *,
    file: str | Path | None = None,
    marks: Marks | None = None,
    prefix: str = "",
) -> P:
    """Build ``model`` from ``data`` or raise a located :class:`ConfigError`.

    Parameters
    ----------
    model : type of ParamsBase
        The parameter model.
    data : mapping
        Raw values (e.g. from YAML).
    file : str or Path, optional
        Source file, for the message.
    marks : mapping, optional
        Dotted path → (line, column) of the source nodes.
    prefix : str
        Dotted path of ``data`` inside the file (e.g. ``"entities.0.motion.params"``).

    Raises
    ------
    ConfigError
        For the first problem, with file, line, column, the dotted path and a suggestion for
        unknown keys.
    """
    try:
        return model.model_validate(dict(data or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = bool_error_loc(err)
        rel = ".".join(str(p) for p in loc)
        path = f"{prefix}.{rel}" if prefix and rel else (prefix or rel)
        line, col = _mark_for(marks, path)
        msg = str(err.get("msg", "invalid value"))
        if err.get("type") == "extra_forbidden" and loc:
            close = suggest(str(loc[-1]), _known_fields(model, loc))
            msg = "extra field not permitted"
            if close:
                msg += f" (did you mean {close[0]!r}?)"
        elif err.get("type") == "missing":
            msg = "required value missing"
        elif loc != tuple(err.get("loc", ())):
            msg = BOOL_MESSAGE
        elif "input" in err and err.get("type") not in ("extra_forbidden",):
            msg += f" (got {err['input']!r})"
        raise ConfigError(msg, file=file, line=line, column=col, param=path or None) from None
    except (TypeError, ArithmeticError) as exc:  # a validator that failed instead of reporting
        line, col = _mark_for(marks, prefix)
        raise ConfigError(
            f"invalid parameters ({type(exc).__name__}: {exc})",
            file=file,
            line=line,
            column=col,
            param=prefix or None,
        ) from None


#: Message of a boolean given where a number is expected.
BOOL_MESSAGE = "expected a number, got a boolean (true/false is not 1/0 here)"
_BOOL_PREFIX = "Value error, "
_BOOL_SUFFIX = ": expected a number, got a boolean"


def bool_error_loc(err: Mapping[str, Any]) -> tuple[Any, ...]:
    """Location of a pydantic error, down to the field for a boolean-as-number error."""
    loc = tuple(err.get("loc", ()))
    msg = str(err.get("msg", ""))
    if err.get("type") == "value_error" and _BOOL_SUFFIX in msg and msg.startswith(_BOOL_PREFIX):
        name = msg[len(_BOOL_PREFIX) : msg.index(_BOOL_SUFFIX)]
        return (*loc, name)
    return loc


def make_checker(model: type[P]) -> Callable[[Mapping[str, Any]], P]:
    """Return ``data -> model`` raising :class:`ConfigError` (convenience for callbacks)."""
    return lambda data: validate(model, data)

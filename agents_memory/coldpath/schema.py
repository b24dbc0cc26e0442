"""A small JSON-schema checker for the tight schemas the Cold Path sends to its LLM.

Covered keywords: ``type`` (one or a list), ``enum``, ``const``, ``anyOf``, ``required``,
``properties``, ``additionalProperties`` (false or a schema), ``items``, ``minItems``,
``maxItems``, ``minLength``, ``maxLength``, ``pattern`` (``re.search``), ``minimum``,
``maximum``. Anything else is ignored. A grammar guarantees a valid *prefix* at best, so every
answer goes through :func:`schema_errors` before a job sees it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(name, (object,)))


def schema_errors(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty when it conforms)."""
    if "anyOf" in schema:
        options = [schema_errors(value, option, path) for option in schema["anyOf"]]
        if all(options):
            return [f"{path}: matches none of anyOf ({options[0][0]})"]
    kind = schema.get("type")
    if kind is not None:
        kinds = [kind] if isinstance(kind, str) else list(kind)
        if not any(_is_type(value, k) for k in kinds):
            return [f"{path}: expected {'|'.join(kinds)}, got {type(value).__name__}"]
    errors: list[str] = []
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and not _same(value, schema["const"]):
        errors.append(f"{path}: must be {schema['const']!r}")
    if isinstance(value, str):
        errors.extend(_string_errors(value, schema, path))
    elif isinstance(value, list):
        errors.extend(_array_errors(value, schema, path))
    elif isinstance(value, dict):
        errors.extend(_object_errors(value, schema, path))
    elif _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: below {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: above {schema['maximum']}")
    return errors


def _same(value: Any, option: Any) -> bool:
    if _is_type(value, "number") and _is_type(option, "number"):
        return bool(value == option)
    return type(value) is type(option) and bool(value == option)


def _string_errors(value: str, schema: Mapping[str, Any], path: str) -> list[str]:
    errors = []
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        errors.append(f"{path}: longer than {schema['maxLength']} characters")
    if "minLength" in schema and len(value) < schema["minLength"]:
        errors.append(f"{path}: shorter than {schema['minLength']} characters")
    if "pattern" in schema and re.search(schema["pattern"], value) is None:
        errors.append(f"{path}: does not match {schema['pattern']}")
    return errors


def _array_errors(value: list[Any], schema: Mapping[str, Any], path: str) -> list[str]:
    errors = []
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        errors.append(f"{path}: more than {schema['maxItems']} items")
    if "minItems" in schema and len(value) < schema["minItems"]:
        errors.append(f"{path}: fewer than {schema['minItems']} items")
    items = schema.get("items")
    if isinstance(items, Mapping):
        for index, item in enumerate(value):
            errors.extend(schema_errors(item, items, f"{path}[{index}]"))
    return errors


def _object_errors(value: dict[str, Any], schema: Mapping[str, Any], path: str) -> list[str]:
    errors = [f"{path}: missing {key!r}" for key in schema.get("required", ()) if key not in value]
    properties: Mapping[str, Any] = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            errors.extend(schema_errors(item, properties[key], f"{path}.{key}"))
        elif extra is False:
            errors.append(f"{path}: unexpected property {key!r}")
        elif isinstance(extra, Mapping):
            errors.extend(schema_errors(item, extra, f"{path}.{key}"))
    return errors


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(text: str | None, schema: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The reply as a schema-valid object, or ``(None, why not)``. A Markdown code fence
    around the JSON is tolerated; nothing else is repaired."""
    if not text or not text.strip():
        return None, "empty answer"
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except ValueError as exc:
        return None, f"not JSON ({exc})"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    errors = schema_errors(value, schema)
    if errors:
        return None, "; ".join(errors[:3])
    return value, ""

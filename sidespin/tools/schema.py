"""A function's signature and docstring read as a JSON schema, and arguments coerced to a schema.

`function_schema` is how a plugin's parameters become the schema the model is shown (each
parameter's type read by pydantic, its description from the docstring's `Args:`);
`coerce_arguments` is how the model's arguments are checked against a schema (any tool's,
an MCP server's included) before the tool runs: first coerced leniently ("3" becomes 3
where an integer is expected, inside objects and arrays too), then validated by `jsonschema`
(enum, minimum and maximum, nested fields, array items...). Every problem is listed in one
`BadArguments`. A schema that is not a valid JSON schema (a server may send anything) is
not checked: it is logged and the coerced arguments go on.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import typing
from typing import Any, Callable

import pydantic
import pydantic_core
from loguru import logger

from sidespin.errors import BadArguments

if typing.TYPE_CHECKING:
    import jsonschema

__all__ = ["function_schema", "coerce_arguments", "as_meant"]

_SUBSCHEMA = ("items", "additionalProperties", "not", "contains", "propertyNames")  # keywords whose value is a schema
_SUBSCHEMAS = ("anyOf", "oneOf", "allOf", "prefixItems")  # ... a list of schemas
_NAMED_SUBSCHEMAS = ("properties", "patternProperties")  # ... schemas by name


def _schema_for(annotation: Any) -> dict[str, Any]:
    """The JSON schema pydantic gives a parameter's type, in plain form (`_plain`); {} for any value."""
    if annotation is inspect.Parameter.empty or annotation is Any:
        return {}
    try:
        schema = pydantic.TypeAdapter(annotation).json_schema()
    except pydantic.PydanticUserError:  # a type with no JSON form (a callable, a connection): any value
        return {}
    return _plain(schema, schema.get("$defs", {}))


def _plain(node: Any, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> Any:
    """A schema as the prompt, the grammar, the route and the coercion read one: references written
    out (a type that holds itself stops at "object"), no titles, `X | None` read by `_nullable`."""
    if not isinstance(node, dict):
        return node
    name = str(node.get("$ref", "")).removeprefix("#/$defs/")
    if name in defs:  # written out, what stands beside the reference (a description) kept
        written = {"type": "object"} if name in seen else _plain(defs[name], defs, seen | {name})
        return {**written, **_plain({key: value for key, value in node.items() if key != "$ref"}, defs, seen)}
    kept = {key: value for key, value in node.items() if key not in ("title", "$defs")}
    return _nullable(_each_subschema(kept, lambda sub: _plain(sub, defs, seen)))


def _each_subschema(node: dict[str, Any], each: Callable[[Any], Any]) -> dict[str, Any]:
    """`node` with `each` applied to every schema it holds: `items`, each of `anyOf`'s choices, each property …"""
    mapped: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUBSCHEMA:
            value = each(value)
        elif key in _SUBSCHEMAS and isinstance(value, list):
            value = [each(choice) for choice in value]
        elif key in _NAMED_SUBSCHEMAS and isinstance(value, dict):
            value = {field: each(sub) for field, sub in value.items()}
        mapped[key] = value
    return mapped


def as_meant(node: Any) -> Any:
    """A schema a server listed, with what no value could satisfy read as its author meant: an enum of single values
    written beside an array's `items` is the items' enum (BFCL's `metrics`, "type": "array" with "enum":
    ["temperature", "humidity", …]: no array is one of those strings, so every call failed as malformed); a number's
    enum of texts is of texts (BFCL's `year`, "type": "integer" with "enum": ["2010", …, "dontcare"]: 2012 was
    refused as not one of them, and "2012" as no whole number; its own answers write "2012"); a switch's enum of
    texts is no enum (BFCL's `is_unisex`, "type": "boolean" with "enum": ["True", "False", "dontcare"]: the 0.5B's
    true was refused as not one of them)."""
    if not isinstance(node, dict):
        return node
    meant = _each_subschema(node, as_meant)
    enum = meant.get("enum")
    texts = isinstance(enum, list) and bool(enum) and all(isinstance(value, str) for value in enum)
    if texts and meant.get("type") in ("integer", "number"):
        meant = {**meant, "type": "string"}
    if texts and meant.get("type") == "boolean":
        meant = {key: value for key, value in meant.items() if key != "enum"}
    if meant.get("type") == "array" and isinstance(enum, list) and enum and not any(
            isinstance(value, list) for value in enum):
        items = meant.get("items") if isinstance(meant.get("items"), dict) else {}
        meant = {key: value for key, value in meant.items() if key != "enum"} | {"items": {**items, "enum": enum}}
    return meant


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """`{"anyOf": [X, {"type": "null"}]}` as X with "null" among its types; an enum X stays X alone."""
    choices = schema.get("anyOf")
    if not (isinstance(choices, list) and len(choices) == 2 and {"type": "null"} in choices):
        return schema
    other = choices[0] if choices[1] == {"type": "null"} else choices[1]
    if not isinstance(other.get("type"), str):  # `int | str | None`: the choices stay
        return schema
    rest = {key: value for key, value in schema.items() if key != "anyOf"}
    return {**rest, **other} if "enum" in other else {**rest, **other, "type": [other["type"], "null"]}


def _docstring_parts(doc: str) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and the `Args:` lines (Google style)."""
    description: list[str] = []
    params: dict[str, str] = {}
    in_args = False
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:"):
            in_args = True
            continue
        if in_args:
            if not stripped:
                continue
            if ":" in stripped and not line.startswith(" " * 8):
                name, _, text = stripped.partition(":")
                params[name.split("(")[0].strip()] = text.strip()
                continue
            if stripped.endswith(":"):
                in_args = False
                continue
        if not in_args:
            description.append(line)
    return "\n".join(description).strip(), params


def function_schema(fn: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """A function's description (its docstring without the `Args:` section) and the JSON schema of its parameters."""
    description, param_docs = _docstring_parts(fn.__doc__ or "")
    hints = typing.get_type_hints(fn, include_extras=True)  # Annotated[int, Field(ge=1)] keeps its limits
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema = _schema_for(hints.get(name, param.annotation))
        if name in param_docs:
            schema["description"] = param_docs[name]
        if param.default is inspect.Parameter.empty:
            required.append(name)
        elif param.default is not None:
            with contextlib.suppress(pydantic_core.PydanticSerializationError):  # a default with no JSON form goes unsaid
                schema["default"] = pydantic_core.to_jsonable_python(param.default)
        properties[name] = schema
    # a plugin's signature is its whole interface: any other argument is a mistake to report
    input_schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        input_schema["required"] = required
    return description, input_schema


def _coerce_value(name: str, value: Any, schema: dict[str, Any], inside: bool = False) -> Any:
    value = _as_choice(value, schema.get("enum"))
    expected = schema.get("type")
    if isinstance(expected, list):
        expected = next((t for t in expected if t != "null"), None)
    if value is None or expected is None:
        return value
    if expected == "string":
        return value if isinstance(value, str) else json.dumps(value) if isinstance(value, (dict, list)) else str(value)
    if expected == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "1", "false", "no", "0"):
            return value.strip().lower() in ("true", "yes", "1")
        if isinstance(value, int):
            return bool(value)
        raise BadArguments(f"argument {name!r} should be true or false, got {value!r}")
    if expected == "integer":
        if isinstance(value, bool):
            raise BadArguments(f"argument {name!r} should be a whole number, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value.strip())
            except ValueError:
                pass
        raise BadArguments(f"argument {name!r} should be a whole number, got {value!r}")
    if expected == "number":  # inside a list or an object, a float: a checker of types (BFCL's, for a list of
        # floats) refuses [12, 15]; a parameter's own number stays as written ("add 17 and 25" shows 17, not 17.0)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value) if inside else value
        if isinstance(value, str):
            try:
                number = float(value.strip())
                return number if inside or not number.is_integer() or "." in value else int(number)
            except ValueError:
                pass
        raise BadArguments(f"argument {name!r} should be a number, got {value!r}")
    if expected in ("array", "object"):
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as error:
                raise BadArguments(f"argument {name!r} should be JSON {expected}: {error.msg}") from None
        wanted = list if expected == "array" else dict
        if not isinstance(value, wanted):
            raise BadArguments(f"argument {name!r} should be an {expected}, got {type(value).__name__}")
        return _coerce_inside(name, value, schema)
    return value


def _as_choice(value: Any, choices: Any) -> Any:
    """A value not among an enum's choices that one choice writes otherwise is that choice: the number 2010 for the
    text '2010' of an enum with no type, "2" for 2, "Celsius" for "celsius" (each refused before as "not one of …",
    so no call was made). Left as it is when no choice, or more than one, reads so: the enum then refuses it,
    naming the choices. (An enum of texts under "type": "integer", BFCL's `year`, is read as texts by `as_meant`.)"""
    if not isinstance(choices, list) or isinstance(value, (bool, dict, list)) or value is None or value in choices:
        return value
    said = str(value).strip().casefold()
    matching = [choice for choice in choices
                if not isinstance(choice, (bool, dict, list)) and choice is not None
                and str(choice).strip().casefold() == said]
    return matching[0] if len(matching) == 1 else value


def _coerce_inside(name: str, value: dict[str, Any] | list[Any], schema: dict[str, Any]) -> Any:
    """An object's fields and an array's items coerced as their own schemas say (`name.field`, `name[0]`)."""
    if isinstance(value, dict):
        fields = schema.get("properties")
        fields = fields if isinstance(fields, dict) else {}
        return {key: _coerce_value(f"{name}.{key}", item, fields[key], inside=True)
                if isinstance(fields.get(key), dict) else item for key, item in value.items()}
    items = schema.get("items")
    if not isinstance(items, dict):
        return value
    return [_coerce_value(f"{name}[{index}]", item, items, inside=True) for index, item in enumerate(value)]


def _admits_null(spec: Any) -> bool:
    if not isinstance(spec, dict) or not spec:
        return True
    kind = spec.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_admits_null(sub) for key in ("anyOf", "oneOf") for sub in spec.get(key) or [] if isinstance(sub, dict))


def coerce_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Coerce argument values to the types the schema names, then validate them against the schema.

    A string stays a string ("02139" is not turned into 2139); "3" becomes 3 only where an
    integer is expected. Unknown arguments are refused when the schema says
    `additionalProperties: false` (every plugin's does) and passed on otherwise, as JSON Schema allows.
    An optional argument given as null, where its schema admits no null, is left out (not given).
    `BadArguments` names every argument that does not fit and what it should be.
    """
    if not isinstance(arguments, dict):
        raise BadArguments(f"arguments should be an object, got {type(arguments).__name__}")
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    coerced: dict[str, Any] = {}
    problems: list[str] = []
    required = schema.get("required")
    for name, value in arguments.items():
        if value is None and name in properties and not _admits_null(properties[name]) and (
                not isinstance(required, list) or name not in required):
            continue  # an optional argument given as null is an argument not given (MCP's SEP-2243 omits it too)
        if name in properties:
            try:
                coerced[name] = _coerce_value(name, value, properties[name] if isinstance(properties[name], dict) else {})
            except BadArguments as error:
                problems.append(str(error))
        elif schema.get("additionalProperties") is False:
            problems.append(f"unknown argument {name!r} (expected: {', '.join(properties) or 'none'})")
        else:
            coerced[name] = value
    missing = [name for name in required if name not in arguments] if isinstance(required, list) else []
    if missing:
        problems.append(f"missing required argument{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
    problems += _schema_problems(schema, coerced)
    if len(problems) > 1:
        raise BadArguments(f"{len(problems)} problems with the arguments: " + "; ".join(problems))
    if problems:
        raise BadArguments(problems[0])
    return coerced


def _schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """What `jsonschema` finds wrong with the coerced arguments, beside what the coercion said already
    (a missing or unknown argument; an argument it could not coerce is not among `arguments`)."""
    from referencing.exceptions import Unresolvable

    if _checked_by_coercion(schema):
        return []
    checker = _checker(json.dumps(schema, sort_keys=True, default=str))
    try:
        errors = list(checker.iter_errors(arguments)) if not isinstance(checker, str) else []
    except Unresolvable as error:  # a $ref to elsewhere: nothing is fetched
        checker = f"{type(error).__name__}: {error}"
    if isinstance(checker, str):
        logger.warning("TOOL_SCHEMA_SKIPPED arguments not validated: the tool's schema is not valid: {}", checker[:200])
        return []
    told = {"required", "additionalProperties"}  # at the top, the coercion's own words said these
    return [_problem(error) for error in errors if error.absolute_path or error.validator not in told]


_SCALARS = {"string", "integer", "number", "boolean"}
_WORDS = {"type", "description", "title", "default", "examples"}  # keys that constrain nothing the coercion misses


def _checked_by_coercion(schema: dict[str, Any]) -> bool:
    """Whether the coercion has already checked all this schema asks (scalar arguments, no enum, range, pattern or
    nesting): then jsonschema, ten times the coercion's cost a call, is not asked again (nor the schema written
    out as the text its validator is cached by)."""
    properties = schema.get("properties", {})
    if set(schema) - {"type", "properties", "required", "additionalProperties", "title", "description"}:
        return False
    if schema.get("type") != "object" or not isinstance(properties, dict):
        return False  # not a plain object schema: jsonschema says what is odd about it
    return all(isinstance(sub, dict) and set(sub) <= _WORDS and isinstance(sub.get("type"), str)
               and sub["type"] in _SCALARS for sub in properties.values())


@functools.lru_cache(maxsize=512)
def _checker(schema_json: str) -> jsonschema.protocols.Validator | str:
    """The validator of a schema (in its `$schema` dialect, else Draft 2020-12), or why the schema is not valid.

    Cached by the schema's text: checking a schema costs milliseconds, a call's arguments a tenth of one."""
    import jsonschema  # a tenth of a second to import: only a call needs it

    schema = json.loads(schema_json)
    dialect = schema.get("$schema")
    checker = jsonschema.validators.validator_for({"$schema": dialect} if isinstance(dialect, str) else {},
                                                  default=jsonschema.Draft202012Validator)
    try:
        checker.check_schema(schema)
    except jsonschema.SchemaError as error:
        return error.message
    return checker(schema)


def _problem(error: jsonschema.ValidationError) -> str:
    """`argument 'filter.depth': 'deep' is not of type 'integer'`: where, and what was expected."""
    where = ""
    for part in error.absolute_path:
        if isinstance(part, int):
            where += f"[{part}]"
        else:
            where += f".{part}" if where else str(part)
    message = error.message if len(error.message) <= 300 else error.message[:300] + "…"
    return f"argument {where!r}: {message}" if where else f"the arguments: {message}"

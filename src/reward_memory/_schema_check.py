"""The bundled JSON Schemas compiled into plain Python predicates: the fast "is it valid?".

:func:`reward_memory.schemas.validate` asks this first. A compiled check answers
``True`` only for data that ``jsonschema`` (Draft 2020-12, our extended
validator) *and* :func:`reward_memory.jsonio.check_data` both accept; anything
else -- an error, or a value the compiler is conservative about (a float where
an integer is allowed, a ``str`` subclass, a tuple) -- answers ``False``, and
the caller then runs the reference path (``check_data`` + ``jsonschema``),
which names the error exactly as before or accepts after all. So the compiled
check only has to be *sound*; ``tests/test_schema_check.py`` holds it to the
reference on generated mutations of real packets. Valid input never imports
``jsonschema`` or ``referencing`` (tens of milliseconds at CLI start-up) and
costs microseconds instead of hundreds.

The compiler knows the keywords our schemas use (``tests/test_schemas.py`` keeps
them closed and anchored). A schema that uses anything else, refers to itself,
or lets a value through without a type (``{}``) compiles to ``None``: it
always takes the reference path.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urljoin

__all__ = ["Check", "Unsupported", "compile_node"]

Check = Callable[[Any], bool]

_MAX_INTEGER: Final = 2**53 - 1  # jsonio.MAX_JSON_INTEGER (kept import-free)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# Keywords that annotate and never constrain.
_ANNOTATIONS: Final = frozenset(
    {"description", "title", "default", "examples", "$comment", "$schema", "$defs", "format"}
)
_KNOWN: Final = _ANNOTATIONS | {
    "$id",
    "$ref",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "pattern",
    "maxLength",
    "minLength",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minimum",
    "maximum",
    "anyOf",
    "allOf",
    "if",
    "then",
    "else",
}


class Unsupported(Exception):
    """The schema uses something the compiler does not translate: use the reference path."""


def _safe_str(value: str) -> bool:
    # check_data refuses a lone surrogate in any string.
    return value.isascii() or _SURROGATE.search(value) is None


def _is_type(name: str) -> Check:
    # Exact types only (conservative): a subclass or a tuple takes the reference path.
    if name == "null":
        return lambda value: value is None
    if name == "boolean":
        return lambda value: type(value) is bool
    if name == "string":
        return lambda value: type(value) is str and _safe_str(value)
    if name == "integer":
        return lambda value: type(value) is int and -_MAX_INTEGER <= value <= _MAX_INTEGER
    if name == "number":
        return lambda value: (
            (type(value) is int and -_MAX_INTEGER <= value <= _MAX_INTEGER)
            or (type(value) is float and math.isfinite(value))
        )
    if name == "object":
        return lambda value: type(value) is dict
    if name == "array":
        return lambda value: type(value) is list
    raise Unsupported(f"type {name}")


def _equal_to(expected: Any) -> Check:
    if isinstance(expected, bool) or expected is None:
        return lambda value: value is expected
    if isinstance(expected, str):
        return lambda value: type(value) is str and value == expected
    if isinstance(expected, int):
        return lambda value: type(value) is int and value == expected
    if isinstance(expected, list | dict):
        return lambda value: _same(value, expected)
    raise Unsupported("const/enum of a float")


def _same(value: Any, expected: Any) -> bool:
    """JSON equality with exact types (conservative: a tuple or a subclass is not the same)."""
    if type(value) is not type(expected):
        return False
    if type(expected) is list:
        return len(value) == len(expected) and all(map(_same, value, expected))
    if type(expected) is dict:
        return value.keys() == expected.keys() and all(
            _same(value[key], item) for key, item in expected.items()
        )
    return bool(value == expected)


def _value_checks(node: Mapping[str, Any]) -> list[Check]:
    """``type``, ``const`` and ``enum``: each pins the value to JSON types."""
    checks: list[Check] = []
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        alternatives = [_is_type(name) for name in names]
        checks.append(
            alternatives[0]
            if len(alternatives) == 1
            else lambda value: any(check(value) for check in alternatives)
        )
    if "const" in node:
        checks.append(_equal_to(node["const"]))
    if "enum" in node:
        choices = node["enum"]
        if all(isinstance(choice, str) for choice in choices):
            allowed = frozenset(choices)
            checks.append(lambda value: type(value) is str and value in allowed)
        else:
            options = [_equal_to(choice) for choice in choices]
            checks.append(lambda value: any(option(value) for option in options))
    return checks


def _all(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda value: first(value) and second(value)
    frozen = tuple(checks)
    return lambda value: all(check(value) for check in frozen)


class _Compiler:
    """Compiles schema nodes of one document set; ``$ref`` resolved by ``$id`` + pointer."""

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self._by_id = {document["$id"]: document for document in documents.values()}
        self._done: dict[tuple[str, bool], tuple[Check, bool]] = {}
        self._busy: set[str] = set()

    def _resolve(self, ref: str, base: str) -> tuple[Mapping[str, Any], str, str]:
        uri = urljoin(base, ref)
        address, _, pointer = uri.partition("#")
        node: Any = self._by_id.get(address)
        if node is None:
            raise Unsupported(f"unresolvable $ref {ref}")
        for escaped in filter(None, pointer.split("/")):
            part = escaped.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise Unsupported(f"unresolvable $ref {ref}")
            node = node[part]
        return node, address, uri

    def ref(self, ref: str, base: str, *, constraint: bool = False) -> tuple[Check, bool]:
        node, address, uri = self._resolve(ref, base)
        known = self._done.get((uri, constraint))
        if known is not None:
            return known
        if uri in self._busy:
            raise Unsupported("a recursive schema")
        self._busy.add(uri)
        compiled = self.node(node, address, constraint=constraint)
        self._busy.discard(uri)
        self._done[uri, constraint] = compiled
        return compiled

    def node(self, node: Any, base: str, *, constraint: bool = False) -> tuple[Check, bool]:
        """The node's check, and whether it pins the value to a JSON type (typed).

        In ``constraint`` mode (inside ``if``/``then``/``else``) the node only
        adds conditions to a value its typed siblings already pin down, so it
        may leave an object open or a property untyped.
        """
        if not isinstance(node, Mapping):
            raise Unsupported("a boolean schema")
        unknown = node.keys() - _KNOWN
        if unknown:
            raise Unsupported(f"keywords {sorted(unknown)}")
        if "$id" in node and node["$id"] != base:
            raise Unsupported("a nested $id")
        checks = _value_checks(node)
        typed = bool(checks)
        if "$ref" in node:
            check, ref_typed = self.ref(node["$ref"], base, constraint=constraint)
            checks.append(check)
            typed = typed or ref_typed
        if "anyOf" in node:
            branches = [self.node(branch, base, constraint=constraint) for branch in node["anyOf"]]
            options = [check for check, _ in branches]
            checks.append(lambda value: any(option(value) for option in options))
            typed = typed or all(branch_typed for _, branch_typed in branches)
        if "allOf" in node:
            parts = [self.node(part, base, constraint=constraint) for part in node["allOf"]]
            checks.extend(check for check, _ in parts)
            typed = typed or any(part_typed for _, part_typed in parts)
        checks.extend(self._string(node))
        checks.extend(self._object(node, base, constraint=constraint))
        checks.extend(self._array(node, base, constraint=constraint))
        checks.extend(self._number(node))
        if "if" in node:
            condition, _ = self.node(node["if"], base, constraint=True)
            then = self.node(node["then"], base, constraint=True)[0] if "then" in node else None
            otherwise = (
                self.node(node["else"], base, constraint=True)[0] if "else" in node else None
            )

            def conditional(value: Any) -> bool:
                chosen = then if condition(value) else otherwise
                return chosen is None or chosen(value)

            checks.append(conditional)
        if not checks:
            return (lambda value: True), False
        return _all(checks), typed

    @staticmethod
    def _string(node: Mapping[str, Any]) -> list[Check]:
        # Each applies to strings only (another type passes it: "type" decides).
        checks: list[Check] = []
        low, high = node.get("minLength", 0), node.get("maxLength")
        if low or high is not None:
            top = high if high is not None else math.inf
            checks.append(lambda value: type(value) is not str or low <= len(value) <= top)
        if "pattern" in node:
            search = re.compile(node["pattern"]).search  # what jsonschema calls
            checks.append(lambda value: type(value) is not str or search(value) is not None)
        return checks

    @staticmethod
    def _number(node: Mapping[str, Any]) -> list[Check]:
        checks: list[Check] = []
        for keyword, holds in (
            ("minimum", lambda value, bound: value >= bound),
            ("maximum", lambda value, bound: value <= bound),
        ):
            if keyword in node:
                bound = node[keyword]

                def within(value: Any, bound: Any = bound, holds: Any = holds) -> bool:
                    if type(value) is bool or type(value) not in (int, float):
                        return True
                    return bool(holds(value, bound))

                checks.append(within)
        return checks

    def _object(self, node: Mapping[str, Any], base: str, *, constraint: bool) -> list[Check]:
        keywords = ("properties", "required", "additionalProperties", "patternProperties")
        if not any(keyword in node for keyword in keywords):
            return []
        properties = {
            name: self.node(schema, base, constraint=constraint)
            for name, schema in node.get("properties", {}).items()
        }
        property_checks = {name: check for name, (check, _) in properties.items()}
        required = frozenset(node.get("required", ()))
        patterns = [
            (re.compile(pattern).search, self.node(schema, base, constraint=constraint))
            for pattern, schema in node.get("patternProperties", {}).items()
        ]
        additional: Any = node.get("additionalProperties", True)
        extra: Check = _anything
        if additional is True:
            if not constraint:
                raise Unsupported("an open object")  # any value could pass: no type pinned
        elif additional is not False:
            extra, extra_typed = self.node(additional, base, constraint=constraint)
            if not (extra_typed or constraint):
                raise Unsupported("untyped additionalProperties")
        if not constraint and (
            any(not property_typed for _, property_typed in properties.values())
            or any(not typed for _, (_, typed) in patterns)
        ):
            raise Unsupported("an untyped property")

        if not patterns and additional is not False and extra is _anything:

            def open_(value: Any) -> bool:
                if type(value) is not dict:
                    return True
                if not required <= value.keys():
                    return False
                for key, check in property_checks.items():
                    if key in value and not check(value[key]):
                        return False
                return True

            return [open_]

        if not patterns and additional is False:

            def closed(value: Any) -> bool:
                if type(value) is not dict:
                    return True
                if not required <= value.keys():
                    return False
                for key, item in value.items():
                    check = property_checks.get(key)  # a non-string key is never a property
                    if check is None or not check(item):
                        return False
                return True

            return [closed]

        def general(value: Any) -> bool:
            if type(value) is not dict:
                return True
            if not required <= value.keys():
                return False
            for key, item in value.items():
                if type(key) is not str or not _safe_str(key):
                    return False
                matched = False
                check = property_checks.get(key)
                if check is not None:
                    matched = True
                    if not check(item):
                        return False
                for search, (pattern_check, _) in patterns:
                    if search(key) is not None:
                        matched = True
                        if not pattern_check(item):
                            return False
                if not matched and (additional is False or not extra(item)):
                    return False
            return True

        return [general]

    def _array(self, node: Mapping[str, Any], base: str, *, constraint: bool) -> list[Check]:
        checks: list[Check] = []
        low, high = node.get("minItems", 0), node.get("maxItems")
        if low or high is not None:
            top = high if high is not None else math.inf
            checks.append(lambda value: type(value) is not list or low <= len(value) <= top)
        prefix = [
            self.node(schema, base, constraint=constraint) for schema in node.get("prefixItems", ())
        ]
        if not constraint and any(not typed for _, typed in prefix):
            raise Unsupported("untyped prefixItems")
        prefix_checks = [check for check, _ in prefix]
        items: Any = node.get("items")
        if items is None and not constraint and "array" in str(node.get("type")):
            raise Unsupported("an array of untyped items")
        if items is False:
            count = len(prefix_checks)
            checks.append(lambda value: type(value) is not list or len(value) <= count)
            items = None
        if items is not None:
            item_check, item_typed = self.node(items, base, constraint=constraint)
            if not (item_typed or constraint):
                raise Unsupported("untyped items")
        else:
            item_check = None
        if prefix_checks or item_check is not None:
            start = len(prefix_checks)

            def each(value: Any) -> bool:
                if type(value) is not list:
                    return True
                for check, item in zip(prefix_checks, value, strict=False):
                    if not check(item):
                        return False
                if item_check is not None:
                    for item in value[start:]:
                        if not item_check(item):
                            return False
                elif len(value) > start and not constraint:
                    return False  # an untyped item: conservative
                return True

            checks.append(each)
        if node.get("uniqueItems"):
            checks.append(_unique)
        return checks


def _anything(value: Any) -> bool:
    del value
    return True


def _unique(value: Any) -> bool:
    if type(value) is not list:
        return True
    if all(type(item) is str for item in value):
        return len(set(value)) == len(value)
    try:
        return len({_frozen(item) for item in value}) == len(value)
    except TypeError:  # not JSON data: the reference path decides
        return False


def _frozen(value: Any) -> Any:
    """A hashable stand-in equal exactly when the JSON values are (as schemas._frozen)."""
    if isinstance(value, bool):
        return (bool, value)
    if isinstance(value, dict):
        return (dict, frozenset((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return (list, tuple(_frozen(item) for item in value))
    return value


def compile_node(
    documents: Mapping[str, Mapping[str, Any]], document: Mapping[str, Any], pointer: str = ""
) -> Check | None:
    """The compiled check of ``document`` (or of its node at ``pointer``), or ``None``."""
    compiler = _Compiler(documents)
    try:
        check, typed = compiler.ref(f"#{pointer}", document["$id"])
    except Unsupported:
        return None
    return check if typed else None

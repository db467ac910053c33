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

import json
import math
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urljoin

from reward_memory.jsonio import MAX_JSON_DEPTH, MAX_JSON_INTEGER, _looks_clean

__all__ = ["Check", "Unsupported", "compile_node"]

Check = Callable[[Any], bool]

_MAX_INTEGER: Final = MAX_JSON_INTEGER
_MAX_DEPTH: Final = MAX_JSON_DEPTH
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
    "propertyNames",
    "minProperties",
    "maxProperties",
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


# The keywords through which a schema node can hold (or refer to) nested values.
_NESTING: Final = frozenset(
    {
        "$ref",
        "anyOf",
        "allOf",
        "prefixItems",
        "if",
        "then",
        "else",
        "properties",
        "patternProperties",
        "items",
        "additionalProperties",
    }
)


class Unsupported(Exception):
    """The schema uses something the compiler does not translate: use the reference path."""


def _safe_str(value: str) -> bool:
    # check_data refuses a lone surrogate in any string.
    return value.isascii() or _SURROGATE.search(value) is None


# Exact types only (conservative): a subclass or a tuple takes the reference path.
_TYPE_TESTS: Final = {
    "null": "v is None",
    "boolean": "type(v) is bool",
    "string": "(type(v) is str and (v.isascii() or _surrogate(v) is None))",
    "integer": "(type(v) is int and -_max_int <= v <= _max_int)",
    "number": (
        "((type(v) is int and -_max_int <= v <= _max_int) or (type(v) is float and _isfinite(v)))"
    ),
    "object": "type(v) is dict",
    "array": "type(v) is list",
}


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


class _Compiler:
    """Compiles schema nodes into generated predicate functions; ``$ref`` by ``$id`` + pointer.

    Every node becomes one function ``n<i>(v) -> bool`` whose body is a run of
    ``if <violation>: return False`` lines; nested nodes are calls.
    """

    def __init__(self, documents: Mapping[str, Mapping[str, Any]]) -> None:
        self._by_id = {document["$id"]: document for document in documents.values()}
        self._done: dict[tuple[str, bool], tuple[str, bool]] = {}
        self._busy: set[str] = set()
        self.namespace: dict[str, Any] = {
            "_surrogate": _SURROGATE.search,
            "_max_int": _MAX_INTEGER,
            "_isfinite": math.isfinite,
            "_same": _same,
            "_unique": _unique,
            "_inf": math.inf,
            "_clean": _looks_clean,
        }
        self.sources: list[str] = []
        self.tables: list[Any] = []  # of _Late references, bound after exec
        self._loaded = 0  # sources executed so far
        self._bound = 0  # tables bound so far
        self._seen: dict[tuple[str, str, bool], tuple[str, bool]] = {}
        self._budget: int | None = None
        self._depths: dict[str, int] = {}  # $ref target uri -> its _depth_below
        self._targets: dict[tuple[str, str], tuple[Mapping[str, Any], str, str]] = {}

    def load(self) -> None:
        """Execute the sources generated since the last call; bind the new tables."""
        fresh = self.sources[self._loaded :]
        if fresh:
            code = compile("\n".join(fresh), "<reward_memory schema checks>", "exec")
            exec(code, self.namespace)  # noqa: S102 - generated from the bundled schemas only
            self._loaded = len(self.sources)
        namespace = self.namespace
        # Property tables were filled before their functions existed: bind them now.
        for table in self.tables[self._bound :]:
            if isinstance(table, dict):
                for key, item in table.items():
                    table[key] = namespace[item.name]
            else:
                table[:] = [(search, namespace[late.name]) for search, late in table]
        self._bound = len(self.tables)

    def constant(self, value: Any) -> str:
        name = f"k{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def _resolve(self, ref: str, base: str) -> tuple[Mapping[str, Any], str, str]:
        known = self._targets.get((ref, base))
        if known is None:
            known = self._targets[ref, base] = self._lookup(ref, base)
        return known

    def _lookup(self, ref: str, base: str) -> tuple[Mapping[str, Any], str, str]:
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

    def ref(self, ref: str, base: str, *, constraint: bool = False) -> tuple[str, bool]:
        node, address, uri = self._resolve(ref, base)
        known = self._done.get((uri, constraint))
        if known is not None:
            return known
        if uri in self._busy:
            raise Unsupported("a recursive schema")
        self._busy.add(uri)
        try:
            compiled = self.node(node, address, constraint=constraint)
        finally:
            self._busy.discard(uri)
        self._done[uri, constraint] = compiled
        return compiled

    def node(self, node: Any, base: str, *, constraint: bool = False) -> tuple[str, bool]:
        """The node's function name, and whether it pins the value to a JSON type (typed).

        In ``constraint`` mode (inside ``if``/``then``/``else``) the node only
        adds conditions to a value its typed siblings already pin down, so it
        may leave an object open or a property untyped.
        """
        if not isinstance(node, Mapping):
            raise Unsupported("a boolean schema")
        # Identical nodes (the inlined text pattern, ...) share one function; a
        # node that refers elsewhere is the same node only under the same base.
        text = json.dumps(node, sort_keys=True)
        key = (text, base if "$ref" in text else "", constraint)
        known = self._seen.get(key)
        if known is None:
            known = self._seen[key] = self._compile(node, base, constraint=constraint)
        return known

    def _compile(self, node: Mapping[str, Any], base: str, *, constraint: bool) -> tuple[str, bool]:
        unknown = node.keys() - _KNOWN
        if unknown:
            raise Unsupported(f"keywords {sorted(unknown)}")
        if "$id" in node and node["$id"] != base:
            raise Unsupported("a nested $id")
        lines, typed = self._values(node)
        if "$ref" in node:
            name, ref_typed = self.ref(node["$ref"], base, constraint=constraint)
            lines.append(f"if not {name}(v): return False")
            typed = typed or ref_typed
        if "anyOf" in node:
            branches = [self.node(branch, base, constraint=constraint) for branch in node["anyOf"]]
            calls = " or ".join(f"{name}(v)" for name, _ in branches)
            lines.append(f"if not ({calls}): return False")
            typed = typed or all(branch_typed for _, branch_typed in branches)
        if "allOf" in node:
            parts = [self.node(part, base, constraint=constraint) for part in node["allOf"]]
            lines.extend(f"if not {name}(v): return False" for name, _ in parts)
            typed = typed or any(part_typed for _, part_typed in parts)
        lines.extend(self._string(node))
        lines.extend(self._number(node))
        lines.extend(self._object(node, base, constraint=constraint))
        lines.extend(self._array(node, base, constraint=constraint))
        if "if" in node:
            condition, _ = self.node(node["if"], base, constraint=True)
            lines.append(f"if {condition}(v):")
            if "then" in node:
                then, _ = self.node(node["then"], base, constraint=True)
                lines.append(f"    if not {then}(v): return False")
            else:
                lines.append("    pass")
            if "else" in node:
                otherwise, _ = self.node(node["else"], base, constraint=True)
                lines += ["else:", f"    if not {otherwise}(v): return False"]
        if not constraint:
            lines.extend(self._open_content(node, typed=typed))
            typed = True
        return self._function(lines), typed

    def _open_content(self, node: Mapping[str, Any], *, typed: bool) -> list[str]:
        """Where the schema lets any JSON through (``{}``, a bare ``{"type": "object"}``,
        an array without ``items``), the bounds of ``jsonio.check_data`` still hold."""
        if not typed:
            return [f"if not _clean(v, {self.budget()}): return False"]
        names = node.get("type")
        kinds = set(names if isinstance(names, list) else [names]) if names else set()
        lines = []
        # The budget walks every schema: asked for only where open content is.
        if "object" in kinds and node.get("additionalProperties", True) is True:
            lines.append(f"if type(v) is dict and not _clean(v, {self.budget()}): return False")
        if "array" in kinds and "items" not in node:
            lines.append(f"if type(v) is list and not _clean(v, {self.budget()}): return False")
        return lines

    def budget(self) -> int:
        """How deep open content may nest: 64 (check_data's limit) less the deepest schema."""
        if self._budget is None:
            deepest = 1
            for document in self._by_id.values():
                roots = [document, *document.get("$defs", {}).values()]
                for root in roots:
                    try:
                        deepest = max(deepest, 1 + self._depth_below(root, document["$id"], ()))
                    except Unsupported:  # recursive: that schema never compiles
                        continue
            self._budget = max(1, _MAX_DEPTH - deepest)
        return self._budget

    def _depth_below(self, node: Any, base: str, trail: tuple[str, ...]) -> int:
        """How many levels of instance nesting ``node`` can hold below its own value."""
        if not isinstance(node, dict) or node.keys().isdisjoint(_NESTING):
            return 0  # a leaf (most nodes): nothing nests below it
        deepest = 0
        if "$ref" in node:
            target, address, uri = self._resolve(node["$ref"], base)
            if uri in trail:
                raise Unsupported("a recursive schema")
            # A target's depth is the same from every referrer: walk each once (the
            # shared token and scope definitions are referred to thousands of times).
            known = self._depths.get(uri)
            if known is None:
                known = self._depths[uri] = self._depth_below(target, address, (*trail, uri))
            deepest = known
        for keyword in ("anyOf", "allOf", "prefixItems"):
            for branch in node.get(keyword, ()):
                below = self._depth_below(branch, base, trail)
                deepest = max(deepest, below + (keyword == "prefixItems"))
        for keyword in ("if", "then", "else"):
            if keyword in node:
                deepest = max(deepest, self._depth_below(node[keyword], base, trail))
        children = [
            *node.get("properties", {}).values(),
            *node.get("patternProperties", {}).values(),
        ]
        for keyword in ("items", "additionalProperties"):
            if isinstance(node.get(keyword), Mapping):
                children.append(node[keyword])
        for child in children:
            deepest = max(deepest, 1 + self._depth_below(child, base, trail))
        return deepest

    def _function(self, lines: list[str]) -> str:
        name = f"n{len(self.sources)}"
        body = "".join(f"    {line}\n" for line in lines)
        self.sources.append(f"def {name}(v):\n{body}    return True\n")
        return name

    def _values(self, node: Mapping[str, Any]) -> tuple[list[str], bool]:
        """``type``, ``const`` and ``enum``: each pins the value to JSON types."""
        lines: list[str] = []
        if "type" in node:
            names = node["type"] if isinstance(node["type"], list) else [node["type"]]
            if any(name not in _TYPE_TESTS for name in names):
                raise Unsupported(f"type {names}")
            lines.append(f"if not ({' or '.join(_TYPE_TESTS[name] for name in names)}):")
            lines.append("    return False")
        if "const" in node:
            lines.append(f"if not ({self._equal_to(node['const'])}): return False")
        if "enum" in node:
            choices = node["enum"]
            if all(isinstance(choice, str) for choice in choices):
                allowed = self.constant(frozenset(choices))
                lines.append(f"if type(v) is not str or v not in {allowed}: return False")
            else:
                tests = " or ".join(f"({self._equal_to(choice)})" for choice in choices)
                lines.append(f"if not ({tests}): return False")
        return lines, bool(lines)

    def _equal_to(self, expected: Any) -> str:
        if isinstance(expected, bool) or expected is None:
            return f"v is {expected!r}"
        if isinstance(expected, str):
            return f"type(v) is str and v == {self.constant(expected)}"
        if isinstance(expected, int):
            return f"type(v) is int and v == {int(expected)}"
        if isinstance(expected, list | dict):
            return f"_same(v, {self.constant(expected)})"
        raise Unsupported("const/enum of a float")

    def _string(self, node: Mapping[str, Any]) -> list[str]:
        # Each applies to strings only (another type passes it: "type" decides).
        tests: list[str] = []
        low, high = node.get("minLength", 0), node.get("maxLength")
        if low:
            tests.append(f"len(v) < {int(low)}")
        if high is not None:
            tests.append(f"len(v) > {int(high)}")
        if "pattern" in node:
            search = self.constant(re.compile(node["pattern"]).search)  # what jsonschema calls
            tests.append(f"{search}(v) is None")
        if not tests:
            return []
        return [f"if type(v) is str and ({' or '.join(tests)}): return False"]

    def _number(self, node: Mapping[str, Any]) -> list[str]:
        tests = [
            f"v {operator} {self.constant(node[keyword])}"
            for keyword, operator in (("minimum", "<"), ("maximum", ">"))
            if keyword in node
        ]
        if not tests:
            return []
        return [f"if type(v) in (int, float) and ({' or '.join(tests)}): return False"]

    def _object(self, node: Mapping[str, Any], base: str, *, constraint: bool) -> list[str]:
        keywords = (
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
        )
        if not any(keyword in node for keyword in keywords):
            return []
        properties = {
            name: self.node(schema, base, constraint=constraint)
            for name, schema in node.get("properties", {}).items()
        }
        patterns = [
            (
                re.compile(pattern).search,
                self.node(schema, base, constraint=constraint),
            )
            for pattern, schema in node.get("patternProperties", {}).items()
        ]
        additional: Any = node.get("additionalProperties", True)
        extra: str | None = None
        if additional is True:
            pass  # other members: check_data's bounds (_open_content), or free in a condition
        elif additional is not False:
            extra, extra_typed = self.node(additional, base, constraint=constraint)
            if not (extra_typed or constraint):
                raise Unsupported("untyped additionalProperties")
        if not constraint and (
            any(not typed for _, typed in properties.values())
            or any(not typed for _, (_, typed) in patterns)
        ):
            raise Unsupported("an untyped property")
        table = self.table({name: _Late(fn) for name, (fn, _) in properties.items()})
        lines = ["if type(v) is dict:"]
        if "minProperties" in node:
            lines.append(f"    if len(v) < {int(node['minProperties'])}: return False")
        if "maxProperties" in node:
            lines.append(f"    if len(v) > {int(node['maxProperties'])}: return False")
        if "propertyNames" in node:
            names, _ = self.node(node["propertyNames"], base, constraint=constraint)
            lines += ["    for key in v:", f"        if not {names}(key): return False"]
        if node.get("required"):
            lines.append(
                f"    if not {self.constant(frozenset(node['required']))} <= v.keys(): return False"
            )
        if not patterns and additional is False:
            lines += [
                "    for key, item in v.items():",
                f"        check = {table}.get(key)",  # a non-string key is never a property
                "        if check is None or not check(item): return False",
            ]
            return lines
        if not patterns and extra is None:  # open (constraint mode): named properties only
            lines += [
                f"    for key, check in {table}.items():",
                "        if key in v and not check(v[key]): return False",
            ]
            return lines
        pattern_table = self.table([(search, _Late(fn)) for search, (fn, _) in patterns])
        extra_check = "None" if extra is None else extra
        lines += [
            "    for key, item in v.items():",
            "        if type(key) is not str or not (key.isascii() or _surrogate(key) is None):",
            "            return False",
            f"        check = {table}.get(key)",
            "        matched = check is not None",
            "        if matched and not check(item): return False",
            f"        for search, pattern_check in {pattern_table}:",
            "            if search(key) is not None:",
            "                matched = True",
            "                if not pattern_check(item): return False",
        ]
        if additional is False:
            lines.append("        if not matched: return False")
        elif extra is not None:
            lines.append(f"        if not matched and not {extra_check}(item): return False")
        return lines

    def table(self, value: Any) -> str:
        """A constant holding :class:`_Late` references to generated functions."""
        self.tables.append(value)
        return self.constant(value)

    def _array(self, node: Mapping[str, Any], base: str, *, constraint: bool) -> list[str]:
        tests: list[str] = []
        low, high = node.get("minItems", 0), node.get("maxItems")
        if low:
            tests.append(f"len(v) < {int(low)}")
        if high is not None:
            tests.append(f"len(v) > {int(high)}")
        prefix = [
            self.node(schema, base, constraint=constraint) for schema in node.get("prefixItems", ())
        ]
        if not constraint and any(not typed for _, typed in prefix):
            raise Unsupported("untyped prefixItems")
        items: Any = node.get("items")
        lines: list[str] = []
        if tests:
            lines.append(f"if type(v) is list and ({' or '.join(tests)}): return False")
        body: list[str] = []
        for index, (name, _) in enumerate(prefix):
            body.append(f"    if len(v) > {index} and not {name}(v[{index}]): return False")
        start = len(prefix)
        if items is False:
            body.append(f"    if len(v) > {start}: return False")
        elif items is not None:
            item, item_typed = self.node(items, base, constraint=constraint)
            if not (item_typed or constraint):
                raise Unsupported("untyped items")
            loop = "v" if start == 0 else f"v[{start}:]"
            body += [f"    for item in {loop}:", f"        if not {item}(item): return False"]
        if node.get("uniqueItems"):
            body.append("    if not _unique(v): return False")
        if body:
            lines += ["if type(v) is list:", *body]
        return lines


class _Late:
    """A generated function named before it exists; replaced by it after ``exec``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


def _anything(value: Any) -> bool:
    del value
    return True


def _unique(value: Any) -> bool:
    if type(value) is not list:
        return True
    try:
        # Hash-distinct items are JSON-distinct; a collision of 1 and true (equal
        # in Python, not in JSON) only answers "not unique": the reference decides.
        if len(set(value)) == len(value):
            return True
    except TypeError:  # objects or arrays: compared by their frozen form below
        pass
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


# Keyed by identity, and the entry holds the documents: an id can be reused once its
# object is gone, and a compiler must never serve another document set.
_COMPILERS: dict[int, tuple[Mapping[str, Mapping[str, Any]], _Compiler]] = {}
_LOCK: Final = threading.Lock()  # compiling mutates the shared compiler


def compile_node(
    documents: Mapping[str, Mapping[str, Any]], document: Mapping[str, Any], pointer: str = ""
) -> Check | None:
    """The compiled check of ``document`` (or of its node at ``pointer``), or ``None``.

    One compiler per document set: the shared definitions (a token, a scope)
    are compiled once for every schema that refers to them.
    """
    with _LOCK:
        entry = _COMPILERS.get(id(documents))
        if entry is None or entry[0] is not documents:
            entry = _COMPILERS[id(documents)] = (documents, _Compiler(documents))
        compiler = entry[1]
        try:
            name, typed = compiler.ref(f"#{pointer}", document["$id"])
        except Unsupported:
            return None
        compiler.load()
        if not typed:
            return None
        check: Check = compiler.namespace[name]
        return check

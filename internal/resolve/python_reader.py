"""Read a python tool's name, description and input schema without running it.

agentform embeds this script and runs it with `python3 -I -c <script>`. The
request comes as one JSON object on stdin:

    {"dir": "/abs/package", "export": "weather", "files": ["src/weather/tool.py", ...]}

`files` are the package's Python files (relative, forward slashes, sorted);
agentform chooses them (every *.py outside tests, virtual environments and
build output). Each file is parsed with the ast module only: the package's
code is never imported or executed, so reading a tool is safe and needs none
of its dependencies. The answer is one JSON object on stdout:

    {"found": true, "kind": "class" | "function", "file": "...", "line": 12,
     "attr": "...", "name": "...", "description": "...", "schema": {...}, "warnings": [...]}
    {"found": false, "error": "...", "problem": "not_found" | "ambiguous" |
     "unreadable" | "python", "warnings": [...]}

Finding the export. The first rule with a match wins; two matches under the
same rule are an error:

 1. a module-level class whose `name` class attribute is the string export;
 2. a module-level class named export;
 3. a module-level function (def or async def) named export;
 4. a module-level tool class (one with a description/schema/parameters
    attribute or a base named like *Tool) whose name in snake_case is export,
    so that block "daily_forecast" finds class DailyForecast.

A class (agentc TDK style) gives its `description` attribute (else the first
paragraph of its docstring) and its `schema`, `parameters` or `input_schema`
attribute. Attributes must be literals (ast.literal_eval), may be wrapped in
one call such as Schema({...}), and may name a module-level literal constant.
Without a schema attribute the schema of the first type argument of a generic
base (Tool[Params, Result]) is used when Params is a class of the package.

A function gives the first paragraph of its docstring as description and an
object schema with one property per parameter, in order:

    str -> string, int -> integer, float -> number, bool -> boolean,
    bytes -> string, None -> null, Any/object/unannotated -> {} (any value),
    list[T] / Sequence[T] / Iterable[T] -> array with items T,
    set[T] / frozenset[T] -> array with items T and uniqueItems,
    tuple[T, ...] -> array with items T; tuple[A, B] -> array with prefixItems,
    dict[K, V] / Mapping[K, V] -> object with additionalProperties V,
    Literal["a", "b"] -> enum (with the type when all values share one),
    Union[A, B] / A | B -> anyOf,
    Optional[T] / T | None / Union[T, None] -> anyOf [T, null] (as pydantic
        writes it), and the parameter is not required (an omitted argument
        means None); in a Union, null is one more member of its anyOf,
    Annotated[T, "text"] -> T with description "text" (also Doc("text") and
        Field(description="text")),
    a dataclass, TypedDict, NamedTuple or pydantic model of the package ->
        object with its annotated fields, an Enum of the package -> enum.

A parameter with a default is not required; a literal default other than None
becomes "default". Parameter descriptions come from Annotated, else from a
Google-style "Args:" section or Sphinx ":param name:" lines of the docstring.
*args and **kwargs are left out. A function without **kwargs takes no other
arguments: its schema says "additionalProperties": false.
"""

import ast
import inspect
import json
import os
import re
import sys

SCHEMA_ATTRS = ("schema", "parameters", "input_schema")

SIMPLE = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string"},
    "dict": {"type": "object"},
    "Dict": {"type": "object"},
    "Mapping": {"type": "object"},
    "MutableMapping": {"type": "object"},
    "list": {"type": "array"},
    "List": {"type": "array"},
    "Sequence": {"type": "array"},
    "MutableSequence": {"type": "array"},
    "Iterable": {"type": "array"},
    "Collection": {"type": "array"},
    "tuple": {"type": "array"},
    "Tuple": {"type": "array"},
    "set": {"type": "array", "uniqueItems": True},
    "Set": {"type": "array", "uniqueItems": True},
    "frozenset": {"type": "array", "uniqueItems": True},
    "FrozenSet": {"type": "array", "uniqueItems": True},
    "Any": {},
    "object": {},
    "None": {"type": "null"},
    "NoneType": {"type": "null"},
}
ARRAYS = ("list", "List", "Sequence", "MutableSequence", "Iterable", "Collection")
SETS = ("set", "Set", "frozenset", "FrozenSet")
TUPLES = ("tuple", "Tuple")
MAPPINGS = ("dict", "Dict", "Mapping", "MutableMapping")
WRAPPERS = ("Required", "NotRequired", "ReadOnly", "Final", "ClassVar")
ENUM_BASES = ("Enum", "StrEnum", "IntEnum", "IntFlag", "Flag")


class Fail(Exception):
    """A problem that stops reading the tool; its message is shown to the
    user. problem is "not_found", "ambiguous", "unreadable" or "python"."""

    def __init__(self, message, problem="unreadable"):
        Exception.__init__(self, message)
        self.problem = problem


class Module(object):
    """One parsed file and its module-level classes, functions and constants.
    A name defined twice means its last definition, as when Python runs it."""

    def __init__(self, rel, tree):
        self.rel = rel
        self.tree = tree
        self.classes = {}
        self.functions = {}
        self.constants = {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.constants[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                self.constants[node.target.id] = node.value


class Reader(object):
    """Reads the package's files and builds schemas from their syntax trees."""

    def __init__(self, root, files):
        self.modules = []
        self.warnings = []
        for rel in files:
            path = os.path.join(root, *rel.split("/"))
            try:
                with open(path, "rb") as f:
                    source = f.read()
                tree = ast.parse(source, filename=rel)
            except SyntaxError as e:
                self.warn("%s:%s: %s; the file was skipped" % (rel, e.lineno or 0, e.msg))
                continue
            except (OSError, ValueError) as e:
                self.warn("%s: cannot be read (%s); the file was skipped" % (rel, e))
                continue
            self.modules.append(Module(rel, tree))

    def warn(self, message):
        if message not in self.warnings:
            self.warnings.append(message)

    # Finding the export.

    def find(self, export):
        rules = [
            ("class", lambda m: [c for c in m.classes.values() if self.class_attr_str(m, c, "name") == export]),
            ("class", lambda m: [m.classes[export]] if export in m.classes else []),
            ("function", lambda m: [m.functions[export]] if export in m.functions else []),
            ("class", lambda m: [c for c in m.classes.values() if snake(c.name) == export and self.is_tool_class(c)]),
        ]
        for kind, match in rules:
            hits = []
            for m in self.modules:
                for node in match(m):
                    hits.append((m, node))
            if len(hits) == 1:
                return kind, hits[0][0], hits[0][1]
            if len(hits) > 1:
                where = ", ".join("%s:%d" % (m.rel, n.lineno) for m, n in hits)
                raise Fail("%r is defined more than once (%s)" % (export, where), "ambiguous")
        return None, None, None

    def is_tool_class(self, node):
        for stmt in node.body:
            for name in assigned_names(stmt):
                if name == "description" or name in SCHEMA_ATTRS:
                    return True
        for base in node.bases:
            if base_name(base).endswith("Tool"):
                return True
        return False

    # Class attributes.

    def class_attr(self, node, attr):
        for stmt in node.body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id == attr:
                        return stmt.value
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == attr:
                return stmt.value
        return None

    def literal(self, module, value):
        """Evaluates a literal expression, looking through single-argument
        call wrappers (Schema({...})) and module-level constant names.
        Raises ValueError when it is not one."""
        seen = 0
        while True:
            seen += 1
            if seen > 10:
                raise ValueError("too many indirections")
            if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
                value = value.args[0]
                continue
            if isinstance(value, ast.Name) and value.id in module.constants:
                value = module.constants[value.id]
                continue
            return ast.literal_eval(value)

    def class_attr_str(self, module, node, attr):
        value = self.class_attr(node, attr)
        if value is None:
            return None
        try:
            v = self.literal(module, value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        return v if isinstance(v, str) else None

    def read_class(self, module, node):
        where = "%s:%d" % (module.rel, node.lineno)
        name = self.class_attr_str(module, node, "name") or node.name
        description = ""
        value = self.class_attr(node, "description")
        if value is not None:
            try:
                description = self.literal(module, value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise Fail("the description of class %s (%s) is not a literal string; agentform reads it without running your code, so write it as a string literal" % (node.name, where))
            if not isinstance(description, str):
                raise Fail("the description of class %s (%s) must be a string, not %s" % (node.name, where, type(description).__name__))
            description = inspect.cleandoc(description)
        else:
            description = first_paragraph(ast.get_docstring(node))
        schema = None
        for attr in SCHEMA_ATTRS:
            value = self.class_attr(node, attr)
            if value is None:
                continue
            try:
                raw = self.literal(module, value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise Fail("the %s of class %s (%s) is not a literal; agentform reads it without running your code, so write the JSON Schema as a dict literal" % (attr, node.name, where))
            ok, schema = jsonable(raw)
            if not ok or not isinstance(schema, dict):
                raise Fail("the %s of class %s (%s) must be a JSON Schema object (a dict with string keys and JSON values)" % (attr, node.name, where))
            break
        if schema is None:
            schema = self.generic_params_schema(module, node)
        if schema is None:
            raise Fail("class %s (%s) has no schema: give it a class attribute schema (or parameters) holding the JSON Schema of its arguments as a dict literal" % (node.name, where))
        return name, description, schema

    def generic_params_schema(self, module, node):
        for base in node.bases:
            if not isinstance(base, ast.Subscript):
                continue
            args = subscript_args(base)
            if not args:
                continue
            found = self.lookup_class(module, args[0])
            if found is not None:
                return self.class_schema(found[0], found[1], set())
        return None

    # Functions.

    def read_function(self, module, node):
        doc = ast.get_docstring(node)
        docs = param_docs(doc)
        a = node.args
        positional = list(getattr(a, "posonlyargs", [])) + list(a.args)
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        params = list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults))
        if len(params) == 1 and request_style(params[0][0]):
            # Called with the request (serve's runner decides so from the
            # same signature): its arguments are the request's args, which
            # the signature does not describe.
            return node.name, first_paragraph(doc), {"type": "object"}
        properties = {}
        required = []
        for arg, default in params:
            where = "%s:%d" % (module.rel, arg.lineno)
            if arg.annotation is None:
                self.warn("%s: parameter %s of %s has no type annotation; any value is accepted" % (where, arg.arg, node.name))
                schema, nullable, desc = {}, False, None
            else:
                schema, nullable, desc = self.annotation(module, arg.annotation, set())
            prop = or_null(schema) if nullable else dict(schema)
            desc = desc or docs.get(arg.arg)
            if desc:
                prop["description"] = desc
            if default is not None:
                value = self.default_value(module, default)
                if value is not None:
                    prop["default"] = value
            properties[arg.arg] = prop
            if default is None and not nullable:
                required.append(arg.arg)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if a.kwarg is None:
            # Python refuses a keyword argument the function does not
            # name; with **kwargs it takes any.
            schema["additionalProperties"] = False
        return node.name, first_paragraph(doc), schema

    # Annotations.

    def annotation(self, module, node, seen):
        """Returns (schema, nullable, description) for a type annotation.
        nullable says that None is one of its values; the schema leaves
        null out (but for None itself), so that a Union can list its
        members once: or_null adds it where the annotation is used."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            line = node.lineno
            node = parse_forward_ref(node)
            if node is None:
                self.warn("%s:%d: cannot read a string annotation; any value is accepted" % (module.rel, line))
                return {}, False, None
        if isinstance(node, ast.Constant) and node.value is None:
            return {"type": "null"}, True, None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return self.union(module, flatten_bitor(node), seen)
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = base_name(node)
            if name in ("None", "NoneType"):
                return {"type": "null"}, True, None
            found = self.lookup_class(module, node)
            if found is not None:
                return self.class_schema(found[0], found[1], seen), False, None
            if name in SIMPLE:
                return dict(SIMPLE[name]), False, None
            self.warn("%s:%d: unknown type %s; any value is accepted" % (module.rel, node.lineno, expr_text(node)))
            return {}, False, None
        if isinstance(node, ast.Subscript):
            name = base_name(node.value)
            args = subscript_args(node)
            if name == "Optional" and len(args) == 1:
                schema, _, desc = self.annotation(module, args[0], seen)
                return schema, True, desc
            if name == "Union":
                return self.union(module, args, seen)
            if name == "Literal":
                return self.literal_enum(module, node, args)
            if name == "Annotated" and args:
                schema, nullable, desc = self.annotation(module, args[0], seen)
                for meta in args[1:]:
                    text = metadata_description(meta)
                    if text:
                        desc = text
                        break
                return schema, nullable, desc
            if name in WRAPPERS and len(args) == 1:
                return self.annotation(module, args[0], seen)
            if name in ARRAYS or name in SETS:
                schema = dict(SIMPLE[name])
                if len(args) == 1:
                    schema = {"type": "array", "items": self.item(module, args[0], seen)}
                    if name in SETS:
                        schema["uniqueItems"] = True
                return schema, False, None
            if name in TUPLES:
                if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                    return {"type": "array", "items": self.item(module, args[0], seen)}, False, None
                if len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
                    return {"type": "array", "maxItems": 0}, False, None
                items = [self.item(module, a, seen) for a in args]
                return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}, False, None
            if name in MAPPINGS:
                schema = {"type": "object"}
                if len(args) == 2:
                    value = self.item(module, args[1], seen)
                    if value:
                        schema["additionalProperties"] = value
                return schema, False, None
        self.warn("%s:%d: unsupported annotation %s; any value is accepted" % (module.rel, getattr(node, "lineno", 0), expr_text(node)))
        return {}, False, None

    def item(self, module, node, seen):
        schema, nullable, desc = self.annotation(module, node, seen)
        schema = or_null(schema) if nullable else dict(schema)
        if desc:
            schema["description"] = desc
        return schema

    def union(self, module, members, seen):
        schemas = []
        nullable = False
        for m in members:
            schema, null, desc = self.annotation(module, m, seen)
            if schema == {"type": "null"}:
                nullable = True
                continue
            nullable = nullable or null
            if desc:
                schema = dict(schema)
                schema["description"] = desc
            if schema not in schemas:
                schemas.append(schema)
        if not schemas:
            return {"type": "null"}, True, None
        if len(schemas) == 1:
            return schemas[0], nullable, None
        if any(s == {} for s in schemas):
            return {}, nullable, None
        return {"anyOf": schemas}, nullable, None

    def literal_enum(self, module, node, args):
        values = []
        nullable = False
        for a in args:
            try:
                v = ast.literal_eval(a)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                self.warn("%s:%d: Literal value %s is not a literal; any value is accepted" % (module.rel, node.lineno, expr_text(a)))
                return {}, False, None
            if v is None:
                nullable = True
                continue
            ok, v = jsonable(v)
            if ok and v not in values:
                values.append(v)
        if not values and nullable:
            return {"type": "null"}, True, None
        schema = {}
        kinds = set(json_type(v) for v in values)
        if len(kinds) == 1:
            schema["type"] = kinds.pop()
        schema["enum"] = values
        return schema, nullable, None

    # Defaults.

    def default_value(self, module, node):
        """A default's JSON value: a literal, or a member of a package Enum
        (Tone.FRIENDLY); None when it is neither (or is None)."""
        try:
            ok, v = jsonable(ast.literal_eval(node))
            return v if ok else None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            pass
        if isinstance(node, ast.Attribute):
            found = self.lookup_class(module, node.value)
            if found is not None and any(base_name(b) in ENUM_BASES for b in found[1].bases):
                for stmt in found[1].body:
                    if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == node.attr for t in stmt.targets):
                        return self.default_value(found[0], stmt.value)
        return None

    def field_default(self, module, value):
        """Reads a class field's default: (has_default, JSON default or None,
        description). Field(...) and field(...) calls are understood."""
        if value is None:
            return False, None, None
        if isinstance(value, ast.Call) and base_name(value.func) in ("Field", "field"):
            desc = None
            has, default = False, None
            for kw in value.keywords:
                if kw.arg == "description" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                    desc = kw.value.value.strip()
                elif kw.arg == "default_factory":
                    has = True
                elif kw.arg == "default":
                    has, default = True, self.default_value(module, kw.value)
            if value.args and not (isinstance(value.args[0], ast.Constant) and value.args[0].value is Ellipsis):
                has, default = True, self.default_value(module, value.args[0])
            return has, default, desc
        return True, self.default_value(module, value), None

    # Classes used as types.

    def lookup_class(self, module, node):
        """Finds the package class a Name or Attribute refers to: the same
        file first, else the only class of that name in the package."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node = parse_forward_ref(node)
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        name = base_name(node)
        if isinstance(node, ast.Name) and name in module.classes:
            return module, module.classes[name]
        hits = [(m, m.classes[name]) for m in self.modules if name in m.classes]
        if len(hits) == 1:
            return hits[0]
        return None

    def class_schema(self, module, node, seen):
        key = (module.rel, node.name)
        if key in seen:
            self.warn("%s:%d: class %s refers to itself; the inner reference accepts any object" % (module.rel, node.lineno, node.name))
            return {"type": "object"}
        seen = seen | {key}
        bases = [base_name(b) for b in node.bases]
        if any(b in ENUM_BASES for b in bases):
            return self.enum_schema(module, node)
        total = True
        for kw in node.keywords:
            if kw.arg == "total" and isinstance(kw.value, ast.Constant) and kw.value.value is False:
                total = False
        properties = {}
        required = []
        for stmt in node.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            field = stmt.target.id
            if field.startswith("_") or base_name(subscript_base(stmt.annotation)) == "ClassVar":
                continue
            schema, nullable, desc = self.annotation(module, stmt.annotation, seen)
            optional = nullable or not total or base_name(subscript_base(stmt.annotation)) == "NotRequired"
            prop = or_null(schema) if nullable else dict(schema)
            has_default, default, field_desc = self.field_default(module, stmt.value)
            desc = desc or field_desc
            if desc:
                prop["description"] = desc
            if has_default:
                optional = True
                if default is not None:
                    prop["default"] = default
            properties[field] = prop
            if not optional:
                required.append(field)
        schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema

    def enum_schema(self, module, node):
        values = []
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                if stmt.targets[0].id.startswith("_"):
                    continue
                try:
                    ok, v = jsonable(ast.literal_eval(stmt.value))
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    self.warn("%s:%d: enum %s has a value that is not a literal; any value is accepted" % (module.rel, stmt.lineno, node.name))
                    return {}
                if ok and v not in values:
                    values.append(v)
        schema = {}
        kinds = set(json_type(v) for v in values)
        if len(kinds) == 1:
            schema["type"] = kinds.pop()
        schema["enum"] = values
        return schema


# Syntax helpers.


def request_style(arg):
    """Whether a function's only parameter takes the whole request, as
    serve's runner reads it: annotated ToolInput, or named ctx or input
    without an annotation."""
    if arg.annotation is None:
        return arg.arg in ("ctx", "input")
    return "ToolInput" in expr_text(arg.annotation)


def base_name(node):
    """The last identifier of a Name or Attribute (typing.Optional -> Optional)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return base_name(node.value)
    return ""


def parse_forward_ref(node):
    """Parses a string annotation ("list[int]"), giving its nodes the
    string's line; None when it is not an expression."""
    try:
        parsed = ast.parse(node.value.strip(), mode="eval").body
    except SyntaxError:
        return None
    for n in ast.walk(parsed):
        if hasattr(n, "lineno"):
            n.lineno = node.lineno
    return parsed


def subscript_base(node):
    return node.value if isinstance(node, ast.Subscript) else node


def subscript_args(node):
    sl = node.slice
    if sl.__class__.__name__ == "Index":  # Python 3.8 wraps the slice.
        sl = sl.value
    if isinstance(sl, ast.Tuple):
        return list(sl.elts)
    return [sl]


def flatten_bitor(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return flatten_bitor(node.left) + flatten_bitor(node.right)
    return [node]


def assigned_names(stmt):
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def expr_text(node):
    """Source-like text of an annotation, the same on every Python version."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return expr_text(node.value) + "." + node.attr
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else repr(node.value)
    if isinstance(node, ast.Subscript):
        return "%s[%s]" % (expr_text(node.value), ", ".join(expr_text(a) for a in subscript_args(node)))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return " | ".join(expr_text(m) for m in flatten_bitor(node))
    if isinstance(node, (ast.Tuple, ast.List)):
        return "[%s]" % ", ".join(expr_text(e) for e in node.elts)
    if isinstance(node, ast.Call):
        return expr_text(node.func) + "(...)"
    return type(node).__name__


def metadata_description(meta):
    """The description carried by one Annotated metadata item: a string,
    Doc("text"), or Field(description="text")."""
    if isinstance(meta, ast.Constant) and isinstance(meta.value, str):
        return meta.value.strip()
    if isinstance(meta, ast.Call):
        for kw in meta.keywords:
            if kw.arg == "description" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
                return kw.value.value.strip()
        if base_name(meta.func) == "Doc" and len(meta.args) == 1:
            arg = meta.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                return arg.value.strip()
    return None


def or_null(schema):
    """The schema of a value of schema's type or None: an anyOf with null
    as its last member, as pydantic writes Optional[T]. A schema that
    accepts null already (any value, null itself) is returned as it is."""
    if schema == {} or schema == {"type": "null"}:
        return dict(schema)
    if list(schema) == ["anyOf"]:
        members = list(schema["anyOf"])
        if {"type": "null"} not in members:
            members.append({"type": "null"})
        return {"anyOf": members}
    return {"anyOf": [dict(schema), {"type": "null"}]}


def jsonable(v):
    """Converts a literal to JSON data: (ok, value). Tuples become lists;
    sets, bytes, complex numbers, non-finite floats and non-string keys are
    not JSON."""
    if v is None or isinstance(v, (bool, str)):
        return True, v
    if isinstance(v, int):
        return True, v
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return False, None
        return True, v
    if isinstance(v, (list, tuple)):
        out = []
        for item in v:
            ok, item = jsonable(item)
            if not ok:
                return False, None
            out.append(item)
        return True, out
    if isinstance(v, dict):
        out = {}
        for key, item in v.items():
            if not isinstance(key, str):
                return False, None
            ok, item = jsonable(item)
            if not ok:
                return False, None
            out[key] = item
        return True, out
    return False, None


def json_type(v):
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def first_paragraph(doc):
    if not doc:
        return ""
    lines = []
    for line in doc.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


SECTION = re.compile(r"^(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments):\s*$")
GOOGLE_ITEM = re.compile(r"^\*{0,2}([A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(.*)$")
SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s)?([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$")


def param_docs(doc):
    """Parameter descriptions from a Google-style Args: section or Sphinx
    :param name: lines."""
    out = {}
    if not doc:
        return out
    lines = doc.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = SPHINX_PARAM.match(line.strip())
        if m:
            text = [m.group(2).strip()]
            indent = len(line) - len(line.lstrip())
            i += 1
            while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith(":") and len(lines[i]) - len(lines[i].lstrip()) > indent:
                text.append(lines[i].strip())
                i += 1
            out.setdefault(m.group(1), " ".join(t for t in text if t))
            continue
        if SECTION.match(line.strip()):
            section_indent = len(line) - len(line.lstrip())
            i += 1
            item_indent = None
            name = None
            while i < len(lines):
                cur = lines[i]
                if not cur.strip():
                    i += 1
                    continue
                indent = len(cur) - len(cur.lstrip())
                if indent <= section_indent:
                    break
                if item_indent is None:
                    item_indent = indent
                if indent == item_indent:
                    m = GOOGLE_ITEM.match(cur.strip())
                    name = m.group(1) if m else None
                    if name:
                        out.setdefault(name, m.group(3).strip())
                elif name:
                    out[name] = (out[name] + " " + cur.strip()).strip()
                i += 1
            continue
        i += 1
    return out


def main():
    out = {"found": False, "warnings": []}
    try:
        if sys.version_info < (3, 8):
            raise Fail("python3 %d.%d is too old to read tools; agentform needs Python 3.8 or later" % sys.version_info[:2], "python")
        request = json.loads(sys.stdin.read())
        reader = Reader(request["dir"], request.get("files") or [])
        out["warnings"] = reader.warnings
        export = request["export"]
        kind, module, node = reader.find(export)
        if kind is None:
            raise Fail("no class or function %r in the package's Python files" % export, "not_found")
        if kind == "class":
            name, description, schema = reader.read_class(module, node)
        else:
            name, description, schema = reader.read_function(module, node)
        out.update({"found": True, "kind": kind, "file": module.rel, "line": node.lineno,
                    "attr": node.name, "name": name, "description": description, "schema": schema})
    except Fail as e:
        out["error"] = str(e)
        out["problem"] = e.problem
    except RecursionError:
        out["error"] = "a type annotation is nested too deeply to read"
        out["problem"] = "unreadable"
    try:
        data = json.dumps(out, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(out, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.write(b"\n")


main()

"""Run the python tool of an agentform artifact.

agentform serve embeds this script and runs it with `python3 -I`, in one of
two modes:

    runner.py locate SRCDIR EXPORT
    runner.py call SRCDIR ROOT MODULE ATTR

locate finds the tool in the package at SRCDIR without running any of its
code, with the rules agentform used to read the tool's schema (its embedded
reader): the first rule with a match wins, and two matches under one rule
are an error.

 1. a module-level class whose `name` class attribute is the string EXPORT;
 2. a module-level class named EXPORT;
 3. a module-level function (def or async def) named EXPORT;
 4. a module-level tool class (one with a description/schema/parameters
    attribute or a base named like *Tool) whose name in snake_case is EXPORT.

The files searched are the package's *.py files outside tests, hidden
directories and virtual environments. It answers with one JSON object:

    {"root": "src", "module": "forecast.tool", "attr": "DailyForecast", "kind": "class"}
    {"error": "..."}

root is the directory (relative to SRCDIR) to put on sys.path: the first
directory above the file that is not a package (has no __init__.py).

call imports MODULE with SRCDIR/ROOT on sys.path, takes ATTR and runs it
with the request read from stdin, {"args": {...}, "state": {...},
"config": ...}:

 - a function is called with the arguments as keyword arguments, or with
   the whole request when it takes one parameter that is annotated as a
   ToolInput, or is named ctx or input and the arguments do not hold that
   name;
 - a class is instantiated without arguments and its execute method is
   called the same way (its __call__ when it has no execute).

A coroutine is run to its end. The answer is one JSON object on stdout:

    {"output": ..., "state_update": [...], "status": "..."}
    {"error": {"phase": "load" | "call", "type": "ValueError", "message": "..."}}

A return value that is a dict with an "output" key and no keys but output,
state_update and status, or an object whose class is named *ToolOutput, is
taken as such an answer; any other value is the output. Dataclasses,
pydantic models, enums, tuples and sets are converted to JSON. What the tool
prints goes to standard error, so that standard output carries the answer
only; the tool's standard input is empty.
"""

import ast
import asyncio
import dataclasses
import enum
import importlib
import inspect
import json
import os
import re
import sys

SCHEMA_ATTRS = ("schema", "parameters", "input_schema")
SKIP_DIRS = ("tests", "test", "venv", "build", "site-packages")
STATUSES = ("success", "partial_success", "error")


# locate


def tool_files(srcdir):
    out = []
    for dirpath, dirnames, filenames in os.walk(srcdir):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".py") or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
                continue
            out.append(os.path.relpath(os.path.join(dirpath, name), srcdir).replace(os.sep, "/"))
    return out


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def base_name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return base_name(node.value)
    return ""


def class_name_attr(cls):
    for stmt in cls.body:
        value = None
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "name" for t in stmt.targets):
            value = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "name":
            value = stmt.value
        if value is not None:
            try:
                v = ast.literal_eval(value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                return None
            return v if isinstance(v, str) else None
    return None


def is_tool_class(cls):
    for stmt in cls.body:
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            targets = [stmt.target.id]
        if any(t == "description" or t in SCHEMA_ATTRS for t in targets):
            return True
    return any(base_name(b).endswith("Tool") for b in cls.bases)


def locate(srcdir, export):
    modules = []
    for rel in tool_files(srcdir):
        try:
            with open(os.path.join(srcdir, *rel.split("/")), "rb") as f:
                tree = ast.parse(f.read(), filename=rel)
        except (SyntaxError, ValueError, OSError):
            continue
        classes, functions = {}, {}
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions[node.name] = node
        modules.append((rel, classes, functions))
    rules = [
        ("class", lambda c, f: [n for n in c.values() if class_name_attr(n) == export]),
        ("class", lambda c, f: [c[export]] if export in c else []),
        ("function", lambda c, f: [f[export]] if export in f else []),
        ("class", lambda c, f: [n for n in c.values() if snake(n.name) == export and is_tool_class(n)]),
    ]
    for kind, match in rules:
        hits = [(rel, node) for rel, c, f in modules for node in match(c, f)]
        if len(hits) > 1:
            raise LookupError("%r is defined more than once in the package (%s)" % (export, ", ".join("%s:%d" % (r, n.lineno) for r, n in hits)))
        if hits:
            rel, node = hits[0]
            root, module = module_of(srcdir, rel)
            return {"root": root, "module": module, "attr": node.name, "kind": kind}
    raise LookupError("no class or function %r in the package's Python files" % export)


def module_of(srcdir, rel):
    parts = rel.split("/")
    dirs, stem = parts[:-1], parts[-1][:-3]
    i = len(dirs)
    while i > 0 and os.path.isfile(os.path.join(srcdir, *(dirs[:i] + ["__init__.py"]))):
        i -= 1
    names = dirs[i:] + ([] if stem == "__init__" else [stem])
    if not names:
        raise LookupError("%s is not in a package that can be imported" % rel)
    return "/".join(dirs[:i]) or ".", ".".join(names)


# call


class Input(dict):
    """The call's {args, state, config}; its items are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


def takes_request(fn, args):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(params) != 1:
        return False
    p = params[0]
    ann = p.annotation
    ann_name = ann if isinstance(ann, str) else getattr(ann, "__name__", "") or str(ann)
    if "ToolInput" in ann_name:
        return True
    return p.name in ("ctx", "input") and p.name not in args


def invoke(fn, request):
    args = request.get("args") or {}
    if not isinstance(args, dict):
        raise TypeError("the arguments are not an object")
    if takes_request(fn, args):
        result = fn(Input(args=args, state=request.get("state"), config=request.get("config")))
    else:
        result = fn(**args)
    if inspect.isawaitable(result):
        async def wait(awaitable):
            return await awaitable
        result = asyncio.run(wait(result))
    return result


def to_json(value, depth=0):
    if depth > 100:
        raise ValueError("the output is nested too deeply")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return to_json(value.value, depth + 1)
    if isinstance(value, dict):
        return {str(k): to_json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [to_json(v, depth + 1) for v in value]
        return sorted(items, key=lambda x: json.dumps(x, sort_keys=True)) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json(dataclasses.asdict(value), depth + 1)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return to_json(dump(mode="json"), depth + 1)
    raise TypeError("the tool returned a %s, which is not JSON" % type(value).__name__)


def answer_of(value):
    if isinstance(value, dict) and "output" in value and set(value) <= {"output", "state_update", "status"}:
        raw = value
    elif type(value).__name__.endswith("ToolOutput"):
        raw = {"output": getattr(value, "output", None), "state_update": getattr(value, "state_update", None),
               "status": getattr(value, "status", None)}
    else:
        raw = {"output": value}
    out = {"output": to_json(raw.get("output"))}
    if raw.get("state_update") is not None:
        out["state_update"] = to_json(raw["state_update"])
    status = raw.get("status")
    if status is not None:
        status = getattr(status, "value", status)
        if status not in STATUSES:
            raise ValueError("the tool returned status %r; it must be one of %s" % (status, ", ".join(STATUSES)))
        out["status"] = status
    return out


def failure(phase, e, srcdir):
    message = str(e)
    for prefix in (srcdir + os.sep, srcdir):
        message = message.replace(prefix, "")
    return {"error": {"phase": phase, "type": type(e).__name__, "message": message}}


def call(srcdir, root, module, attr):
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    sys.stdin = open(os.devnull)
    os.dup2(sys.stdin.fileno(), 0)
    sys.path.insert(0, os.path.normpath(os.path.join(srcdir, root)))
    try:
        target = getattr(importlib.import_module(module), attr)
        if inspect.isclass(target):
            target = target()
            target = getattr(target, "execute", None) or target
        if not callable(target):
            raise TypeError("%s.%s is not a function or a class" % (module, attr))
    except BaseException as e:
        return failure("load", e, srcdir)
    try:
        return answer_of(invoke(target, request))
    except BaseException as e:
        return failure("call", e, srcdir)


def main():
    # Keep the real standard output for the answer; whatever the tool
    # prints, also from subprocesses, goes to standard error.
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "locate":
            try:
                answer = locate(sys.argv[2], sys.argv[3])
            except LookupError as e:
                answer = {"error": str(e)}
        elif len(sys.argv) == 6 and sys.argv[1] == "call":
            answer = call(*sys.argv[2:])
        else:
            answer = {"error": "usage: runner.py locate SRCDIR EXPORT | call SRCDIR ROOT MODULE ATTR"}
        data = json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except BaseException as e:
        data = json.dumps({"error": {"phase": "call", "type": type(e).__name__, "message": str(e)}}).encode("utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    with os.fdopen(answer_fd, "wb") as f:
        f.write(data + b"\n")
    # Do not wait for threads the tool left running.
    os._exit(0)


main()

"""Run the python tool of an agentform artifact.

agentform serve embeds this script and runs it with `python3 -I -c SCRIPT`
(there is no file of it that a call could change), in one of two modes:

    call SRCDIR ROOT MODULE ATTR
    script PATH ARG...

Where the tool is was decided when the artifact was built: agent.json's
entry names the file and the class or function that plan read the tool's
schema from, and agentform serve turns the file into ROOT (the directory,
relative to SRCDIR, to put on sys.path: the first one above the file that
is not a package) and MODULE. Nothing here searches the package again.

call imports MODULE with SRCDIR/ROOT on sys.path, takes ATTR and runs it
with the request read from stdin, {"args": {...}, "state": {...},
"config": ...}:

 - a function that takes one parameter annotated as a ToolInput, or named
   ctx or input without an annotation, is called with the request (an object whose args, state
   and config are those of the call); any other function is called with the
   arguments as keyword arguments. Which of the two is decided from the
   function's signature alone, before the arguments are looked at, so that
   arguments cannot stand in for the call's state or config. A whole
   number sent as a float (2.0, an integer to JSON Schema) is passed as an
   int where the parameter is annotated int, and nowhere else;
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

script runs PATH (a skill's script) with ARGs in a python3 -I subprocess
with this process's standard streams, and exits with its exit code (128
plus the signal's number when a signal ended it).

In call and script mode the process is made a child subreaper (Linux), so
that a process the tool or script starts whose parent ends is adopted by it
rather than by init, and can still be found as its descendant. When file
descriptor 3 is a pipe, it writes "CODE\n" there once it is done (CODE is
the exit code it would end with) and waits to be killed: agentform then
stops and kills every process descended from it, and takes CODE as its
exit code.
"""

import ast
import asyncio
import dataclasses
import enum
import importlib
import inspect
import json
import os
import stat
import sys
import time
import typing

STATUSES = ("success", "partial_success", "error")


# call


class Input(dict):
    """The call's {args, state, config}; its items are also attributes."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)


def request_parameter(fn):
    """The parameter fn takes the request by, or None when it takes the
    arguments as keyword arguments; from fn's signature only."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = [p for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if len(params) != 1:
        return None
    p = params[0]
    ann = p.annotation
    ann_name = ann if isinstance(ann, str) else getattr(ann, "__name__", "") or str(ann)
    if "ToolInput" in ann_name:
        return p
    # An unannotated ctx or input takes the request; one with a type (such
    # as input: str) is an ordinary argument, as the plan's schema says.
    if p.name in ("ctx", "input") and p.annotation is p.empty:
        return p
    return None


def invoke(fn, param, request):
    args = request.get("args") or {}
    if not isinstance(args, dict):
        raise TypeError("the arguments are not an object")
    if param is not None:
        # The request is built here from the call's state and config, never
        # from the arguments.
        value = Input(args=args, state=request.get("state"), config=request.get("config"))
        result = fn(**{param.name: value}) if param.kind == param.KEYWORD_ONLY else fn(value)
    else:
        positional, keywords = call_arguments(fn, args, request.get("optional") or [])
        result = fn(*positional, **keywords)
    if inspect.isawaitable(result):
        async def wait(awaitable):
            return await awaitable
        result = asyncio.run(wait(result))
    return result


def call_arguments(fn, args, optional):
    """The positional and keyword arguments of fn for the call's args, as
    the plan's schema read its signature: a positional-only parameter is
    passed by position, one the schema does not require that has no
    default (an Optional without "= None") gets None when it is left out,
    and a whole number sent as a float (2.0, which the schema's "integer"
    accepts) is an int where the parameter is annotated int (see
    int_shape)."""
    keywords = dict(args)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [], keywords
    hints = type_hints(fn)
    named = set(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    for p in params:
        try:
            shape = int_shape(hints.get(p.name, p.annotation))
        except Exception:
            shape = None  # an annotation object of its own kind
        if shape is None:
            continue
        if p.kind == p.VAR_KEYWORD:
            # **options: int annotates each extra keyword argument.
            for name in keywords:
                if name not in named:
                    keywords[name] = as_int(keywords[name], shape)
        elif p.name in keywords and p.kind != p.VAR_POSITIONAL:
            keywords[p.name] = as_int(keywords[p.name], shape)
    for p in params:
        if p.name in optional and p.name not in keywords and p.default is p.empty and \
                p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keywords[p.name] = None
    positional = []
    for p in params:
        if p.kind != p.POSITIONAL_ONLY:
            break
        if p.name in keywords:
            positional.append(keywords.pop(p.name))
        elif p.default is not p.empty:
            positional.append(p.default)
        else:
            break  # Python reports the missing argument
    return positional, keywords


def type_hints(fn):
    """fn's annotations with string ones evaluated, as far as Python can
    (from __future__ import annotations makes every one a string); {} when
    it cannot, and int_shape then reads the strings themselves."""
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        try:
            return typing.get_type_hints(fn)
        except Exception:
            return {}


# int_shape's answers: where in a value an int is expected.
INT = "int"
SEQUENCES = ("list", "List", "Sequence", "MutableSequence", "Iterable", "Collection",
             "set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet")
MAPPINGS = ("dict", "Dict", "Mapping", "MutableMapping")


def int_shape(annotation, depth=0):
    """Where an annotation expects ints, as the plan's schema reads it: INT
    for int (also Optional[int], int | None, Annotated[int, ...]),
    ("items", shape) for a list, set or tuple[T, ...] of such, ("prefix",
    [shape, ...]) for tuple[A, B], ("values", shape) for a dict of such;
    None when it expects none, or may take a float (Union[int, float],
    Any): there a float stays a float. annotation is a typing object, or a
    string the runner could not evaluate, read as the plan reads it."""
    if depth > 32:
        return None
    name, args = annotation_parts(annotation)
    if name == "int":
        return INT
    if name == "Annotated" and args:
        return int_shape(args[0], depth + 1)
    if name == "Literal" and args and all(literal_int(a) for a in args):
        return INT
    if name in ("Optional", "Union"):
        members = [a for a in args if annotation_parts(a)[0] not in ("None", "NoneType")]
        return int_shape(members[0], depth + 1) if len(members) == 1 else None
    shape = None
    if name in SEQUENCES and len(args) == 1:
        shape = int_shape(args[0], depth + 1)
        return None if shape is None else ("items", shape)
    if name in ("tuple", "Tuple") and args:
        if len(args) == 2 and annotation_parts(args[1])[0] == "...":
            shape = int_shape(args[0], depth + 1)
            return None if shape is None else ("items", shape)
        shapes = [int_shape(a, depth + 1) for a in args]
        return None if all(s is None for s in shapes) else ("prefix", shapes)
    if name in MAPPINGS and len(args) == 2:
        shape = int_shape(args[1], depth + 1)
        return None if shape is None else ("values", shape)
    return None


def literal_int(value):
    """Whether a Literal's value (or its syntax tree node) is an int."""
    if isinstance(value, ast.Constant):
        value = value.value
    elif isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        value = value.operand.value
    return type(value) is int


def annotation_parts(annotation):
    """An annotation as (name, arguments): ("int", []), ("Optional",
    [int]), ("Union", [int, None]) for int | None. It is a typing object,
    a string, or (for a string) a node of its syntax tree."""
    a = annotation
    if isinstance(a, str):
        try:
            a = ast.parse(a.strip(), mode="eval").body
        except SyntaxError:
            return "", []
    if isinstance(a, ast.AST):
        if isinstance(a, ast.Constant):
            if a.value is None:
                return "None", []
            if a.value is Ellipsis:
                return "...", []
            if isinstance(a.value, str):
                return annotation_parts(a.value)
            return "", []
        if isinstance(a, ast.Name):
            return a.id, []
        if isinstance(a, ast.Attribute):
            return a.attr, []
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            return "Union", [a.left, a.right]
        if isinstance(a, ast.Subscript):
            sl = a.slice
            if sl.__class__.__name__ == "Index":  # Python 3.8 wraps the slice.
                sl = sl.value
            name, _ = annotation_parts(a.value)
            return name, list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]
        return "", []
    if a is int:
        return "int", []
    if a is None or a is type(None):
        return "None", []
    if a is Ellipsis:
        return "...", []
    if hasattr(a, "__metadata__"):  # Annotated[T, ...]
        return "Annotated", [a.__origin__]
    origin = typing.get_origin(a)
    if origin is None:
        return "", []
    args = list(typing.get_args(a))
    if origin is typing.Union or type(a).__name__ == "UnionType":
        return "Union", args
    return getattr(origin, "__name__", ""), args


def as_int(value, shape):
    """value with each whole number float where shape expects an int made
    an int: 2.0 -> 2. Anything else is left as it is."""
    if shape == INT:
        if type(value) is float and value.is_integer():
            return int(value)
        return value
    kind, inner = shape
    if kind == "items" and isinstance(value, list):
        return [as_int(v, inner) for v in value]
    if kind == "prefix" and isinstance(value, list):
        return [as_int(v, inner[i]) if i < len(inner) and inner[i] is not None else v for i, v in enumerate(value)]
    if kind == "values" and isinstance(value, dict):
        return {k: as_int(v, inner) for k, v in value.items()}
    return value


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


# The private paths of a call (the package, the call's home), which mean
# nothing to the client; set by call.
PRIVATE_PATHS = []


def scrub(message):
    for path in PRIVATE_PATHS:
        for prefix in (path + os.sep, path):
            message = message.replace(prefix, "")
    return message


def failure(phase, e):
    return {"error": {"phase": phase, "type": type(e).__name__, "message": scrub(str(e))}}


def call(srcdir, root, module, attr):
    for path in (srcdir, os.path.dirname(srcdir), os.getcwd()):
        PRIVATE_PATHS.extend({path, os.path.realpath(path)})
    PRIVATE_PATHS.sort(key=len, reverse=True)
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
        param = request_parameter(target)
    except BaseException as e:
        return failure("load", e)
    try:
        return answer_of(invoke(target, param, request))
    except BaseException as e:
        return failure("call", e)


# script


def script(path, args):
    import subprocess
    child = subprocess.Popen([sys.executable, "-I", path] + args)
    code = child.wait()
    return 128 - code if code < 0 else code


# containment


REPORT_FD = 3


def report_pipe():
    """Whether file descriptor 3 is the pipe agentform reads the report
    from; it is kept from the tool's subprocesses."""
    try:
        if not stat.S_ISFIFO(os.fstat(REPORT_FD).st_mode):
            return False
        os.set_inheritable(REPORT_FD, False)
    except OSError:
        return False
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=close_report_pipe)
    return True


def close_report_pipe():
    try:
        os.close(REPORT_FD)
    except OSError:
        pass


def become_subreaper():
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        PR_SET_CHILD_SUBREAPER = 36
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except Exception:
        pass


def done(reporting, code):
    """Reports code on file descriptor 3 and waits to be killed, so that
    whatever this process started can still be found from it."""
    sys.stdout.flush()
    sys.stderr.flush()
    if reporting:
        try:
            os.write(REPORT_FD, b"%d\n" % code)
            time.sleep(60)
        except BaseException:
            pass
    # Do not wait for threads the tool left running.
    os._exit(code)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    reporting = False
    if mode in ("call", "script"):
        reporting = report_pipe()
        become_subreaper()
    if mode == "script" and len(sys.argv) >= 3:
        code = 1
        try:
            code = script(sys.argv[2], sys.argv[3:])
        except BaseException as e:
            sys.stderr.write("running the script failed: %s: %s\n" % (type(e).__name__, e))
        done(reporting, code)
    # Keep the real standard output for the answer; whatever the tool
    # prints, also from subprocesses, goes to standard error.
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    try:
        if len(sys.argv) == 6 and mode == "call":
            answer = call(*sys.argv[2:])
        else:
            answer = {"error": "usage: call SRCDIR ROOT MODULE ATTR | script PATH ARG..."}
        data = json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")
    except BaseException as e:
        data = json.dumps(failure("call", e)).encode("utf-8")
    sys.stdout.flush()
    sys.stderr.flush()
    with os.fdopen(answer_fd, "wb") as f:
        f.write(data + b"\n")
    done(reporting, 0)


main()

"""swebox agent function-test child: runs one call of the submitted code.

Reads the request (code path, function name, args, kwargs, result path) as
JSON from stdin, imports the code, calls the function once and writes what
it returned or raised to the result path. The harness decides the verdict.
"""
import importlib.util
import json
import os
import sys
import time
import traceback


def names(cls):
    return [c.__name__ for c in cls.__mro__]


def describe(e, phase=None):
    out = {"raised": phase is None, "exc_type": type(e).__name__, "exc_mro": names(type(e)),
           "message": safe(str, e), "traceback": safe(lambda x: "".join(traceback.format_exception(x)), e)}
    if phase:
        out["phase"] = phase
    return out


def safe(f, x):
    try:
        return f(x)
    except BaseException as e:  # noqa: BLE001 - str/repr of user objects may raise anything
        return "<%s while formatting: %s>" % (type(e).__name__, e)


def encode(value):
    def default(o):
        if isinstance(o, (set, frozenset)):
            try:
                return sorted(o)
            except TypeError:
                return list(o)
        raise TypeError(type(o).__name__)

    text = json.dumps(value, default=default)
    if len(text) > (1 << 20):
        raise ValueError("value too large")
    return json.loads(text)


def main():
    req = json.loads(sys.stdin.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.path.insert(0, "/workspace")
    res = {}
    try:
        spec = importlib.util.spec_from_file_location("solution", req["code"])
        mod = importlib.util.module_from_spec(spec)
        sys.modules["solution"] = mod
        spec.loader.exec_module(mod)
        fn = mod
        parts = req["function"].split(".")
        for i, part in enumerate(parts):
            fn = getattr(fn, part, None)
            if fn is None:
                raise LookupError("the code defines no %r" % ".".join(parts[: i + 1]))
            if isinstance(fn, type) and i < len(parts) - 1:
                fn = fn()
        if not callable(fn):
            raise LookupError("%r is not callable" % req["function"])
    except LookupError as e:
        res = {"phase": "lookup", "message": str(e)}
    except BaseException as e:  # noqa: BLE001 - SyntaxError, SystemExit, anything
        res = describe(e, "import")
    if not res:
        start = time.perf_counter()
        try:
            value = fn(*req["args"], **req["kwargs"])
            res = {"raised": False, "type": type(value).__name__, "mro": names(type(value)),
                   "repr": safe(repr, value)[:4000]}
            try:
                res["value"] = encode(value)
            except (TypeError, ValueError, RecursionError):
                res["unserializable"] = True
        except BaseException as e:  # noqa: BLE001
            res = describe(e)
        res["duration"] = time.perf_counter() - start
    for s in (sys.stdout, sys.stderr):
        try:
            s.flush()
        except BaseException:  # noqa: BLE001
            pass
    with open(req["result"], "w") as f:
        json.dump(res, f)
    os._exit(0)


main()

# swebox strict grading: the test runner's own report (see package strict).
#
# Loaded with "-p swebox_strict" from a directory put first on PYTHONPATH by
# the eval script, so pytest imports it while it reads its command line:
# before any conftest.py, test module or module of the repository. It
# writes one record per test as the test ends, each line signed with a key
# it reads from a file and removes before anything else is imported, to a
# file the host reads back after the tests. Python 3.5 compatible.
import hashlib
import hmac
import json
import os
import sys

_out = None
_key = b""
_changed = set()
_root = os.path.realpath(os.getcwd())
_tampered = set()
_status = {}

# Hooks through which a plugin decides or rewrites what the tests did.
_REPORT_HOOKS = frozenset("""
pytest_runtest_makereport pytest_runtest_logreport pytest_report_teststatus
pytest_runtest_protocol pytest_runtest_call pytest_pyfunc_call
pytest_runtest_setup pytest_runtest_teardown pytest_collection_modifyitems
pytest_terminal_summary pytest_sessionfinish pytest_collectreport
pytest_itemcollected pytest_deselected pytest_report_to_serializable
pytest_report_from_serializable pytest_unconfigure pytest_runtestloop
pytest_collection pytest_exception_interact pytest_collect_file
pytest_pycollect_makeitem pytest_generate_tests pytest_runtest_logfinish
""".split())


def _emit(rec):
    if _out is None:
        return
    line = json.dumps(rec, sort_keys=True)
    mac = hmac.new(_key, line.encode("utf-8"), hashlib.sha256).hexdigest()
    _out.write(mac + " " + line + "\n")
    _out.flush()


def _open():
    global _out, _key
    kp = os.environ.pop("SWEBOX_STRICT_KEY", "")
    op = os.environ.pop("SWEBOX_STRICT_OUT", "")
    cp = os.environ.pop("SWEBOX_STRICT_CHANGED", "")
    if not kp or not op:
        return
    with open(kp, "rb") as f:
        _key = f.read().strip()
    os.unlink(kp)
    _out = open(op, "a")
    if cp:
        try:
            with open(cp) as f:
                for line in f:
                    if line.strip():
                        _changed.add(line.rstrip("\n"))
        except OSError:
            pass
    _emit({"t": "start", "pid": os.getpid()})
    # The repository guard's findings, signed now, before any code of the
    # patch runs in this process, so that emptying the file later changes
    # nothing.
    try:
        with open(os.path.join(os.path.dirname(op), "findings")) as f:
            for line in f:
                if line.strip():
                    _emit({"t": "finding", "what": line.rstrip("\n")})
    except OSError:
        pass


def _watched():
    """The objects test code reaches for to decide an outcome, by name."""
    import unittest
    import pytest
    out = {}

    def mod(name, m, attrs):
        for a in attrs:
            if hasattr(m, a):
                out[name + "." + a] = (m, a, False)

    def cls(name, c, attrs):
        for a in attrs:
            if a in c.__dict__:
                out[name + "." + a] = (c, a, True)

    mod("pytest", pytest, ["raises", "warns", "approx", "fail", "skip", "xfail", "importorskip", "deprecated_call"])
    for modname, attrs in [
        ("_pytest.runner", ["call_and_report", "call_runtest_hook", "runtestprotocol", "pytest_runtest_makereport", "check_interactive_exception"]),
        ("_pytest.python", ["pytest_pyfunc_call"]),
        ("_pytest.python_api", ["raises", "approx"]),
        ("_pytest.outcomes", ["fail", "skip", "xfail", "exit"]),
        ("_pytest.skipping", ["pytest_runtest_makereport", "evaluate_xfail_marks"]),
        ("_pytest.terminal", ["pytest_report_teststatus"]),
    ]:
        m = sys.modules.get(modname)
        if m is not None:
            mod(modname, m, attrs)
    r = sys.modules.get("_pytest.runner")
    if r is not None and hasattr(r, "CallInfo"):
        cls("_pytest.runner.CallInfo", r.CallInfo, ["from_call"])
    rep = sys.modules.get("_pytest.reports")
    if rep is not None:
        cls("_pytest.reports.TestReport", rep.TestReport, ["from_item_and_call", "__init__"])
        cls("_pytest.reports.BaseReport", rep.BaseReport, ["passed", "failed", "skipped"])
    py = sys.modules.get("_pytest.python")
    if py is not None:
        cls("_pytest.python.Function", py.Function, ["runtest"])
    cls("unittest.TestCase", unittest.TestCase, [a for a in dir(unittest.TestCase) if a.startswith("assert") or a in ("run", "fail", "skipTest")])
    return out


def _snapshot(w):
    snap = {}
    for name, (obj, attr, in_dict) in w.items():
        snap[name] = obj.__dict__.get(attr) if in_dict else getattr(obj, attr, None)
    return snap


_open()
import _pytest.runner  # noqa: E402  (bound before any conftest can rebind it)
import _pytest.reports  # noqa: E402
import _pytest.python  # noqa: E402
_WATCH = _watched()
_ORIG = _snapshot(_WATCH)


def _check(where):
    now = _snapshot(_WATCH)
    for name, obj in _ORIG.items():
        if now.get(name) is not obj and name not in _tampered:
            _tampered.add(name)
            _emit({"t": "tamper", "what": name + " was replaced during the tests (seen at " + where + ")"})


def _plugins(config):
    pm = config.pluginmanager
    for plugin in pm.get_plugins():
        f = getattr(plugin, "__file__", None)
        if not f:
            continue
        f = os.path.realpath(f)
        if f.endswith((".pyc", ".pyo")):
            f = f[:-1]
        if not f.startswith(_root + os.sep):
            continue
        rel = os.path.relpath(f, _root)
        if rel not in _changed:
            continue
        try:
            hooks = sorted(h.name for h in (pm.get_hookcallers(plugin) or []))
        except Exception:  # noqa: BLE001
            hooks = []
        bad = [h for h in hooks if h in _REPORT_HOOKS]
        if bad:
            _emit({"t": "tamper", "what": "plugin module " + rel + ", changed by the patch, implements " + ", ".join(bad)})


def pytest_collection_finish(session):
    _check("collection")
    _plugins(session.config)


def pytest_runtest_logreport(report):
    nid = report.nodeid
    prev = _status.get(nid)
    when = report.when
    if report.failed:
        s = "FAILED" if when == "call" else "ERROR"
        if hasattr(report, "wasxfail"):
            s = "FAILED"
    elif report.skipped:
        s = "XFAIL" if hasattr(report, "wasxfail") else "SKIPPED"
    elif when == "call":
        s = "XPASS" if hasattr(report, "wasxfail") else "PASSED"
    else:
        s = None
    if s is not None and prev not in ("FAILED", "ERROR"):
        _status[nid] = s
    if when == "teardown":
        _check(nid)
        _emit({"t": "test", "id": nid, "s": _status.pop(nid, "ERROR")})


def pytest_sessionfinish(session, exitstatus):
    _check("the end of the session")
    _plugins(session.config)
    for nid, s in list(_status.items()):
        _emit({"t": "test", "id": nid, "s": s})
    _emit({"t": "end", "exit": int(exitstatus)})

"""swebox agent function-test harness, collected by pytest.

SWEBOX_TC_DIR holds cases.json, written by the library: the function's name,
the path of the submitted code and one record per case. This module reads it
and deletes it, so the submitted code, which only ever runs in child
processes started later, cannot read the expected values. Each case runs the
function in a fresh child (case_child.py) with its own timeout; the child
reports what the call returned or raised in a file, and the comparison with
the expected value happens here, in pytest, whose verdict the library reads
from pytest's own output. This process makes itself non-dumpable, so the
children, which run as the same user, cannot open its standard output
through /proc and write verdict lines into it, or trace it. It also installs
a seccomp filter, which every child inherits, that makes ptrace,
process_vm_readv, process_vm_writev and pidfd_getfd fail with EPERM: the
code under test can trace no process at all, the launcher (which stays
dumpable, see launch.py) included.
"""
import ctypes
import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

# Per architecture: the seccomp audit arch and the numbers of ptrace,
# process_vm_readv, process_vm_writev and pidfd_getfd.
_DENY = {"x86_64": (0xC000003E, (101, 310, 311, 438)), "aarch64": (0xC00000B7, (117, 270, 271, 438))}


def deny_tracing(libc):
    """Installs the seccomp filter of the module's doc; False where it cannot."""
    import platform
    import struct
    arch = _DENY.get(platform.machine())
    if arch is None:
        return False
    audit, nrs = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, ...|BPF_JGE, BPF_RET|BPF_K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    # A system call of another ABI (i386 through int 0x80, x32) is refused
    # whole: its numbers differ.
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, audit), (ret, 0, 0, deny), (ld, 0, 0, 0)]
    checks = ([(jge, 0x40000000)] if audit == 0xC000003E else []) + [(jeq, nr) for nr in nrs]
    for i, (op, k) in enumerate(checks):
        prog.append((op, len(checks) - i, 0, k))  # on a match, past the rest and ALLOW
    prog += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    buf = ctypes.create_string_buffer(b"".join(struct.pack("=HBBI", *ins) for ins in prog))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog), ctypes.cast(buf, ctypes.c_void_p))
    ulong = ctypes.c_ulong
    if libc.prctl(38, ulong(1), ulong(0), ulong(0), ulong(0)) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    return libc.prctl(22, ulong(2), ctypes.byref(fprog), ulong(0), ulong(0)) == 0


try:
    _libc = ctypes.CDLL(None)
    _libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
    deny_tracing(_libc)
except Exception:  # noqa: BLE001 - best effort on libcs without prctl
    pass

DIR = os.environ["SWEBOX_TC_DIR"]
_path = os.path.join(DIR, "cases.json")
with open(_path) as _f:
    DATA = json.load(_f)
os.remove(_path)
CASES = DATA["cases"]
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "case_child.py")
VENV_PY = "/workspace/.venv/bin/python"
PYTHON = VENV_PY if os.access(VENV_PY, os.X_OK) else sys.executable
RESULTS = os.path.join(DIR, "results")
os.makedirs(RESULTS, exist_ok=True)
KEEP = 64 << 10


def short(s, n=1000):
    return s if len(s) <= n else s[: n - 3] + "..."


def read_head(path):
    try:
        with open(path, "rb") as f:
            data = f.read(KEEP + 1)
    except OSError:
        return ""
    text = data[:KEEP].decode("utf-8", "replace")
    return text + ("\n[... output cut ...]" if len(data) > KEEP else "")


def same(got, want, rel, abs_):
    if isinstance(want, bool) or isinstance(got, bool):
        return type(got) is type(want) and got == want
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        if isinstance(want, float) or isinstance(got, float):
            if math.isnan(want) and math.isnan(got):
                return True
            return got == want or math.isclose(got, want, rel_tol=rel, abs_tol=abs_)
        return got == want
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(same(g, w, rel, abs_) for g, w in zip(got, want))
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(same(got[k], want[k], rel, abs_) for k in want)
    return type(got) is type(want) and got == want


def run_child(case):
    out_path = os.path.join(RESULTS, case["id"] + ".out")
    err_path = os.path.join(RESULTS, case["id"] + ".err")
    res_path = os.path.join(RESULTS, case["id"] + ".json")
    request = json.dumps({
        "code": DATA["code"], "function": DATA["function"],
        "args": case.get("args") or [], "kwargs": case.get("kwargs") or {},
        "result": res_path,
    })
    timeout = case.get("timeout") or DATA.get("timeout") or 10
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen([PYTHON, CHILD], stdin=subprocess.PIPE, stdout=out, stderr=err,
                             cwd="/workspace", start_new_session=True)
        timed_out = False
        try:
            p.communicate(request.encode(), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            p.wait()
    wall = time.monotonic() - start
    try:
        with open(res_path) as f:
            res = json.load(f)
    except (OSError, ValueError):
        res = None
    return res, timed_out, p.returncode, wall, timeout, read_head(out_path), read_head(err_path)


def verdict(case, res, timed_out, code, timeout):
    """Returns (passed, got, detail)."""
    if timed_out:
        return False, "", "timed out after %gs" % timeout
    if res is None:
        return False, "", "the process ended without a result (exit status %d)" % code
    phase = res.get("phase")
    if phase == "import":
        return False, "", "the code failed to import: %s: %s" % (res.get("exc_type"), short(res.get("message", ""), 300))
    if phase == "lookup":
        return False, "", short(res.get("message", ""), 300)
    want_exc = case.get("expected_error")
    if res.get("raised"):
        got = "%s(%r)" % (res.get("exc_type"), short(res.get("message", ""), 200))
        if want_exc and want_exc in res.get("exc_mro", []):
            return True, got, ""
        if want_exc:
            return False, got, "expected %s to be raised, got %s: %s" % (want_exc, res.get("exc_type"), short(res.get("message", ""), 300))
        return False, got, "raised %s: %s" % (res.get("exc_type"), short(res.get("message", ""), 300))
    got = res.get("repr", "")
    if want_exc:
        return False, got, "expected %s to be raised, but it returned %s" % (want_exc, short(got, 300))
    want_type = case.get("expected_type")
    if want_type and want_type not in res.get("mro", []):
        return False, got, "expected a value of type %s, got %s" % (want_type, res.get("type"))
    if case.get("check_value"):
        if res.get("unserializable"):
            return False, got, "returned a %s, which cannot be compared with the expected JSON value %s" % (
                res.get("type"), short(json.dumps(case.get("expected")), 300))
        if not same(res.get("value"), case.get("expected"), DATA.get("rel_tol", 0.0), DATA.get("abs_tol", 0.0)):
            return False, got, "expected %s, got %s" % (short(json.dumps(case.get("expected")), 300), short(got, 300))
    return True, got, ""


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    res, timed_out, code, wall, timeout, out, err = run_child(case)
    passed, got, detail = verdict(case, res, timed_out, code, timeout)
    report = {
        "got": got, "detail": detail, "stdout": out, "stderr": err,
        "duration": (res or {}).get("duration", wall), "timed_out": timed_out,
        "error": {k: res.get(k) for k in ("exc_type", "message", "traceback", "phase")} if res and (res.get("raised") or res.get("phase")) else None,
    }
    with open(os.path.join(RESULTS, case["id"] + ".report.json"), "w") as f:
        json.dump(report, f)
    assert passed, repr(detail)

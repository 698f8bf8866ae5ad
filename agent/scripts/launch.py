"""swebox agent launcher: launch.py STATS CMD [ARG...]

Runs CMD as its only child and exits with its status (128+N when signal N
ended it). While CMD runs, and when SWEBOX_EGRESS_SOCKET names the egress
proxy's Unix socket, it relays TCP connections from 127.0.0.1 to that socket
and points the child's HTTP(S)_PROXY variables at the relay: the sandbox has
no network interface besides loopback, so the proxy is its only way out.
Afterwards it writes the child's resource usage (peak RSS, CPU time) to STATS
as JSON. It runs with -I -S, so nothing from the workspace can change it.

With SWEBOX_HAND_OFF_STDIO set (function test cases: the output is a
verdict), it keeps no copy of its standard streams once CMD has them. The
launcher stays dumpable (the engine path's kill script finds a command by
the environment of its first process), and the code under test, which runs
as the same user, could open its descriptors through /proc; the harness's
seccomp filter keeps that code from tracing it, and what it could still
reach is only the launcher's exit status, which alone passes no case whose
output is pytest's (see harness_test.py).
"""
import json
import os
import resource
import signal
import socket
import sys
import threading


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def handle(conn, path):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(path)
    except OSError:
        conn.close()
        up.close()
        return
    back = threading.Thread(target=pipe, args=(up, conn), daemon=True)
    back.start()
    pipe(conn, up)
    back.join()
    conn.close()
    up.close()


def relay(path):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(128)

    def serve():
        while True:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn, path), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1]


def main():
    stats, argv = sys.argv[1], sys.argv[2:]
    hand_off = os.environ.pop("SWEBOX_HAND_OFF_STDIO", "")
    sock = os.environ.pop("SWEBOX_EGRESS_SOCKET", "")
    if sock:
        url = "http://127.0.0.1:%d" % relay(sock)
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            os.environ[k] = url
        for k in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
            os.environ.pop(k, None)
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, ("%s: %s\n" % (argv[0], e.strerror)).encode())
            os._exit(127 if isinstance(e, FileNotFoundError) else 126)
    if hand_off:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda n, _f: os.kill(pid, n))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        with open(stats, "w") as f:
            json.dump({"maxrss_kb": ru.ru_maxrss, "utime": ru.ru_utime, "stime": ru.ru_stime, "exit": code}, f)
    except OSError:
        pass
    os._exit(128 - code if code < 0 else code)


main()

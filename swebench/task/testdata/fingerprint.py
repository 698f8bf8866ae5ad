# fingerprint.py prints, one line per fact, what the sandbox user can observe
# of a task sandbox: its mounts, every entry under each read-write mount
# (type, mode, owner, size, content hash, link target; .git internals and
# the object store included), the processes running, the environment, the
# System V IPC objects, the identity and the limits. It runs as
# `python3 -I -S` from the read-only root, so that nothing in HOME,
# site-packages or the environment changes what it reports.
#
# What differs between two sandboxes started alike is left out, each for a
# stated reason: modification, change and access times (a checkout's are
# its own time), the stat fields git keeps in .git/index for the same
# reason (ctime, mtime, device, inode: zeroed before hashing), the
# engine's per-container files /etc/hostname and /etc/hosts (their content
# where the sandbox user cannot write them; where it can, as on a pod run
# as root, the lines that name the container itself) and the
# HOSTNAME variable (the container's name), the bytes and names of the
# checkout's pack of base-commit objects (two checkouts write the same
# objects in another order: the pack is named by its content, so each
# pack counts by the sorted names of the objects its .idx lists, and a
# .pack by its size), and this script's own
# process and the keepalive's short sleep (by pid 1's child rule).
import hashlib
import os
import stat
import struct
import sys

out = []


def emit(*parts):
    out.append(" ".join(str(p) for p in parts))


def sha(data):
    return hashlib.sha256(data).hexdigest()[:16]


def index_hash(data):
    """Hashes a git index with each entry's volatile stat fields zeroed."""
    if len(data) < 32 or data[:4] != b"DIRC":
        return "raw:" + sha(data)
    version, count = struct.unpack(">II", data[4:12])
    if version not in (2, 3):
        return "raw:" + sha(data)
    body = bytearray(data[:-20])
    off = 12
    for _ in range(count):
        if off + 62 > len(body):
            return "raw:" + sha(data)
        body[off:off + 24] = bytes(24)  # ctime, mtime, dev, ino
        flags = struct.unpack(">H", body[off + 60:off + 62])[0]
        head = 62
        if version == 3 and flags & 0x4000:
            head += 2
        end = body.index(b"\0", off + head)
        size = end - off + 1
        size = (size + 7) // 8 * 8
        off += size
    return "index:" + sha(bytes(body))


def per_container(p):
    """What of an engine's per-container file (/etc/hostname, /etc/hosts)
    counts: nothing when the user cannot write it, else its lines but
    those naming the container itself."""
    if not os.access(p, os.W_OK):
        return ["per-container", "read-only"]
    me = os.uname().nodename
    with open(p, "rb") as f:
        lines = [l for l in f.read().decode("utf-8", "replace").splitlines() if me not in l.split()]
    return ["per-container", "writable", sha("\n".join(lines).encode())]


def pack_index(data):
    """The sorted object names a version 2 pack index lists."""
    if data[:4] != b"\xfftOc" or len(data) < 8 + 1024:
        return "raw:" + sha(data)
    count = struct.unpack(">I", data[8 + 1020:8 + 1024])[0]
    names = data[8 + 1024:8 + 1024 + 20 * count]
    return "objects:%d:%s" % (count, sha(names))


def walk(top):
    try:
        names = sorted(os.listdir(top))
    except OSError as e:
        emit("unreadable", top, e.errno)
        return
    for name in names:
        p = os.path.join(top, name)
        try:
            st = os.lstat(p)
        except OSError as e:
            emit("gone", p, e.errno)
            continue
        kind = stat.S_IFMT(st.st_mode)
        shown = p
        if "/objects/pack/pack-" in p:
            shown = p[:p.index("/pack-") + 6] + "*" + os.path.splitext(p)[1]
        line = ["entry", shown, oct(stat.S_IMODE(st.st_mode)), st.st_uid, st.st_gid]
        if stat.S_ISLNK(st.st_mode):
            line += ["link", os.readlink(p)]
        elif stat.S_ISREG(st.st_mode):
            line += ["file", st.st_size]
            if p in ("/etc/hostname", "/etc/hosts"):
                line += per_container(p)
            else:
                try:
                    with open(p, "rb") as f:
                        data = f.read()
                    if name == "index" and os.path.basename(top) == ".git":
                        line.append(index_hash(data))
                    elif shown.endswith("/pack-*.idx"):
                        line.append(pack_index(data))
                    elif shown.endswith("/pack-*.pack"):
                        line.append("pack")
                    else:
                        line.append(sha(data))
                except OSError as e:
                    line += ["unreadable", e.errno]
        elif stat.S_ISDIR(st.st_mode):
            line.append("dir")
        else:
            line += ["kind", kind]
        emit(*line)
        if stat.S_ISDIR(st.st_mode) and p not in skip:
            walk(p)


# Mounts: point, type and rw/ro, sorted (the engine mounts sibling bind
# mounts in no fixed order); read-write ones are walked.
skip = {"/proc", "/sys", "/dev/pts"}
rw = []
mounts = []
with open("/proc/self/mountinfo") as f:
    for line in f:
        fields = line.split()
        sep = fields.index("-")
        point, opts, fstype = fields[4], fields[5].split(",")[0], fields[sep + 1]
        mounts.append("mount %s %s %s" % (point, fstype, opts))
        if opts == "rw" and fstype not in ("proc", "sysfs", "cgroup", "cgroup2", "devpts") and not point.startswith(("/proc", "/sys")):
            rw.append(point)
out.extend(sorted(mounts))
for point in sorted(set(rw)):
    if point == "/dev":
        continue  # device nodes; its mounts (/dev/shm, /dev/mqueue) are walked themselves
    st = os.lstat(point)
    if stat.S_ISDIR(st.st_mode):
        emit("rwmount", point, oct(stat.S_IMODE(st.st_mode)), st.st_uid, st.st_gid)
        walk(point)
    elif not stat.S_ISREG(st.st_mode):
        # A device bind-mounted over /dev (rootless Podman cannot make
        # device nodes in its user namespace, so /dev/null, /dev/zero and
        # the others are the host's, each a mount) is counted by its kind
        # and number, never read: /dev/zero would never end.
        emit("node", point, oct(stat.S_IMODE(st.st_mode)), st.st_uid, stat.S_IFMT(st.st_mode), os.major(st.st_rdev), os.minor(st.st_rdev))
    else:
        try:
            with open(point, "rb") as f:
                data = f.read()
            if point in ("/etc/hostname", "/etc/hosts"):
                emit("file", point, oct(stat.S_IMODE(st.st_mode)), st.st_uid, *per_container(point))
            else:
                emit("file", point, oct(stat.S_IMODE(st.st_mode)), st.st_uid, sha(data))
        except OSError as e:
            emit("file", point, "unreadable", e.errno)

# Processes, but this one and its ancestors, and the keepalive's sleep.
me = os.getpid()
mine = set()
p = me
while p > 1:
    mine.add(p)
    with open("/proc/%d/stat" % p) as f:
        p = int(f.read().rsplit(")", 1)[1].split()[1])
procs = []
for d in os.listdir("/proc"):
    if not d.isdigit() or int(d) in mine:
        continue
    try:
        with open("/proc/%s/stat" % d) as f:
            rest = f.read().rsplit(")", 1)[1].split()
        with open("/proc/%s/cmdline" % d, "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
        with open("/proc/%s/status" % d) as f:
            uid = [l.split()[1] for l in f if l.startswith("Uid:")][0]
    except (OSError, IndexError):
        continue
    state, ppid = rest[0], int(rest[1])
    if state in "ZX":
        continue
    if cmd.startswith("sleep ") and ppid != 1 and ppid not in mine:
        # The keepalive restarts its sleep; count it once, as its parent's.
        cmd = "keepalive-sleep"
    procs.append("proc %s %s %s" % (uid, "main" if d == "1" else "other", cmd))
out.extend(sorted(set(procs)))

# Environment, System V IPC, identity, limits.
for k in sorted(os.environ):
    emit("env", k, "(per-container)" if k == "HOSTNAME" else os.environ[k])
try:
    with open("/proc/1/environ", "rb") as f:
        for kv in sorted(f.read().split(b"\0")):
            if kv and not kv.startswith(b"HOSTNAME="):
                emit("env1", kv.decode("utf-8", "replace"))
except OSError as e:
    emit("env1", "unreadable", e.errno)
for kind in ("shm", "sem", "msg"):
    try:
        with open("/proc/sysvipc/" + kind) as f:
            lines = f.read().splitlines()[1:]
        emit("sysvipc", kind, len(lines), sha("\n".join(sorted(lines)).encode()))
    except OSError as e:
        emit("sysvipc", kind, "unreadable", e.errno)
emit("id", os.getuid(), os.getgid(), sorted(os.getgroups()))
with open("/proc/self/limits") as f:
    for line in f.read().splitlines()[1:]:
        emit("limit", " ".join(line.split()))
sys.stdout.write("\n".join(out) + "\n")

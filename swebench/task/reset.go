package task

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench/harness"
)

// procScan defines scan SIGNAL: it finds every process of the sandbox but
// pid 1, those listed in $keep, this script, its ancestors and children,
// and the children of $keepers (the sandbox's idle loop, which restarts its
// sleep), and sends them SIGNAL ("" sends nothing); found counts them. It
// also defines tmplist, the entries of /tmp. Only /proc and shell builtins
// are used: on a loaded machine every program started costs.
const procScan = `self=$$
stat() { read -r st < "$1/stat" 2>/dev/null || return 1; st=${st##*) }; set -- $st; state=$1; ppid=$2; }
p=$self; while [ "$p" -gt 1 ] 2>/dev/null; do keep="$keep $p "; stat /proc/$p || break; p=$ppid; done
scan() {
  found=0; live=0
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    case "$p" in 1|"$self") continue;; esac
    case "$keep" in *" $p "*) continue;; esac
    stat "$d" || continue
    case "$state" in Z|X|x) continue;; esac
    [ "$ppid" = "$self" ] && continue
    case "$keepers" in *" $ppid "*) continue;; esac
    found=$((found+1)); [ "$state" = T ] || live=$((live+1))
    [ -z "$1" ] || kill -"$1" "$p" 2>/dev/null
  done
}
entries() { list=; for f in "$1"/* "$1"/.[!.]* "$1"/..?*; do [ -e "$f" ] || [ -L "$f" ] || continue; list="$list${f##*/} "; done; }
`

// snapshotScript records the started environment: git's config and index
// in .git/swebox-task (for Reset to restore from) and, on stdout, what
// Reset restores and verifies against (kept on the host): HEAD, the refs,
// the tree of every file of /testbed (ignored ones included, through a
// scratch index), the entries of /tmp and the processes running.
const snapshotScript = `set -e
export GIT_DIR=/testbed/.git GIT_WORK_TREE=/testbed
d=$GIT_DIR/swebox-task
G="git -c core.fsmonitor=false -c core.hooksPath=/dev/null"
mkdir -p "$d"
cp "$GIT_DIR/config" "$d/config"
if [ -f "$GIT_DIR/index" ]; then cp "$GIT_DIR/index" "$d/index"; fi
rm -f "$d/tree-index"
GIT_INDEX_FILE="$d/tree-index" $G add -A -f .
echo "head $($G rev-parse HEAD)"
read -r h < "$GIT_DIR/HEAD"; echo "ref $h"
echo "tree $(GIT_INDEX_FILE="$d/tree-index" $G write-tree)"
$G for-each-ref --format='refln %(objectname) %(refname)'
` + procScan + `
entries /tmp; echo "tmp $list"
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = "$self" ] && continue
  stat "$d" || continue
  [ "$ppid" = "$self" ] && continue
  echo "pid $p"
  read -r comm < "$d/comm" 2>/dev/null || comm=
  [ "$comm" = sleep ] && echo "keeper $ppid"
done
exit 0`

// resetScript kills the agent's processes, restores /testbed and git's
// state (HEAD and refs from $HEADREF and $REFS, which the host passes),
// empties /tmp but for what was there at Start (HOME's mount point, $TMPKEEP)
// and prints the same lines as snapshotScript for the host to compare.
// Arguments: the tree, then "keep:PID" and "keeper:PID" words.
const resetScript = procScan + `
tree=$1; shift
for a; do case "$a" in keep:*) keep="$keep ${a#keep:} ";; keeper:*) keepers="$keepers ${a#keeper:} ";; esac; done
i=0; while scan STOP; [ "$live" -gt 0 ] && [ $i -lt 50 ]; do i=$((i+1)); done
i=0; while scan KILL; [ "$found" -gt 0 ] && [ $i -lt 200 ]; do i=$((i+1)); done
export GIT_DIR=/testbed/.git GIT_WORK_TREE=/testbed
d=$GIT_DIR/swebox-task
G="git -c core.fsmonitor=false -c core.hooksPath=/dev/null"
cd /testbed
cp "$d/config" "$GIT_DIR/config"
for f in "$GIT_DIR/index.lock" "$GIT_DIR/HEAD.lock"; do [ -e "$f" ] && rm -f "$f"; done
if [ "$($G for-each-ref --format='%(objectname) %(refname)')" != "$REFS" ]; then
  $G for-each-ref --format='delete %(refname)' | $G update-ref --stdin
  printf '%s\n' "$REFS" | while read -r o r; do [ -n "$r" ] && echo "update $r $o"; done | $G update-ref --stdin
fi
read -r h < "$GIT_DIR/HEAD" || h=
[ "$h" = "$HEADREF" ] || printf '%s\n' "$HEADREF" > "$GIT_DIR/HEAD"
chmod -R u+rwX /testbed 2>/dev/null
GIT_INDEX_FILE="$d/tree-index" $G read-tree --reset -u "$tree"
GIT_INDEX_FILE="$d/tree-index" $G clean -ffdqx
if [ -f "$d/index" ]; then cp "$d/index" "$GIT_DIR/index"; else rm -f "$GIT_DIR/index"; fi
for f in /tmp/* /tmp/.[!.]* /tmp/..?*; do
  [ -e "$f" ] || [ -L "$f" ] || continue
  case " $TMPKEEP " in
    *" ${f#/tmp/} "*) if [ -d "$f" ] && [ ! -L "$f" ]; then for g in "$f"/* "$f"/.[!.]* "$f"/..?*; do [ -e "$g" ] || [ -L "$g" ] || continue; rm -rf "$g"; done; fi;;
    *) rm -rf "$f";;
  esac
done
echo "head $($G rev-parse HEAD)"
read -r h < "$GIT_DIR/HEAD"; echo "ref $h"
GIT_INDEX_FILE="$d/tree-index" $G add -A -f . && echo "tree $(GIT_INDEX_FILE="$d/tree-index" $G write-tree)"
$G for-each-ref --format='refln %(objectname) %(refname)'
entries /tmp; echo "tmp $list"
left=; for k in $TMPKEEP; do [ -d "/tmp/$k" ] && entries "/tmp/$k" && left="$left$list"; done
echo "tmpfiles $left"
scan ""
echo "procs $found"
exit 0`

// scriptTimeout bounds the snapshot and the reset.
const scriptTimeout = 5 * time.Minute

// state is the parsed output of the snapshot and reset scripts.
type state struct {
	lines         map[string]string
	refs          []string // "objectname refname", in for-each-ref's order
	keep, keepers []string
}

func parseState(out string) state {
	s := state{lines: map[string]string{}}
	for _, l := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(l, " ")
		switch k {
		case "pid":
			s.keep = append(s.keep, v)
		case "keeper":
			s.keepers = append(s.keepers, v)
		case "refln":
			s.refs = append(s.refs, v)
		case "":
		default:
			s.lines[k] = strings.TrimSpace(v)
		}
	}
	return s
}

func takeSnapshot(ctx context.Context, sb *sandbox.Sandbox) (snapshot, error) {
	r, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", snapshotScript}, WorkingDir: harness.RepoDir, Timeout: scriptTimeout})
	if err != nil {
		return snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if !r.Success() {
		return snapshot{}, fmt.Errorf("snapshot: exit %d: %s", r.ExitCode, strings.TrimSpace(r.Stderr.String()))
	}
	st := parseState(r.Stdout.String())
	snap := snapshot{
		head: st.lines["head"], headRef: st.lines["ref"], tree: st.lines["tree"], tmp: st.lines["tmp"],
		refs: strings.Join(st.refs, "\n"), keep: st.keep, keepers: st.keepers,
	}
	if snap.head == "" || snap.tree == "" {
		return snapshot{}, fmt.Errorf("snapshot: incomplete output %q", r.Stdout.String())
	}
	return snap, nil
}

// ResetResult says how Reset went.
type ResetResult struct {
	// Replaced: the reset environment failed verification (Mismatch says
	// how), so its sandbox was removed and a new one started.
	Replaced bool
	Mismatch string
	Duration time.Duration
}

// Reset returns the environment to the state Start gave it: the agent's
// processes are killed, /testbed's files, HEAD, refs, index and git config
// are restored, /tmp is emptied; then it verifies that HEAD and the tree of
// every file of /testbed (ignored ones included) equal Start's, that no
// process of the agent is left and that /tmp holds nothing new. An
// environment that fails verification is never handed back: its sandbox is
// replaced by a new one, as Start makes it (Result.Replaced). An error
// means no environment could be made; the Env is then closed.
func (e *Env) Reset(ctx context.Context) (ResetResult, error) {
	start := time.Now()
	e.mu.Lock()
	sb, snap := e.sb, e.snap
	e.mu.Unlock()
	if sb == nil {
		return ResetResult{}, errors.New("reset: task environment is closed")
	}
	args := []string{"sh", "-c", resetScript, "reset", snap.tree}
	for _, p := range snap.keep {
		args = append(args, "keep:"+p)
	}
	for _, p := range snap.keepers {
		args = append(args, "keeper:"+p)
	}
	r, err := sb.Exec(ctx, sandbox.ExecRequest{
		Cmd: args, WorkingDir: "/", Timeout: scriptTimeout,
		Env: map[string]string{"TMPKEEP": snap.tmp, "REFS": snap.refs, "HEADREF": snap.headRef},
	})
	mismatch := ""
	switch {
	case err != nil:
		if ctx.Err() != nil {
			return ResetResult{}, fmt.Errorf("reset: %w", err)
		}
		mismatch = err.Error()
	case !r.Success():
		mismatch = fmt.Sprintf("reset script exit %d: %s", r.ExitCode, strings.TrimSpace(r.Stderr.String()))
	default:
		mismatch = snap.differs(parseState(r.Stdout.String()))
	}
	if mismatch == "" {
		return ResetResult{Duration: time.Since(start)}, nil
	}
	res := ResetResult{Replaced: true, Mismatch: mismatch}
	e.mu.Lock()
	old, ws := e.sb, e.ws
	e.sb, e.ws = nil, ""
	e.mu.Unlock()
	rerr := removeSandbox(old, ws)
	if err := e.startSandbox(ctx); err != nil {
		return res, fmt.Errorf("reset: replace the sandbox (%s): %w", mismatch, errors.Join(err, rerr))
	}
	res.Duration = time.Since(start)
	return res, nil
}

// differs says how the reset state got differs from the snapshot, "" when
// it does not.
func (s snapshot) differs(got state) string {
	var d []string
	check := func(what, want, have string) {
		if want != have {
			d = append(d, fmt.Sprintf("%s is %q, want %q", what, have, want))
		}
	}
	check("HEAD", s.head, got.lines["head"])
	check(".git/HEAD", s.headRef, got.lines["ref"])
	check("the tree of /testbed", s.tree, got.lines["tree"])
	check("the listing of /tmp", s.tmp, got.lines["tmp"])
	check("the refs", s.refs, strings.Join(got.refs, "\n"))
	check("files under /tmp's directories", "", got.lines["tmpfiles"])
	check("processes left", "0", got.lines["procs"])
	return strings.Join(d, "; ")
}

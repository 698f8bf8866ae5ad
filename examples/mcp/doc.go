// Command mcp serves swebox's sandboxes and SWE-bench evaluator as Model
// Context Protocol tools, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). Agents add it to their MCP
// configuration and call:
//
//	run_python, run_shell, run_tests        one fresh hardened sandbox per call
//	session_create, session_exec,           a sandbox whose files and packages
//	session_write_file, session_read_file,  persist across calls until closed
//	session_list, session_close             or idle too long
//	job_status, job_cancel                  calls started with background: true
//	swebench_evaluate, swebench_grade_log   a patch graded against an instance
//	swebench_task_list, swebench_task_start, a SWE-bench task's repository to
//	swebench_task_diff, swebench_task_submit, work in, its diff graded as the
//	swebench_task_reset, swebench_task_close  evaluator grades a prediction
//
// Over stdio (the default; what desktop agents spawn):
//
//	go run ./examples/mcp
//
// Over streamable HTTP, on loopback unless a host is given, behind a bearer
// token (--token, SWEBOX_MCP_TOKEN, or one generated and printed once to
// stderr; a token under 32 characters is refused); a request without it gets
// 401 before anything runs. --tokens FILE names several clients instead,
// one "NAME TOKEN" a line:
//
//	go run ./examples/mcp --http :8765
//
// Protocol 2026-07-28 is served beside 2025-11-25 and earlier. A client of
// an earlier version has an MCP session, which owns its sandbox sessions,
// task sessions, jobs and resource links until it ends; a 2026-07-28 client
// has none, so its token owns them until it has been idle for
// --client_idle or the server exits. Another client's handle gets the same
// answer as one that does not exist.
//
// Limits are the server's flags, never tool arguments: the longest run
// (--timeout, in seconds as eval's --timeout, or with a unit such as 2m; a
// call's timeout_s is capped to it), the output kept per stream
// (--output_limit), the artifact bytes inlined in a result (--artifact_limit;
// larger files become resource links), the memory of every sandbox
// (--memory), the images tools may name (--image), sessions per client
// (--max_sessions, default 4) and for all clients together
// (--max_sessions_total, default 16), background jobs running for all
// clients together (--max_jobs_total, default 64; 16 per client), session
// idle expiry (--idle), concurrent sandboxes (--max_running). Sandboxes have
// no network; --egress_allow lists the hosts a session may ask to reach
// through the egress proxy. Flags are spelled as eval's, with underscores;
// the hyphenated names of earlier releases (--max-sessions) are read too.
// Nothing a client sends
// can name a host path, a mount or a relaxation of the sandbox: files come as
// content, a URL the server fetches (public addresses only, besides the
// hosts of --fetch_allow; at most --fetch_limit bytes) or a resource link
// the server returned.
//
// Images a program writes under output/ come back as MCP image content, other
// files as embedded resources within the cap and as resource links
// (swebox://blob/...) beyond it, readable with resources/read. In HTTP mode a
// sandbox session, a job and a link belong to the MCP session that created
// them; another client can neither see nor use them, and they end with it.
//
// A warm pool (--pool, default 2) keeps started sandboxes ready for the
// kinds of call an agent repeats: run_python, run_shell and run_tests calls
// and new sessions with the same image and limits and no egress take one
// instead of starting a container, once such a call has been made twice.
// Each pooled sandbox, with a workspace made for it alone, serves one call
// or session and is removed after it; a kind unused for five minutes keeps
// none. --pool 0 turns the pool off.
//
// Every tool call is logged as one JSON line (client, tool, session, job,
// duration_ms, exit, bytes) to stderr or --log_file. Every container carries
// the label swebox.session=<--name>. A container stops within a second of
// its server's death (a crash, a kill -9); at start a server removes the
// stopped containers of its name and leaves running ones alone, so servers
// of the same name (every stdio client starts its own) share an engine
// without touching each other's sessions. Temporary files (workspaces,
// environments, evaluation trees) live under
// $TMPDIR/swebox-mcp-<--name>/<instance>/, locked by the live server; a new
// server removes the instance directories whose lock is free, never a live
// one's.
//
// A background job's job_status reports, while it runs, the elapsed time,
// progress and the stdout and stderr written so far (head and tail, capped
// by --output_limit); once ended, the call's result.
//
// swebench_evaluate and swebench_grade_log work on the datasets given with
// --dataset (JSON or JSONL files in the official format), with repositories
// from --repos directories of local sources:
//
//	go run ./examples/eval demo --export /tmp/demo
//	go run ./examples/mcp --dataset /tmp/demo/dataset.jsonl --repos /tmp/demo/repos
//
// The swebench_task_* tools turn those datasets into environments for an
// agent (package swebench/task). swebench_task_start takes an instance_id and
// returns a session whose sandbox holds the repository at base_commit in
// /testbed, prepared as the evaluator prepares it before the model patch, and
// the problem statement. session_exec runs commands there (in /testbed),
// session_read_file and session_write_file take paths absolute or relative to
// /testbed. swebench_task_diff shows the change as the model patch;
// swebench_task_submit grades it with swebench.Evaluate (a fresh sandbox from
// the instance's image, the official eval script and rules) and returns
// resolved, the FAIL_TO_PASS / PASS_TO_PASS results, the typed outcome and
// the end of the test output, as a background job with background: true;
// swebench_task_reset restores the environment and verifies it (a sandbox
// that fails is replaced); swebench_task_close ends it. Images and mode are
// chosen with the eval command's flags: --image and --image_map (workspace
// mode, with --repos), or --namespace and --instance_image_tag (the official
// instance images). A task session belongs to the client that started it and
// counts against --max-sessions apart from sandbox sessions.
//
// On Kubernetes: a server built with the kube tag
//
//	go build -tags kube ./examples/mcp
//
// takes --kubeconfig FILE, with --kube_namespace, --kube_node_grace and
// --kube_image_affinity as the eval command takes them, and runs every
// sandbox as a pod of that cluster: the task sessions (session_exec and the
// session file tools on them, swebench_task_*) and swebench_evaluate. The
// default build shows the same flags and refuses --kubeconfig, naming that
// command. The backend is behind a tag because it links client-go: with it
// the server's build compiles 922 packages instead of 560 (go list -deps),
// a cost every stdio user would pay on first build for a backend few of
// them use. The eval command takes the same tag, and both take the cluster
// flags from one place, internal/engineflags.
// On a cluster, run_python, run_shell, run_tests and session_create are
// refused as tool errors: their workspace is a directory of the server's
// machine, mounted into the sandbox and read back after each command, which
// a pod's node does not share. For the same reason --pool (it serves those
// runs), --egress_allow (the proxy is a unix socket of this machine),
// --wheel_dir, --pip_index and --pip_host are refused at start. A killed
// server's pods complete when their lease (its connection to the API
// server) ends, and the next server of the same --name removes them before
// it serves.
package main

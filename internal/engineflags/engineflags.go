// Package engineflags is the one flag vocabulary of the commands for where
// sandboxes run: the Docker engines (--docker_host) and a Kubernetes
// cluster (--kubeconfig with --kube_namespace, --kube_node_grace and
// --kube_image_affinity). The eval command and the MCP server take these
// flags from here, with the same names, help, checks and messages, and
// turn them into sandbox options here.
//
// The Kubernetes backend links client-go, which more than doubles a cold
// build, so it is linked only into programs built with the build tag [Tag]
// (kube.go); in the default build (nokube.go) the flags are parsed as
// ever, and --kubeconfig is refused with a [NotBuiltError] that the
// command turns into the one command line that builds it in.
package engineflags

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/swebox/swebox/sandbox"
)

// Tag is the build tag that links the Kubernetes backend.
const Tag = "kube"

// DefaultKubeNamespace is the default of --kube_namespace: the Kubernetes
// backend's kube.DefaultNamespace, spelled here so that a build without
// the backend shows the same help (a test under the tag holds them equal).
const DefaultKubeNamespace = "swebox"

// Engine is what the engine and cluster flags set.
type Engine struct {
	// DockerHosts are the Docker engines (--docker_host, repeatable);
	// none: DOCKER_HOST or the default socket.
	DockerHosts []string
	// Kubeconfig chooses the Kubernetes cluster it describes instead of
	// Docker (--kubeconfig).
	Kubeconfig string
	// KubeNamespace is the namespace the pods run in (--kube_namespace).
	// Default DefaultKubeNamespace.
	KubeNamespace string
	// KubeNodeGrace is the cluster's node-monitor-grace-period
	// (--kube_node_grace). Default 0: the backend's.
	KubeNodeGrace time.Duration
	// KubeImageAffinity sends pods to the nodes that hold their image
	// (--kube_image_affinity). Default true.
	KubeImageAffinity bool
	// UnenforcedLimits runs sandboxes on an engine that cannot enforce
	// their cgroup limits (--unenforced_limits; sandbox.WithUnenforcedLimits):
	// rootless Podman without cgroup v2 delegation. Default false.
	UnenforcedLimits bool
}

// Defaults returns the flags' defaults.
func Defaults() Engine {
	return Engine{KubeNamespace: DefaultKubeNamespace, KubeImageAffinity: true}
}

// Kube reports whether the flags choose a Kubernetes cluster.
func (e Engine) Kube() bool { return e.Kubeconfig != "" }

// Flag is one engine flag: its name, the placeholder of its value in the
// help ("" for booleans), its help, and its value over an Engine.
type Flag struct {
	Name  string
	Arg   string
	Usage string
	Value func(e *Engine) flag.Value
}

// The flags, in the order the help shows them. A command adds to a usage
// what is its own (what a pod cannot do for it, for instance) with
// [Flag.With].
var (
	DockerHost = Flag{Name: "docker_host", Arg: "HOST",
		Usage: "Docker engine, e.g. unix:///var/run/docker.sock or tcp://10.0.0.5:2376; repeatable, workers are spread over the engines; default DOCKER_HOST",
		Value: func(e *Engine) flag.Value { return (*hostsValue)(&e.DockerHosts) }}
	Kubeconfig = Flag{Name: "kubeconfig", Arg: "FILE",
		Usage: "run every sandbox as a Pod on the Kubernetes cluster this kubeconfig file describes, instead of on Docker (a build with -tags " + Tag + " only)",
		Value: func(e *Engine) flag.Value { return (*stringValue)(&e.Kubeconfig) }}
	KubeNamespace = Flag{Name: "kube_namespace", Arg: "NS",
		Usage: "with --kubeconfig: the namespace the pods run in (it must exist)",
		Value: func(e *Engine) flag.Value { return (*stringValue)(&e.KubeNamespace) }}
	KubeNodeGrace = Flag{Name: "kube_node_grace", Arg: "SECONDS",
		Usage: "with --kubeconfig: the cluster's node-monitor-grace-period (kube-controller-manager --node-monitor-grace-period), which loss detection waits for before it calls a silent node's pods lost; default 50, the controller's default",
		Value: func(e *Engine) flag.Value { return (*SecondsValue)(&e.KubeNodeGrace) }}
	KubeImageAffinity = Flag{Name: "kube_image_affinity", Arg: "BOOL",
		Usage: "with --kubeconfig: send each pod to a node that holds its image, and have each node pull an image at most once at a time (false: wherever the scheduler puts it)",
		Value: func(e *Engine) flag.Value { return (*boolValue)(&e.KubeImageAffinity) }}
)

// UnenforcedLimits is the flag that lets sandboxes run on an engine that
// cannot enforce their memory, CPU and process limits.
var UnenforcedLimits = Flag{Name: "unenforced_limits", Arg: "",
	Usage: "run sandboxes on an engine that cannot enforce their memory, CPU and process limits (rootless Podman on a host without cgroup v2 delegation), without those limits and with a warning each time; without it such an engine's sandboxes are refused",
	Value: func(e *Engine) flag.Value { return (*boolValue)(&e.UnenforcedLimits) }}

// KubeFlags are the cluster's flags, --kubeconfig first.
func KubeFlags() []Flag { return []Flag{Kubeconfig, KubeNamespace, KubeNodeGrace, KubeImageAffinity} }

// With returns f with usage in place of its help.
func (f Flag) With(usage string) Flag {
	f.Usage = usage
	return f
}

// Register defines flags on fs over e.
func Register(fs *flag.FlagSet, e *Engine, flags ...Flag) {
	for _, f := range flags {
		fs.Var(f.Value(e), f.Name, f.Usage)
	}
}

// Error is a bad engine or cluster flag, or a bad combination of them;
// Flag names the first flag the message is about ("kube_namespace").
type Error struct {
	Flag string
	msg  string
}

func (e *Error) Error() string { return e.msg }

// ErrNotBuilt: --kubeconfig was given to a build without the Kubernetes
// backend; the *NotBuiltError says how to build one with it.
var ErrNotBuilt = errors.New("no Kubernetes backend in this build")

// NotBuiltError is --kubeconfig given to a build without [Tag]. Program
// names the program ("eval", "the server") and Command is the command
// line that builds or runs it with the backend.
type NotBuiltError struct {
	Program, Command string
}

func (e *NotBuiltError) Error() string {
	return fmt.Sprintf("--kubeconfig: this build of %s has no Kubernetes backend; build it with `%s`", e.Program, e.Command)
}

func (e *NotBuiltError) Unwrap() error { return ErrNotBuilt }

// Check checks the flags against each other. set holds the names of the
// flags given on the command line: a --kube_* flag given without
// --kubeconfig is a mistake, whatever its value. Check does not look at
// the build: see [Engine.CheckBuilt].
func (e Engine) Check(set map[string]bool) error {
	if e.Kube() && len(e.DockerHosts) > 0 {
		return &Error{Flag: Kubeconfig.Name, msg: "--kubeconfig and --docker_host choose different engines; give one"}
	}
	for _, f := range KubeFlags()[1:] {
		if set[f.Name] && !e.Kube() {
			return &Error{Flag: f.Name, msg: "--" + f.Name + " applies to Kubernetes, chosen by --kubeconfig"}
		}
	}
	switch {
	case e.KubeNodeGrace < 0:
		return &Error{Flag: KubeNodeGrace.Name, msg: fmt.Sprintf("--kube_node_grace must be 0 or more seconds, got %s", (*SecondsValue)(&e.KubeNodeGrace))}
	case e.KubeNamespace == "":
		return &Error{Flag: KubeNamespace.Name, msg: "--kube_namespace must not be empty"}
	}
	return nil
}

// CheckBuilt refuses --kubeconfig in a build without the Kubernetes
// backend, with a *NotBuiltError carrying program and command.
func (e Engine) CheckBuilt(program, command string) error {
	if e.Kube() && !KubeBuilt {
		return &NotBuiltError{Program: program, Command: command}
	}
	return nil
}

// Options returns the sandbox options that put a client's sandboxes on the
// cluster of Kubeconfig; none for Docker (the caller adds sandbox.WithHost
// per host). A build without the backend returns a *NotBuiltError for a
// Kubeconfig.
func (e Engine) Options() ([]sandbox.Option, error) {
	if !e.Kube() {
		return nil, nil
	}
	o, err := kubeBackend(e)
	if err != nil {
		return nil, err
	}
	return []sandbox.Option{o}, nil
}

// DockerOptions returns the sandbox options the engine flags give every
// client besides its engine: sandbox.WithUnenforcedLimits for
// --unenforced_limits.
func (e Engine) DockerOptions() []sandbox.Option {
	if !e.UnenforcedLimits {
		return nil
	}
	return []sandbox.Option{sandbox.WithUnenforcedLimits(true)}
}

// Flag values.

type stringValue string

func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) String() string     { return string(*v) }

// boolValue is a flag that stands alone (true) or takes the official
// harness's str2bool words: yes/true/t/y/1 and no/false/f/n/0.
type boolValue bool

func (v *boolValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "yes", "true", "t", "y", "1":
		*v = true
	case "no", "false", "f", "n", "0":
		*v = false
	default:
		return fmt.Errorf("want a boolean (yes/no, true/false, 1/0), got %q", s)
	}
	return nil
}
func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) IsBoolFlag() bool { return true }

// hostsValue collects a repeatable flag.
type hostsValue []string

func (v *hostsValue) Set(s string) error {
	if s == "" {
		return errors.New("empty value")
	}
	*v = append(*v, s)
	return nil
}
func (v *hostsValue) String() string {
	if v == nil {
		return ""
	}
	return strings.Join(*v, ",")
}

// SecondsValue is a duration given as seconds ("60", as eval's --timeout
// takes it) or with a unit ("2m", "1h30m"). Its String is "" for zero, so
// that help shows no default for a flag whose zero means "the library's
// default".
type SecondsValue time.Duration

func (d *SecondsValue) String() string {
	if d == nil || *d == 0 {
		return ""
	}
	return time.Duration(*d).String()
}

func (d *SecondsValue) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		if n > float64(math.MaxInt64/int64(time.Second)) || n < 0 {
			return fmt.Errorf("%s seconds is out of range", s)
		}
		*d = SecondsValue(n * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want seconds (60) or a duration (2m, 1h30m), got %q", s)
	}
	*d = SecondsValue(v)
	return nil
}

// Command owner creates sandboxes and then dies, for the test that shows a
// sandbox does not outlive the process that created it:
//
//	owner SESSION IMAGE fatal|wait [KUBECONFIG NAMESPACE]
//
// It creates one sandbox with the exec agent and one without (two pods,
// given a kubeconfig), each with a volume, prints "ready", and then calls log.Fatal (fatal) or
// waits to be killed (wait).
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/sandbox/kube"
)

func main() {
	session, image, how := os.Args[1], os.Args[2], os.Args[3]
	ctx := context.Background()
	for _, agent := range []bool{true, false} {
		opts := []sandbox.Option{sandbox.WithSession(session), sandbox.WithExecAgent(agent)}
		if len(os.Args) == 6 {
			b, err := kube.New(os.Args[4], kube.WithNamespace(os.Args[5]))
			if err != nil {
				log.Fatal(err)
			}
			opts = append(opts, sandbox.WithBackend(b))
		}
		c, err := sandbox.New(opts...)
		if err != nil {
			log.Fatal(err)
		}
		// An anonymous volume, as a prebuilt SWE-bench instance's /testbed.
		sb, err := c.Create(ctx, sandbox.Spec{Image: image, Mounts: []sandbox.Mount{{Type: "volume", Target: "/data"}}})
		if err != nil {
			log.Fatal(err)
		}
		if res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"echo"}}); err != nil || res.ExitCode != 0 {
			log.Fatalf("exec: %v %+v", err, res)
		}
	}
	fmt.Println("ready")
	if how == "fatal" {
		log.Fatal("dying without removing the sandboxes")
	}
	select {}
}

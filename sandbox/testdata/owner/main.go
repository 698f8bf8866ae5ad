// Command owner creates sandboxes and then dies, for the test that shows a
// sandbox does not outlive the process that created it:
//
//	owner SESSION IMAGE fatal|wait
//
// It creates one sandbox with the exec agent and one without, prints
// "ready", and then calls log.Fatal (fatal) or waits to be killed (wait).
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/swebox/swebox/sandbox"
)

func main() {
	session, image, how := os.Args[1], os.Args[2], os.Args[3]
	ctx := context.Background()
	for _, agent := range []bool{true, false} {
		c, err := sandbox.New(sandbox.WithSession(session), sandbox.WithExecAgent(agent))
		if err != nil {
			log.Fatal(err)
		}
		sb, err := c.Create(ctx, sandbox.Spec{Image: image})
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

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/swebox/swebox/sandbox"
)

func ExamplePolicy() {
	p := sandbox.Policy{} // the default allowlist for test runs
	fmt.Println(p.Check([]string{"/usr/bin/pytest", "-x"}))
	err := p.Check([]string{"curl", "http://example.com"})
	fmt.Println(errors.Is(err, sandbox.ErrCommandNotAllowed))
	fmt.Printf("%q\n", p.Shell())
	fmt.Printf("%q\n", sandbox.AllowAll().Shell())
	// Output:
	// <nil>
	// true
	// ""
	// "sh"
}

func ExampleClient_Run() {
	ctx := context.Background()
	c, err := sandbox.New()
	if err != nil {
		panic(err)
	}
	defer c.Close()
	res, err := c.Run(ctx, sandbox.Spec{Image: "swebox/python:bookworm"}, sandbox.ExecRequest{
		Cmd:     []string{"python3", "-c", "print(6 * 7)"},
		Timeout: 30 * time.Second,
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(res.Stdout.String())
}

func ExampleSandbox_Exec() {
	ctx := context.Background()
	c, err := sandbox.New()
	if err != nil {
		panic(err)
	}
	sb, err := c.Create(ctx, sandbox.Spec{Image: "swebox/python:bookworm", Policy: sandbox.AllowAll()})
	if err != nil {
		panic(err)
	}
	defer sb.Close()
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "sleep 60 & echo started"}, Timeout: time.Second})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Stdout.String(), res.TimedOut)
}

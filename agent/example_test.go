package agent_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/swebox/swebox/agent"
	"github.com/swebox/swebox/agent/diagnose"
	"github.com/swebox/swebox/sandbox"
)

func ExampleManager_RunPython() {
	c, err := sandbox.New()
	if err != nil {
		log.Fatal(err)
	}
	m, err := agent.New(c)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	res, err := m.RunPython(context.Background(), "print(sum(range(10)))", agent.RunOptions{Timeout: 10 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Kind, " ", res.Stdout.String())
}

func ExampleManager_Open() {
	m, err := agent.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	s, err := m.Open(ctx, "scratch", agent.SessionOptions{IdleTimeout: 10 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	// The second call sees the first one's file.
	if _, err := s.RunPython(ctx, "open('n.txt', 'w').write('41')", agent.ExecOptions{}); err != nil {
		log.Fatal(err)
	}
	res, err := s.RunPython(ctx, "print(int(open('n.txt').read()) + 1)", agent.ExecOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Stdout.String())
}

func ExampleManager_RunTests() {
	m, err := agent.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	rep, err := m.RunTests(context.Background(), agent.TestRequest{
		Code:     "def add(a, b):\n    return a + b\n",
		Function: "add",
		Cases: []agent.TestCase{
			{Name: "ints", Args: []any{1, 2}, Expected: 3},
			{Name: "type error", Args: []any{1, "x"}, ExpectedError: "TypeError"},
		},
	}, agent.RunOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Cases {
		fmt.Println(c.Name, c.Passed, c.Detail)
	}
	for _, s := range diagnose.TestFeedback(rep) {
		fmt.Println(s)
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/tools"
)

// The overhead of an MCP call through agentls over a direct go-sdk call, on the same
// server over the same transport: compare the median-µs of BenchmarkEchoDirect and
// BenchmarkEchoThroughManager (bench/mcp.sh prints the difference).

// timed runs op b.N times and reports the median duration of one op.
func timed(b *testing.B, op func() error) {
	b.Helper()
	durs := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds())/1e3, "median-µs")
}

// inMemory returns a transport to a fresh in-process kit server.
func inMemory(ctx context.Context) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	if _, err := newKitServer().Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

func benchTransports() map[string]func(context.Context) (sdk.Transport, error) {
	return map[string]func(context.Context) (sdk.Transport, error){
		"inmemory": inMemory,
		"stdio": func(context.Context) (sdk.Transport, error) {
			cmd := exec.Command(os.Args[0])
			cmd.Env = append(os.Environ(), serverModeEnv+"=kit")
			return &sdk.CommandTransport{Command: cmd}, nil
		},
	}
}

func BenchmarkEchoDirect(b *testing.B) {
	for _, name := range []string{"inmemory", "stdio"} {
		b.Run(name, func(b *testing.B) {
			t, err := benchTransports()[name](b.Context())
			if err != nil {
				b.Fatal(err)
			}
			client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
			cs, err := client.Connect(b.Context(), t, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			timed(b, func() error {
				res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"message":"hi"}`)})
				if err == nil && res.IsError {
					err = fmt.Errorf("echo failed")
				}
				return err
			})
		})
	}
}

func BenchmarkEchoThroughManager(b *testing.B) {
	for _, name := range []string{"inmemory", "stdio"} {
		b.Run(name, func(b *testing.B) {
			mk := benchTransports()[name]
			m := NewManager(Options{
				Servers: map[string]ServerConfig{"kit": {Command: "unused", Trust: true}},
				Transport: func(ctx context.Context, _ string, _ ServerConfig) (sdk.Transport, error) {
					return mk(ctx)
				},
			})
			defer m.Close()
			if err := m.Start(b.Context()); err != nil {
				b.Fatal(err)
			}
			var echo tools.Tool
			for _, t := range m.Tools() {
				if t.Info().Name == "kit__echo" {
					echo = t
				}
			}
			if echo == nil {
				b.Fatalf("no echo tool: %+v", m.Statuses())
			}
			args := json.RawMessage(`{"message":"hi"}`)
			timed(b, func() error {
				inv, err := echo.Build(args)
				if err != nil {
					return err
				}
				_, err = inv.Execute(b.Context(), io.Discard)
				return err
			})
		})
	}
}

// BenchmarkParallelStart compares starting eight stdio servers at once with starting
// the slowest of them alone (bench/mcp.sh prints the ratio). The Go servers wait
// 50 ms, 100 ms, … 400 ms before serving, as servers that load something at start do;
// server-everything (when installed) is started eight times, against once.
func BenchmarkParallelStart(b *testing.B) {
	goServer := func(delay time.Duration) ServerConfig {
		return kitConfig("kit-delay", map[string]string{"AGENTLS_MCP_TEST_DELAY": delay.String()})
	}
	eight := map[string]ServerConfig{}
	for i := 1; i <= 8; i++ {
		eight[fmt.Sprintf("s%d", i)] = goServer(time.Duration(i) * 50 * time.Millisecond)
	}
	cases := []struct {
		name    string
		servers func(b *testing.B) map[string]ServerConfig
	}{
		{"go-8", func(*testing.B) map[string]ServerConfig { return eight }},
		{"go-slowest", func(*testing.B) map[string]ServerConfig { return map[string]ServerConfig{"s8": eight["s8"]} }},
		{"everything-8", func(b *testing.B) map[string]ServerConfig {
			cfg := everythingStdio(b)
			out := map[string]ServerConfig{}
			for i := 1; i <= 8; i++ {
				out[fmt.Sprintf("e%d", i)] = cfg
			}
			return out
		}},
		{"everything-1", func(b *testing.B) map[string]ServerConfig {
			return map[string]ServerConfig{"e1": everythingStdio(b)}
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			servers := c.servers(b)
			durs := make([]time.Duration, 0, b.N)
			for b.Loop() {
				m := NewManager(Options{Servers: servers})
				start := time.Now()
				if err := m.Start(b.Context()); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
				b.StopTimer()
				for _, st := range m.Statuses() {
					if st.State != StateConnected {
						b.Fatalf("%s: %s %s", st.Name, st.State, st.Error)
					}
				}
				_ = m.Close()
				b.StartTimer()
			}
			slices.Sort(durs)
			b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1e3, "median-ms")
		})
	}
}

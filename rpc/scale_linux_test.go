package rpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/internal/lsptest"
)

// BenchmarkOpen1000Documents measures the resident memory of the real server over
// pipes with 1,000 documents open, against the reference of their text: an editor
// with many buffers must not cost agentls much more than the text it holds for them.
// Each iteration starts a server, measures VmRSS once initialized and idle, sends 1,000
// didOpens of Go-like documents of 2 to 64 KB (about 33 MB in all), waits for them to
// be handled, and measures VmRSS again. It reports the text, the growth of resident
// memory and their ratio (the target is at most 1.5), and the resident memory in all.
//
//	go test -run='^$' -bench=Open1000Documents -benchtime=1x -count=5 ./rpc
func BenchmarkOpen1000Documents(b *testing.B) {
	if b.N > 10 {
		// A figure of memory, not of time: one server is as good as many, and the
		// editor server's timed benchmarks run with -benchtime=2000x.
		b.Skip("measures memory, not time: run with -benchtime=1x")
	}
	const docs = 1000
	line := frameLineLen(b)
	var text, growth, total int64
	for range b.N {
		b.StopTimer()
		root := workspaceDir(b, map[string]string{"small.go": "package small\n"})
		c := startPlain(b, root)
		ctx := context.Background()
		if _, err := c.Initialize(ctx, initParams(root, capsEditor, nil)); err != nil {
			b.Fatalf("initialize: %v", err)
		}
		pid := serverPID(b, root)
		roundTrip := func(what string) {
			var tools []any
			if err := c.Call(ctx, "agentls/tools", map[string]any{}, &tools); err != nil {
				b.Fatalf("agentls/tools after %s: %v", what, err)
			}
		}
		roundTrip("initialize")
		baseline := vmRSS(b, pid)
		b.StartTimer()
		var sent int64
		for i := range docs {
			size := 2<<10 + (i*7919)%(62<<10) // 2 to 64 KB, spread evenly
			uri := lsptest.FileURI(filepath.Join(root, fmt.Sprintf("pkg%02d", i%50), fmt.Sprintf("file%04d.go", i)))
			if err := c.WriteRaw(didOpenFrame(uri, size)); err != nil {
				b.Fatalf("didOpen %d: %v", i, err)
			}
			sent += int64((size/line + 1) * line) // as didOpenFrame makes it
		}
		roundTrip("the didOpens")
		b.StopTimer()
		rss := vmRSS(b, pid)
		text, growth, total = text+sent, growth+rss-baseline, total+rss
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(text)/n/(1<<20), "text-MB")
	b.ReportMetric(float64(growth)/n/(1<<20), "rss-growth-MB")
	b.ReportMetric(float64(growth)/float64(text), "growth/text")
	b.ReportMetric(float64(total)/n/(1<<20), "rss-MB")
}

// frameLineLen returns the length of the text of one line of a didOpenFrame, decoded.
func frameLineLen(b *testing.B) int {
	frame := didOpenFrame("file:///x.go", 0)
	_, body, _ := bytes.Cut(frame, []byte("\r\n\r\n"))
	var msg struct {
		Params struct {
			TextDocument struct {
				Text string `json:"text"`
			} `json:"textDocument"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil {
		b.Fatal(err)
	}
	return len(msg.Params.TextDocument.Text)
}

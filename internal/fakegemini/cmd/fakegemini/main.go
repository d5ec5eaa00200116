// Command fakegemini serves a script as a fake Gemini API, for scripts and benchmarks
// outside Go tests (point Gemini CLI or agentls at it through GOOGLE_GEMINI_BASE_URL).
//
//	fakegemini -script turns.json [-addr 127.0.0.1:0] [-chunk-delay 0s] [-record DIR] [-requests FILE]
//
// The first line on stdout is the server's base URL; requests are logged on stderr,
// generate calls with the bytes of their system instruction, tools and contents. It
// serves until killed (SIGINT or SIGTERM); with -record, it then writes the body of
// every request it received into DIR, as 001-streamGenerateContent.json and so on.
// With -requests, each request is appended to FILE as it arrives, one JSON object a
// line (the fields of fakegemini.Request, the body as JSON), for tests that look while
// it serves. The script format is documented at clients.Script; the rules for side
// calls at package fakegemini.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

func main() {
	scriptPath := flag.String("script", "", "the script file to serve (required)")
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on")
	delay := flag.Duration("chunk-delay", 0, "pause between streamed chunks (overrides the script's chunkDelayMs)")
	record := flag.String("record", "", "write the body of every request into this directory when stopped")
	requests := flag.String("requests", "", "append each request to this file as it arrives, as a line of JSON")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *scriptPath == "" {
		fmt.Fprintln(os.Stderr, "fakegemini: -script FILE is required")
		flag.Usage()
		os.Exit(2)
	}
	script, err := clients.LoadScript(*scriptPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakegemini:", err)
		os.Exit(1)
	}
	opts := fakegemini.Options{Addr: *addr, ChunkDelay: *delay, Logger: log}
	if *requests != "" {
		f, err := os.OpenFile(*requests, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakegemini:", err)
			os.Exit(1)
		}
		defer f.Close()
		opts.Record = f
	}
	srv, err := fakegemini.New(script, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakegemini:", err)
		os.Exit(1)
	}
	fmt.Println(srv.URL)
	log.Info("fakegemini: serving", "url", srv.URL, "script", *scriptPath, "turns", len(script.Turns))

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	srv.Close()
	if *record != "" {
		if err := writeRequests(*record, srv.Requests()); err != nil {
			fmt.Fprintln(os.Stderr, "fakegemini:", err)
			os.Exit(1)
		}
	}
}

// writeRequests writes the body of each request into dir, numbered from 1 in the order
// received and named by the request's action (or method).
func writeRequests(dir string, reqs []fakegemini.Request) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, r := range reqs {
		name := fmt.Sprintf("%03d-%s.json", i+1, cmp.Or(r.Action, strings.ToLower(r.Method)))
		if err := os.WriteFile(filepath.Join(dir, name), r.Body, 0o644); err != nil {
			return fmt.Errorf("recording the requests: %w", err)
		}
	}
	return nil
}

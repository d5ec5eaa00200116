// Command fakegemini serves a script as a fake Gemini API, for scripts and benchmarks
// outside Go tests (point Gemini CLI or agentls at it through GOOGLE_GEMINI_BASE_URL).
//
//	fakegemini -script turns.json [-addr 127.0.0.1:0] [-chunk-delay 0s] [-record requests.jsonl]
//
// The first line on stdout is the server's base URL; requests are logged on stderr and,
// with -record, appended to the file as they arrive, one JSON object a line (the fields
// of fakegemini.Request; the body as JSON). It serves until killed. The script format is documented at clients.Script; the rules for
// side calls at package fakegemini.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/fakegemini"
)

func main() {
	scriptPath := flag.String("script", "", "the script file to serve (required)")
	addr := flag.String("addr", "127.0.0.1:0", "the address to listen on")
	delay := flag.Duration("chunk-delay", 0, "pause between streamed chunks (overrides the script's chunkDelayMs)")
	record := flag.String("record", "", "a file to append each request to, as a line of JSON")
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
	if *record != "" {
		f, err := os.OpenFile(*record, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
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
}

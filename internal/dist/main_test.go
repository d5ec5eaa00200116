package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRegistryEntry checks registry/agentls/agent.json, the ACP registry entry in the
// repository, against Entry for its version: the fields the registry requires (id,
// name, version, description, distribution), its six platforms, and archives named as
// make dist names them.
func TestRegistryEntry(t *testing.T) {
	path := filepath.Join("..", "..", "registry", "agentls", "agent.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e struct {
		ID, Name, Version, Description string
		Distribution                   struct {
			Binary map[string]struct {
				Archive, Cmd string
				Args         []string
			}
		}
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	want, err := Entry(e.Version, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from what make dist writes for version %s; want:\n%s", path, e.Version, want)
	}
	if e.ID != "agentls" || e.Name == "" || e.Description == "" || len(strings.Split(e.Version, ".")) != 3 {
		t.Errorf("entry %+v lacks a required field", e)
	}
	if len(e.Distribution.Binary) != len(Targets) {
		t.Errorf("%d platforms, want %d", len(e.Distribution.Binary), len(Targets))
	}
	for _, tg := range Targets {
		bin, ok := e.Distribution.Binary[tg.Registry]
		if !ok {
			t.Errorf("no build for %s", tg.Registry)
			continue
		}
		if !strings.HasSuffix(bin.Archive, "/v"+e.Version+"/"+tg.Archive(e.Version)) || strings.Join(bin.Args, " ") != "acp" {
			t.Errorf("%s: %+v", tg.Registry, bin)
		}
	}
}

// TestPackCheck packs each platform's files and reads the archive back; an archive
// that lacks a file the check wants fails it.
func TestPackCheck(t *testing.T) {
	for _, tg := range Targets {
		dir := t.TempDir()
		for _, f := range tg.Files() {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(f), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		path := filepath.Join(t.TempDir(), tg.Archive("1.2.3"))
		if err := pack(tg, dir, path, time.Unix(1e9, 0)); err != nil {
			t.Fatal(err)
		}
		if err := check(tg, path); err != nil {
			t.Errorf("%s: %v", tg.Archive("1.2.3"), err)
		}
		defer func(d []string) { docs = d }(docs)
		docs = append(docs, "LICENSE")
		if err := check(tg, path); err == nil || !strings.Contains(err.Error(), "LICENSE") {
			t.Errorf("%s checked for a LICENSE it lacks: %v", tg.Archive("1.2.3"), err)
		}
		docs = docs[:len(docs)-1]
	}
}

package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/checkpoint"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testutil"
)

// shellScript is a prompt whose one call runs command.
func shellScript(command string) clients.Script {
	args, _ := json.Marshal(map[string]string{"command": command})
	return clients.Script{Turns: []clients.Turn{
		{Calls: []clients.ScriptCall{{ID: "sh", Name: "run_shell_command", Args: args}}},
		{Text: "done"},
	}}
}

// containedHarness is a host harness whose commands run contained (so watched), with
// checkpoints bounded by limits.
func containedHarness(t *testing.T, script clients.Script, limits checkpoint.Limits) *hostHarness {
	t.Helper()
	_, exe := testutil.Landlocked(t)
	return newHostHarness(t, "yolo", script, func(o *HostOptions) {
		o.Toolbox.SandboxHelper = exe
		o.Checkpoints = limits
	})
}

// tree returns every path under root (but .git's insides, given by digest) with its
// kind, mode and content, as one string to compare.
func tree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		b.WriteString(rel + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			b.WriteString(" " + hex.EncodeToString(sum[:8]))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			l, _ := os.Readlink(p)
			b.WriteString(" -> " + l)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestUndoShellTurn: a real command changes files in every way (sed -i, a binary file
// made, folders made, a rename, a mode change, a file removed, a link); the turn lists
// each change with the command that made it; undo gives the workspace back exactly,
// in a Git repository with uncommitted work whose .git stays byte for byte; redo
// brings the command's result back exactly, and undo again takes it back again.
func TestUndoShellTurn(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	command := `sed -i s/a/A/ a.txt; printf 'bin\0ary' > bin.dat; mkdir -p d/e; echo n > d/e/n.txt; mv m.txt moved.txt; chmod +x s.sh; rm r.txt; ln -s a.txt link; echo o > build.log`
	hh := containedHarness(t, shellScript(command), checkpoint.Limits{MaxFile: 1 << 20, MaxBytes: 64 << 20})
	for name, text := range map[string]string{"m.txt": "moved\n", "s.sh": "#!/bin/sh\n", "r.txt": "removed\n", ".gitignore": "*.log\n"} {
		if err := os.WriteFile(filepath.Join(hh.root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun := func(args ...string) ([]byte, error) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = hh.root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		return cmd.CombinedOutput()
	}
	git := func(args ...string) {
		if out, err := gitRun(args...); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "a.txt", "m.txt")
	git("commit", "-qm", "first")
	// In the middle of a merge with a conflict (MERGE_HEAD, a conflicted index), with
	// uncommitted work staged.
	git("checkout", "-qb", "other")
	os.WriteFile(filepath.Join(hh.root, "conflict.txt"), []byte("other\n"), 0o644)
	git("add", "conflict.txt")
	git("commit", "-qm", "other")
	git("checkout", "-q", "main")
	os.WriteFile(filepath.Join(hh.root, "conflict.txt"), []byte("main\n"), 0o644)
	git("add", "conflict.txt")
	git("commit", "-qm", "main")
	if out, err := gitRun("merge", "other"); err == nil {
		t.Fatalf("the merge did not conflict: %s", out)
	}
	if _, err := os.Stat(filepath.Join(hh.root, ".git", "MERGE_HEAD")); err != nil {
		t.Fatal("no merge in progress: ", err)
	}
	git("add", "s.sh") // staged, uncommitted
	before := tree(t, hh.root)

	l, _ := hh.prompt("", "change things")
	after := tree(t, hh.root)
	if after == before {
		t.Fatal("the command changed nothing")
	}
	turn, err := hh.host.Turn(l.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]TurnChange{}
	for _, c := range turn.Changes {
		got[hh.host.Toolbox().Workspace.Rel(c.Path)] = c
		if len(c.By) != 1 || c.By[0] != "run_shell_command: "+command {
			t.Errorf("%s changed by %v, want the command", c.Path, c.By)
		}
	}
	for _, want := range []string{"a.txt", "bin.dat", "d", "d/e", "d/e/n.txt", "m.txt", "moved.txt", "s.sh", "r.txt", "link"} {
		if _, ok := got[want]; !ok {
			t.Errorf("the turn lacks %s; it has %v", want, turn.Changes)
		}
	}
	if _, ok := got["build.log"]; ok || turn.LeftOut != 1 {
		t.Errorf("build.log (ignored) recorded, or left out %d, want 1", turn.LeftOut)
	}
	if c := got["moved.txt"]; hh.host.Toolbox().Workspace.Rel(c.From) != "m.txt" {
		t.Errorf("moved.txt: renamed from %q, want m.txt", c.From)
	}
	diff := hh.host.Diff(turn)
	for _, want := range []string{"-a\n", "+A\n", "renamed from m.txt", "mode 0644 → 0755", "-removed\n", "left out: 1 ignored paths (build.log)"} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff lacks %q:\n%s", want, diff)
		}
	}

	ctx := context.Background()
	res, err := hh.host.UndoTurn(ctx, l.ID(), 0, false)
	if err != nil {
		t.Fatalf("undo: %v (%+v)", err, res)
	}
	// build.log is ignored: left out, and left as the command made it.
	os.Remove(filepath.Join(hh.root, "build.log"))
	if now := tree(t, hh.root); now != before {
		t.Fatalf("after the undo the workspace is\n%s\nwant\n%s", now, before)
	}
	if _, err := hh.host.RedoTurn(ctx, l.ID(), 0, false); err != nil {
		t.Fatalf("redo: %v", err)
	}
	os.WriteFile(filepath.Join(hh.root, "build.log"), []byte("o\n"), 0o644)
	if now := tree(t, hh.root); now != after {
		t.Fatalf("after the redo the workspace is\n%s\nwant\n%s", now, after)
	}
	if _, err := hh.host.UndoTurn(ctx, l.ID(), 0, false); err != nil {
		t.Fatalf("undo of the redo: %v", err)
	}
	os.Remove(filepath.Join(hh.root, "build.log"))
	if now := tree(t, hh.root); now != before {
		t.Fatalf("after the second undo the workspace is\n%s\nwant\n%s", now, before)
	}
	if _, err := hh.host.RedoTurn(ctx, l.ID(), 5, false); err == nil {
		t.Error("redo of a prompt the session does not have: no error")
	}
	if _, err := hh.host.UndoTurn(ctx, "20990101-000000.000-00000000", 0, false); err == nil {
		t.Error("undo of a session that does not exist: no error")
	}
}

// TestUndoShellTurnDamagedStore: a content of the checkpoint store that was damaged
// (or removed) since is said to be not restorable, and the rest is undone.
func TestUndoShellTurnDamagedStore(t *testing.T) {
	t.Parallel()
	hh := containedHarness(t, shellScript(`echo x >> a.txt; echo y >> b.txt`), checkpoint.Limits{MaxFile: 1 << 20, MaxBytes: 1 << 20})
	if err := os.WriteFile(filepath.Join(hh.root, "b.txt"), []byte("b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ := hh.prompt("", "go")
	turn, err := hh.host.Turn(l.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var damaged string
	for _, c := range turn.Changes {
		if filepath.Base(c.Path) == "b.txt" {
			damaged = c.Before.Hash
		}
	}
	if damaged == "" {
		t.Fatalf("b.txt not in the turn: %+v", turn.Changes)
	}
	// The store is beside the sessions' folder.
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(hh.host.o.Store.Dir()), "checkpoints", "*", damaged[:2], damaged))
	if len(matches) != 1 {
		t.Fatalf("the content of b.txt in the store: %v", matches)
	}
	if err := os.WriteFile(matches[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := hh.host.UndoTurn(context.Background(), l.ID(), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotRestorable) != 1 || !strings.Contains(res.NotRestorable[0], "b.txt") || !strings.Contains(res.NotRestorable[0], "damaged") {
		t.Errorf("not restorable %v, want b.txt damaged", res.NotRestorable)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "a.txt")); string(data) != "a\n" {
		t.Errorf("a.txt after the undo: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "b.txt")); string(data) != "b\ny\n" {
		t.Errorf("b.txt after the undo: %q, want it left as the command left it", data)
	}
}

// TestUndoShellTurnLimits: a file over the size limit is said to be not restorable and
// left alone; a file the user changed after the command is left alone, and without
// force nothing is undone; a damaged store content is not restorable either.
func TestUndoShellTurnLimits(t *testing.T) {
	t.Parallel()
	hh := containedHarness(t, shellScript(`echo more >> big.txt; sed -i s/a/A/ a.txt; echo x >> u.txt`), checkpoint.Limits{MaxFile: 100, MaxBytes: 1 << 20})
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(hh.root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("big.txt", strings.Repeat("big\n", 100))
	write("u.txt", "u\n")
	l, _ := hh.prompt("", "go")
	write("u.txt", "the user's\n")
	ctx := context.Background()
	res, err := hh.host.UndoTurn(ctx, l.ID(), 0, false)
	if !errors.Is(err, ErrChangedSince) || len(res.Changed) != 1 {
		t.Fatalf("undo over a user's change: %v %+v, want ErrChangedSince naming u.txt", err, res)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "a.txt")); string(data) != "A\n" {
		t.Errorf("without force a.txt was undone: %q", data)
	}
	res, err = hh.host.UndoTurn(ctx, l.ID(), 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NotRestorable) != 1 || !strings.Contains(res.NotRestorable[0], "big.txt: ") || !strings.Contains(res.NotRestorable[0], "limit") {
		t.Errorf("not restorable: %v, want big.txt over the limit", res.NotRestorable)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "a.txt")); string(data) != "a\n" {
		t.Errorf("with force a.txt holds %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "u.txt")); string(data) != "the user's\n" {
		t.Errorf("the user's u.txt was changed: %q", data)
	}
}

// TestUndoShellTurnLinkOverFile: a command that put a link where a file was (ln -sf) is
// undone by giving the file back, not by writing through the link into the file it
// points to.
func TestUndoShellTurnLinkOverFile(t *testing.T) {
	t.Parallel()
	hh := containedHarness(t, shellScript(`printf 'bin\0' > b.bin && ln -sf a.txt b.bin`), checkpoint.Limits{MaxFile: 1 << 20, MaxBytes: 1 << 20})
	if err := os.WriteFile(filepath.Join(hh.root, "b.bin"), []byte("old\x00bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, _ := hh.prompt("", "go")
	if fi, err := os.Lstat(filepath.Join(hh.root, "b.bin")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("b.bin after the command: %v %v, want a link", fi, err)
	}
	if _, err := hh.host.UndoTurn(context.Background(), l.ID(), 0, false); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(hh.root, "a.txt")); string(data) != "a\n" {
		t.Errorf("a.txt, which the link named, holds %q after the undo", data)
	}
	fi, err := os.Lstat(filepath.Join(hh.root, "b.bin"))
	data, _ := os.ReadFile(filepath.Join(hh.root, "b.bin"))
	if err != nil || !fi.Mode().IsRegular() || string(data) != "old\x00bytes" {
		t.Errorf("b.bin after the undo: %v %v %q, want the file back", fi, err, data)
	}
}

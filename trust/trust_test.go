package trust

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tree returns a resolved temporary folder holding the given subfolders.
func tree(t *testing.T, dirs ...string) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDecide(t *testing.T) {
	t.Setenv(EnvVar, "")
	type set struct {
		dir  string
		kind Kind
	}
	tests := []struct {
		name    string
		entries []set
		dir     string
		want    bool
		source  string // the entry's folder that must decide, relative; "-" for none
	}{
		{name: "no entries", dir: "p/w", want: false, source: "-"},
		{name: "folder", entries: []set{{"p/w", Folder}}, dir: "p/w", want: true, source: "p/w"},
		{name: "folder does not cover a subfolder", entries: []set{{"p", Folder}}, dir: "p/w", want: false, source: "-"},
		{name: "parent covers a subfolder", entries: []set{{"p", Parent}}, dir: "p/w/deep", want: true, source: "p"},
		{name: "parent covers itself", entries: []set{{"p", Parent}}, dir: "p", want: true, source: "p"},
		{name: "parent does not cover a sibling with a common prefix", entries: []set{{"p", Parent}}, dir: "px", want: false, source: "-"},
		{name: "do not trust under a trusted parent wins", entries: []set{{"p", Parent}, {"p/w", DoNotTrust}}, dir: "p/w", want: false, source: "p/w"},
		{name: "do not trust covers its subfolders", entries: []set{{"p", Parent}, {"p/w", DoNotTrust}}, dir: "p/w/deep", want: false, source: "p/w"},
		{name: "a more specific trust beats do not trust", entries: []set{{"p", DoNotTrust}, {"p/w", Folder}}, dir: "p/w", want: true, source: "p/w"},
		{name: "set replaces an entry", entries: []set{{"p/w", DoNotTrust}, {"p/w", Folder}}, dir: "p/w", want: true, source: "p/w"},
		{name: "symlink resolves to the folder", entries: []set{{"p/w", Folder}}, dir: "link", want: true, source: "p/w"},
		{name: "entry made through a symlink", entries: []set{{"link", Folder}}, dir: "p/w", want: true, source: "p/w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tree(t, "p/w/deep", "px")
			if err := os.Symlink(filepath.Join(root, "p/w"), filepath.Join(root, "link")); err != nil {
				t.Fatal(err)
			}
			cfg := t.TempDir()
			s, err := Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.entries {
				if err := s.Set(filepath.Join(root, e.dir), e.kind); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Save(); err != nil {
				t.Fatal(err)
			}
			// Decide on a fresh load, so the file round-trips.
			s, err = Load(cfg)
			if err != nil {
				t.Fatal(err)
			}
			d := s.Decide(filepath.Join(root, tt.dir))
			if d.Trusted != tt.want {
				t.Errorf("trusted = %v, want %v (%+v)", d.Trusted, tt.want, d)
			}
			switch {
			case tt.source == "-" && d.Source != "":
				t.Errorf("source = %q, want none", d.Source)
			case tt.source != "-" && !strings.HasSuffix(d.Source, " "+filepath.Join(root, tt.source)):
				t.Errorf("source = %q, want the entry for %s", d.Source, tt.source)
			}
		})
	}
}

func TestEnv(t *testing.T) {
	root := tree(t, "w")
	cfg := t.TempDir()
	s, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(filepath.Join(root, "w"), DoNotTrust); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		value string
		want  bool
	}{{"", false}, {"0", false}, {"true", false}, {"1", true}} {
		t.Setenv(EnvVar, tt.value)
		s, err := Load(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := s.Decide(filepath.Join(root, "w"))
		if d.Trusted != tt.want {
			t.Errorf("%s=%q: trusted = %v, want %v", EnvVar, tt.value, d.Trusted, tt.want)
		}
		if tt.want && d.Source != EnvVar+"=1" {
			t.Errorf("source = %q, want the environment", d.Source)
		}
	}
}

func TestLoadDamaged(t *testing.T) {
	t.Setenv(EnvVar, "")
	tests := []struct {
		name, content, wantErr string
	}{
		{name: "not JSON", content: `{not json`, wantErr: "damaged"},
		{name: "not an object", content: `["/a"]`, wantErr: "damaged"},
		{name: "relative path", content: `{"src/x": "TRUST_FOLDER"}`, wantErr: "not an absolute path"},
		{name: "unknown kind", content: `{"/a": "TRUST_EVERYTHING"}`, wantErr: "TRUST_EVERYTHING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := t.TempDir()
			if err := os.WriteFile(filepath.Join(cfg, FileName), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Load(cfg)
			if err == nil {
				t.Fatalf("loaded a damaged file: %+v", s.List())
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), FileName) {
				t.Errorf("error %q, want it to name the file and contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestEmptyOrMissingFile(t *testing.T) {
	t.Setenv(EnvVar, "")
	for _, content := range []string{"", " \n", "-"} {
		cfg := t.TempDir()
		if content != "-" {
			if err := os.WriteFile(filepath.Join(cfg, FileName), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Load(cfg)
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if len(s.List()) != 0 || s.Decide(cfg).Trusted {
			t.Errorf("%q: entries %v, want none and nothing trusted", content, s.List())
		}
	}
}

func TestSetRevokeListSave(t *testing.T) {
	t.Setenv(EnvVar, "")
	root := tree(t, "a", "b")
	cfg := filepath.Join(t.TempDir(), "agentls") // not there yet: Save creates it
	s, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(filepath.Join(root, "missing"), Folder); err == nil {
		t.Errorf("trusted a folder that does not exist")
	}
	if err := s.Set(filepath.Join(root, "a"), Kind("TRUST")); err == nil {
		t.Errorf("accepted an unknown kind")
	}
	if err := s.Set(filepath.Join(root, "b"), Parent); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(filepath.Join(root, "a"), Folder); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(cfg, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	s, err = Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{filepath.Join(root, "a"), Folder}, {filepath.Join(root, "b"), Parent}}
	if got := s.List(); !slices.Equal(got, want) {
		t.Errorf("list %v, want %v", got, want)
	}
	if ok, err := s.Revoke(filepath.Join(root, "a")); err != nil || !ok {
		t.Errorf("revoke = %v, %v; want it to remove the entry", ok, err)
	}
	if ok, err := s.Revoke(filepath.Join(root, "a")); err != nil || ok {
		t.Errorf("second revoke = %v, %v; want no entry", ok, err)
	}
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	s, err = Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.List(); !slices.Equal(got, want[1:]) {
		t.Errorf("after revoke: list %v, want %v", got, want[1:])
	}
	if s.Decide(filepath.Join(root, "a")).Trusted {
		t.Errorf("a revoked folder is still trusted")
	}
}

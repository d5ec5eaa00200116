package settings_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/settings"
)

func TestKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "agentls")
	if k, err := settings.LoadKeys(dir); err != nil || k != (settings.StoredKeys{}) {
		t.Fatalf("LoadKeys of nothing = %+v, %v", k, err)
	}
	if err := settings.SaveKey(dir, "gemini", " g-key\n"); err != nil {
		t.Fatal(err)
	}
	if err := settings.SaveKey(dir, "openai", "o-key"); err != nil {
		t.Fatal(err)
	}
	k, err := settings.LoadKeys(dir)
	if err != nil || k.For("") != "g-key" || k.For("gemini") != "g-key" || k.For("openai") != "o-key" || k.For("scripted") != "" {
		t.Errorf("LoadKeys = %+v, %v", k, err)
	}
	path := filepath.Join(dir, settings.KeysFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the keys file alone", len(entries))
	}

	for _, tt := range []struct{ provider, key, want string }{
		{"gemini", "  ", "empty"},
		{"gemini", "two words", "spaces"},
		{"scripted", "k", "takes no stored key"},
	} {
		if err := settings.SaveKey(dir, tt.provider, tt.key); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SaveKey(%q, %q) = %v, want an error saying %q", tt.provider, tt.key, err, tt.want)
		}
	}

	if runtime.GOOS != "windows" {
		if err := os.Chmod(path, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := settings.LoadKeys(dir); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Errorf("LoadKeys of a file others may read = %v, want a refusal", err)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	if had, err := settings.RemoveKeys(dir); !had || err != nil {
		t.Errorf("RemoveKeys = %v, %v", had, err)
	}
	if had, err := settings.RemoveKeys(dir); had || err != nil {
		t.Errorf("RemoveKeys again = %v, %v", had, err)
	}
}

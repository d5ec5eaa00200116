// Package trust keeps the user's decisions about which folders agentls trusts.
//
// A workspace's settings files come from the repository being worked on, which may be
// hostile: only in a folder the user trusts may they loosen consent (and, later, start
// servers and run commands). The decisions are stored outside every workspace, in
// trusted-folders.json in agentls's configuration directory, so that no repository can
// trust itself. The kinds of entry use Gemini CLI's names.
//
// For CI and tests, AGENTLS_TRUST_WORKSPACE=1 in the environment trusts every workspace
// the process works in, whatever the file says.
package trust

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentls/agentls/workspace"
)

// FileName is the name of the trust file in the configuration directory.
const FileName = "trusted-folders.json"

// EnvVar is the environment variable that, set to 1, trusts the workspace of the
// process. It is meant for CI and tests, where nobody is there to run agentls trust.
const EnvVar = "AGENTLS_TRUST_WORKSPACE"

// Kind is the kind of a trust entry.
type Kind string

// The kinds of entry.
const (
	// Folder trusts exactly the folder of the entry.
	Folder Kind = "TRUST_FOLDER"
	// Parent trusts the folder of the entry and every folder under it.
	Parent Kind = "TRUST_PARENT"
	// DoNotTrust distrusts the folder of the entry and every folder under it, even
	// under a folder trusted by a Parent entry, unless a more specific entry trusts it.
	DoNotTrust Kind = "DO_NOT_TRUST"
)

func (k Kind) valid() bool { return k == Folder || k == Parent || k == DoNotTrust }

// covers reports whether an entry of kind k for path applies to dir.
func (k Kind) covers(path, dir string) bool {
	if dir == path {
		return true
	}
	if k == Folder {
		return false
	}
	rel, err := filepath.Rel(path, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Entry is one decision of the user.
type Entry struct {
	// Path is the folder, absolute with symbolic links resolved.
	Path string
	Kind Kind
}

// Decision says whether a folder is trusted and why.
type Decision struct {
	Trusted bool
	// Source names what decided: the entry ("TRUST_PARENT /home/me/src"), the
	// environment ("AGENTLS_TRUST_WORKSPACE=1"), or "" when no entry applies.
	Source string
}

// Store is the set of trust entries in one configuration directory. It is not safe for
// concurrent use.
type Store struct {
	file    string
	entries map[string]Kind
	env     bool
}

// Load reads the trust file in configDir (agentls's configuration directory; a missing
// file means no entries) and notes whether EnvVar trusts the workspace. A file that
// cannot be parsed, or holds a relative path or an unknown kind, is an error naming it:
// a damaged file never trusts anything.
func Load(configDir string) (*Store, error) {
	s := &Store{
		file:    filepath.Join(configDir, FileName),
		entries: map[string]Kind{},
		env:     os.Getenv(EnvVar) == "1",
	}
	data, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the trusted folders: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return s, nil
	}
	var raw map[string]Kind
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("trusted folders file %s is damaged (%v); no folder is trusted until it is fixed or removed", s.file, err)
	}
	for p, k := range raw {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("trusted folders file %s is damaged: %q is not an absolute path; no folder is trusted until it is fixed or removed", s.file, p)
		}
		if !k.valid() {
			return nil, fmt.Errorf("trusted folders file %s is damaged: %q for %s is not TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST; no folder is trusted until it is fixed or removed", s.file, k, p)
		}
		s.entries[filepath.Clean(p)] = k
	}
	return s, nil
}

// File returns the path of the trust file.
func (s *Store) File() string { return s.file }

// Decide says whether dir is trusted: EnvVar trusts it; otherwise the most specific
// (longest) entry that covers it decides, and with none it is not trusted. dir is
// resolved like the stored paths, so a symbolic link to a folder gets the folder's
// decision.
func (s *Store) Decide(dir string) Decision {
	if s.env {
		return Decision{Trusted: true, Source: EnvVar + "=1"}
	}
	p, err := resolve(dir)
	if err != nil {
		return Decision{}
	}
	best := ""
	for path, k := range s.entries {
		if len(path) > len(best) && k.covers(path, p) {
			best = path
		}
	}
	if best == "" {
		return Decision{}
	}
	k := s.entries[best]
	return Decision{Trusted: k != DoNotTrust, Source: string(k) + " " + best}
}

// Set records kind for dir, which must be an existing folder, replacing any entry for
// it. Call Save to keep it.
func (s *Store) Set(dir string, kind Kind) error {
	if !kind.valid() {
		return fmt.Errorf("unknown kind of trust %q", kind)
	}
	p, err := resolve(dir)
	if err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("trusting %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("trusting %s: not a folder", dir)
	}
	s.entries[p] = kind
	return nil
}

// Revoke removes the entry for dir, reporting whether there was one. Entries for other
// folders, such as a parent's, still apply to dir. Call Save to keep it.
func (s *Store) Revoke(dir string) (bool, error) {
	p, err := resolve(dir)
	if err != nil {
		return false, err
	}
	if _, ok := s.entries[p]; !ok {
		return false, nil
	}
	delete(s.entries, p)
	return true, nil
}

// List returns the entries sorted by path.
func (s *Store) List() []Entry {
	out := make([]Entry, 0, len(s.entries))
	for p, k := range s.entries {
		out = append(out, Entry{Path: p, Kind: k})
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Save writes the entries to the trust file atomically, readable by the user only.
func (s *Store) Save() error {
	data, err := json.MarshalIndent(s.entries, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the trusted folders: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.file), 0o700); err != nil {
		return fmt.Errorf("saving the trusted folders: %w", err)
	}
	if err := workspace.WriteFileAtomic(s.file, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving the trusted folders: %w", err)
	}
	// WriteFileAtomic keeps the mode of an existing file; the trust file must stay private.
	if err := os.Chmod(s.file, 0o600); err != nil {
		return fmt.Errorf("saving the trusted folders: %w", err)
	}
	return nil
}

// resolve returns dir absolute, cleaned, with symbolic links resolved where it exists
// (a folder that no longer exists can still be revoked by its path).
func resolve(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case err == nil:
		return real, nil
	case errors.Is(err, fs.ErrNotExist):
		return abs, nil
	default:
		return "", fmt.Errorf("resolving %s: %w", dir, err)
	}
}

package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentls/agentls/confirm"
)

// Saved approvals: an "always, and save" answer (confirm.Answer.Persist) adds the rule
// it stands for to the policy.rules of the user's settings file or a trusted
// workspace's; `agentls rules` lists and removes them. The files are JSON without
// comments (readFile does not allow any), so editing one keeps every other key, in its
// order, and its values as written; only the layout is made uniform.

// UserFile returns the user's settings file in configDir.
func UserFile(configDir string) string { return filepath.Join(configDir, "settings.json") }

// WorkspaceFile returns the settings file of the workspace root that saved approvals
// go to: agentls's own, the last of WorkspaceFiles.
func WorkspaceFile(root string) string {
	files := WorkspaceFiles()
	return filepath.Join(root, filepath.FromSlash(files[len(files)-1]))
}

// FileRules returns the policy rules of the settings file at path; none when it does
// not exist.
func FileRules(path string) ([]confirm.Rule, error) {
	s, _, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return s.Policy.Rules, nil
}

// AddRule appends r to the policy rules of the settings file at path, creating the
// file (and its folder) if need be. The rest of the file is kept; a file that cannot
// be parsed, or a rule the policy would not load, is an error and nothing is written.
// The file is replaced atomically.
func AddRule(path string, r confirm.Rule) error {
	r.Source = confirm.SourceUser
	if _, err := confirm.NewPolicy(confirm.ModeDefault, []confirm.Rule{r}, nil); err != nil {
		return err
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return editRules(path, true, func(rules []json.RawMessage) ([]json.RawMessage, error) {
		return append(rules, raw), nil
	})
}

// RemoveRule removes the rule at index i (0-based) of the policy rules of the settings
// file at path, and returns it. The rest of the file is kept.
func RemoveRule(path string, i int) (confirm.Rule, error) {
	var removed confirm.Rule
	err := editRules(path, false, func(rules []json.RawMessage) ([]json.RawMessage, error) {
		if i < 0 || i >= len(rules) {
			return nil, fmt.Errorf("%s has %d policy rules: there is no rule %d", path, len(rules), i+1)
		}
		if err := json.Unmarshal(rules[i], &removed); err != nil {
			return nil, fmt.Errorf("%s: policy rule %d: %w", path, i+1, err)
		}
		return slices.Delete(rules, i, i+1), nil
	})
	return removed, err
}

// SavedRule is a policy rule as written in one settings file.
type SavedRule struct {
	// Source is whose file it is: the user's or the workspace's.
	Source confirm.Source
	// File is the settings file, and Index the rule's 0-based position in its
	// policy.rules.
	File  string
	Index int
	Rule  confirm.Rule
}

// SavedRules returns the policy rules of the user's settings file in configDir and of
// the settings files of the workspace root (none when root is empty), in that order.
func SavedRules(configDir, root string) ([]SavedRule, error) {
	var out []SavedRule
	add := func(src confirm.Source, file string) error {
		rules, err := FileRules(file)
		if err != nil {
			return err
		}
		for i, r := range rules {
			r.Source = src
			out = append(out, SavedRule{Source: src, File: file, Index: i, Rule: r})
		}
		return nil
	}
	if err := add(confirm.SourceUser, UserFile(configDir)); err != nil {
		return nil, err
	}
	if root != "" {
		for _, name := range WorkspaceFiles() {
			if err := add(confirm.SourceWorkspace, filepath.Join(root, filepath.FromSlash(name))); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// errNoFile is editRules's error for a file it may not create.
var errNoFile = errors.New("the settings file does not exist")

// editRules rewrites the policy.rules of the settings file at path with edit, keeping
// the rest of the file; create says whether a missing file is made.
func editRules(path string, create bool, edit func([]json.RawMessage) ([]json.RawMessage, error)) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A settings file kept elsewhere (a dotfiles repository) and linked here is
		// edited where it is: renaming over the link would replace it with a copy.
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return fmt.Errorf("settings file %s: %w", path, err)
		}
		path = target
	}
	data, err := os.ReadFile(path)
	mode := fs.FileMode(0o600)
	switch {
	case errors.Is(err, fs.ErrNotExist) && create:
		data = nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", path, errNoFile)
	case err != nil:
		return fmt.Errorf("reading settings: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	top, err := members(data)
	if err != nil {
		return fmt.Errorf("settings file %s: %w", path, err)
	}
	policy, err := members(top.get("policy"))
	if err != nil {
		return fmt.Errorf("settings file %s: policy: %w", path, err)
	}
	var rules []json.RawMessage
	if raw := policy.get("rules"); raw != nil {
		if err := json.Unmarshal(raw, &rules); err != nil {
			return fmt.Errorf("settings file %s: policy.rules: %w", path, err)
		}
	}
	if rules, err = edit(rules); err != nil {
		return err
	}
	if rules == nil {
		rules = []json.RawMessage{}
	}
	list, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	policy = policy.set("rules", list)
	top = top.set("policy", policy.encode())
	var out bytes.Buffer
	if err := json.Indent(&out, top.encode(), "", "  "); err != nil {
		return fmt.Errorf("settings file %s: %w", path, err)
	}
	out.WriteByte('\n')
	// What is written must load as settings, as the file did.
	var check Settings
	if err := json.Unmarshal(out.Bytes(), &check); err != nil {
		return fmt.Errorf("settings file %s would not load after the change: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the settings folder: %w", err)
	}
	return writeAtomic(path, out.Bytes(), mode)
}

// object is a JSON object's members in the order written.
type object []member

type member struct {
	key   string
	value json.RawMessage
}

// members parses a JSON object; empty or blank data is an empty object.
func members(data []byte) (object, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var o object
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o = append(o, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return o, nil
}

// get returns the value of the last member named key (the one json.Unmarshal reads),
// or nil.
func (o object) get(key string) json.RawMessage {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value
		}
	}
	return nil
}

// set replaces the value of the last member named key, or adds one at the end.
func (o object) set(key string, v json.RawMessage) object {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			o[i].value = v
			return o
		}
	}
	return append(o, member{key, v})
}

// encode writes the object compactly.
func (o object) encode() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// writeAtomic replaces the file at path with data: written to a temporary file in the
// same folder, synced and renamed over it, so that a reader sees the old file or the
// new one, never a part.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing settings: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing to remove
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("writing settings %s: %w", path, err)
	}
	return nil
}

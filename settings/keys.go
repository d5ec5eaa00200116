package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// KeysFile is the file, in the user's configuration directory (ConfigDir), that holds
// the API keys `agentls login` (or ACP's authenticate) stored. It is written with
// permissions 0600, and read only when no one else may read it.
const KeysFile = "keys.json"

// Providers whose keys can be stored: the values of ProviderSettings.Type that take
// a key.
const (
	ProviderGemini = "gemini"
	ProviderOpenAI = "openai"
)

// StoredKeys are the API keys stored in KeysFile, by provider. They are secrets: never
// logged.
type StoredKeys struct {
	Gemini string `json:"gemini,omitempty"`
	OpenAI string `json:"openai,omitempty"`
}

// For returns the stored key of provider ("" or "gemini" for Gemini, "openai"), or "".
func (k StoredKeys) For(provider string) string {
	switch provider {
	case "", ProviderGemini:
		return k.Gemini
	case ProviderOpenAI:
		return k.OpenAI
	}
	return ""
}

// LoadKeys reads the keys stored in dir's KeysFile; a missing file means none. A file
// that others may read or write is refused, as ssh refuses such a private key.
func LoadKeys(dir string) (StoredKeys, error) {
	var k StoredKeys
	path := filepath.Join(dir, KeysFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return k, nil
	}
	if err != nil {
		return k, fmt.Errorf("reading the stored API keys: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return k, fmt.Errorf("reading the stored API keys: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return k, fmt.Errorf("%s may be read by other users (mode %v): run `chmod 600 %s`, or `agentls logout` and log in again", path, fi.Mode().Perm(), path)
	}
	if err := json.NewDecoder(f).Decode(&k); err != nil {
		return StoredKeys{}, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// SaveKey stores key as provider's in dir's KeysFile, keeping the other provider's,
// with permissions 0600 (dir is made 0700 if missing). The file is replaced whole, so
// that a reader never sees half of it.
func SaveKey(dir, provider, key string) error {
	key = strings.TrimSpace(key)
	if key == "" {
		return errors.New("the API key is empty")
	}
	if strings.ContainsAny(key, " \t\r\n") {
		return errors.New("the API key has spaces or line breaks in it")
	}
	k, err := LoadKeys(dir)
	if err != nil {
		return err
	}
	switch provider {
	case "", ProviderGemini:
		k.Gemini = key
	case ProviderOpenAI:
		k.OpenAI = key
	default:
		return fmt.Errorf("provider %q takes no stored key: want %s or %s", provider, ProviderGemini, ProviderOpenAI)
	}
	b, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("storing the API key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".keys-*.json")
	if err != nil {
		return fmt.Errorf("storing the API key: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; Chmod says so for the umask-less systems too.
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("storing the API key: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("storing the API key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("storing the API key: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, KeysFile)); err != nil {
		return fmt.Errorf("storing the API key: %w", err)
	}
	return nil
}

// RemoveKeys deletes dir's KeysFile; it reports whether there was one.
func RemoveKeys(dir string) (bool, error) {
	err := os.Remove(filepath.Join(dir, KeysFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("removing the stored API keys: %w", err)
	}
	return true, nil
}

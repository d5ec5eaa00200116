// Package checkpoint records what the commands agentls runs change in the workspace, so
// that a turn's shell commands can be reviewed and taken back like its edits.
//
// A command is watched (sandbox.Watch): before each of its system calls changes a path
// in the workspace, its Command copies what the path holds into the workspace's Store,
// once per command; when the command ends, Finish compares each such path with what it
// holds then. Nothing is copied up front and nothing is walked, so a checkpoint costs
// what the command changed, whatever the size of the workspace. Ignored paths (.git,
// node_modules, what .gitignore and .geminiignore name) are left out and counted.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Limits bound a Store.
type Limits struct {
	// MaxFile is the largest file whose content is kept; a larger one is recorded as
	// not restorable.
	MaxFile int64
	// MaxBytes bounds the store of one workspace: past it, the contents least
	// recently stored or used are removed first.
	MaxBytes int64
}

// DefaultLimits are what a Store holds unless settings say otherwise.
func DefaultLimits() Limits { return Limits{MaxFile: 16 << 20, MaxBytes: 1 << 30} }

// Store holds file contents by their SHA-256, one file each, for one workspace. It is
// safe for concurrent use, by several processes too: contents are written to a
// temporary file and renamed into place.
type Store struct {
	dir    string
	limits Limits

	mu    sync.Mutex
	bytes int64 // the store's size, -1 until measured
}

// OpenStore returns the store in dir, created on first use.
func OpenStore(dir string, limits Limits) *Store {
	return &Store{dir: dir, limits: limits, bytes: -1}
}

// StoreDir returns the folder of the store of the workspace whose first root is root,
// under the folder of agentls's state (state, e.g. ~/.local/state/agentls).
func StoreDir(state, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(state, "checkpoints", hex.EncodeToString(sum[:8]))
}

// ErrLost is the error of a content the store does not have: never kept (over the size
// limit) or removed since (the store's bound).
var ErrLost = errors.New("not restorable")

func (s *Store) path(hash string) string { return filepath.Join(s.dir, hash[:2], hash) }

// Read returns the content of hash.
func (s *Store) Read(hash string) ([]byte, error) {
	if len(hash) != 64 {
		return nil, fmt.Errorf("%q is not a content's hash: %w", hash, ErrLost)
	}
	b, err := os.ReadFile(s.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the content %s… was removed from the checkpoint store to keep it under its bound: %w", hash[:12], ErrLost)
	}
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("the content %s… in the checkpoint store is damaged: %w", hash[:12], ErrLost)
	}
	now := time.Now()
	os.Chtimes(s.path(hash), now, now) // used: pruned last
	return b, nil
}

// keep stores the content of the regular file path (of size size) and returns its
// hash, or "" and why it was not kept.
func (s *Store) keep(path string, size int64) (hash, lost string, err error) {
	if size > s.limits.MaxFile {
		return "", fmt.Sprintf("%d bytes, over the %d-byte limit of a checkpoint", size, s.limits.MaxFile), nil
	}
	b, err := readFile(path, s.limits.MaxFile)
	if err != nil {
		return "", "", err
	}
	if int64(len(b)) > s.limits.MaxFile {
		return "", fmt.Sprintf("over the %d-byte limit of a checkpoint", s.limits.MaxFile), nil
	}
	return s.Put(b)
}

// Put stores b and returns its hash.
func (s *Store) Put(b []byte) (hash, lost string, err error) {
	sum := sha256.Sum256(b)
	hash = hex.EncodeToString(sum[:])
	dst := s.path(hash)
	now := time.Now()
	if os.Chtimes(dst, now, now) == nil {
		return hash, "", nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", "", fmt.Errorf("checkpoint store: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return "", "", fmt.Errorf("checkpoint store: %w", err)
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), dst)
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", "", fmt.Errorf("checkpoint store: %w", werr)
	}
	s.mu.Lock()
	if s.bytes >= 0 {
		s.bytes += int64(len(b))
	}
	s.mu.Unlock()
	return hash, "", nil
}

// Prune removes the contents least recently stored or used until the store is within
// its bound.
func (s *Store) Prune() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bytes >= 0 && s.bytes <= s.limits.MaxBytes {
		return nil
	}
	blobs, err := s.blobs()
	if err != nil {
		return err
	}
	var total int64
	for _, b := range blobs {
		total += b.size
	}
	slices.SortFunc(blobs, func(a, b blob) int { return a.used.Compare(b.used) })
	for _, b := range blobs {
		if total <= s.limits.MaxBytes {
			break
		}
		if os.Remove(b.path) == nil {
			total -= b.size
		}
	}
	s.bytes = total
	return nil
}

// Size returns the bytes the store holds.
func (s *Store) Size() (int64, error) {
	blobs, err := s.blobs()
	var total int64
	for _, b := range blobs {
		total += b.size
	}
	return total, err
}

// blob is a content of the store, with when it was last stored or used.
type blob struct {
	path string
	size int64
	used time.Time
}

// blobs lists the store's contents.
func (s *Store) blobs() ([]blob, error) {
	var out []blob
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			out = append(out, blob{p, fi.Size(), fi.ModTime()})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return out, nil
}

// readFile reads at most max+1 bytes of the regular file path, not following a link.
func readFile(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max+1))
}

// hashFile returns the SHA-256 of the regular file path.
func hashFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscallNoFollow|syscallNonBlock, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashText returns the hash Put gives text.
func HashText(text []byte) string {
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:])
}

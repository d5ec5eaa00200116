// Command dist builds agentls's release archives (make dist): agentls and
// agentls-sandbox cross-compiled for linux, darwin and windows on amd64 and arm64, each
// pair with README.md in a .tar.gz (a .zip for windows) named
// agentls-VERSION-OS-ARCH, SHA256SUMS over the archives, and agent.json, the ACP
// registry's entry for the release (FORMAT.md of agentclientprotocol/registry), in the
// output directory. It then reads every archive back and checks that it holds exactly
// those files, and runs the archive's agentls for this machine's platform (`agentls
// version`).
//
//	go run ./internal/dist [-out dist] [-version V] [-download URL]
//	go run ./internal/dist -entry -version V   (prints the registry entry alone)
//
// The archives' download URL defaults to the GitHub release of the version
// (https://github.com/agentls/agentls/releases/download/vVERSION, from the module path).
// registry/agentls/agent.json in the repository is the entry of the release it names
// (TestRegistryEntry keeps it in step with Entry).
//
// The version defaults to `git describe --tags --always --dirty`. The builds are
// static (CGO_ENABLED=0), trimmed of local paths and symbols, and the archives'
// entries carry the time of the commit, so that one commit gives the same archives.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Target is a platform a release is built for. Registry is its name in the ACP
// registry's binary distribution (FORMAT.md of agentclientprotocol/registry).
type Target struct {
	OS, Arch, Registry string
}

// Targets are the platforms of a release.
var Targets = []Target{
	{"linux", "amd64", "linux-x86_64"},
	{"linux", "arm64", "linux-aarch64"},
	{"darwin", "amd64", "darwin-x86_64"},
	{"darwin", "arm64", "darwin-aarch64"},
	{"windows", "amd64", "windows-x86_64"},
	{"windows", "arm64", "windows-aarch64"},
}

// commands are the binaries of an archive, built from ./cmd/NAME.
var commands = []string{"agentls", "agentls-sandbox"}

// docs are the files of the repository an archive carries beside the binaries.
var docs = []string{"README.md"}

// Archive returns the file name of the archive of version for t.
func (t Target) Archive(version string) string {
	ext := ".tar.gz"
	if t.OS == "windows" {
		ext = ".zip"
	}
	return fmt.Sprintf("agentls-%s-%s-%s%s", version, t.OS, t.Arch, ext)
}

// Files returns the names of the files an archive for t holds, sorted.
func (t Target) Files() []string {
	var out []string
	for _, c := range commands {
		if t.OS == "windows" {
			c += ".exe"
		}
		out = append(out, c)
	}
	out = append(out, docs...)
	slices.Sort(out)
	return out
}

func main() {
	out := flag.String("out", "dist", "the directory to write the archives and SHA256SUMS to")
	version := flag.String("version", "", "the release's version (default: git describe --tags --always --dirty)")
	download := flag.String("download", "", "the URL the archives are downloaded from (default: the version's GitHub release)")
	entryOnly := flag.Bool("entry", false, "print the registry entry of -version and build nothing (to update registry/agentls/agent.json)")
	flag.Parse()
	if *entryOnly {
		b, err := Entry(strings.TrimPrefix(*version, "v"), *download)
		if err != nil || *version == "" {
			fmt.Fprintln(os.Stderr, "dist: -entry needs -version", err)
			os.Exit(2)
		}
		os.Stdout.Write(b)
		return
	}
	if err := run(*out, *version, *download); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

func run(out, version, download string) error {
	if version == "" {
		v, err := git("describe", "--tags", "--always", "--dirty")
		if err != nil {
			return fmt.Errorf("finding the version (give -version): %w", err)
		}
		version = v
	}
	version = strings.TrimPrefix(version, "v")
	if strings.ContainsAny(version, "/\\ ") {
		return fmt.Errorf("version %q: want no slashes or spaces", version)
	}
	mtime := time.Unix(0, 0).UTC()
	if s, err := git("log", "-1", "--format=%ct"); err == nil {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			mtime = time.Unix(n, 0).UTC()
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "agentls-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var sums strings.Builder
	for _, t := range Targets {
		dir := filepath.Join(work, t.OS+"-"+t.Arch)
		if err := build(t, dir, version); err != nil {
			return err
		}
		for _, d := range docs {
			if err := copyFile(d, filepath.Join(dir, d)); err != nil {
				return err
			}
		}
		name := t.Archive(version)
		path := filepath.Join(out, name)
		if err := pack(t, dir, path, mtime); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		sum, err := sha256File(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, name)
		if err := check(t, path); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		fmt.Printf("%s  %s\n", name, strings.Join(t.Files(), " "))
		if t.OS == runtime.GOOS && t.Arch == runtime.GOARCH {
			v, err := exec.Command(filepath.Join(dir, "agentls"), "version").Output()
			if err != nil {
				return fmt.Errorf("running the built agentls: %w", err)
			}
			if got := strings.TrimSpace(string(v)); got != "agentls "+version {
				return fmt.Errorf("the built agentls reports %q, want agentls %s", got, version)
			}
			fmt.Printf("  %s", v)
		}
	}
	if err := os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return err
	}
	fmt.Printf("%s\n", filepath.Join(out, "SHA256SUMS"))
	entry, err := Entry(version, download)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "agent.json"), entry, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s\n", filepath.Join(out, "agent.json"))
	return nil
}

// repository is agentls's repository, from its module path.
const repository = "https://github.com/agentls/agentls"

// Entry returns the ACP registry's entry (agent.json) of the release version, whose
// archives are downloaded from download (default: the version's GitHub release). It
// has the fields FORMAT.md documents and agentls can fill: id, name, version,
// description, repository and distribution.binary for the six platforms, each running
// `agentls acp`. (authors, license, website and icon are left out: the repository names
// no license or authors, and has no icon.)
func Entry(version, download string) ([]byte, error) {
	if download == "" {
		download = repository + "/releases/download/v" + version
	}
	type target struct {
		Archive string   `json:"archive"`
		Cmd     string   `json:"cmd"`
		Args    []string `json:"args"`
	}
	binary := map[string]target{}
	for _, t := range Targets {
		cmd := "./agentls"
		if t.OS == "windows" {
			cmd += ".exe"
		}
		binary[t.Registry] = target{Archive: strings.TrimSuffix(download, "/") + "/" + t.Archive(version), Cmd: cmd, Args: []string{"acp"}}
	}
	entry := struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		Version      string `json:"version"`
		Description  string `json:"description"`
		Repository   string `json:"repository"`
		Distribution struct {
			Binary map[string]target `json:"binary"`
		} `json:"distribution"`
	}{ID: "agentls", Name: "agentls", Version: version, Repository: repository,
		Description: "The tool system of an AI coding agent (Gemini or an OpenAI-compatible model): Gemini CLI's tools, confined to the workspace, with consent for edits and shell commands"}
	entry.Distribution.Binary = binary
	b, err := json.MarshalIndent(entry, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// git runs git with args in the current directory and returns its output, trimmed.
func git(args ...string) (string, error) {
	b, err := exec.Command("git", args...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// build cross-compiles the commands for t into dir, agentls reporting version.
func build(t Target, dir, version string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	args := []string{"build", "-trimpath", "-ldflags=-s -w -X main.releaseVersion=" + version, "-o", dir + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, "./cmd/"+c)
	}
	cmd := exec.Command(goTool(), args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+t.OS, "GOARCH="+t.Arch)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building for %s/%s: %w\n%s", t.OS, t.Arch, err, stderr.String())
	}
	return nil
}

// goTool is the go command: $GO, else go.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// pack writes the files of t from dir to the archive path, each entry with mtime;
// the binaries are executable.
func pack(t Target, dir, path string, mtime time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if t.OS == "windows" {
		zw := zip.NewWriter(f)
		for _, name := range t.Files() {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return err
			}
			h := &zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mtime}
			h.SetMode(mode(name))
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		if err := zw.Close(); err != nil {
			return err
		}
		return f.Close()
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, name := range t.Files() {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		h := &tar.Header{Name: name, Mode: int64(mode(name)), Size: int64(len(b)), ModTime: mtime, Format: tar.FormatPAX,
			Uname: "root", Gname: "root"}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

// mode is the permissions of an archive's file.
func mode(name string) os.FileMode {
	if slices.Contains(docs, name) {
		return 0o644
	}
	return 0o755
}

// check reads the archive path back and compares its files with t's.
func check(t Target, path string) error {
	var got []string
	if t.OS == "windows" {
		zr, err := zip.OpenReader(path)
		if err != nil {
			return err
		}
		defer zr.Close()
		for _, f := range zr.File {
			got = append(got, f.Name)
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		gz, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return err
			}
			if h.FileInfo().Mode().Perm() != mode(h.Name) {
				return fmt.Errorf("%s has mode %v, want %v", h.Name, h.FileInfo().Mode().Perm(), mode(h.Name))
			}
			got = append(got, h.Name)
		}
	}
	slices.Sort(got)
	if want := t.Files(); !slices.Equal(got, want) {
		return fmt.Errorf("the archive holds %q, want %q", got, want)
	}
	return nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
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

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

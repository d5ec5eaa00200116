// Package docs holds no code: its test checks that design.md's layer table is true to
// the imports of the module's packages.
package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A layer is one row of the table under "## Layers" in design.md.
type layer struct {
	folder     string   // the folder, relative to the module root: cmd/agentls, tools, editors/nvim
	everything bool     // "everything": it may import any package of the module
	protocol   bool     // "the protocol only": a client, not Go; the folder holds no package
	imports    []string // what its packages may import: "x" (that package) or "x/..." (and below)
	line       int      // its line in design.md, for the messages
}

var (
	backquoted    = regexp.MustCompile("`([^`]+)`")
	parenthesized = regexp.MustCompile(`\([^()]*\)`)
	// The exception to the table: a leaf package any layer may import.
	exception = regexp.MustCompile("(?m)^Exception: `([^`]+)` is a leaf package")
)

// parseLayers reads the layer table of design.md, and the leaf packages its
// "Exception:" paragraphs let every layer import.
func parseLayers(doc string) (layers []layer, leaves []string, err error) {
	lines := strings.Split(doc, "\n")
	start := slices.Index(lines, "## Layers")
	if start < 0 {
		return nil, nil, fmt.Errorf("no \"## Layers\" section")
	}
	inTable := false
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") {
			break
		}
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) != 3 {
			return nil, nil, fmt.Errorf("design.md:%d: %d cells, want 3 (folder, owns, may import)", i+1, len(cells))
		}
		name := strings.TrimSpace(cells[0])
		if name == "folder" || strings.HasPrefix(name, "---") {
			continue
		}
		m := backquoted.FindAllStringSubmatch(name, -1)
		if len(m) != 1 || m[0][0] != name {
			return nil, nil, fmt.Errorf("design.md:%d: the folder cell %q is not one `folder`", i+1, name)
		}
		ly := layer{folder: m[0][1], line: i + 1}
		may := strings.TrimSpace(cells[2])
		switch {
		case may == "everything":
			ly.everything = true
		case may == "the protocol only":
			ly.protocol = true
		default:
			// What parentheses say is why, not what: `confirm` (`Hunk`) names confirm.
			for _, m := range backquoted.FindAllStringSubmatch(parenthesized.ReplaceAllString(may, ""), -1) {
				ly.imports = append(ly.imports, m[1])
			}
			if len(ly.imports) == 0 && !strings.HasPrefix(may, "none of ours") {
				return nil, nil, fmt.Errorf("design.md:%d: %q names no `package`", i+1, may)
			}
		}
		layers = append(layers, ly)
	}
	if len(layers) == 0 {
		return nil, nil, fmt.Errorf("no table under \"## Layers\"")
	}
	for _, m := range exception.FindAllStringSubmatch(doc, -1) {
		leaves = append(leaves, m[1])
	}
	return layers, leaves, nil
}

// owner returns the layer a package (relative to the module root) belongs to: the one
// with the longest folder holding it, or nil.
func owner(layers []layer, pkg string) *layer {
	var best *layer
	for i := range layers {
		f := layers[i].folder
		if (pkg == f || strings.HasPrefix(pkg, f+"/")) && (best == nil || len(f) > len(best.folder)) {
			best = &layers[i]
		}
	}
	return best
}

// matches reports whether pkg is what the table's entry names.
func matches(entry, pkg string) bool {
	if base, ok := strings.CutSuffix(entry, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == entry
}

// moduleImports returns the module's packages (relative to its root) and, for each,
// the module's packages its non-test files import, for every GOOS the code is built
// for.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	modOut, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(modOut))
	graph := map[string][]string{}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		cmd := exec.Command("go", "list", "-e", "-f", "{{if or .GoFiles .CgoFiles .IgnoredGoFiles}}{{.ImportPath}} {{join .Imports \" \"}}{{end}}", "./...")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS="+goos)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v\n%s", goos, err, stderr.String())
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 {
				continue
			}
			pkg, ok := relative(module, fields[0])
			if !ok {
				continue
			}
			imports := graph[pkg]
			for _, imp := range fields[1:] {
				if rel, ok := relative(module, imp); ok && !slices.Contains(imports, rel) {
					imports = append(imports, rel)
				}
			}
			graph[pkg] = imports
		}
	}
	return graph
}

// relative returns an import path of module relative to the module's root.
func relative(module, importPath string) (string, bool) {
	if importPath == module {
		return ".", true
	}
	rel, ok := strings.CutPrefix(importPath, module+"/")
	return rel, ok
}

// TestLayerTable checks design.md's layer table against the code: every package has a
// row; a package imports only the packages of its own row, the ones its row names and
// the leaf exceptions; every name in the table is a package some package of its row
// imports (so the table shows the dependencies, not a wish); every folder of editors/
// has a row, and a client's folder exists and holds no Go package.
func TestLayerTable(t *testing.T) {
	doc, err := os.ReadFile("design.md")
	if err != nil {
		t.Fatal(err)
	}
	layers, leaves, err := parseLayers(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	graph := moduleImports(t, root)
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)

	used := map[*layer]map[string]bool{}
	for _, pkg := range pkgs {
		ly := owner(layers, pkg)
		if ly == nil {
			t.Errorf("package %s has no row in design.md's layer table", pkg)
			continue
		}
		if ly.protocol {
			t.Errorf("package %s is in %s, a client's folder (design.md:%d says \"the protocol only\")", pkg, ly.folder, ly.line)
			continue
		}
		for _, imp := range graph[pkg] {
			switch {
			case owner(layers, imp) == ly, ly.everything:
			case slices.Contains(leaves, imp):
			default:
				i := slices.IndexFunc(ly.imports, func(e string) bool { return matches(e, imp) })
				if i < 0 {
					t.Errorf("%s imports %s, which the row of %s (design.md:%d) does not name", pkg, imp, ly.folder, ly.line)
					continue
				}
				if used[ly] == nil {
					used[ly] = map[string]bool{}
				}
				used[ly][ly.imports[i]] = true
			}
		}
	}

	for i := range layers {
		ly := &layers[i]
		if ly.protocol {
			if fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(ly.folder))); err != nil || !fi.IsDir() {
				t.Errorf("design.md:%d: %s is not a folder", ly.line, ly.folder)
			}
			continue
		}
		if !slices.ContainsFunc(pkgs, func(p string) bool { return owner(layers, p) == ly }) {
			t.Errorf("design.md:%d: no package is in %s", ly.line, ly.folder)
		}
		for _, e := range ly.imports {
			if slices.Contains(leaves, e) {
				continue // any layer may import it; the row says so for emphasis
			}
			if !used[ly][e] {
				t.Errorf("design.md:%d: no package of %s imports %s", ly.line, ly.folder, e)
			}
		}
	}
	// Every editor's client has its row, as the packages have theirs.
	clients, err := os.ReadDir(filepath.Join(root, "editors"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		folder := "editors/" + c.Name()
		if c.IsDir() && !slices.ContainsFunc(layers, func(l layer) bool { return l.folder == folder }) {
			t.Errorf("%s has no row in design.md's layer table", folder)
		}
	}
	for _, leaf := range leaves {
		if imps, ok := graph[leaf]; !ok {
			t.Errorf("the exception %s is not a package", leaf)
		} else if len(imps) > 0 {
			t.Errorf("the exception %s is to be a leaf, but imports %v", leaf, imps)
		}
	}
}

// TestParseLayers checks the reading of the table on the forms design.md uses.
func TestParseLayers(t *testing.T) {
	doc := strings.Join([]string{
		"## Layers",
		"",
		"| folder | owns | may import |",
		"|---|---|---|",
		"| `cmd/x` | wiring | everything |",
		"| `rpc` | the protocol | `session/...`, `tools/mcp` (OAuth), `confirm` |",
		"| `confirm` | consent | `workspace` (`Hunk`) |",
		"| `workspace` | roots | none of ours |",
		"| `editors/nvim` | the plugin | the protocol only |",
		"",
		"Exception: `tools/web/redact` is a leaf package that imports only the standard library.",
		"",
		"## Next",
		"| `ignored` | after the section | everything |",
	}, "\n")
	layers, leaves, err := parseLayers(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range layers {
		got = append(got, fmt.Sprintf("%s all=%v protocol=%v %v", l.folder, l.everything, l.protocol, l.imports))
	}
	want := []string{
		"cmd/x all=true protocol=false []",
		"rpc all=false protocol=false [session/... tools/mcp confirm]",
		"confirm all=false protocol=false [workspace]",
		"workspace all=false protocol=false []",
		"editors/nvim all=false protocol=true []",
	}
	if !slices.Equal(got, want) {
		t.Errorf("layers:\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(leaves, []string{"tools/web/redact"}) {
		t.Errorf("leaves = %q", leaves)
	}
	if o := owner(layers, "rpc/acp"); o == nil || o.folder != "rpc" {
		t.Errorf("owner(rpc/acp) = %v, want rpc", o)
	}
	for _, c := range []struct {
		entry, pkg string
		want       bool
	}{
		{"session/...", "session", true},
		{"session/...", "session/toolbox", true},
		{"session/...", "sessions", false},
		{"tools", "tools", true},
		{"tools", "tools/mcp", false},
	} {
		if got := matches(c.entry, c.pkg); got != c.want {
			t.Errorf("matches(%q, %q) = %v", c.entry, c.pkg, got)
		}
	}
	for _, bad := range []string{
		"## Layers\n| `a`, `b` | two | none of ours |",
		"## Layers\n| `a` | two cells |",
		"## Layers\n| `a` | x | session, tools |",
		"## Layers\n",
	} {
		if _, _, err := parseLayers(bad); err == nil {
			t.Errorf("parseLayers(%q) gave no error", bad)
		}
	}
}

# agentls — see README.md. Every target works from a fresh clone.
GO       ?= go
PKGS     := ./...
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build dist demo run test unit fuzz editors bench benchcheck lint deps clean

all: build

# agentls, and beside it agentls-sandbox, the small helper that contains each command
# (agentls falls back to re-executing itself without it, several milliseconds slower).
# The helper is built without cgo: a static binary starts about 0.5 ms sooner than one
# that loads libc (the cgo package psx, which go-landlock imports, would make it
# dynamic). BENCHMARKS.md.
build:
	$(GO) build -o bin/agentls ./cmd/agentls
	CGO_ENABLED=0 $(GO) build -o bin/agentls-sandbox ./cmd/agentls-sandbox

# Release archives in dist/: agentls and agentls-sandbox for linux, darwin and windows on
# amd64 and arm64 (.tar.gz, .zip for windows), SHA256SUMS, and agent.json, the ACP
# registry's entry of the release; each archive is read back and its files checked, and
# this machine's agentls is run. VERSION defaults to git describe. See internal/dist.
dist:
	$(GO) run ./internal/dist -out dist $(if $(VERSION),-version $(VERSION))

# The main job: the agent at work on demo/sample in Neovim (headless without a terminal);
# with GEMINI_API_KEY it talks to Gemini, without one it replays demo/script.json and says
# so. See demo/run.sh.
demo:
	./demo/run.sh

run: demo

deps:
	./scripts/deps.sh

# The test command of README.md (and of .ci/run): lint, unit and integration tests under
# the race detector, each fuzz target for a bounded number of runs, the real editor
# clients, every benchmark script once in its quick form, and the release archives.
test: deps lint unit fuzz editors benchcheck dist

# AGENTLS_REQUIRE_NPM makes the tests against the npm MCP servers fail, not skip, when
# those servers are missing (deps installs them); AGENTLS_REQUIRE_SANDBOX makes the
# sandbox tests fail, not skip, on a machine without Landlock or user namespaces.
unit:
	AGENTLS_REQUIRE_NPM=1 AGENTLS_REQUIRE_SANDBOX=1 $(GO) test -race -count=1 $(PKGS)

# Each target runs a number of inputs (about 20 s of work on 2 cores), not a duration:
# with a duration, Go 1.26's fuzz coordinator may fail a target with "context deadline
# exceeded" at its end on a loaded machine, with no failing input (golang/go#75804,
# fixed in Go 1.27). FUZZSCALE multiplies the counts (FUZZSCALE=10 fuzzes ten times longer).
FUZZSCALE ?= 1
FUZZ = $(GO) test -run='^$$' -fuzzminimizetime=2s -fuzztime=$$(( $(1) * $(FUZZSCALE) ))x
fuzz:
	$(call FUZZ,200000) -fuzz='^FuzzAnalyze$$' ./confirm
	$(call FUZZ,30000) -fuzz='^FuzzPolicyAllows$$' ./confirm
	$(call FUZZ,200000) -fuzz='^FuzzReplace$$' ./tools/files
	$(call FUZZ,90000) -fuzz='^FuzzUnifiedDiff$$' ./workspace
	$(call FUZZ,150000) -fuzz='^FuzzTextEdits$$' ./workspace
	$(call FUZZ,30000) -fuzz='^FuzzApplyHunks$$' ./workspace
	$(call FUZZ,2000) -fuzz='^FuzzServe$$' ./rpc

# The front ends driven by real clients: an independent vscode-jsonrpc client under
# node --test, headless Neovim 0.10.4 and 0.12.4 with our plugin, Emacs 28.2 (Debian's) and
# 30.1 (built by scripts/build-emacs.sh on first use, like Neovim) with our agentls.el and
# with stock eglot, `agentls acp` under the official ACP TypeScript SDK and under a real
# ACP editor client (CodeCompanion.nvim, vendored, in headless Neovim 0.12.4), and the
# VS Code extension in a real VS Code (code-server driven by Chromium; its deps.sh
# installs them).
editors: build
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/node/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/acp/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/acp-nvim/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/mcp-conformance/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls editors/vscode/test/run.sh
	AGENTLS_REQUIRE_NPM=1 editors/nvim/tests/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls editors/emacs/tests/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/emacs/run.sh

bench: deps
	./bench/run.sh

# Every benchmark script of bench/run.sh once, in its shortest form, with each run's own
# checks but no time or memory targets (and without Gemini CLI, which needs an npm
# install): a script that no longer works fails make test, not the next make bench.
benchcheck:
	BENCH_QUICK=1 ./bench/run.sh

# go mod tidy -diff fails when tidying would change go.mod or go.sum (it changes
# neither); it may fetch modules through the Go module proxy. docs/layers_test.go checks
# the layer table of docs/design.md against the packages' imports.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) mod tidy -diff
	$(GO) test -count=1 ./docs

clean:
	rm -rf bin dist

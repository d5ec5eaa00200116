# agentls — see README.md. Every target works from a fresh clone.
GO       ?= go
PKGS     := ./...
FUZZTIME ?= 20s
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build demo run test unit fuzz editors bench lint deps clean

all: build

build:
	$(GO) build -o bin/agentls ./cmd/agentls

# The main job: the agent at work on demo/sample in Neovim (headless without a terminal);
# with GEMINI_API_KEY it talks to Gemini, without one it replays demo/script.json and says
# so. See demo/run.sh.
demo:
	./demo/run.sh

run: demo

deps:
	./scripts/deps.sh

# The test command of README.md (and of .ci/run): lint, unit and integration tests under
# the race detector, each fuzz target for $(FUZZTIME), and the real editor clients.
test: deps lint unit fuzz editors

# AGENTLS_REQUIRE_NPM makes the tests against the npm MCP servers fail, not skip, when
# those servers are missing (deps installs them).
unit:
	AGENTLS_REQUIRE_NPM=1 $(GO) test -race -count=1 $(PKGS)

FUZZ := $(GO) test -run='^$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=2s
fuzz:
	$(FUZZ) -fuzz='^FuzzAnalyze$$' ./confirm
	$(FUZZ) -fuzz='^FuzzPolicyAllows$$' ./confirm
	$(FUZZ) -fuzz='^FuzzReplace$$' ./tools/files
	$(FUZZ) -fuzz='^FuzzUnifiedDiff$$' ./workspace
	$(FUZZ) -fuzz='^FuzzTextEdits$$' ./workspace
	$(FUZZ) -fuzz='^FuzzServe$$' ./rpc

# The front ends driven by real clients: an independent vscode-jsonrpc client under
# node --test, headless Neovim 0.10.4 with our plugin, Emacs 28 with our agentls.el and
# with stock eglot, `agentls acp` under the official ACP TypeScript SDK, and the VS Code
# extension in a real VS Code (code-server driven by Chromium; its deps.sh installs them).
editors: build
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/node/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/acp/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls editors/vscode/test/run.sh
	AGENTLS_REQUIRE_NPM=1 editors/nvim/tests/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls editors/emacs/tests/run.sh
	AGENTLS_BIN=$(CURDIR)/bin/agentls test/emacs/run.sh

bench: deps
	./bench/run.sh

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

clean:
	rm -rf bin

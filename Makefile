# agentls — see README.md. Every target works from a fresh clone.
GO       ?= go
PKGS     := ./...
FUZZTIME ?= 20s
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build run test unit fuzz bench lint deps clean

all: build

build:
	$(GO) build -o bin/agentls ./cmd/agentls

# The main job: build agentls and list its tools for the current directory.
run: build
	./bin/agentls tools

deps:
	./scripts/deps.sh

# The test command of README.md (and of .ci/run): lint, unit and integration tests under
# the race detector, and each fuzz target for $(FUZZTIME).
test: deps lint unit fuzz

unit:
	$(GO) test -race -count=1 $(PKGS)

fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzAnalyze$$' -fuzztime=$(FUZZTIME) ./confirm
	$(GO) test -run='^$$' -fuzz='^FuzzReplace$$' -fuzztime=$(FUZZTIME) ./tools/files

bench: deps
	./bench/run.sh

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)

clean:
	rm -rf bin

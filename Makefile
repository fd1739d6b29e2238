VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X fmctl/cmd/internal/cli.Version=$(VERSION)
# No build tags: urfave/cli v3 has no man/markdown generators to drop (v2 needed
# urfave_cli_no_docs), and its urfave_cli_no_template would drop the help
# templates that print the exit-code table. The tests build with -tags fmfault,
# which adds the fault seams (state/inject_on.go) release binaries must not have;
# tests/faults proves the binaries of `make build` lack them.
BINARIES := fm-send fm-control fm-spawn fm-teardown
BINDIR ?= bin
GO ?= go

.PHONY: all build install demo test test-agents vet lint fuzz bench readme-table clean

all: build

# Static binaries: with cgo off, net resolves names in Go and nothing links libc
# (tests/faults checks each binary's ELF).
build install: export CGO_ENABLED := 0

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BINDIR)/ ./cmd/...

install:
	$(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/...

# Builds the binaries and drives a fake agent on a private tmux server.
demo: build
	BIN=$(CURDIR)/bin ./scripts/demo.sh

vet:
	$(GO) vet ./...
	$(GO) vet -tags fmfault ./...

# staticcheck, pinned, installed once into .cache/bin.
STATICCHECK := $(CURDIR)/.cache/bin/staticcheck
STATICCHECK_VERSION := v0.8.2
lint: vet
	@[ -x "$(STATICCHECK)" ] && "$(STATICCHECK)" -version | grep -q "$(STATICCHECK_VERSION:v%=%)" || \
		GOBIN=$(CURDIR)/.cache/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	"$(STATICCHECK)" ./...
	"$(STATICCHECK)" -tags fmfault ./...

test: vet
	$(GO) test -count=1 -timeout 20m -tags fmfault ./...

# The real agent CLIs on private tmux servers: installs them into AGENTS_DIR
# once, then every scenario of tests/agents, refreshing the screen captures
# under tests/captures/<harness>-<version>/. AGENTS picks the versions:
# pinned (tests/agents/npm, what CI runs), latest (the newest on the registry
# today) or oldest (tests/agents/npm/oldest, the oldest fmctl claims).
# AGENTS_HARNESSES=a,b drives only those (unset: every one).
AGENTS ?= pinned
AGENTS_HARNESSES ?=
AGENTS_DIR ?= $(CURDIR)/.cache/agents$(if $(filter-out pinned,$(AGENTS)),-$(AGENTS))
# The tier's lanes bound its load (two CLIs and an outage group at once);
# -parallel only has to let every CLI's test and its outage test wait in
# them, two a CLI, or a lane idles (tests/agents checks it). A third of the
# CLIs takes about 20 minutes here, all nine about 40.
AGENTS_PARALLEL ?= 32
AGENTS_TIMEOUT ?= $(if $(AGENTS_HARNESSES),35m,75m)
test-agents:
	./scripts/agents-install.sh "$(AGENTS_DIR)" "$(AGENTS)"
	FM_AGENTS_DIR="$(AGENTS_DIR)" FM_AGENTS_CHANNEL="$(AGENTS)" FM_AGENTS_HARNESSES="$(AGENTS_HARNESSES)" FM_AGENTS_REPORT="$(AGENTS_DIR)/report.md" FM_AGENTS_CAPTURES="$(CURDIR)/tests/captures" \
		$(GO) test -count=1 -timeout $(AGENTS_TIMEOUT) -parallel $(AGENTS_PARALLEL) -v ./tests/agents/

# Short runs of the fuzzers over their committed seed corpora.
fuzz:
	$(GO) test ./state -run '^$$' -fuzz FuzzRecordRoundTrip -fuzztime 20s

# Medians, ratios to one bare tmux call, processes started and peak RSS per operation,
# at 1 and 500 windows and 10 B / 64 KB / 1 MB messages, on a private tmux server;
# and what a <host>/<id> adds to a verb, through a private sshd on loopback.
# -p 1: the two packages' benchmarks one after the other, or each would
# time the other's load.
bench: build
	$(GO) test -p 1 -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./tests/bench/ ./tests/remotessh/

# Regenerates the capability table and the exit-code table embedded in README.md.
readme-table:
	$(GO) run ./scripts/readmetable
	UPDATE_README=1 $(GO) test -count=1 -run TestReadmeExitCodesAreCurrent ./cmd/internal/cli/

clean:
	rm -rf bin

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X fmctl/cmd/internal/cli.Version=$(VERSION)
# urfave_cli_no_docs drops the man/markdown generators (and their init cost) from the binaries.
TAGS := urfave_cli_no_docs
BINARIES := fm-send fm-control fm-spawn
GO ?= go

.PHONY: all build install demo test test-agents vet lint fuzz bench readme-table clean

all: build

build:
	$(GO) build -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

install:
	$(GO) install -trimpath -tags $(TAGS) -ldflags "$(LDFLAGS)" ./cmd/...

# Builds the binaries and drives a fake agent on a private tmux server.
demo: build
	BIN=$(CURDIR)/bin ./scripts/demo.sh

vet:
	$(GO) vet ./...

# staticcheck, pinned, installed once into .cache/bin.
STATICCHECK := $(CURDIR)/.cache/bin/staticcheck
STATICCHECK_VERSION := v0.8.2
lint: vet
	@[ -x "$(STATICCHECK)" ] && "$(STATICCHECK)" -version | grep -q "$(STATICCHECK_VERSION:v%=%)" || \
		GOBIN=$(CURDIR)/.cache/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	"$(STATICCHECK)" ./...

test: vet
	$(GO) test -count=1 ./...

# The real agent CLIs (pinned in tests/agents/npm) on private tmux servers:
# installs them into AGENTS_DIR once, then every scenario of tests/agents,
# refreshing the screen captures under tests/captures/<harness>-<version>/.
AGENTS_DIR ?= $(CURDIR)/.cache/agents
test-agents:
	./scripts/agents-install.sh "$(AGENTS_DIR)"
	FM_AGENTS_DIR="$(AGENTS_DIR)" FM_AGENTS_REPORT="$(AGENTS_DIR)/report.md" FM_AGENTS_CAPTURES="$(CURDIR)/tests/captures" \
		$(GO) test -count=1 -timeout 20m -parallel 2 -v ./tests/agents/

# Short runs of the fuzzers over their committed seed corpora.
fuzz:
	$(GO) test ./state -run '^$$' -fuzz FuzzRecordRoundTrip -fuzztime 20s

# Medians, ratios to one bare tmux call, processes started and peak RSS per operation,
# at 1 and 500 windows and 10 B / 64 KB / 1 MB messages, on a private tmux server.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m ./tests/bench/

# Regenerates the capability table embedded in README.md.
readme-table:
	$(GO) run ./scripts/readmetable

clean:
	rm -rf bin

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X fmctl/cliapp.Version=$(VERSION)
# urfave_cli_no_docs drops the man/markdown generators (and their init cost) from the binaries.
TAGS := urfave_cli_no_docs
BINARIES := fm-send fm-control fm-spawn
GO ?= go

.PHONY: all build install demo test vet fuzz bench readme-table clean

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

test: vet
	$(GO) test -count=1 ./...

# Short runs of the fuzzers over their committed seed corpora.
fuzz:
	$(GO) test ./state -run '^$$' -fuzz FuzzRecordRoundTrip -fuzztime 20s

# Medians, ratios to the bare tmux calls, and call counts, on a private tmux server.
bench: build
	$(GO) test -run '^$$' -bench . -benchtime 20x -count 1 ./tests/bench/

# Regenerates the capability table embedded in README.md.
readme-table:
	$(GO) run ./scripts/readmetable

clean:
	rm -rf bin

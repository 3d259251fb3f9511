# sessionlocks: see README.md. `make run` and `make test` are the two commands a newcomer needs.
GO        ?= go
NPM       ?= npm
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/copilot-ide/sessionlocks/internal/version.Version=$(VERSION)
BIN       := bin/sessionlocks
# The six targets we ship. npm/sessionlocks/platforms.json maps each to its npm package (os/cpu); a Node test
# (npm/test/schema.test.mjs) fails when the two lists disagree.
PLATFORMS := darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64

.PHONY: all build run test test-go test-node bench ci race fmt vet cross npm schema test-realcli clean

all: build

build:
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/sessionlocks

# run: the REPL on your real state dir (~/.copilot/session-state; it need not exist). Add ARGS=--demo for the demo.
run: build
	./$(BIN) repl $(ARGS)

# test: every test, Go and Node.
test: test-go test-node

test-go: build
	$(GO) test -count=1 ./...

npm/node_modules: npm/package.json npm/package-lock.json
	cd npm && $(NPM) ci --no-audit --no-fund
	@touch $@

test-node: build npm/node_modules
	cd npm && SESSIONLOCKS_BINARY=$(CURDIR)/$(BIN) node --test
	SESSIONLOCKS_BINARY=$(CURDIR)/$(BIN) node --test bench/

# bench: the engine's Go benchmarks (go test -bench . -benchmem -count 5 ./sessionlocks/, run and echoed by the
# driver), then sessionlocks side by side with the IDE's kill + ps check; prints the tables and writes BENCHMARKS.md
# and bench/chart.svg. About 6-10 minutes; BENCH_ARGS=--quick for a short run (see bench/run.mjs for the flags).
bench: build npm/node_modules
	node bench/run.mjs $(BENCH_ARGS)

# test-realcli: conformance against the real Copilot CLI (pinned in internal/realcli), run offline with the sidecar
# spawned as the IDE spawns it. Fetches the CLI (~130 MB, checked against a pinned sha512) into
# $${XDG_CACHE_HOME:-~/.cache}/sessionlocks/realcli once; prints SKIP and succeeds when the registry is unreachable.
# About 3 minutes. REALCLI_ARGS='-run TestPIDReuse' to pick tests, '-realcli.race=5' for a shorter race loop.
test-realcli: build
	@bin=$$($(GO) run ./internal/realcli/ensure) || exit 1; \
	if [ -z "$$bin" ]; then exit 0; fi; \
	echo "real Copilot CLI: $$bin"; \
	SESSIONLOCKS_BINARY=$(CURDIR)/$(BIN) $(GO) test -tags realcli -count=1 -v -timeout 30m ./internal/realcli/ $(REALCLI_ARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	@for os in linux darwin windows; do echo "go vet GOOS=$$os"; GOOS=$$os $(GO) vet ./... || exit 1; done

cross:
	@for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
	    -o dist/bin/$$os-$$arch/sessionlocks$$ext ./cmd/sessionlocks || exit 1; done

# schema: regenerate schema/openrpc.json and schema/sessionlocks.schema.json from rpc/, and the client's
# TypeScript types from them. Tests fail when the committed files are stale.
schema: npm/node_modules
	$(GO) run ./schema/gen
	cd npm && node scripts/gen-types.mjs

# npm: the per-platform packages and the main package, packed into dist/npm/*.tgz. Publish the six platform
# tarballs before the main one, which names them at its exact version.
npm: cross
	node npm/scripts/pack.mjs --version "$(VERSION)" --bin-dir dist/bin --out dist/npm

# race: the concurrent packages under the race detector (caches, single-flight listings, the watcher).
race:
	$(GO) test -race -count=1 ./sessionlocks ./rpc ./watch

# ci: what .ci/run adds to `make test`.
ci: vet cross race
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin dist

# sessionlocks: see README.md. `make run` and `make test` are the two commands a newcomer needs.
GO        ?= go
NPM       ?= npm
# VERSION goes into the binaries (-X .../internal/version.Version) and the npm packages alike, so it must be a
# version npm accepts: a release passes its tag without the v (VERSION=1.2.3); otherwise `git describe` is mapped
# by the one rule, npmVersion in npm/sessionlocks/version.js (v1.2.3-4-gabc -> 1.2.3-4-gabc, 5df2a78 ->
# 0.0.0-dev.5df2a78), which the client's handshake also uses. `make npm` fails if packages and binaries disagree.
ifndef VERSION
VERSION := $(shell node -e 'process.stdout.write(require("./npm/sessionlocks/version.js").npmVersion(process.argv[1]))' \
  "$$(git describe --tags --always --dirty 2>/dev/null || echo dev)")
endif
ifeq ($(strip $(VERSION)),)
$(error VERSION came out empty: node (a prerequisite, see README) maps git describe to it; or pass VERSION=x.y.z)
endif
LDFLAGS   := -X github.com/copilot-ide/sessionlocks/internal/version.Version=$(VERSION)
# Release builds are reproducible: no cgo, no file paths (-trimpath), no VCS stamp (a build from a source archive
# has none to add). `make reproducible` checks it.
CROSSFLAGS := -trimpath -buildvcs=false -ldflags "-s -w $(LDFLAGS)"
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
SHA256    := $(shell command -v sha256sum >/dev/null 2>&1 && echo sha256sum || echo 'shasum -a 256')
BIN       := bin/sessionlocks
# The six targets we ship. npm/sessionlocks/platforms.json maps each to its npm package (os/cpu); a Node test
# (npm/test/schema.test.mjs) fails when the two lists disagree.
PLATFORMS := darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64

.PHONY: all build run test test-go test-node test-windows bench ci race fmt vet test-compile cross npm release reproducible actionlint schema test-realcli clean

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

# test-windows: every package's tests, built for windows/amd64 and run under Wine here (see internal/wine/test-windows:
# it installs wine and mingw when missing and run as root, keeps its Wine prefix under bin/wine, and lists every test
# that skips itself under Wine with why). ARGS go to every test binary (ARGS=-test.run=TestX), PKGS picks packages.
test-windows:
	internal/wine/test-windows $(ARGS)

npm/node_modules: npm/package.json npm/package-lock.json
	cd npm && $(NPM) ci --no-audit --no-fund
	@touch $@

test-node: build npm/node_modules
	cd npm && SESSIONLOCKS_BINARY=$(CURDIR)/$(BIN) node --test
	SESSIONLOCKS_BINARY=$(CURDIR)/$(BIN) node --test bench/

# bench: the engine's Go benchmarks (go test -bench . -benchmem -count 3 ./sessionlocks/, run and echoed by the
# driver), then sessionlocks side by side with the IDE's kill + ps check at 100, 1,000 and 10,000 sessions; prints the
# budgets and goals and writes BENCHMARKS.md and bench/chart.svg. About 6-10 minutes on 2 cores; BENCH_ARGS=--quick
# for a short smoke run (see bench/run.mjs for the flags).
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

# test-compile: every package's test binary builds and links for macOS (arm64, as CI's runner) and Windows, where
# the tests run only on CI; vet type-checks them, this also catches what only the linker sees.
test-compile:
	@for p in darwin/arm64 windows/amd64; do echo "go test -c GOOS=$${p%/*} GOARCH=$${p#*/}"; \
	  for pkg in $$(GOOS=$${p%/*} $(GO) list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...); do GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) test -c -o /dev/null $$pkg || exit 1; done; done

cross:
	@for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(CROSSFLAGS) \
	    -o dist/bin/$$os-$$arch/sessionlocks$$ext ./cmd/sessionlocks || exit 1; done

# schema: regenerate schema/openrpc.json and schema/sessionlocks.schema.json from rpc/, and the client's
# TypeScript types from them. Tests fail when the committed files are stale.
schema: npm/node_modules
	$(GO) run ./schema/gen
	cd npm && node scripts/gen-types.mjs

# npm: the per-platform packages and the main package, packed into dist/npm/*.tgz, at the binaries' VERSION.
# The release workflow (.github/workflows/release.yml) publishes them, the six platform packages before the main
# one, which names them at its exact version.
npm: cross
	@out=$$(node npm/scripts/pack.mjs --version "$(VERSION)" --bin-dir dist/bin --out dist/npm) || exit 1; echo "$$out"; \
	v=$$(echo "$$out" | sed -n 's/^version //p'); \
	if [ "$$v" != "$(VERSION)" ]; then echo "npm version $$v differs from the binaries' $(VERSION)"; exit 1; fi

# release: `make npm`, plus dist/release/: the six binaries named by platform and their SHA256SUMS.
release: npm
	rm -rf dist/release && mkdir -p dist/release
	@for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  cp dist/bin/$$os-$$arch/sessionlocks$$ext dist/release/sessionlocks-$$os-$$arch$$ext || exit 1; done
	cd dist/release && $(SHA256) sessionlocks-* > SHA256SUMS && cat SHA256SUMS

# reproducible: builds the committed HEAD's binaries twice, from two exports at different paths, the second with an
# empty build cache (as on a user's machine), and fails unless they are byte-identical. REPRO_PLATFORMS picks the
# targets (default all six; `make ci` checks two to stay quick).
REPRO_PLATFORMS ?= $(PLATFORMS)
reproducible:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	for d in a elsewhere/b; do mkdir -p "$$tmp/$$d" && git archive HEAD | tar -x -C "$$tmp/$$d" || exit 1; done && \
	$(MAKE) -s -C "$$tmp/a" cross PLATFORMS="$(REPRO_PLATFORMS)" VERSION=$(VERSION) >/dev/null && \
	GOCACHE="$$tmp/gocache" $(MAKE) -s -C "$$tmp/elsewhere/b" cross PLATFORMS="$(REPRO_PLATFORMS)" VERSION=$(VERSION) >/dev/null && \
	(cd "$$tmp/a/dist/bin" && $(SHA256) */*) > "$$tmp/a.sums" && (cd "$$tmp/elsewhere/b/dist/bin" && $(SHA256) */*) > "$$tmp/b.sums" && \
	cat "$$tmp/a.sums" && if diff "$$tmp/a.sums" "$$tmp/b.sums"; then echo "reproducible: two builds of $$(git rev-parse --short HEAD) are identical"; \
	else echo "reproducible: the builds differ"; exit 1; fi

# actionlint: the GitHub workflows, with the linter fetched as a Go module at a pinned version (it runs shellcheck
# over run: scripts when shellcheck is installed, as it is on GitHub's runners).
actionlint:
	$(GO) run $(ACTIONLINT) -color=false

# race: the concurrent packages under the race detector (caches, single-flight listings, the watcher).
race:
	$(GO) test -race -count=1 ./sessionlocks ./rpc ./watch

# ci: what .ci/run adds to `make test`.
ci: vet test-compile cross race actionlint
	$(GO) test -count=1 ./internal/workflows
	@$(MAKE) -s reproducible REPRO_PLATFORMS="linux/amd64 darwin/arm64"
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin dist

# sessionlocks: see README.md. `make run` and `make test` are the two commands a newcomer needs.
GO        ?= go
NPM       ?= npm
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X github.com/copilot-ide/sessionlocks/internal/version.Version=$(VERSION)
BIN       := bin/sessionlocks
# The six targets we ship; npm/platforms.json is generated from the same list.
PLATFORMS := darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64

.PHONY: all build run test test-go test-node bench ci fmt vet cross npm schema test-realcli clean

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

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./sessionlocks/

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	@for os in linux darwin windows; do echo "go vet GOOS=$$os"; GOOS=$$os $(GO) vet ./... || exit 1; done

cross:
	@for p in $(PLATFORMS); do os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
	  echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" \
	    -o dist/bin/$$os-$$arch/sessionlocks$$ext ./cmd/sessionlocks || exit 1; done

# ci: what .ci/run adds to `make test`.
ci: vet cross
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin dist

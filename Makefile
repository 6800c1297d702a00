# The two commands of the README:
#   make demo   runs the whole job on an embedded Kafka broker
#   make test   installs what the tests need and runs the whole suite

GO ?= go
FUZZTIME ?= 10s

.PHONY: demo test tools vet unit race fuzz

demo:
	$(GO) run ./cmd/streamer demo

test: tools vet unit race fuzz

# kcat drives the service the way a user would in one integration test.
tools:
	@command -v kcat >/dev/null 2>&1 || bash scripts/install-tools

# gofmt over the tracked files; staticcheck is pinned in go.mod's tool
# block (go tool staticcheck).
vet:
	@files=$$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'); \
	unformatted=$$(gofmt -l $$files); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

unit:
	$(GO) test -count=1 ./...

race:
	$(GO) test -count=1 -race -short ./...

fuzz:
	@bash scripts/fuzz $(FUZZTIME)

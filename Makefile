# The commands of the README:
#   make demo       runs the whole job on an embedded Kafka broker
#   make test       installs what the tests need and runs the fast suite:
#                   every package under the race detector, the long runs
#                   skipped (go test -short); then the checks of the
#                   deployment files (deploy/)
#   make test-long  the long suite: every test, the chaos, crash and scale
#                   runs among them, then the fuzz targets and the README's
#                   quickstart

GO ?= go
FUZZTIME ?= 10s

.PHONY: demo test test-long tools vet fast long fuzz quickstart image deploy-check

demo:
	$(GO) run ./cmd/streamer demo

test: tools vet fast deploy-check

test-long: tools long fuzz quickstart

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

fast:
	$(GO) test -count=1 -race -short -parallel 4 ./...

long:
	$(GO) test -count=1 ./...

fuzz:
	@bash scripts/fuzz $(FUZZTIME)

# The README's quickstart, run as written against a broker on 9092.
quickstart:
	@bash scripts/check-quickstart

# The deployment files (deploy/) checked against each other and the
# service, in a module of their own so that the service's module does not
# carry the Kubernetes API modules.
deploy-check:
	cd deploy && $(GO) vet ./... && $(GO) test -count=1 ./...

# A static, non-root container image (deploy/Containerfile): the binary is
# built here, then the image with podman, or docker when podman is absent.
IMAGE ?= streamer:latest
image:
	rm -rf build/image && mkdir -p build/image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o build/image/streamer ./cmd/streamer
	cp deploy/streamer.yaml build/image/streamer.yaml
	cp /etc/ssl/certs/ca-certificates.crt build/image/
	@engine=$$(command -v podman || command -v docker); \
	if [ -z "$$engine" ]; then echo "image: neither podman nor docker is installed"; exit 1; fi; \
	$$engine build -f deploy/Containerfile -t $(IMAGE) build/image

GO ?= go

.PHONY: test lint fmt-check vet staticcheck fuzz bench dist smoke demo

# The README's test command: unit, conformance, property and end-to-end tests.
test:
	$(GO) test -count=1 ./...

lint: fmt-check vet staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

# Short runs of every fuzz target (CI: FUZZTIME=50000x); FUZZTIME=5m for a longer hunt.
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

OCB = $(GO) run go.opentelemetry.io/collector/cmd/builder@v0.165.0

# The otelcol-agentguard distribution, from builder-config.yaml.
dist:
	mkdir -p dist
	$(OCB) --config builder-config.yaml

# The README's first command: build the distribution, run it on loopback, play
# the weather agents' conversations through it, print what it reported.
demo: dist
	$(GO) run ./examples/weather-agents/demo

# The built distribution on loopback with the weather agents example.
smoke: dist
	bash scripts/smoke.sh

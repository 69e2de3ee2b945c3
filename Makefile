GO ?= go

.PHONY: test lint fmt-check vet staticcheck fuzz bench dist smoke demo household-model household-eval household-cpu

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

# The binary, rebuilt only when a source it is built from changed, so that a
# second make demo starts at once.
DIST_BIN = dist/otelcol-agentguard
DIST_SRC = builder-config.yaml go.mod go.sum $(shell find cmd connector extension internal processor -name '*.go' ! -name '*_test.go' 2>/dev/null)
$(DIST_BIN): $(DIST_SRC)
	mkdir -p dist
	$(OCB) --config builder-config.yaml

# The README's first command: build the distribution, run it on loopback (free
# ports), play the weather agents and the household agent through it, print
# what it reported. A collector that exits fails it at once, with its error.
demo: $(DIST_BIN)
	$(GO) run ./examples/demo

# The built distribution on loopback with the weather agents example.
smoke: dist
	bash scripts/smoke.sh

# The household example: generated episodes (examples/household/gen), a model
# learned on a training set, evaluated on a held-out one.
HOUSEHOLD_DATA ?= dist/household
HOUSEHOLD_CONFIG = examples/household/collector.yaml

# examples/household/model.json, from 500 training episodes (seed 1).
household-model:
	rm -rf $(HOUSEHOLD_DATA)/train
	$(GO) run ./examples/household/gen -n 500 -seed 1 -o $(HOUSEHOLD_DATA)/train
	$(GO) run ./cmd/agentguard learn --config $(HOUSEHOLD_CONFIG) -o examples/household/model.json $(HOUSEHOLD_DATA)/train/ep-*.json

# The README's evaluation table: 500 held-out episodes (seed 2, model calls of 1.5 s on average), θ in {0.3, 0.5, 0.7, 0.9}.
household-eval:
	rm -rf $(HOUSEHOLD_DATA)/test
	$(GO) run ./examples/household/gen -n 500 -seed 2 -model-latency 1.5s -o $(HOUSEHOLD_DATA)/test
	$(GO) run ./cmd/agentguard evaluate --config $(HOUSEHOLD_CONFIG) --model examples/household/model.json $(HOUSEHOLD_DATA)/test/ep-*.json

# The live harness (examples/live): Google ADK for TypeScript plays N
# conversations of each kind (correct, greeting or farewell agent transferring
# to itself, greeting agent keeping control) on a scripted model, its own
# tracing exported over OTLP/HTTP to the built collector and to an OTLP/JSON
# file; the collector's verdicts must be check's on that file, with no false
# alarm and no miss. Spans, verdicts and logs stay in dist/live.
.PHONY: live household-cpu
N ?= 24
LIVE_APP = examples/live/app
live: $(DIST_BIN) $(LIVE_APP)/node_modules/.package-lock.json
	$(GO) run ./examples/live/cmd/live -n $(N)

# npm ci from the committed lock file, again only when it changed.
$(LIVE_APP)/node_modules/.package-lock.json: $(LIVE_APP)/package-lock.json
	cd $(LIVE_APP) && npm ci --no-audit --no-fund

# The household configuration's CPU per span in the built collector, beside a
# pass-through pipeline run the same way (each in its own process, fed the
# real episodes over OTLP/HTTP): the collector's own CPU time per span.
household-cpu: dist
	$(GO) run ./examples/household/cmd/pipelinecpu -n 1500

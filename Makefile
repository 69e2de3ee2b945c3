GO ?= go

.PHONY: restart test e2e lint fmt-check spdx-check vet staticcheck fuzz bench dist smoke demo scenario household-model household-eval household-compare household-loop router scaleout

# The unit, conformance and property tests, with the race detector. No
# -count=1: the test cache keeps what did not change. The real-time
# end-to-end tests are make e2e's. The CLI's tests run without it: its own
# code is sequential, the stage it drives is tested with the race detector
# in its packages, and under it the CLI's learning and mining tests take
# 300 s instead of 20.
RACE_PKGS = $(shell $(GO) list ./... | grep -v '/cmd/agentguard$$')
test:
	$(GO) test -race $(RACE_PKGS)
	$(GO) test ./cmd/agentguard

# The real-time end-to-end tests (build tag e2e: collectors started
# in-process or as processes, real servers, the wall clock), in the packages
# that have them. Always run (-count=1): they measure time.
E2E_PKGS = $(shell grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=dist '^//go:build e2e' . | xargs -r -n1 dirname | sort -u)
e2e:
	$(GO) test -count=1 -tags e2e $(E2E_PKGS)

lint: fmt-check spdx-check vet staticcheck

# Every Go file carries the license's SPDX line.
spdx-check:
	@missing=$$(grep -L '^// SPDX-License-Identifier: Apache-2.0$$' $$(git ls-files '*.go')); if [ -n "$$missing" ]; then echo "no SPDX-License-Identifier line:"; echo "$$missing"; exit 1; fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# With the e2e tag, so that the end-to-end tests are checked too.
vet:
	$(GO) vet -tags e2e ./...

staticcheck:
	$(GO) tool staticcheck -tags e2e ./...

# Short runs of every fuzz target (CI: FUZZTIME=5000x); FUZZTIME=5m for a longer hunt.
FUZZTIME ?= 10s
# The targets are found by reading the test files: listing them with go test
# -list would link a test binary for every package first.
FUZZ_FILES = $(shell grep -rl --include='*_test.go' --exclude-dir=node_modules --exclude-dir=dist '^func Fuzz' . | sort)
fuzz:
	@for file in $(FUZZ_FILES); do \
	  pkg=./$$(dirname $$file); \
	  for f in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
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

# The router and sampler tiers of examples/scaleout (OTLP receiver,
# load-balancing exporter, tail_sampling), built at v0.161.0: the newest
# release at which this machine's proxy serves those two contrib components
# (docs/development.md says why it is a binary of its own).
ROUTER_OCB = $(GO) run go.opentelemetry.io/collector/cmd/builder@v0.161.0
ROUTER_BIN = dist/router/otelcol-agentguard-router
router: $(ROUTER_BIN)
$(ROUTER_BIN): examples/scaleout/router-builder.yaml
	$(ROUTER_OCB) --config examples/scaleout/router-builder.yaml

# A router, three agentguard collectors and a sampler on loopback: their
# verdicts must be one collector's on the same spans, per trace and per
# conversation, and the sampler must keep every violating trace.
scaleout: $(DIST_BIN) $(ROUTER_BIN)
	$(GO) run ./test/scenarios/scaleout

# The README's first command: build the distribution, run it on loopback (free
# ports), play the weather agents and the household agent through it, print
# what it reported. A collector that exits fails it at once, with its error.
demo: $(DIST_BIN)
	$(GO) run ./test/scenarios/demo

# A crash and restart on the built distribution with file_storage: every
# cross-turn verdict checkpointed before a kill -9 comes after the restart,
# unmarked; no acknowledged span is lost to a kill -9 mid-stream or to the
# storage's disk filling up (a tmpfs it mounts: run as root)
# (test/scenarios/restart).
restart: $(DIST_BIN)
	$(GO) run ./test/scenarios/restart

# The built distribution on loopback with the weather agents example.
smoke: dist
	bash scripts/smoke.sh

# The household example. Its model is learned on episodes of the real
# LangGraph JS agent (examples/household/agent, npm ci from its lock file):
# training seed 1 (300 episodes), held-out seed 2 (200), played without a
# collector, every span written to spans.jsonl.
HOUSEHOLD_DATA ?= dist/household-loop
HOUSEHOLD_CONFIG = examples/household/collector.yaml
HOUSEHOLD_AGENT = examples/household/agent
HOUSEHOLD_AGENT_SRC = $(wildcard $(HOUSEHOLD_AGENT)/*.js) $(HOUSEHOLD_AGENT)/node_modules/.package-lock.json

$(HOUSEHOLD_DATA)/train/spans.jsonl: $(HOUSEHOLD_AGENT_SRC)
	cd $(HOUSEHOLD_AGENT) && node main.js --out $(abspath $(HOUSEHOLD_DATA))/train --n 300 --seed 1 --concurrency 8 --model-latency-ms 100
$(HOUSEHOLD_DATA)/heldout/spans.jsonl: $(HOUSEHOLD_AGENT_SRC)
	cd $(HOUSEHOLD_AGENT) && node main.js --out $(abspath $(HOUSEHOLD_DATA))/heldout --n 200 --seed 2 --concurrency 8 --model-latency-ms 100

# examples/household/model.json, learned on the training episodes.
household-model: $(HOUSEHOLD_DATA)/train/spans.jsonl
	$(GO) run ./cmd/agentguard learn --config $(HOUSEHOLD_CONFIG) -o examples/household/model.json $<

# The README's evaluation: the model on the held-out episodes, θ swept, the
# picture in dist/household-loop/evaluate.svg.
household-eval: $(HOUSEHOLD_DATA)/heldout/spans.jsonl
	$(GO) run ./cmd/agentguard evaluate --config $(HOUSEHOLD_CONFIG) --model examples/household/model.json --target-false-alarms 0.1 --svg $(HOUSEHOLD_DATA)/evaluate.svg $<

# The README's comparison: the rule, the paper's chain and the example's,
# each chain learned on the training episodes, judged on the held-out ones.
household-compare: $(HOUSEHOLD_DATA)/train/spans.jsonl $(HOUSEHOLD_DATA)/heldout/spans.jsonl
	$(GO) run ./test/scenarios/household-compare -train $(HOUSEHOLD_DATA)/train/spans.jsonl -heldout $(HOUSEHOLD_DATA)/heldout/spans.jsonl -out $(HOUSEHOLD_DATA)/compare

# The paper's Table 2 with agentguard in the loop: the agent against the
# built collector's risk endpoint, HOUSEHOLD_N episodes (seed 3) per mode.
HOUSEHOLD_N ?= 100
HOUSEHOLD_MODES ?= none,stop:0.5,stop:0.7,stop:0.9,reflect:0.7,deny:0.7
household-loop: $(DIST_BIN) $(HOUSEHOLD_AGENT)/node_modules/.package-lock.json
	$(GO) run ./test/scenarios/household-loop -n $(HOUSEHOLD_N) -modes $(HOUSEHOLD_MODES) -out $(HOUSEHOLD_DATA)/inloop

# Agent B (examples/household/agent/b): a second household agent, written
# apart from A, with its own policy and timing over the same tools and house
# state (A's packages, tracing and guard hook shared), service.name
# household-agent-b-langgraph-openinference. Its episodes
# (training seed 1, 300; held-out seed 2, 200) are recorded without a
# collector, checked against the agent's account of each and labelled
# (labels.json) by test/scenarios/household-gen-b.
HOUSEHOLD_B_DATA ?= dist/household-b
HOUSEHOLD_B_AGENT = $(HOUSEHOLD_AGENT)/b
HOUSEHOLD_B_CONFIG = $(HOUSEHOLD_B_AGENT)/collector.yaml
HOUSEHOLD_B_SRC = $(wildcard $(HOUSEHOLD_B_AGENT)/*.js) $(HOUSEHOLD_AGENT_SRC)
.PHONY: household-b-data household-b-model household-b-eval household-b-compare

$(HOUSEHOLD_B_DATA)/train/spans.jsonl: $(HOUSEHOLD_B_SRC)
	$(GO) run ./test/scenarios/household-gen-b -n 300 -seed 1 -out $(HOUSEHOLD_B_DATA)/train
$(HOUSEHOLD_B_DATA)/heldout/spans.jsonl: $(HOUSEHOLD_B_SRC)
	$(GO) run ./test/scenarios/household-gen-b -n 200 -seed 2 -out $(HOUSEHOLD_B_DATA)/heldout
# Agent A's episodes (above) checked and labelled the same way, so that both
# agents' training and held-out sets come with labels.json.
$(HOUSEHOLD_DATA)/%/labels.json: $(HOUSEHOLD_DATA)/%/spans.jsonl
	$(GO) run ./test/scenarios/household-gen-b -record=false -service household-agent-langgraph-openinference -out $(HOUSEHOLD_DATA)/$*
household-b-data: $(HOUSEHOLD_B_DATA)/train/spans.jsonl $(HOUSEHOLD_B_DATA)/heldout/spans.jsonl $(HOUSEHOLD_DATA)/train/labels.json $(HOUSEHOLD_DATA)/heldout/labels.json

# B's model, learned with the example's abstraction (agent/b/collector.yaml
# differs from collector.yaml only in the service its events: condition names).
$(HOUSEHOLD_B_DATA)/model.json: $(HOUSEHOLD_B_DATA)/train/spans.jsonl $(HOUSEHOLD_B_CONFIG)
	$(GO) run ./cmd/agentguard learn --config $(HOUSEHOLD_B_CONFIG) -o $@ $<
household-b-model: $(HOUSEHOLD_B_DATA)/model.json

# B's model on B's held-out episodes, A's (examples/household/model.json) on
# B's, and B's on A's: θ swept, the θ for at most 10% false alarms suggested.
household-b-eval: $(HOUSEHOLD_B_DATA)/model.json $(HOUSEHOLD_B_DATA)/heldout/spans.jsonl $(HOUSEHOLD_DATA)/heldout/spans.jsonl
	$(GO) run ./cmd/agentguard evaluate --config $(HOUSEHOLD_B_CONFIG) --model $(HOUSEHOLD_B_DATA)/model.json --target-false-alarms 0.1 --svg $(HOUSEHOLD_B_DATA)/evaluate-b-on-b.svg $(HOUSEHOLD_B_DATA)/heldout/spans.jsonl
	$(GO) run ./cmd/agentguard evaluate --config $(HOUSEHOLD_B_CONFIG) --model examples/household/model.json --target-false-alarms 0.1 --svg $(HOUSEHOLD_B_DATA)/evaluate-a-on-b.svg $(HOUSEHOLD_B_DATA)/heldout/spans.jsonl
	$(GO) run ./cmd/agentguard evaluate --config $(HOUSEHOLD_CONFIG) --model $(HOUSEHOLD_B_DATA)/model.json --target-false-alarms 0.1 --svg $(HOUSEHOLD_B_DATA)/evaluate-b-on-a.svg $(HOUSEHOLD_DATA)/heldout/spans.jsonl

# household-compare (the rule, the paper's chain, the example's) in the four
# directions, training agent on held-out agent: A on A, A on B, B on B, B on
# A, in $(HOUSEHOLD_B_DATA)/compare/<train>-on-<held-out>. The configurations
# are the example's and the paper's with the service left out of the events:
# condition, so that one file reads both agents. household-compare exits 1
# when the example does not beat both baselines: reported, not a failure here.
HOUSEHOLD_ANY_SERVICE = 's/resource.attributes\["service.name"\] == "household-agent-langgraph-openinference" and //'
household-b-compare: $(HOUSEHOLD_DATA)/train/spans.jsonl $(HOUSEHOLD_DATA)/heldout/spans.jsonl $(HOUSEHOLD_B_DATA)/train/spans.jsonl $(HOUSEHOLD_B_DATA)/heldout/spans.jsonl
	mkdir -p $(HOUSEHOLD_B_DATA)/compare
	sed $(HOUSEHOLD_ANY_SERVICE) $(HOUSEHOLD_CONFIG) > $(HOUSEHOLD_B_DATA)/compare/example.yaml
	sed $(HOUSEHOLD_ANY_SERVICE) examples/household/baselines/paper.yaml > $(HOUSEHOLD_B_DATA)/compare/paper.yaml
	! grep -q 'service.name"\] ==' $(HOUSEHOLD_B_DATA)/compare/example.yaml $(HOUSEHOLD_B_DATA)/compare/paper.yaml
	$(GO) build -o $(HOUSEHOLD_B_DATA)/compare/household-compare ./test/scenarios/household-compare
	@for d in a:a a:b b:b b:a; do \
	  train=$$(echo $$d | cut -d: -f1); held=$$(echo $$d | cut -d: -f2); \
	  dir() { if [ $$1 = a ]; then echo $(HOUSEHOLD_DATA); else echo $(HOUSEHOLD_B_DATA); fi; }; \
	  echo "== trained on agent $$train, held-out episodes of agent $$held"; \
	  $(HOUSEHOLD_B_DATA)/compare/household-compare -train $$(dir $$train)/train/spans.jsonl -heldout $$(dir $$held)/heldout/spans.jsonl \
	    -example $(HOUSEHOLD_B_DATA)/compare/example.yaml -paper $(HOUSEHOLD_B_DATA)/compare/paper.yaml \
	    -out $(HOUSEHOLD_B_DATA)/compare/$$train-on-$$held || [ $$? -eq 1 ] || exit 1; \
	done

# The live harness (test/scenarios/live, the app in examples/live): Google ADK for TypeScript plays N
# conversations of each kind (correct, greeting or farewell agent transferring
# to itself, greeting agent keeping control) on a scripted model, its own
# tracing exported over OTLP/HTTP to the built collector and to an OTLP/JSON
# file; the collector's verdicts must be check's on that file, with no false
# alarm and no miss. Spans, verdicts and logs stay in dist/live.
.PHONY: live
N ?= 24
LIVE_APP = examples/live/app
live: $(DIST_BIN) $(LIVE_APP)/node_modules/.package-lock.json
	$(GO) run ./test/scenarios/live -n $(N)

# The pre-call guard (test/scenarios/guard-live) on the three frameworks'
# apps of examples/live (ADK for TypeScript, LangGraph JS, OpenAI Agents JS):
# N conversations (default 100) of each kind without the guard, then with
# the app's guard.js asking the built collector's decisions endpoint
# (examples/weather/guard.yaml) before every tool call and hand-off. No
# correct conversation may be denied and no mistake may run with the guard.
# Files stay in dist/guard-live.
.PHONY: guard-live
GUARD_APPS = $(LIVE_APP) examples/live/langgraph examples/live/openai-agents
GUARD_NODE_MODULES = $(addsuffix /node_modules/.package-lock.json,$(GUARD_APPS))
guard-live: $(DIST_BIN) $(GUARD_NODE_MODULES)
	$(GO) run ./test/scenarios/guard-live -n $(if $(filter command line environment,$(origin N)),$(N),100)

# The meter predicates (repeats, budget, flows of examples/live/meters.yaml)
# on the three frameworks' apps of examples/live: N conversations (default
# 20) of each meter kind per framework through the built collector, a runaway
# loop, a token budget overrun and an API key emailed beside their correct
# counterparts. Each mistake must be caught on its span, no correct
# conversation flagged, and the collector's verdicts must be agentguard
# check's on the same spans (test/scenarios/meters-live). Files stay in
# dist/meters-live.
.PHONY: meters-live
meters-live: $(DIST_BIN) $(GUARD_NODE_MODULES)
	$(GO) run ./test/scenarios/meters-live -n $(if $(filter command line environment,$(origin N)),$(N),20)

# Every npm app's npm ci from its committed lock file, again only when it changed.
%/node_modules/.package-lock.json: %/package-lock.json
	cd $* && npm ci --no-audit --no-fund

# What agentguard costs beside the collector's own paths (test/scenarios/cost,
# issue 27), one markdown table with the load at start and end: the household
# and weather examples' CPU per span (utime + stime from /proc) against a plain
# pass-through and one with the batch processor, 5 rounds interleaved, each
# configuration in a fresh process fed real episodes over OTLP/HTTP; the RSS
# per open conversation group net of a pass-through; the span to verdict log
# record latency; temporalcheck's parallel benchmark at 2 cores against 1.
# Each row with the issue's goal; a goal missed is not a failure. The machine
# should be quiet: run nothing else meanwhile.
.PHONY: cost cost-short
cost: $(DIST_BIN)
	$(GO) run ./test/scenarios/cost

# The same, short, for CI: that it measures every row but the benchmark, not
# what it measures.
cost-short: $(DIST_BIN)
	$(GO) run ./test/scenarios/cost -rounds 1 -n 60 -groups 500 -steady-n 200 -bench=false

# The scenario programs of test/scenarios, each a go run from the
# repository's root (their default paths are relative to it), after the
# distribution is built: make scenario NAME=cost [ARGS='-rounds 2 -n 300'].
# The targets below run the same programs with their arguments. A scenario
# that needs the router or an app's npm ci gets it first.
SCENARIO_NEEDS_scaleout = $(ROUTER_BIN)
SCENARIO_NEEDS_live = $(LIVE_APP)/node_modules/.package-lock.json
SCENARIO_NEEDS_guard-live = $(GUARD_NODE_MODULES)
SCENARIO_NEEDS_meters-live = $(GUARD_NODE_MODULES)
SCENARIO_NEEDS_household-loop = $(HOUSEHOLD_AGENT)/node_modules/.package-lock.json
.PHONY: scenario-name
scenario: scenario-name $(DIST_BIN) $(SCENARIO_NEEDS_$(NAME))
	$(GO) run ./test/scenarios/$(NAME) $(ARGS)
scenario-name:
	@test -d "test/scenarios/$(NAME)" -a -n "$(NAME)" || { echo "make scenario NAME=<name>: one of $$(ls test/scenarios | tr '\n' ' ')"; exit 2; }

# The Markov-chain figures at scale of docs/performance.md: chains written by
# gentra into $(DTMC_DATA) (10^5 and 10^6 random chains of out-degree 8, the
# lazy variant, birth-death lines of 10^3 to 10^5 states with self-loops of
# 0.999 and 0.99999), then `agentguard reach` on each, one at a time: the
# method, certified bound and read/solve/write times, the wall time and peak
# memory, and for the lines the largest distance to the exact i/(N+1).
.PHONY: dtmc-scale
DTMC_DATA ?= dist/dtmc
DTMC_CHAINS = random-1e5-5:random:100000:0.05:0 random-1e5-0.5:random:100000:0.005:0 \
	random-1e6-5:random:1000000:0.05:0 random-1e6-0.5:random:1000000:0.005:0 lazy-1e5:lazy:100000:0.05:0 \
	line-1e3-0.999:line:1000:0:0.999 line-1e4-0.999:line:10000:0:0.999 line-1e4-0.99999:line:10000:0:0.99999 \
	line-1e5-0.999:line:100000:0:0.999 line-1e5-0.99999:line:100000:0:0.99999 \
	grid-200:grid:200:0:0 grid-300:grid:300:0:0 grid-500:grid:500:0:0 grid-1000:grid:1000:0:0
dtmc-scale:
	mkdir -p $(DTMC_DATA)
	$(GO) build -o $(DTMC_DATA)/agentguard ./cmd/agentguard
	$(GO) build -o $(DTMC_DATA)/gentra ./internal/core/dtmc/gentra
	@for c in $(DTMC_CHAINS); do \
	  set -- $$(echo $$c | tr : ' '); name=$$1 family=$$2 n=$$3 absorb=$$4 stay=$$5; f=$(DTMC_DATA)/$$name; \
	  [ -f $$f.tra ] || $(DTMC_DATA)/gentra -family $$family -n $$n -absorb $$absorb -stay $$stay -o $$f || exit 1; \
	  echo "== $$name"; \
	  /usr/bin/time -f "   %e s wall, %U s user, %M KB peak" $(DTMC_DATA)/agentguard reach --tra $$f.tra --lab $$f.lab --target target > $$f.out || exit 1; \
	  if [ $$family = line ]; then awk -v N=$$n 'NR>1 && NR<=N+1 {d=$$2-$$1/(N+1); if (d<0) d=-d; if (d>m) m=d} END {printf "   largest |p(i) - i/(N+1)|: %g\n", m}' $$f.out; fi; \
	  if [ $$family = grid ]; then awk -v W=$$n 'NR>1 && NR<=W*W+1 {x=($$1-1)%W+1; d=$$2-x/(W+1); if (d<0) d=-d; if (d>m) m=d} END {printf "   largest |p - x/(W+1)|: %g\n", m}' $$f.out; fi; \
	done

# Prometheus (promtool) and Alertmanager from Debian (2.42, 0.25), installed
# only when missing (CI runs as root): the servers make alerting runs for real.
.PHONY: alerting rules-check alerting-servers
ALERTING = examples/alerting
alerting-servers:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null && command -v prometheus-alertmanager >/dev/null || \
	  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends prometheus prometheus-alertmanager; }

# The alert rules: promtool checks them, then runs their unit tests (every
# alert on synthetic series, rules_test.yml).
rules-check: alerting-servers
	promtool check rules $(ALERTING)/rules.yml
	promtool test rules $(ALERTING)/rules_test.yml

# Alerting end to end (test/scenarios/alerting): Prometheus, Alertmanager and
# the built collector on loopback with examples/alerting's files; a
# keeps-control conversation and an unsafe household episode must page the
# webhook within the bound it prints, the trace links must lead to the
# verdicts' spans, and every dashboard query must return data.
alerting: alerting-servers $(DIST_BIN)
	$(GO) run ./test/scenarios/alerting

# The recordings agentguard mine is measured on (testdata/mining, see its
# README): the three live apps of examples/live playing correct and faulty
# conversations on their scripted models, and household episodes, without a
# collector (test/scenarios/mine-live).
.PHONY: mine-live
mine-live: $(GUARD_NODE_MODULES) $(HOUSEHOLD_AGENT)/node_modules/.package-lock.json
	$(GO) run ./test/scenarios/mine-live

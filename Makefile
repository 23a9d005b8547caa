# agenthost: one binary, built-in Wasm plugins embedded.
GO        ?= go
BIN       := bin/agenthost
BUILTIN   := host/builtin/wasm
# A plugin is a folder with a plugin.json; other folders under plugins/ hold
# the libraries plugins are built from.
PLUGINS   := $(notdir $(patsubst %/plugin.json,%,$(wildcard plugins/*/plugin.json)))
TESTPLUGS := $(notdir $(patsubst %/plugin.json,%,$(wildcard host/wasm/testdata/plugins/*/plugin.json)))
GOTEST    ?= $(GO) test
# TESTPKGS narrows `make test` to some packages (.ci/fresh-clone uses it too).
# The PDK and the SDK are modules of their own (go.work joins them to the
# server's here), which `./...` does not descend into: they are named.
TESTPKGS  ?= ./... ./pdk/... ./sdk/...
# The PDK's copy of go-json (pdk/internal/gojson) is upstream's code with two
# patches (PATCHES.md there): go vet checks it, staticcheck ours only.
NOTVENDORED = grep -v /internal/gojson

.PHONY: all build plugins testplugins test bench run vet lint race testdeps clean webui-vendor mcp-conformance modules

all: build

# The CLI that builds plugins is built first without built-ins, then the
# plugins, then the final binary that embeds them.
bin/agenthost-bootstrap: $(shell find cmd host pdk -name '*.go' -not -path '*/testdata/*') go.mod
	@mkdir -p bin
	$(GO) build -o $@ ./cmd/agenthost

plugins: bin/agenthost-bootstrap
	@mkdir -p $(BUILTIN)
	@for p in $(PLUGINS); do \
		bin/agenthost-bootstrap plugin build plugins/$$p -o $(BUILTIN)/$$p.wasm || exit 1; \
	done

# astext is in AssemblyScript: plugin build runs its node_modules/.bin/asc
# (make testdeps installs it).
testplugins: bin/agenthost-bootstrap
	@mkdir -p host/wasm/testdata/build
	@for p in $(TESTPLUGS); do \
		bin/agenthost-bootstrap plugin build host/wasm/testdata/plugins/$$p -o host/wasm/testdata/build/$$p.wasm \
			$$(cat host/wasm/testdata/plugins/$$p/buildflags 2>/dev/null) || exit 1; \
	done

# The built-ins are compiled into the machine's compile cache right away
# (~/.cache/agenthost/wasm), so the first serve or plugin call finds them.
build: plugins
	$(GO) build -o $(BIN) ./cmd/agenthost
	$(BIN) plugin warm

run: build
	@echo 'A server without an organisation prints a one-time setup link in its log (setup=http://...): open it to create the first organisation and its admin.'
	$(BIN) serve

# The UI's vendored modules (Preact, htm) are committed; this fetches them
# again from npm, checked against host/webui/vendor.lock.
webui-vendor:
	@bash host/webui/vendor.sh

# testdeps installs what the tests need that Go does not bring (PostgreSQL,
# Node packages); it is idempotent and quick when everything is present.
testdeps:
	@bash .ci/testdeps

test: testdeps plugins testplugins
	$(GO) vet $(TESTPKGS)
	$(GOTEST) -count=1 -timeout 25m $(TESTPKGS)

# What a plugin author and an API client outside the repository do: the PDK
# and SDK modules served from a GOPROXY folder made of this checkout, a
# scaffolded plugin and an SDK program built with only `go get` (make test
# runs it too).
modules:
	$(GOTEST) -count=1 -run '^TestOutsideTheRepositoryWithGoGet$$' -v ./cmd/agenthost

# The MCP conformance suite (npm @modelcontextprotocol/conformance 0.1.16,
# and 0.2.0-alpha.12 with --requirements 2026-07-28, on Node 22 from npm)
# against `agenthost serve` on a fresh data directory with the fixture
# plugin enabled (TestMCPConformance in cmd/agenthost; make test runs it too).
# It ends with each suite's totals and fails when a scored scenario fails.
mcp-conformance: testdeps plugins
	@mkdir -p bin; CI=true $(GO) test -count=1 -run '^(TestMCPConformance|TestMCPAuthorizationConformance)$$' -v ./cmd/agenthost > bin/mcp-conformance.log 2>&1; status=$$?; \
	grep -E 'scored scenarios failing|^--- (PASS|FAIL)' bin/mcp-conformance.log; \
	grep -E '^\s*mcp_(oauth_)?test.go:[0-9]+: conformance .*Total:' bin/mcp-conformance.log | sed -E 's/^\s*mcp_(oauth_)?test.go:[0-9]+: //'; \
	exit $$status

# Every benchmark measures with its own loops and prints FIGURE lines.
# The full output goes to bin/bench.log; a failing benchmark fails the target
# and shows its failure, instead of silently printing fewer figures.
bench: testdeps plugins testplugins
	@mkdir -p bin; $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./... ./pdk/... ./sdk/... > bin/bench.log 2>&1; status=$$?; \
	grep '^FIGURE' bin/bench.log; \
	if [ $$status -ne 0 ]; then grep -B2 -A8 -E '^(--- FAIL|panic:)' bin/bench.log; echo "make bench: benchmarks failed (bin/bench.log)"; exit $$status; fi

# The PDK and plugins are checked as what they are built for (wasip1): their
# host-side stubs exist only so their tests compile natively.
bin/staticcheck:
	GOBIN=$(CURDIR)/bin $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

# The race detector over the packages where goroutines meet: the plugin
# pool and the calls that share it, workflows and the event broker, jobs,
# billing's reservations, the storage sweep against uploads, the API and MCP. The runtime's whole suite under
# the race detector takes too long for CI; its concurrent tests run here.
RACEPKGS ?= ./host/blob/ ./host/sweep/ ./host/workflows/ ./host/jobs/ ./host/background/ ./host/billing/ ./host/api/ ./host/mcpserver/ ./host/mcpclient/ ./host/egress/
# Skipped here (they run in make test): 50 conversations at once on the
# embedded database, whose writers, ten times slower under the detector,
# queue past SQLite's 10 s busy timeout.
RACESKIP ?= TestBillingConcurrentRunsOverspendAtMostOneCallEach
race: testdeps testplugins
	$(GO) test -race -count=1 -timeout 30m -skip '$(RACESKIP)' $(RACEPKGS)
	$(GO) test -race -count=1 -timeout 30m -run 'TestHostileSuite|TestManyCallsDoNotLeak|TestUpgradeWhileACallRuns|TestAbandonedGuestReturnsTheCall|TestProgressReports|TestEcho$$' ./host/wasm/

# lint: every tracked Go file gofmt'd, then go vet and staticcheck, native
# and as wasip1.
lint: bin/staticcheck
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./... ./pdk/... ./sdk/...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./pdk/... ./plugins/...
	bin/staticcheck ./host/... ./cmd/... ./migrations/... ./sdk/...
	GOOS=wasip1 GOARCH=wasm bin/staticcheck $$(GOOS=wasip1 GOARCH=wasm $(GO) list ./pdk/... ./plugins/... | $(NOTVENDORED))

clean:
	rm -rf bin $(BUILTIN)/*.wasm host/wasm/testdata/build

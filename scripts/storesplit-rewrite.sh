#!/bin/sh
# Re-applies the store's split (issue #31 item 3) to a tree: renames that
# export what moved declarations need, then the moves and reference
# rewrites of scripts/storesplit/rules.txt (scripts/storesplit/rewrite.go,
# idempotent), then gofmt. Run from the module root after merging a branch
# written before the split; `go build ./... && go vet ./...` names anything
# left. After a merge, a file that conflicts only because one side rewrote
# its imports and identifiers can take the other branch's side: this script
# rewrites it again. A new package needs a place in internal/archtest's
# layerOf (and docs/architecture.md#layers); a new record the store keeps
# goes in the domain's record package (filemeta, kindex, ledger, ...), not in
# the domain's service package, or internal/archtest fails.
set -eu
cd "$(dirname "$0")/.."
export PATH=/usr/local/go/bin:$PATH

# Unexported names the moved declarations are used by, exported first
# (whole words, so running it twice changes nothing).
sed -i 's/\benvNames\b/EnvNames/g; s/\.trustsReadOnly(/.TrustsReadOnly(/g; s/^func (c Config) trustsReadOnly(/func (c Config) TrustsReadOnly(/; s/^\/\/ trustsReadOnly says/\/\/ TrustsReadOnly says/' \
	$(ls host/mcpclient/*.go host/mcpclient/mcpconfig/*.go 2>/dev/null)
sed -i 's/\bg\.key(/g.Key(/g; s/^func (g UsageGroup) key(/func (g UsageGroup) Key(/' \
	$(ls host/billing/*.go host/billing/ledger/*.go 2>/dev/null)
sed -i 's/\bop\.valid()/op.Valid()/g; s/\bop\.chat()/op.Chat()/g; s/^func (op Operation) valid()/func (op Operation) Valid()/; s/^func (op Operation) chat()/func (op Operation) Chat()/' \
	$(ls host/llm/*.go host/llm/modeluse/*.go 2>/dev/null)

go run scripts/storesplit/rewrite.go scripts/storesplit/rules.txt "$@"
gofmt -l -w host cmd plugins internal >/dev/null

# Wharf's everyday commands; each runs exactly what the README shows.

# Build and test with the release go.mod's toolchain line names, as CI
# does; an older local Go fetches it through the module proxy.
export GOTOOLCHAIN := "go1.27.3"

# Run the Hub (extra flags pass through: just run --listen 127.0.0.1:0).
run *FLAGS:
    go run ./cmd/wharf serve {{FLAGS}}

# The test suite, as the README and CI run it.
test:
    go test -race ./...

# The load benchmarks, then the dashboard's in Chromium, then the
# conversations' with the scripted agent; writes bench/RESULTS.md only
# once all three succeeded, so a failed run leaves the last one whole.
bench:
    #!/usr/bin/env bash
    set -euo pipefail
    if ! command -v wrk >/dev/null; then
      if [ "$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq wrk; else echo "the benchmark needs wrk: sudo apt-get install -y wrk" >&2; exit 1; fi
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    go run ./bench/load -out "$tmp/load.md"
    go run ./bench/web > "$tmp/web.md"
    go run ./bench/chat > "$tmp/chat.md"
    go run ./bench/terminal > "$tmp/terminal.md"
    go run ./bench/hosts > "$tmp/hosts.md"
    { cat "$tmp/load.md"; echo; cat "$tmp/web.md"; echo; cat "$tmp/chat.md"; echo; cat "$tmp/terminal.md"; echo; cat "$tmp/hosts.md"; } > bench/RESULTS.md

# Formatting and static checks, as CI runs them.
lint:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...
    go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

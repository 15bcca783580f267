# Wharf's everyday commands; each runs exactly what the README shows.

# go.mod asks for Go 1.27.3; an older local Go fetches it through the
# module proxy instead of refusing.
export GOTOOLCHAIN := "go1.27.3"

# Run the Hub (extra flags pass through: just run --listen 127.0.0.1:0).
run *FLAGS:
    go run ./cmd/wharf serve {{FLAGS}}

# The test suite, as the README and CI run it.
test:
    go test -race ./...

# The load benchmarks, then the dashboard's in Chromium, then the
# conversations' with the scripted agent; writes bench/RESULTS.md.
bench:
    @command -v wrk >/dev/null || if [ "$(id -u)" = 0 ]; then apt-get install -y wrk; else echo "the benchmark needs wrk: sudo apt-get install -y wrk" >&2; exit 1; fi
    go run ./bench/load -out bench/RESULTS.md
    echo >> bench/RESULTS.md
    go run ./adapters/web/perf >> bench/RESULTS.md
    echo >> bench/RESULTS.md
    go run ./adapters/acp/perf >> bench/RESULTS.md

# Formatting and static checks, as CI runs them.
lint:
    test -z "$(gofmt -l $(git ls-files '*.go'))"
    go vet ./...
    go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

#!/usr/bin/env bash
# Runs strata's whole test suite: formatting, vet, unit and integration tests
# (with the race detector on the concurrent packages), and a short fuzzing pass
# over every fuzz target. README.md names this script as the test command.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${FUZZTIME:-5s}"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test"
go test -count=1 ./...

# Concurrent code runs again under the race detector.
race_pkgs=$(go list ./... | grep -E '/(storage|apiserver)(/|$)' || true)
if [ -n "$race_pkgs" ]; then
  echo "== go test -race"
  go test -count=1 -race $race_pkgs
fi

echo "== fuzz (${fuzztime} per target)"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "-- $pkg $target"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime=2s "$pkg"
  done
done
echo "all tests passed"

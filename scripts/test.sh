#!/usr/bin/env bash
# Runs strata's whole test suite: formatting, vet, unit and integration tests
# (with the race detector on the concurrent packages), and a short fuzzing pass
# over every fuzz target. README.md names this script as the test command.
set -euo pipefail
cd "$(dirname "$0")/.."

# A count, not a duration: Go 1.26's fuzz coordinator can report a spurious
# "context deadline exceeded" when a duration -fuzztime expires while a worker
# is mid-call (golang/go#75804, fixed in Go 1.27); a count has no deadline.
fuzztime="${FUZZTIME:-300x}"
stage() { echo "== $1 (at ${SECONDS}s)"; }

stage gofmt
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

stage "go vet"
go vet ./...

stage "go test"
go test -count=1 ./...

# heavy lists the packages that link k8s.io/kubernetes,
# apiextensions-apiserver or kube-apiserver's generic filters (server or
# endpoints: the request timeout, authorization), or whose tests
# do (the API server's registry, its field manager, the request timeout and
# everything above them). Building them again
# instrumented, for the race detector or a fuzzing binary, costs CI over ten
# minutes on two cores; they run once, uninstrumented, with their fuzz seed
# corpora, in "go test" above. ALL=1 instruments them too.
heavy=$(go list -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
  awk '/ k8s.io\/(kubernetes|apiextensions-apiserver)\/| k8s.io\/apiserver\/pkg\/(server|endpoints)\/filters( |$)/{print $1}' | tr '\n' ' ')
light() { for p in "$@"; do case " $heavy " in *" $p "*) if [ "${ALL:-}" = 1 ]; then echo "$p"; fi;; *) echo "$p";; esac; done; }

# Concurrent code runs again under the race detector.
race_pkgs=$(light $(go list ./... | grep -E '/(storage|apiserver)(/|$)' || true))
if [ -n "$race_pkgs" ]; then
  stage "go test -race"
  go test -count=1 -race $race_pkgs
fi

stage "fuzz (${fuzztime} per target)"
for pkg in $(light $(go list ./...)); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "-- $pkg $target"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime=2s "$pkg"
  done
done
echo "all tests passed in ${SECONDS}s"

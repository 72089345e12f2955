#!/usr/bin/env bash
# Start-up of the offline commands, whole process: wall time (hyperfine) and
# peak RSS (GNU time's %M, the median of 10 runs) of strata patch, diff,
# merge3 and pkg on small inputs, for each strata binary given, and the
# 10,000-entry env list with $setElementOrder against a minimal Go program
# calling apimachinery's StrategicMergePatch (bench/cmd/smp-apimachinery).
#
#   bash bench/startup.sh STRATA [STRATA ...]   # e.g. an old build and a new one
#
# Needs hyperfine and GNU time (apt-get install -y hyperfine time).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/" ./bench/cmd/smp-apimachinery ./bench/cmd/envlist
"$work/envlist" -n 10000 "$work"

u=merge3/testdata/scenarios/update
declare -A cmds=(
  [patch]="patch -f examples/deployment.yaml --patch-file examples/env-patch.yaml"
  [diff]="diff cmd/strata/testdata/diff/last.yaml cmd/strata/testdata/diff/new.yaml --current cmd/strata/testdata/diff/live.yaml"
  [merge3]="merge3 --original $u/original --upstream $u/upstream --local $u/local --output $work/out"
  [pkg]="pkg --help"
  [version]="version"
)
rss() { # median peak RSS in MB of 10 runs of "$@"
  for _ in $(seq 10); do
    rm -rf "$work/out"
    /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1
  done | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1024}'
}
echo "| binary | command | wall mean ± σ | wall min | CPU (user+sys, mean) | peak RSS (median of 10) |"
echo "|---|---|---|---|---|---|"
for bin in "$@"; do
  for name in patch diff merge3 pkg version; do
    hyperfine -N --warmup 3 --runs 30 --prepare "rm -rf $work/out" --export-json "$work/h.json" \
      "$bin ${cmds[$name]}" >/dev/null 2>&1
    read -r mean sd min cpu < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("%.1f %.1f %.1f %.1f" % (r["mean"]*1e3, r["stddev"]*1e3, r["min"]*1e3, (r["user"]+r["system"])*1e3))' "$work/h.json")
    # shellcheck disable=SC2086
    echo "| $bin | $name | $mean ± $sd ms | $min ms | $cpu ms | $(rss "$bin" ${cmds[$name]}) MB |"
  done
done

echo
echo "10,000-entry env list with \$setElementOrder (whole process; strata 5 runs, apimachinery 3):"
for bin in "$@"; do
  hyperfine -N --warmup 1 --runs 5 "$bin patch -f $work/pod.json --patch-file $work/patch.json -o json" 2>/dev/null | grep -E "Time|Range"
  echo "  peak RSS $(rss "$bin" patch -f "$work/pod.json" --patch-file "$work/patch.json" -o json) MB ($bin)"
done
hyperfine -N --runs 3 "$work/smp-apimachinery $work/pod.json $work/patch.json" 2>/dev/null | grep -E "Time|Range"
echo "  peak RSS $(for _ in 1 2 3; do /usr/bin/time -f %M "$work/smp-apimachinery" "$work/pod.json" "$work/patch.json" 2>&1 >/dev/null | tail -1; done | sort -n | sed -n 2p | awk '{printf "%.1f", $1/1024}') MB (apimachinery)"

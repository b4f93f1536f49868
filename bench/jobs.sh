#!/usr/bin/env bash
# --jobs on a directory of ranks (docs/performance.md "A directory of ranks"):
# wall time with --jobs 1 and with --jobs J, best of REPEAT runs, for
#   neuron-stats report --no-cache DIR   (parse + aggregate, nothing written)
#   neuron-stats report DIR              (the same, writing the cache; a fresh cache each run)
#   neuron-stats ingest DIR -o out.db
#   neuron-stats kernels --no-cache DIR  (an analysis: parse, kernel statistics)
# and the ideal: one rank's --jobs 1 time x ranks / J.
#
#   bench/jobs.sh                              # 8 and 64 ranks of 2M (decimal units)
#   RANKS="8 64 512" RANK_SIZE=1M bench/jobs.sh
#   JOBS=4 REPEAT=5 bench/jobs.sh              # J (default: the online CPUs)
#
# Ranks are copies of 8 generated traces (bench/gen_trace.py, seeds 0-7) in
# bench/out/ranks-SIZE-N/ (git-ignored). Uses the binary of BUILD (default
# build-release, built as bench/run.sh does unless SKIP_BUILD=1). Prints a
# markdown table.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RANKS=${RANKS:-"8 64"}
RANK_SIZE=${RANK_SIZE:-2M}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN)}
REPEAT=${REPEAT:-3}
BUILD=${BUILD:-build-release}
BIN=$BUILD/src/cli/neuron-stats
OUT=bench/out
PY=${PYTHON:-python3}
mkdir -p "$OUT"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
	[ -d "$BUILD" ] || meson setup "$BUILD" --buildtype=release -Dtests=false >/dev/null
	meson compile -C "$BUILD" >/dev/null
fi

# best LABEL CMD...: the fastest of REPEAT runs' wall time, in s (BEST)
best() {
	local i t0 t1 s
	BEST=
	for ((i = 0; i < REPEAT; i++)); do
		rm -rf "$OUT/jobs-cache" "$OUT/jobs.db"
		t0=$(date +%s%N)
		NEURON_STATS_CACHE_DIR="$OUT/jobs-cache" "$@" >/dev/null
		t1=$(date +%s%N)
		s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
		if [ -z "$BEST" ] || awk -v s="$s" -v b="$BEST" 'BEGIN { exit !(s < b) }'; then BEST=$s; fi
	done
}

SEEDS="$OUT/ranks-$RANK_SIZE-seeds"
mkdir -p "$SEEDS"
for s in 0 1 2 3 4 5 6 7; do
	[ -s "$SEEDS/rank$s.pt.trace.json" ] ||
		$PY bench/gen_trace.py --size "$RANK_SIZE" --seed "$s" -o "$SEEDS/rank$s.pt.trace.json" --quiet
done
ONE=$SEEDS/rank0.pt.trace.json
cat "$SEEDS"/*.json >/dev/null # (the page cache)

echo "| ranks of $RANK_SIZE | command | --jobs 1 (s) | --jobs $JOBS (s) | speed-up | ideal: 1 rank x ranks / $JOBS (s) |"
echo "|---|---|---|---|---|---|"
for n in $RANKS; do
	DIR="$OUT/ranks-$RANK_SIZE-$n"
	if [ ! -d "$DIR" ]; then
		mkdir -p "$DIR"
		for ((i = 0; i < n; i++)); do
			cp "$SEEDS/rank$((i % 8)).pt.trace.json" "$(printf '%s/rank%04d.pt.trace.json' "$DIR" "$i")"
		done
	fi
	cat "$DIR"/*.json >/dev/null
	for cmd in "report --no-cache" "report" "ingest" "kernels --no-cache"; do
		extra=()
		[ "$cmd" = ingest ] && extra=(-o "$OUT/jobs.db")
		# shellcheck disable=SC2086
		best "$BIN" $cmd "$ONE" "${extra[@]}" --jobs 1; one=$BEST
		# shellcheck disable=SC2086
		best "$BIN" $cmd "$DIR" "${extra[@]}" --jobs 1; serial=$BEST
		# shellcheck disable=SC2086
		best "$BIN" $cmd "$DIR" "${extra[@]}" --jobs "$JOBS"; parallel=$BEST
		awk -v n="$n" -v c="$cmd" -v j="$JOBS" -v o="$one" -v s="$serial" -v p="$parallel" 'BEGIN {
			printf "| %d | `%s` | %.3f | %.3f | %.2fx | %.3f |\n", n, c, s, p, s / p, o * n / j }'
	done
done
rm -rf "$OUT/jobs-cache" "$OUT/jobs.db"

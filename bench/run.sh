#!/usr/bin/env bash
# neuron-stats benchmark: the C tool against the plain-Python baseline.
#
#   bench/run.sh                      # sizes 100M and 1G (decimal units)
#   SIZES="100M" bench/run.sh         # just one size
#   BASELINE_MAX=300M bench/run.sh    # run the Python baseline only up to this size (default 2G)
#   REPEAT=5 bench/run.sh             # runs of each C command (the fastest is reported)
#   TOOLS="report baseline" bench/run.sh   # a subset of: report ingest baseline check compare
#   HTA_CAP_MIN=5 bench/run.sh        # stop an HTA process after 5 minutes (default 20)
#   HTA_MAX=200M bench/run.sh         # run HTA only on traces up to this size (default: all)
#
# It does the following:
#   1. builds a release binary (meson, buildtype=release) in build-release/;
#   2. generates deterministic synthetic traces with bench/gen_trace.py into bench/out/
#      (git-ignored), reusing any that already exist;
#   3. measures wall time (the clock), MB/s, events/s and peak RSS (/usr/bin/time -v) for:
#        neuron-stats report --no-cache FILE
#        neuron-stats ingest FILE -o bench/out/out.db
#        python3 bench/baseline.py FILE   (stdlib json.load + tests/oracle/key_averages.py)
#   4. checks that the C table equals the oracle's on each benchmark trace;
#   5. prints a markdown table and writes it into docs/performance.md, between the
#      "bench:begin" / "bench:end" markers, with a description of the machine;
#   6. "compare" (issues 19 and 22): bench/hta_bench.py on the same files, alternating, in
#      CPU seconds (user + sys) and peak RSS: neuron-stats report --no-cache, HTA (run from
#      its source, HTA_SRC, default /tmp/hta, with /usr/bin/python3 and Debian's pandas),
#      the Python baseline, jq, the parse floor (simdjson walking every event: bench/parse_floor.cpp),
#      cat and wc -l; and each analysis (kernels, breakdown,
#      breakdown --idle, overlap, launches) beside HTA's. It rewrites the "hta-tools" and
#      "hta-analyses" blocks of docs/performance.md. HTA at 1 GB takes more than 20 minutes:
#      HTA_CAP_MIN caps it.
# MB = 10^6 bytes. Timings are taken with the trace already in the page cache: it was just
# generated, or read by an earlier run.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SIZES=${SIZES:-"100M 1G"}
BASELINE_MAX=${BASELINE_MAX:-2G}
TOOLS=${TOOLS:-"report ingest baseline check compare"}
REPEAT=${REPEAT:-3}
OUT=bench/out
DOC=${DOC:-docs/performance.md}
BUILD=${BUILD:-build-release}
BIN=$BUILD/src/cli/neuron-stats
PY=${PYTHON:-python3}
mkdir -p "$OUT"

log() { printf '%s\n' "bench: $*" >&2; }

# --- tools -------------------------------------------------------------------------
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
if [ ! -x /usr/bin/time ]; then
	log "installing GNU time (/usr/bin/time)"
	$SUDO apt-get update -qq && $SUDO apt-get install -y -qq time >/dev/null
fi
if [[ " $TOOLS " == *" compare "* ]] && ! command -v jq >/dev/null; then
	log "installing jq"
	$SUDO apt-get install -y -qq jq >/dev/null
fi
if [[ " $TOOLS " == *" compare "* ]] && { ! command -v g++ >/dev/null || [ ! -e /usr/include/simdjson.h ]; }; then
	log "installing g++ and libsimdjson-dev (the parse floor, bench/parse_floor.cpp)"
	{ $SUDO apt-get update -qq && $SUDO apt-get install -y -qq g++ libsimdjson-dev >/dev/null; } ||
		log "could not install them: the parse floor is not run"
fi

# --- build -------------------------------------------------------------------------
if [ "${SKIP_BUILD:-0}" != 1 ]; then
	if [ -d "$BUILD" ]; then
		meson setup --reconfigure "$BUILD" --buildtype=release -Dtests=false >/dev/null
	else
		meson setup "$BUILD" --buildtype=release -Dtests=false >/dev/null
	fi
	meson compile -C "$BUILD" >/dev/null
fi
[ -x "$BIN" ] || { log "no binary at $BIN"; exit 1; }

# --- helpers -------------------------------------------------------------------------
to_bytes() { $PY -c 'import sys; sys.path.insert(0, "bench"); import gen_trace; print(gen_trace.parse_size(sys.argv[1]))' "$1"; }

# measure LABEL OUTFILE CMD... -> sets WALL (s, from the clock around the command: GNU
# time's own figure has a 10 ms resolution) and RSS (KiB, from /usr/bin/time -v)
measure() {
	local label=$1 outfile=$2; shift 2
	local tf="$OUT/time.$$.txt" t0 t1
	t0=$(date +%s%N)
	if ! /usr/bin/time -v -o "$tf" "$@" >"$outfile" 2>"$OUT/stderr.$$.txt"; then
		log "$label failed:"; tail -5 "$OUT/stderr.$$.txt" >&2
		WALL=NaN; RSS=NaN; rm -f "$tf"; return 1
	fi
	t1=$(date +%s%N)
	WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
	RSS=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tf")
	rm -f "$tf"
}

# best (fastest) of REPEAT runs: wall time and the RSS of that run. The minimum is
# the least disturbed by other load on a shared machine; MEDIAN (the middle run, the
# slower of the two for an even count) shows how far the others were.
measure_best() {
	local label=$1 outfile=$2; shift 2
	local runs=() i sorted
	MEDIAN=
	for ((i = 0; i < REPEAT; i++)); do
		[ -n "${PRE:-}" ] && eval "$PRE"
		measure "$label" "$outfile" "$@" || return 1
		runs+=("$WALL $RSS")
	done
	sorted=$(printf '%s\n' "${runs[@]}" | sort -g)
	read -r WALL RSS <<<"${sorted%%$'\n'*}"
	MEDIAN=$(awk -v n="${#runs[@]}" 'NR == int(n / 2) + 1 {print $1}' <<<"$sorted")
}

ROWS=()
CHECKS=()
NOTES=()
row() { # label size_bytes events [median]
	local label=$1 bytes=$2 events=$3 median=${4:-}
	ROWS+=("$(awk -v l="$label" -v f="$FILE_LABEL" -v b="$bytes" -v e="$events" -v w="$WALL" -v r="$RSS" -v m="$median" 'BEGIN {
		if (w == "NaN") { printf "| %s | %s | failed | | | | |", f, l; exit }
		ws = (w > 0) ? w : 0.005
		printf "| %s | %s | %.3f | %s | %.1f | %.0f | %.0f |", f, l, w, (m == "" ? "" : sprintf("%.3f", m)), b / 1e6 / ws, e / ws, r / 1024 }')")
	printf '%s\n' "${ROWS[-1]}" >&2
}

has() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }
avail_kib() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }

# --- run ---------------------------------------------------------------------------------
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
for size in $SIZES; do
	FILE="$OUT/trace-$size.json"
	if [ ! -s "$FILE" ] || [ ! -s "$FILE.meta.json" ]; then
		log "generating $FILE"
		$PY bench/gen_trace.py --size "$size" -o "$FILE" --quiet
	fi
	BYTES=$(stat -c %s "$FILE")
	EVENTS=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$FILE.meta.json")
	FILE_LABEL="$size ($(awk -v b="$BYTES" 'BEGIN{printf "%.0f MB", b/1e6}'), $EVENTS events)"
	log "$FILE: $BYTES bytes, $EVENTS events"
	cat "$FILE" >/dev/null   # warm the page cache

	if has report; then
		measure_best "report" "$OUT/report-$size.txt" "$BIN" report --no-cache "$FILE" || true
		row "\`neuron-stats report --no-cache\`" "$BYTES" "$EVENTS" "$MEDIAN"
	fi
	if has ingest; then
		PRE="rm -f $OUT/out.db $OUT/out.db-wal $OUT/out.db-shm" measure_best "ingest" "$OUT/ingest-$size.txt" "$BIN" ingest "$FILE" -o "$OUT/out.db" || true
		row "\`neuron-stats ingest -o out.db\`" "$BYTES" "$EVENTS" "$MEDIAN"
		DBSIZE=$(stat -c %s "$OUT/out.db" 2>/dev/null || echo 0)
		NOTES+=("* $size: the \`ingest\` database is $(awk -v b="$DBSIZE" 'BEGIN{printf "%.1f MB", b/1e6}') ($(awk -v b="$DBSIZE" -v t="$BYTES" 'BEGIN{printf "%.0f%%", 100*b/t}') of the trace).")
		rm -f "$OUT/out.db" "$OUT/out.db-wal" "$OUT/out.db-shm"
	fi

	MAXB=$(to_bytes "$BASELINE_MAX")
	NEED_KIB=$((BYTES / 1024 * 12))   # ~8.5x the file size was measured; keep headroom
	if ! has baseline; then
		:
	elif [ "$BYTES" -le "$MAXB" ] && [ "$(avail_kib)" -gt "$NEED_KIB" ]; then
		log "python baseline on $FILE (minutes for 1 GB)"
		if measure "baseline" "$OUT/baseline-$size.txt" $PY bench/baseline.py "$FILE"; then
			row "Python baseline (\`json.load\` + oracle)" "$BYTES" "$EVENTS"
			BL=$(grep '^baseline:' "$OUT/stderr.$$.txt" || true)
			printf '%s\n' "$BL" >&2
			[ -n "$BL" ] && NOTES+=("* $size: Python phases: ${BL#baseline: }.")
			# compare the default tables (row limit 100)
			if cmp -s "$OUT/report-$size.txt" "$OUT/baseline-$size.txt"; then
				CHECKS+=("| $size | \`neuron-stats report\` vs oracle, default table | identical |")
			else
				CHECKS+=("| $size | \`neuron-stats report\` vs oracle, default table | **differs** (\`diff bench/out/report-$size.txt bench/out/baseline-$size.txt\`) |")
			fi
		else
			row "Python baseline (\`json.load\` + oracle)" "$BYTES" "$EVENTS"
		fi
	else
		log "skipping the Python baseline on $size (BASELINE_MAX=$BASELINE_MAX, MemAvailable $(avail_kib) KiB)"
		ROWS+=("| $FILE_LABEL | Python baseline | skipped (over BASELINE_MAX=$BASELINE_MAX or not enough memory) | | | |")
	fi
	# full-table comparison (every row), oracle vs C, on the smaller traces
	if has check && [ "$BYTES" -le 200000000 ]; then
		"$BIN" "$FILE" --row-limit -1 >"$OUT/c-full-$size.txt" 2>/dev/null || true
		$PY tests/oracle/key_averages.py "$FILE" --row-limit -1 >"$OUT/oracle-full-$size.txt" 2>/dev/null || true
		if [ -s "$OUT/oracle-full-$size.txt" ] && cmp -s "$OUT/c-full-$size.txt" "$OUT/oracle-full-$size.txt"; then
			CHECKS+=("| $size | \`neuron-stats FILE --row-limit -1\` vs oracle | identical ($(wc -l <"$OUT/oracle-full-$size.txt") lines) |")
		else
			CHECKS+=("| $size | \`neuron-stats FILE --row-limit -1\` vs oracle | **differs** (\`diff bench/out/c-full-$size.txt bench/out/oracle-full-$size.txt\`) |")
		fi
	fi
done
rm -f "$OUT"/stderr.$$.txt
TRACES=()
for size in $SIZES; do TRACES+=("$OUT/trace-$size.json"); done

# --- report ---------------------------------------------------------------------------------
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
MEM=$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)
CC=$(cc --version 2>/dev/null | head -1)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- src 2>/dev/null || COMMIT="$COMMIT + uncommitted changes in src/"
RES="$OUT/results.md"
{
	echo "Measured $(date -u +'%Y-%m-%d %H:%M UTC') by \`bench/run.sh\`."
	echo
	echo "* Machine: $(nproc) CPUs ($CPU), $MEM RAM, Linux $(uname -r)."
	echo "* Build: \`meson setup $BUILD --buildtype=release\`, $CC, source at $COMMIT."
	echo "* Python: $($PY --version 2>&1)."
	echo "* Each C figure is the fastest of $REPEAT runs (\"median s\": the middle one). The Python baseline ran once. The trace was in the page cache."
	echo "* Load average (1/5/15 min) at the start: $LOAD_START; at the end: $LOAD_END.$(awk -v l="${LOAD_START%% *}" -v n="$(nproc)" 'BEGIN { if (l + 0 > n + 0.5) printf " Other work was running on the machine, so treat the times as upper bounds." }')"
	echo "* MB = 10^6 bytes."
	echo
	echo "| trace | command | wall s | median s | MB/s | events/s | peak RSS MiB |"
	echo "|---|---|---:|---:|---:|---:|---:|"
	printf '%s\n' "${ROWS[@]}"
	echo
	printf '%s\n' "${NOTES[@]}"
	echo
	echo "| trace | check | result |"
	echo "|---|---|---|"
	printf '%s\n' "${CHECKS[@]}"
} >"$RES"
cat "$RES"

if [ "${#ROWS[@]}" -eq 0 ]; then
	:   # TOOLS without report, ingest or baseline: leave the table as it is
elif [ -f "$DOC" ] && grep -q '<!-- bench:begin -->' "$DOC" && grep -q '<!-- bench:end -->' "$DOC"; then
	$PY - "$DOC" "$RES" <<'EOF'
import sys
doc, res = sys.argv[1], sys.argv[2]
t = open(doc).read()
a = t.index("<!-- bench:begin -->") + len("<!-- bench:begin -->")
b = t.index("<!-- bench:end -->")
open(doc, "w").write(t[:a] + "\n" + open(res).read() + t[b:])
EOF
	log "updated $DOC"
else
	log "$DOC has no bench:begin/bench:end markers; results are in $RES"
fi

# --- beside HTA, jq, cat, wc -l (issues 19, 22) -----------------------------------------------
if has compare; then
	log "compare: neuron-stats, HTA, the Python baseline, jq, the parse floor, cat, wc -l (HTA: minutes at 100 MB)"
	$PY bench/hta_bench.py "${TRACES[@]}" --bin "$BIN" --repeat "$REPEAT" --doc "$DOC" \
		--raw "$OUT/hta_bench.raw.json" --out "$OUT/hta_bench.md"
fi

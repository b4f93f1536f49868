#!/usr/bin/env bash
# Prints the traces of TRACE_DIR one per line, as absolute paths, in the order
# (and by the rules) in which `neuron-stats report DIR` and `ingest DIR` take
# them (src/ingest/discover.c): every regular file named *.json, *.json.gz or
# *.json.zst below TRACE_DIR (symbolic links followed, at most 16 folders
# deep, names starting with '.' skipped) whose first 64 KiB, decompressed,
# contain "traceEvents", "schemaVersion" or "ph"; sorted bytewise by path.
# The paths keep TRACE_DIR's symbolic links (realpath -s), so that they are
# the paths that `neuron-stats report --merge ABS_TRACE_DIR` reads.
#   scripts/list-traces.sh TRACE_DIR > traces.list
# Used by scripts/slurm/submit.sh and scripts/parallel/run.sh (docs/scale.md).
# A path with a newline cannot be one line of a list: refused (exit 1).
set -euo pipefail
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
	echo "usage: $0 TRACE_DIR (a directory)" >&2
	exit 2
fi
dir=$(realpath -s "$1")

# looks_like_kineto FILE: the sniff of discover.c (zstd -dcf reads plain,
# gzip and zstd alike, by content); without pipefail, since grep -q may
# stop reading before head and zstd are done
looks_like_kineto() (
	set +o pipefail
	zstd -dcf -- "$1" 2>/dev/null | head -c 65536 | grep -qaE '"traceEvents"|"schemaVersion"|"ph"'
)

found=0
while IFS= read -r -d '' path; do
	case $path in
	*$'\n'*)
		echo "list-traces: a path with a newline cannot be listed: ${path@Q}" >&2
		exit 1
		;;
	esac
	if looks_like_kineto "$path"; then
		printf '%s\n' "$path"
		found=$((found + 1))
	fi
done < <(find -L "$dir" -mindepth 1 -maxdepth 17 -name '.*' -prune -o \
	-type f \( -name '*.json' -o -name '*.json.gz' -o -name '*.json.zst' \) -print0 | LC_ALL=C sort -z)
if [ "$found" -eq 0 ]; then
	echo "list-traces: $dir: no trace found" >&2
	exit 1
fi

#!/usr/bin/env bash
# The Slurm array job of scripts/slurm/submit.sh without a scheduler: GNU
# parallel runs one `neuron-stats ingest TRACE -o SHARD` per trace of
# TRACE_DIR, here or on the hosts of an --sshloginfile, then this host merges
# the shards (docs/scale.md). OUT_DIR gets the same files as with Slurm:
#   OUT_DIR/traces.list, OUT_DIR/shards/shard_IIIII.db, OUT_DIR/run.db,
#   OUT_DIR/logs/ingest.joblog (parallel's --joblog: host, time, exit per trace)
#
#   scripts/parallel/run.sh [options] TRACE_DIR OUT_DIR
#
# Options (each also from the environment variable named; a flag wins):
#   -j, --jobs N            NS_PARALLEL_JOBS          ingests at once per host (parallel -j; default: its CPUs)
#   -S, --sshloginfile F    NS_PARALLEL_SSHLOGINFILE  run the ingests over ssh on F's hosts (parallel's format)
# The binary is $NEURON_STATS, else neuron-stats on PATH; with ssh it, TRACE_DIR
# and OUT_DIR must be at the same paths on every host (a shared filesystem).
# The first failed ingest stops the run (parallel --halt now,fail=1), exit 1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	echo "usage: $0 [-j N] [-S SSHLOGINFILE] TRACE_DIR OUT_DIR (see the comment at its top)" >&2
	exit 2
}

jobs=${NS_PARALLEL_JOBS:-} sshloginfile=${NS_PARALLEL_SSHLOGINFILE:-}
args=()
while [ $# -gt 0 ]; do
	case $1 in
	-j | --jobs) jobs=${2:?$1 needs a value}; shift 2 ;;
	-S | --sshloginfile) sshloginfile=${2:?$1 needs a value}; shift 2 ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) args+=("$1"); shift ;;
	esac
done
[ ${#args[@]} -eq 2 ] || usage
trace_dir=${args[0]}
out_dir=$(realpath -s "${args[1]}")

bin=${NEURON_STATS:-$(command -v neuron-stats || true)}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	echo "run.sh: no neuron-stats binary (set NEURON_STATS, or put neuron-stats on PATH)" >&2
	exit 2
fi
bin=$(realpath "$bin")

mkdir -p "$out_dir/shards" "$out_dir/logs"
list=$out_dir/traces.list
"$here/../list-traces.sh" "$trace_dir" >"$list"
# one line per task: TRACE<tab>SHARD, the shard named as scripts/slurm/ingest.sbatch names it
tasks=$out_dir/tasks.tsv
awk -v d="$out_dir/shards" '{ printf "%s\t%s/shard_%05d.db\n", $0, d, NR - 1 }' "$list" >"$tasks"
shards=()
while IFS=$'\t' read -r _ shard; do shards+=("$shard"); done <"$tasks"

opts=(--colsep '\t' --halt 'now,fail=1' --joblog "$out_dir/logs/ingest.joblog" --arg-file "$tasks")
[ -z "$jobs" ] || opts+=(-j "$jobs")
[ -z "$sshloginfile" ] || opts+=(--sshloginfile "$sshloginfile")
echo "run.sh: ${#shards[@]} traces -> $out_dir/shards" >&2
parallel "${opts[@]}" "$bin" ingest '{1}' -o '{2}' --jobs 1 --quiet
echo "run.sh: merging ${#shards[@]} shards -> $out_dir/run.db" >&2
"$bin" merge "${shards[@]}" -o "$out_dir/run.db"

#!/usr/bin/env bash
# Ingest every trace of TRACE_DIR on a Slurm cluster, one array task per
# trace, then merge the shards in a job that depends on them (docs/scale.md):
#   OUT_DIR/traces.list          the traces (scripts/list-traces.sh), line I+1 for task I
#   OUT_DIR/shards/shard_IIIII.db   task I's `neuron-stats ingest TRACE -o SHARD`
#   OUT_DIR/run.db               `neuron-stats merge SHARDS -o run.db`, once all tasks exited 0
#   OUT_DIR/logs/                ingest-ARRAYJOB_TASK.out, merge-JOB.out
#   OUT_DIR/job_ids              the two job ids, as printed
# then `neuron-stats report --merge OUT_DIR/run.db` prints what
# `neuron-stats report --merge TRACE_DIR` would.
#
#   scripts/slurm/submit.sh [options] TRACE_DIR OUT_DIR [-- SBATCH_ARGS...]
#
# Prints "ARRAY_JOB_ID MERGE_JOB_ID" on stdout. Options (each also from the
# environment variable named; a flag wins):
#   -p, --partition P     NS_SLURM_PARTITION   partition of both jobs
#   -A, --account A       NS_SLURM_ACCOUNT     account of both jobs
#   -t, --time T          NS_SLURM_TIME        time limit of one ingest task (sbatch --time)
#       --mem M           NS_SLURM_MEM         memory of one ingest task (sbatch --mem, e.g. 4G)
#       --merge-time T    NS_SLURM_MERGE_TIME  time limit of the merge job
#       --merge-mem M     NS_SLURM_MERGE_MEM   memory of the merge job
#       --max-running K   NS_SLURM_MAX_RUNNING at most K ingest tasks at once (--array=0-N%K)
#       --wait                                 return when the merge job ends: 0 if it completed, else 1
#                                              (its state asked every $NS_SLURM_POLL s, default 5)
#       --dry-run                              print the sbatch commands, submit nothing
# SBATCH_ARGS after -- go to both sbatch calls. The binary is $NEURON_STATS,
# else neuron-stats on PATH; it, TRACE_DIR and OUT_DIR must be at the same
# paths on the compute nodes (a shared filesystem). A failed ingest task
# cancels the merge job (--kill-on-invalid-dep=yes) and leaves its log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	sed -n 's/^#   scripts/scripts/p' "$0" >&2
	echo "see the comment at the top of $0" >&2
	exit 2
}

partition=${NS_SLURM_PARTITION:-} account=${NS_SLURM_ACCOUNT:-}
time_limit=${NS_SLURM_TIME:-} mem=${NS_SLURM_MEM:-}
merge_time=${NS_SLURM_MERGE_TIME:-} merge_mem=${NS_SLURM_MERGE_MEM:-}
max_running=${NS_SLURM_MAX_RUNNING:-} wait=0 dry_run=0
poll=${NS_SLURM_POLL:-5}
args=()
while [ $# -gt 0 ]; do
	case $1 in
	-p | --partition) partition=${2:?$1 needs a value}; shift 2 ;;
	-A | --account) account=${2:?$1 needs a value}; shift 2 ;;
	-t | --time) time_limit=${2:?$1 needs a value}; shift 2 ;;
	--mem) mem=${2:?$1 needs a value}; shift 2 ;;
	--merge-time) merge_time=${2:?$1 needs a value}; shift 2 ;;
	--merge-mem) merge_mem=${2:?$1 needs a value}; shift 2 ;;
	--max-running) max_running=${2:?$1 needs a value}; shift 2 ;;
	--wait) wait=1; shift ;;
	--dry-run) dry_run=1; shift ;;
	-h | --help) usage ;;
	--) shift; break ;;
	-*) echo "submit.sh: unknown option $1" >&2; usage ;;
	*) args+=("$1"); shift ;;
	esac
done
[ ${#args[@]} -eq 2 ] || usage
trace_dir=${args[0]}
out_dir=$(realpath -s "${args[1]}")
extra=("$@")

bin=${NEURON_STATS:-$(command -v neuron-stats || true)}
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	echo "submit.sh: no neuron-stats binary (set NEURON_STATS, or put neuron-stats on PATH)" >&2
	exit 2
fi
bin=$(realpath "$bin")

mkdir -p "$out_dir/shards" "$out_dir/logs"
list=$out_dir/traces.list
"$here/../list-traces.sh" "$trace_dir" >"$list"
n=$(wc -l <"$list")

common=()
[ -z "$partition" ] || common+=(--partition="$partition")
[ -z "$account" ] || common+=(--account="$account")
ingest_opts=(--array="0-$((n - 1))${max_running:+%$max_running}" --output="$out_dir/logs/ingest-%A_%a.out")
[ -z "$time_limit" ] || ingest_opts+=(--time="$time_limit")
[ -z "$mem" ] || ingest_opts+=(--mem="$mem")
merge_opts=(--kill-on-invalid-dep=yes --output="$out_dir/logs/merge-%j.out")
[ -z "$merge_time" ] || merge_opts+=(--time="$merge_time")
[ -z "$merge_mem" ] || merge_opts+=(--mem="$merge_mem")

ingest_cmd=(sbatch --parsable "${common[@]}" "${ingest_opts[@]}" "${extra[@]}"
	"$here/ingest.sbatch" "$bin" "$list" "$out_dir/shards")
# merge_cmd ARRAY_JOB: the merge job's sbatch command, in merge_cmd_args
merge_cmd() {
	merge_cmd_args=(sbatch --parsable --dependency="afterok:$1" "${common[@]}" "${merge_opts[@]}" "${extra[@]}"
		"$here/merge.sbatch" "$bin" "$list" "$out_dir/shards" "$out_dir/run.db")
}
if [ "$dry_run" -eq 1 ]; then
	merge_cmd ARRAY_JOB_ID
	for cmd in ingest_cmd merge_cmd_args; do
		declare -n words=$cmd
		printf -v line '%q ' "${words[@]}"
		echo "${line% }"
	done
	exit 0
fi

# sbatch --parsable prints "JOBID" or "JOBID;CLUSTER"
array_job=$("${ingest_cmd[@]}")
array_job=${array_job%%;*}
echo "submit.sh: $n traces; ingest: array job $array_job, logs in $out_dir/logs" >&2
merge_cmd "$array_job"
merge_job=$("${merge_cmd_args[@]}")
merge_job=${merge_job%%;*}
echo "submit.sh: merge: job $merge_job (afterok:$array_job) -> $out_dir/run.db" >&2
echo "$array_job $merge_job" | tee "$out_dir/job_ids"
[ "$wait" -eq 1 ] || exit 0
# not sbatch --wait: it polls ever more slowly, and returns 0 for a merge job
# cancelled because an ingest task failed (a job that never ran)
misses=0
while :; do
	state=$(scontrol show job -o "$merge_job" 2>/dev/null | grep -o 'JobState=[A-Z_]*' || true)
	case ${state#JobState=} in
	COMPLETED) exit 0 ;;
	PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED | RESIZING | SUSPENDED) misses=0 ;;
	"")
		# slurmctld busy, or the job's record gone (MinJobAge after it ended)
		misses=$((misses + 1))
		[ "$misses" -lt 10 ] || { echo "submit.sh: merge job $merge_job: unknown to scontrol" >&2; exit 1; }
		;;
	*)
		echo "submit.sh: merge job $merge_job: ${state#JobState=} (see $out_dir/logs)" >&2
		exit 1
		;;
	esac
	sleep "$poll"
done

/* neuron-stats merge DB... -o DB: databases written by ingest (one per
 * rank, say) -> one database (docs/schema.md "Merging databases"). */
#include <stdlib.h>

#include "cli/cli.h"
#include "store/store.h"

static const char *opt_output;
static bool opt_force;

static const struct ns_opt merge_opts[] = {
	NS_FILE('o', "output", "DB", "database to write (replaced atomically)", &opt_output),
	NS_FLAG(0, "force", "replace DB even if it is not a neuron-stats database", &opt_force),
	NS_OPT_LAST,
};

const struct ns_cmd_spec cmd_merge_spec = {
	.name = "merge",
	.usage = "neuron-stats merge SHARD.db... -o DB [options]",
	.summary = "Merge databases written by ingest (one per rank, say) into one, as if ingested together.",
	.details = "Every trace of every SHARD (ingest's databases, of this schema version) is copied\n"
		   "with its rows as they are, its ids renumbered; the traces are ordered by path, as a\n"
		   "directory's are (the same path: by rank, then in the order given). Every command\n"
		   "then reads DB as it reads the traces: `ingest rank_$i.json -o shard_$i.db` on each\n"
		   "machine, then `merge shard_*.db -o run.db` reports exactly what the directory of the\n"
		   "traces does. One shard is open at a time; memory does not grow with their number. DB\n"
		   "is written as by ingest (atomically; refused before any work when it is one of the\n"
		   "SHARDs). A SHARD that is not a neuron-stats database is exit 1, one of another\n"
		   "schema version exit 3. Schema: docs/schema.md.",
	.opts = merge_opts,
	.min_args = 1,
	.max_args = -1,
	.complete_args = NS_COMPLETE_FILE,
};

int cmd_merge(int argc, char **argv)
{
	char **pos, *target = NULL;
	int npos, rc;
	struct ns_source_id *ids = NULL;
	struct ns_error err = { 0 };

	rc = ns_opt_parse(&cmd_merge_spec, argc, argv, &pos, &npos);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (!opt_output) {
		ns_error_set(&err, NS_ERR_USAGE, "merge: -o DB is required");
		return ns_cli_fail(&err);
	}
	if (!(rc = ns_source_ids(pos, (size_t)npos, &ids, &err)) &&
	    !(rc = ns_store_check_output(opt_output, opt_force, ids, (size_t)npos, &target, &err)))
		rc = ns_store_merge(target, pos, (size_t)npos, &err);
	ns_source_ids_free(ids, ids ? (size_t)npos : 0);
	free(target);
	return rc ? ns_cli_fail(&err) : 0;
}

/* pipeline/: the cache policy (pipeline/cache.c; the result cache key) and the sizes read from
 * the environment (pipeline/env.c). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/cache.h"
#include "pipeline/env.h"

static char tmp_dir[] = "/tmp/test-pipeline-XXXXXX";

static void make_tmp_dir(void)
{
	cr_assert_not_null(mkdtemp(tmp_dir));
	unsetenv("XDG_CACHE_HOME");
	unsetenv("NEURON_STATS_CACHE_DIR");
	setenv("HOME", tmp_dir, 1);
}

static void remove_tmp_dir(void)
{
	char *cmd;
	cr_assert_geq(asprintf(&cmd, "rm -rf '%s'", tmp_dir), 0);
	cr_expect_eq(system(cmd), 0);
	free(cmd);
}

TestSuite(pipeline, .init = make_tmp_dir, .fini = remove_tmp_dir);

static const struct ns_source_id trace = { "t.json", "/data/t.json", 1234, 5678, 1, 2, false };

Test(pipeline, sizes_take_k_m_g_suffixes_and_a_bound)
{
	uint64_t n = 0;
	cr_expect(ns_parse_size("0", UINT64_MAX, &n) && n == 0);
	cr_expect(ns_parse_size("4K", UINT64_MAX, &n) && n == 4096);
	cr_expect(ns_parse_size("3M", UINT64_MAX, &n) && n == 3u << 20);
	cr_expect(ns_parse_size("2G", UINT64_MAX, &n) && n == UINT64_C(2) << 30);
	cr_expect(ns_parse_size("1M", 1u << 20, &n) && n == 1u << 20);
	cr_expect_not(ns_parse_size("2M", 1u << 20, &n), "above max");
	const char *bad[] = { "", "x", "-1", " 1", "1KB", "1k", "1.5", "18446744073709551616" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_not(ns_parse_size(bad[i], UINT64_MAX, &n), "'%s'", bad[i]);
	cr_expect_not(ns_parse_size(NULL, UINT64_MAX, &n));
}

Test(pipeline, a_size_in_the_environment_warns_when_it_is_not_one)
{
	struct ns_error warn = { 0 };
	unsetenv("NS_TEST_SIZE");
	cr_expect_eq(ns_env_size("NS_TEST_SIZE", 1, UINT64_MAX, &warn), 0);
	cr_expect_str_empty(warn.msg, "unset: the default, silently");
	setenv("NS_TEST_SIZE", "2M", 1);
	cr_expect_eq(ns_env_size("NS_TEST_SIZE", 1, UINT64_MAX, &warn), 2u << 20);
	cr_expect_str_empty(warn.msg);
	const char *bad[] = { "x", "0", "5000" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&warn, 0, sizeof(warn));
		setenv("NS_TEST_SIZE", bad[i], 1);
		cr_expect_eq(ns_env_size("NS_TEST_SIZE", 1, 4096, &warn), 0, "'%s'", bad[i]);
		cr_expect_not_null(strstr(warn.msg, "is not a number from 1 to 4096; using the default"), "%s", warn.msg);
		cr_expect_eq(strncmp(warn.msg, "NS_TEST_SIZE=", 13), 0, "%s", warn.msg);
	}
	/* a least value: NEURON_STATS_SPLIT_PARTS=1 is no number of parts (it was taken as 2) */
	setenv("NS_TEST_SIZE", "1", 1);
	memset(&warn, 0, sizeof(warn));
	cr_expect_eq(ns_env_size("NS_TEST_SIZE", 2, 64, &warn), 0);
	cr_expect_str_eq(warn.msg, "NS_TEST_SIZE=1 is not a number from 2 to 64; using the default");
	setenv("NS_TEST_SIZE", "2", 1);
	memset(&warn, 0, sizeof(warn));
	cr_expect_eq(ns_env_size("NS_TEST_SIZE", 2, 64, &warn), 2);
	cr_expect_str_empty(warn.msg);
	unsetenv("NS_TEST_SIZE");
}

Test(pipeline, the_cache_folder_comes_from_the_environment)
{
	char *want, *dir = ns_pipeline_cache_folder();
	struct stat st;
	cr_assert_geq(asprintf(&want, "%s/.cache/neuron-stats", tmp_dir), 0);
	cr_expect_str_eq(dir, want, "$HOME/.cache/neuron-stats");
	cr_expect(stat(want, &st) == 0 && S_ISDIR(st.st_mode), "created");
	free(dir);
	setenv("XDG_CACHE_HOME", "relative", 1);
	dir = ns_pipeline_cache_folder();
	cr_expect_str_eq(dir, want, "a relative XDG_CACHE_HOME is ignored");
	free(dir);
	free(want);
	cr_assert_geq(asprintf(&want, "%s/xdg", tmp_dir), 0);
	setenv("XDG_CACHE_HOME", want, 1);
	dir = ns_pipeline_cache_folder();
	cr_expect_eq(strncmp(dir, want, strlen(want)), 0, "%s", dir);
	cr_expect_str_eq(dir + strlen(want), "/neuron-stats");
	free(dir);
	free(want);
	cr_assert_geq(asprintf(&want, "%s/own", tmp_dir), 0);
	setenv("NEURON_STATS_CACHE_DIR", want, 1);
	dir = ns_pipeline_cache_folder();
	cr_expect_str_eq(dir, want, "NEURON_STATS_CACHE_DIR first");
	free(dir);
	free(want);
	unsetenv("NEURON_STATS_CACHE_DIR");
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	cr_expect_null(ns_pipeline_cache_folder(), "no folder at all");
}

Test(pipeline, what_the_cache_keeps)
{
	struct ns_source_id stream = trace;
	bool valid = true;
	char *db = ns_pipeline_cache_lookup(&trace, 1, false, &valid);
	cr_assert_not_null(db);
	cr_expect_eq(strncmp(db, tmp_dir, strlen(tmp_dir)), 0, "%s", db);
	cr_expect_str_eq(db + strlen(db) - 3, ".db");
	cr_expect_not(valid, "nothing written yet");
	free(db);

	valid = true;
	cr_expect_null(ns_pipeline_cache_lookup(&trace, 1, true, &valid), "Neuron exports are not in the key");
	cr_expect_not(valid);
	stream.stream = true;
	cr_expect_null(ns_pipeline_cache_lookup(&stream, 1, false, &valid), "a stream has no identity");
	unsetenv("HOME");
	cr_expect_null(ns_pipeline_cache_lookup(&trace, 1, false, &valid), "no cache folder");
}

static char *write_file(const char *name, const char *text)
{
	char *path;
	cr_assert_geq(asprintf(&path, "%s/%s", tmp_dir, name), 0);
	FILE *f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* The result cache's key: the same for the same run, another when an
 * argument, a NEURON_STATS_* variable or the trace's identity changes;
 * none for a stream or a capture holding a Neuron file. */
Test(pipeline, the_result_key_follows_the_options_the_environment_and_the_trace)
{
	char *path = write_file("trace.json", "{\"traceEvents\": []}\n");
	char sort[] = "--sort", key_name[] = "self_cpu", dash_text[] = "-";
	char *args[] = { path, sort, key_name }, *dash = dash_text;
	size_t len[4];
	char *key[4];
	key[0] = ns_pipeline_result_key("report", args, 3, args, 1, &len[0]);
	key[1] = ns_pipeline_result_key("report", args, 3, args, 1, &len[1]);
	cr_assert_not_null(key[0]);
	cr_assert_not_null(key[1]);
	cr_expect(len[0] == len[1] && memcmp(key[0], key[1], len[0]) == 0, "the same run, the same key");
	cr_expect_not_null(strstr(key[0], "\ncommand report\n"));
	cr_expect_not_null(strstr(key[0], "\narg 8:self_cpu\n"));
	key[2] = ns_pipeline_result_key("report", args, 2, args, 1, &len[2]);
	cr_expect(len[2] != len[0] || memcmp(key[2], key[0], len[0]) != 0, "an argument less");
	setenv("NEURON_STATS_MAX_RATIO", "10", 1);
	key[3] = ns_pipeline_result_key("report", args, 3, args, 1, &len[3]);
	unsetenv("NEURON_STATS_MAX_RATIO");
	cr_expect_not_null(strstr(key[3], "env 25:NEURON_STATS_MAX_RATIO=10\n"));
	free(key[1]);
	free(key[2]);
	free(key[3]);
	struct timespec later[2] = { { .tv_sec = 2000000000 }, { .tv_sec = 2000000000 } };
	cr_assert_eq(utimensat(AT_FDCWD, path, later, 0), 0);
	key[1] = ns_pipeline_result_key("report", args, 3, args, 1, &len[1]);
	cr_expect(len[1] != len[0] || memcmp(key[1], key[0], len[0]) != 0, "the trace touched");
	cr_expect_not_null(strstr(key[1], " 2000000000000000000 "), "its mtime in ns");
	free(key[1]);
	cr_expect_null(ns_pipeline_result_key("report", &dash, 1, &dash, 1, &len[1]), "standard input");
	char *neff = write_file("model.neff", "not read");
	cr_expect_null(ns_pipeline_result_key("report", args, 3, args, 1, &len[1]), "a NEFF beside the trace");
	unlink(neff);
	free(neff);
	free(key[0]);
	free(path);
}

/* What the four parts of capture discovery share (ntff/capture.h is the
 * interface): capture.c walks and finds the files, capture-classify.c says
 * what a file is, capture-group.c groups them per process, capture-pair.c
 * pairs and finds the gaps within a process. */
#ifndef NS_NTFF_CAPTURE_INTERNAL_H
#define NS_NTFF_CAPTURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ntff/capture.h"

/* A growing list of capture files (each owns its path). */
struct file_list {
	struct ns_cap_file *v;
	size_t n, cap;
};

/* capture.c */
int cap_push_file(struct file_list *l, const struct ns_cap_file *f);
void cap_set_name(struct ns_cap_file *f);
int cap_add_if_capture(struct file_list *l, const char *path, const struct stat *st, bool converted);
int cap_cmp_files(const void *a, const void *b);

/* capture-classify.c */
bool cap_ends_with(const char *s, const char *suffix);
void cap_copy_text(char *out, size_t n, const char *s, size_t len);
bool cap_parquet_anchor(const char *name, enum ns_cap_kind *kind);
int cap_sniff_rank(const char *path, int64_t *rank);

/* capture-group.c */
const char *cap_base_of(const char *path);
bool cap_parse_process_dir(const char *name, struct ns_cap_unit *u);
bool cap_is_export(enum ns_cap_kind k);
int cap_group(struct ns_capture *c, struct file_list *l, const struct ns_capture_opts *o, struct ns_error *err);

/* capture-pair.c */
int cap_finish_unit(struct ns_cap_unit *u);

#endif

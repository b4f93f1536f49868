/* An ordered worker pool: items 0 .. n-1 worked on by up to N threads at
 * once, each finished on the calling thread in order, so that what the
 * finishing step writes is the same whatever N is (`--jobs`). */
#ifndef NS_JOBS_H
#define NS_JOBS_H

#include <stddef.h>

/* Item i's work, on a pool thread (or the calling one): 0, or a status. */
typedef int (*ns_job_work)(void *ctx, size_t i);
/* Item i's finish, on the calling thread, after work(i) returned 0 and
 * finish(i - 1) ran: 0, or a status. */
typedef int (*ns_job_finish)(void *ctx, size_t i);

/* Runs work(ctx, i) for every i < n on up to jobs threads (jobs <= 1, or
 * threads that cannot be started: all on the calling thread, one item
 * after the other) and finish(ctx, i) in order of i (finish NULL: the
 * items' work leaves nothing to finish). At most 2 x `jobs`
 * items are between the start of their work and the end of their finish
 * (a thread that is done may start an item while the one before it is
 * still being worked on, instead of waiting: the threads do not go in lock
 * step): the memory the caller holds per item in flight is bounded by
 * 2 x jobs items.
 * Stops at the first item, in order of i, whose work or finish fails, and
 * returns that status, as a loop over the items would: the items after it
 * may have been worked on, none of them is finished. */
int ns_jobs_run(size_t n, unsigned jobs, ns_job_work work, ns_job_finish finish, void *ctx);

/* The default of --jobs: the number of online CPUs (1 if unknown). */
unsigned ns_jobs_default(void);

#endif

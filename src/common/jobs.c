#include "common/jobs.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_THREADS 256

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t changed;   /* an item was claimed, worked on or finished */
	size_t n, window;         /* the items; how many may be in flight (2 x jobs, jobs.h) */
	size_t next;              /* the next item to claim */
	size_t finished;          /* items finished (0 .. finished-1) */
	size_t stop_at;           /* no item from here on is claimed (a failure, or the end) */
	int *status;              /* per item: its work's status */
	bool *worked;             /* per item: its work returned */
	ns_job_work work;
	void *ctx;
};

/* A pool thread: claims the next item within the window, works on it. */
static void *worker(void *arg)
{
	struct pool *p = arg;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (p->next < p->stop_at && p->next >= p->finished + p->window)
			pthread_cond_wait(&p->changed, &p->lock);
		if (p->next >= p->stop_at)
			break;
		size_t i = p->next++;
		pthread_mutex_unlock(&p->lock);
		int rc = p->work(p->ctx, i);
		pthread_mutex_lock(&p->lock);
		p->status[i] = rc;
		p->worked[i] = true;
		if (rc && i + 1 < p->stop_at) /* (the items after a failure are not needed) */
			p->stop_at = i + 1;
		pthread_cond_broadcast(&p->changed);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Waits for item i's work; its status. */
static int wait_worked(struct pool *p, size_t i)
{
	pthread_mutex_lock(&p->lock);
	while (!p->worked[i])
		pthread_cond_wait(&p->changed, &p->lock);
	int rc = p->status[i];
	pthread_mutex_unlock(&p->lock);
	return rc;
}

static int run_in_order(size_t n, ns_job_work work, ns_job_finish finish, void *ctx)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (!(rc = work(ctx, i)) && finish)
			rc = finish(ctx, i);
	return rc;
}

/* Finishes the pool's items in order, as their work returns. */
static int finish_in_order(struct pool *p, ns_job_finish finish)
{
	int rc = 0;
	for (size_t i = 0; i < p->n && !rc; i++) {
		if (!(rc = wait_worked(p, i)) && finish)
			rc = finish(p->ctx, i);
		pthread_mutex_lock(&p->lock);
		p->finished = i + 1;
		if (rc)
			p->stop_at = i + 1 < p->stop_at ? i + 1 : p->stop_at;
		pthread_cond_broadcast(&p->changed);
		pthread_mutex_unlock(&p->lock);
	}
	return rc;
}

int ns_jobs_run(size_t n, unsigned jobs, ns_job_work work, ns_job_finish finish, void *ctx)
{
	struct pool p = { .n = n, .window = 2 * (size_t)jobs, .stop_at = n, .work = work, .ctx = ctx };
	size_t n_threads = jobs < n ? jobs : n, started = 0;
	pthread_t *threads = NULL;
	int rc;
	if (n_threads > MAX_THREADS)
		n_threads = MAX_THREADS;
	if (n_threads <= 1)
		return run_in_order(n, work, finish, ctx);
	p.status = calloc(n, sizeof(*p.status));
	p.worked = calloc(n, sizeof(*p.worked));
	threads = calloc(n_threads, sizeof(*threads));
	if (!p.status || !p.worked || !threads) {
		rc = run_in_order(n, work, finish, ctx);
		goto out;
	}
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.changed, NULL);
	while (started < n_threads && pthread_create(&threads[started], NULL, worker, &p) == 0)
		started++;
	if (started == 0) { /* (nothing was claimed) */
		rc = run_in_order(n, work, finish, ctx);
	} else {
		rc = finish_in_order(&p, finish);
		pthread_mutex_lock(&p.lock);
		p.stop_at = 0; /* the remaining threads end */
		pthread_cond_broadcast(&p.changed);
		pthread_mutex_unlock(&p.lock);
		for (size_t t = 0; t < started; t++)
			pthread_join(threads[t], NULL);
	}
	pthread_cond_destroy(&p.changed);
	pthread_mutex_destroy(&p.lock);
out:
	free(threads);
	free(p.worked);
	free(p.status);
	return rc;
}

unsigned ns_jobs_default(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (unsigned)n;
}

/* An LD_PRELOAD shim for the allocation-failure sweep
 * (tests/reliability/test_alloc_failures.py): with NS_FAIL_ALLOC=N in the
 * environment, the Nth call of malloc, calloc or realloc (strdup and the
 * like allocate through malloc; cJSON, SQLite, zlib and zstd too) made
 * after the program's libraries are initialised returns NULL (errno
 * ENOMEM), once; every
 * other call goes to glibc's allocator. NS_ALLOC_COUNT=FILE writes the
 * number of calls made to FILE at exit, which is how the sweep learns the
 * range of N. Counting is atomic: the store's writer thread allocates too
 * (its share of the order may vary from run to run; every run must still
 * end well). */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);

static atomic_ulong calls;
static unsigned long fail_at; /* 0: never */
static atomic_bool armed;

__attribute__((constructor)) static void arm(void)
{
	const char *n = getenv("NS_FAIL_ALLOC");
	fail_at = n ? strtoul(n, NULL, 10) : 0;
	atomic_store(&armed, true);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("NS_ALLOC_COUNT");
	atomic_store(&armed, false);
	if (path) {
		FILE *f = fopen(path, "w");
		if (f) {
			fprintf(f, "%lu\n", atomic_load(&calls));
			fclose(f);
		}
	}
}

static bool fail_now(void)
{
	if (!atomic_load(&armed))
		return false;
	unsigned long k = atomic_fetch_add(&calls, 1) + 1;
	if (k != fail_at)
		return false;
	errno = ENOMEM; /* as glibc's malloc does */
	return true;
}

void *malloc(size_t size)
{
	return fail_now() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	return fail_now() ? NULL : __libc_realloc(p, size);
}

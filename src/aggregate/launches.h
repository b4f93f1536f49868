/* Launch overhead, as HTA's get_cuda_kernel_launch_stats measures it: each
 * launch call (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync,
 * cudaMemsetAsync, MTIA's runFunction) joined on its correlation id with
 * the device work it queued: the call's duration, the work's duration,
 * and the launch delay (work start - call end, 0 when negative). Feeds
 * `neuron-stats launches` (docs/report.md "Launch overhead"). */
#ifndef NS_LAUNCHES_H
#define NS_LAUNCHES_H

#include "aggregate/aggregate.h"

struct ns_launch {
	uint32_t call, work;        /* trace->events: the runtime call and the device event */
	int32_t op;                 /* the op that made the call (fevent), or -1 */
	int64_t correlation;
	int64_t cpu_ns, device_ns, delay_ns;
};

struct ns_launches {
	struct ns_launch *v;        /* by call start, then work start */
	size_t n;
};

int ns_launches_find(const struct ns_agg *a, struct ns_launches *out, struct ns_error *err);
void ns_launches_release(struct ns_launches *l);

#endif

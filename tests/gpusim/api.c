/* SPDX-License-Identifier: MIT */
/* The bracket around every runtime call: lazy init, correlation ids and the CUPTI hooks. */
#include "runtime.h"

const struct gw_sim_hooks *_Atomic gw_sim_hooks_ptr;
static atomic_uint next_correlation = 1;
static __thread struct gw_sim_api *current;
static atomic_bool context_created[GW_SIM_MAX_DEVICES];

void gw_sim_set_hooks(const struct gw_sim_hooks *hooks)
{
	atomic_store_explicit(&gw_sim_hooks_ptr, hooks, memory_order_release);
}

/*
 * The id the GPU records of the work being enqueued carry: the application's call (the
 * outermost), as the kernel records joined to runtime launches in Kineto's traces show; with
 * GPUSIM_GPU_CORRELATION=driver, the driver call that made the work (the innermost), as
 * cupti_activity.h words it for copies and memsets.
 */
uint32_t gw_sim_correlation(void)
{
	const struct gw_sim_api *a = current;

	if (!a)
		return 0;
	if (!gw_sim_rt.cfg.gpu_driver_correlation)
		while (a->outer)
			a = a->outer;
	return a->correlation_id;
}

void gw_sim_api_begin(struct gw_sim_api *a, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const char *name, const void *params, const char *symbol)
{
	const struct gw_sim_hooks *h;

	a->domain = domain;
	a->keep_error = false;
	gw_sim_init();
	h = atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	a->traced = 0;
	a->outer = current;
	if (!h) {
		a->correlation_id = 0;
		a->outer = NULL;
		return;
	}
	a->cbid = cbid;
	a->name = name;
	a->params = params;
	a->symbol = symbol;
	a->correlation_data = 0;
	a->ret = cudaSuccess;
	/* Every API call gets an id of its own, a driver call made by the runtime too (NVIDIA:
	 * "every CUDA API is given a unique correlation-id"); GPUSIM_NESTED_CORRELATION=shared
	 * gives it the runtime call's instead. */
	a->correlation_id =
		a->outer && gw_sim_rt.cfg.nested_shared_correlation
			? a->outer->correlation_id
			: atomic_fetch_add_explicit(&next_correlation, 1, memory_order_relaxed);
	current = a;
	h->api_enter(a);
	/* Context creation, inside the first call with a device current, as on a GPU (0.1-1 s
	 * there); CUPTI's resource callback says when it is done. */
	if (!a->outer && !atomic_exchange(&context_created[gw_sim_current_device()], true)) {
		if (gw_sim_rt.cfg.init_ns)
			gw_sim_wait_until(gw_sim_now_ns() + gw_sim_rt.cfg.init_ns);
		if (h->context_created)
			h->context_created();
	}
}

cudaError_t gw_sim_api_end(struct gw_sim_api *a, cudaError_t err)
{
	const struct gw_sim_hooks *h;

	/* Not-ready answers are not errors, and reporting an error must not set it again. */
	if (err != cudaSuccess && err != cudaErrorNotReady && !a->keep_error &&
	    a->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		gw_sim_set_error(err);
	if (!a->correlation_id)
		return err;
	current = a->outer;
	a->ret = err;
	h = atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	if (h && a->traced)
		h->api_exit(a);
	return err;
}

static uint8_t cupti_mem_kind(enum gw_sim_mem kind)
{
	switch (kind) {
	case GW_SIM_MEM_DEVICE:
	case GW_SIM_MEM_SYMBOL:
		return CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	case GW_SIM_MEM_PINNED:
	case GW_SIM_MEM_REGISTERED:
		return CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	case GW_SIM_MEM_MANAGED:
		return CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
	case GW_SIM_MEM_PAGEABLE:
		break;
	}
	return CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
}

void gw_sim_emit_memory(bool release, enum gw_sim_mem kind, const void *ptr, uint64_t bytes,
			const struct gw_sim_stream *s, bool async)
{
	const struct gw_sim_hooks *h =
		atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	struct gw_sim_mem_event ev;

	if (kind == GW_SIM_MEM_DEVICE || kind == GW_SIM_MEM_MANAGED)
		gw_sim_stats_memory(release, bytes);
	if (!h)
		return;
	ev = (struct gw_sim_mem_event){
		.release = release,
		.async = async,
		.mem_kind = cupti_mem_kind(kind),
		.address = (uint64_t)(uintptr_t)ptr,
		.bytes = bytes,
		.t_ns = gw_sim_now_ns(),
		.stream_id = s ? s->id : 0,
		.correlation_id = gw_sim_correlation(),
	};
	h->memory(&ev);
}

void gw_sim_emit_sync(CUpti_ActivitySynchronizationType type, uint64_t start_ns,
		      const struct gw_sim_stream *s, const struct gw_sim_event *e)
{
	gw_sim_emit_query(type, start_ns, s, e, false, 0);
}

void gw_sim_emit_query(CUpti_ActivitySynchronizationType type, uint64_t start_ns,
		       const struct gw_sim_stream *s, const struct gw_sim_event *e, bool query,
		       uint32_t result)
{
	const struct gw_sim_hooks *h =
		atomic_load_explicit(&gw_sim_hooks_ptr, memory_order_acquire);
	struct gw_sim_sync_event ev;

	gw_sim_stats_sync(query);
	if (!h)
		return;
	ev = (struct gw_sim_sync_event){
		.type = type,
		.start_ns = start_ns,
		.end_ns = gw_sim_now_ns(),
		.stream_id = s ? s->id : 0,
		.event_id = e ? e->id : 0,
		.correlation_id = gw_sim_correlation(),
		.query = query,
		.result = result,
	};
	h->sync(&ev);
}

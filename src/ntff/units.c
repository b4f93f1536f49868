/* Time units and engine names (docs/neuron.md "Time units", "Engines"). */
#include "ntff/ntff.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "common/vec.h"

static const char *const unit_names[] = {
	[NS_TU_AUTO] = "auto", [NS_TU_NS] = "ns", [NS_TU_US] = "us", [NS_TU_MS] = "ms", [NS_TU_S] = "s",
};

enum ns_time_unit ns_time_unit_parse(const char *s)
{
	for (int u = NS_TU_NS; u <= NS_TU_S; u++)
		if (s && strcmp(s, unit_names[u]) == 0)
			return (enum ns_time_unit)u;
	return NS_TU_AUTO;
}

const char *ns_time_unit_name(enum ns_time_unit u)
{
	return u <= NS_TU_S ? unit_names[u] : "?";
}

static const struct {
	const char *name, *alias;
} engines[NS_ENG__COUNT] = {
	[NS_ENG_PE] = { "PE", "TensorE" },   [NS_ENG_ACT] = { "ACT", "ScalarE" }, [NS_ENG_DVE] = { "DVE", "VectorE" },
	[NS_ENG_POOL] = { "POOL", "GpSimd" }, [NS_ENG_SP] = { "SP", "SyncE" },    [NS_ENG_DMA] = { "DMA", "DMA" },
};

const char *ns_engine_name(enum ns_engine e)
{
	return e < NS_ENG__COUNT ? engines[e].name : "other";
}

const char *ns_engine_alias(enum ns_engine e)
{
	return e < NS_ENG__COUNT ? engines[e].alias : "other";
}

/* Labels seen in exports and docs, compared without case: the runtime's
 * engine keys (pe, act, pool, dve, sp), Explorer's engine names (tensor,
 * scalar, vector, gpsimd, sync) and UI tracks (TensorMatrix, Activation). */
static const struct {
	const char *label;
	bool prefix;
	enum ns_engine engine;
} labels[] = {
	{ "pe", false, NS_ENG_PE },       { "tensor", true, NS_ENG_PE },   { "act", true, NS_ENG_ACT },
	{ "scalar", true, NS_ENG_ACT },   { "dve", true, NS_ENG_DVE },     { "vector", true, NS_ENG_DVE },
	{ "pool", true, NS_ENG_POOL },    { "gpsimd", true, NS_ENG_POOL }, { "sp", false, NS_ENG_SP },
	{ "sync", true, NS_ENG_SP },      { "dma", true, NS_ENG_DMA },
};

enum ns_engine ns_engine_from_label(const char *s, size_t len)
{
	for (size_t i = 0; i < NS_ARRAY_SIZE(labels); i++) {
		size_t l = strlen(labels[i].label);
		if ((labels[i].prefix ? len >= l : len == l) && strncasecmp(s, labels[i].label, l) == 0)
			return labels[i].engine;
	}
	/* DMA queue names: qSyncIO0, qPoolDynamic, ... */
	if (len > 1 && s[0] == 'q' && isupper((unsigned char)s[1]))
		return NS_ENG_DMA;
	return NS_ENG__COUNT;
}

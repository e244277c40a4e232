/* layout_dp.c — the data-parallel family's rows (ddp, zero1-3, mics, hsdp, zeropp, shard_grad_op,
 * hybrid_shard_zero2): the group-size check and the optimizer shard. Not here: their op graph
 * (layout.c: dp_item, grad_sync) or their memory columns (spec_layout.c's KINDS, memory.c). */
#include "layout_row.h"

/* A group either lives inside one node or spans whole nodes, so that groups never share a
 * node unevenly (MiCS paper §3.2; DeepSpeed requires the same of mics_shard_size). p = 0 (zero1,
 * zero2 and zeropp without a group): nothing to align. */
static int group_check(const spec_layout *l, const spec_cluster *c, int n, int g, const char *name, sc_err *err)
{
    int p = l->p;
    (void)c;
    if (!p && (l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2 || l->kind == LAYOUT_ZEROPP))
        return 0;
    if (p < 1 || p > n || n % p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected a group size dividing the %d GPUs (%d nodes x %d), got %d",
                          name, n, n / g, g, p);
    if (!(g % p == 0 || p % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a group size that divides or is a multiple of %d GPUs per node, got %d", name, g, p);
    return 0;
}

static int shard_one(const spec_layout *l, int n_ranks)
{
    (void)l, (void)n_ranks;
    return 1;
}

static int shard_p(const spec_layout *l, int n_ranks)
{
    (void)n_ranks;
    return l->p;
}

static int shard_p_or_all(const spec_layout *l, int n_ranks) { return l->p ? l->p : n_ranks; }

const layout_kind_row layout_row_ddp = {.shard = shard_one};
const layout_kind_row layout_row_zero1 = {.check = group_check, .shard = shard_p_or_all};
const layout_kind_row layout_row_zero2 = {.check = group_check, .shard = shard_p_or_all};
const layout_kind_row layout_row_zero3 = {0};
const layout_kind_row layout_row_mics = {.check = group_check, .shard = shard_p};
const layout_kind_row layout_row_hsdp = {.check = group_check, .shard = shard_p};
const layout_kind_row layout_row_zeropp = {.check = group_check}; /* the primary shard is over all ranks */
const layout_kind_row layout_row_shard_grad_op = {0};
const layout_kind_row layout_row_hsdp_zero2 = {.check = group_check, .shard = shard_p};

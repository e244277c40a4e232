/* layout_kind.h — the table above the layout families: each kind's row (layout_row.h) by
 * spec_layout_kind. Its dispatchers keep their spec_ names (declared in spec.h, defined in
 * layout_kind.c): spec_layout_check, spec_layout_check_model, spec_layout_check_training,
 * spec_layout_replicas, spec_layout_batch_share, spec_layout_shard. Not here: the grammar
 * (spec_layout.c) or any kind's own rule (the family files). */
#ifndef SC_LAYOUT_KIND_H
#define SC_LAYOUT_KIND_H

#include "layout_row.h"

/* The row of kind k; NULL for a kind outside the enum. */
const layout_kind_row *layout_kind_row_of(spec_layout_kind k);

/* plan's candidates: every layout of the kinds in mask (bit k: kind k) worth trying on in->nodes
 * nodes, at most max into out; returns the count. The order is the one plan has always used
 * (its ranking keeps the first of a tie): the kinds' own candidates, then for each valid group
 * size p those sharded in groups of p, then the rest (layout_kind.c's order lists). */
int layout_kind_candidates(const layout_cand_in *in, unsigned mask, spec_layout *out, int max);
/* l in its kind's canonical spelling on N GPUs (AxoNN: d implicit, the first placement with the
 * same communicators); other kinds are left alone. */
void layout_kind_canon(spec_layout *l, int N);
/* plan's one-line reason why x's winner wins (its kind's row), into out[0..len); "" when its
 * kind has none. */
void layout_kind_explain(const layout_explain_in *x, char *out, size_t len);
/* The layers of w as one rank of layout l on n_ranks GPUs runs them (the kind's row: tp's and
 * axonn's local GEMMs, megatron's stage, zero3:cp's sequence shard) into out, or w itself where
 * they are the model's own. For those above the families (memory); a family file calls its own. */
const wl *layout_kind_localize(const wl *w, const spec_layout *l, int n_ranks, wl *out);
/* memory's default table: ddp, zero1, zero2, zero3 over all GPUs, then mics:p=mics_p (its
 * smallest group that fits; 0: none), at most max into out; returns the count. */
int layout_kind_memory_table(int mics_p, spec_layout *out, int max);

#endif

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

#endif

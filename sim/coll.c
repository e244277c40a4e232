/* coll.c — ring edges to flows (see coll.h). */
#include "coll.h"

int coll_ring_flows(const int *members, int n, int gpus_per_node, int nics, double edge_bytes, coll_flow_fn fn,
                    void *ctx)
{
    if (n < 2 || edge_bytes <= 0)
        return 0;
    int flows = 0;
    for (int i = 0; i < n; i++) {
        int src = members[i], dst = members[(i + 1) % n];
        if (src / gpus_per_node == dst / gpus_per_node) {
            fn(ctx, src, dst, 0, edge_bytes);
            flows++;
        } else {
            for (int ch = 0; ch < nics; ch++)
                fn(ctx, src, dst, ch, edge_bytes / nics);
            flows += nics;
        }
    }
    return flows;
}

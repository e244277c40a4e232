/* coll.c — ring edges to flows (see coll.h). */
#include "coll.h"

#include "net.h"

int coll_ring_flows(const int *members, int n, int gpus_per_node, int nics, double edge_bytes, coll_flow_fn fn,
                    void *ctx)
{
    return coll_ring_flows_from(members, n, n, gpus_per_node, nics, edge_bytes, fn, ctx);
}

int coll_ring_flows_from(const int *members, int n, int n_src, int gpus_per_node, int nics, double edge_bytes,
                         coll_flow_fn fn, void *ctx)
{
    return coll_ring_flows_fabric(members, n, n_src, gpus_per_node, nics, NULL, edge_bytes, fn, ctx);
}

/* Member i's ring bytes inside its node on an NVLink mesh: NCCL's ring search
 * (NVIDIA/nccl@5067397c src/graph/search.cc, ncclTopoCompute) builds as many rings (channels) as
 * the GPUs' NVLinks carry, each ring direction on its own links (the DGX-1 / p3dn hybrid cube
 * mesh decomposes into two Hamiltonian cycles, one of double and one of single links, each run
 * both ways: 6 links out of every GPU). Whatever the rings' order, each member then sends its
 * ring bytes over every link to the other members of its node at once, each link's share in
 * proportion to its count: one flow per directly linked member. Each directed link i>j carries
 * only i's flow to j, so the member's rate is its links to the others x the link rate, the
 * analytical engine's per-rank bound (model/cost.c cost_group_make). A member linked to no
 * other member sends to its ring successor over the relayed route. Returns the flows emitted,
 * or -1 when the member has no direct link (the caller sends one flow). n: the members stored (a
 * quotient run stores only the simulated prefix and the next one, exec.c group_of; a simulated
 * rank's node-mates are in it, represented nodes being whole); sorted: members ascend, so only the
 * node's block around i is scanned (the same flows in the same order). */
static int mesh_spread(const int *members, int n, int i, int sorted, int gpn, const spec_fabric *f,
                       double edge_bytes, coll_flow_fn fn, void *ctx)
{
    int src = members[i], node = src / gpn, links = 0, flows = 0, lo = 0, hi = n;
    if (sorted) { /* members ascend: the node's members are the block around i */
        for (lo = i; lo > 0 && members[lo - 1] / gpn == node; lo--)
            ;
        for (hi = i + 1; hi < n && members[hi] / gpn == node; hi++)
            ;
    }
    for (int j = lo; j < hi; j++)
        if (j != i && members[j] / gpn == node)
            links += f->links[src % gpn][members[j] % gpn];
    if (!links)
        return -1;
    for (int j = lo; j < hi; j++) {
        int l = j != i && members[j] / gpn == node ? f->links[src % gpn][members[j] % gpn] : 0;
        if (l) {
            fn(ctx, src, members[j], 0, edge_bytes * l / links);
            flows++;
        }
    }
    return flows;
}

/* 1 when members[0..n) ascend: then a node's members are one contiguous block (ranks of a node are
 * consecutive), and mesh_spread scans that block instead of the whole group. */
static int ascending(const int *members, int n)
{
    for (int j = 1; j < n; j++)
        if (members[j] <= members[j - 1])
            return 0;
    return 1;
}

int coll_ring_flows_fabric(const int *members, int n, int n_src, int gpus_per_node, int nics, const spec_fabric *fab,
                           double edge_bytes, coll_flow_fn fn, void *ctx)
{
    if (n < 2 || edge_bytes <= 0)
        return 0;
    int flows = 0, mesh = fab && fab->kind == FABRIC_NVLINK_MESH;
    int stored = n_src < n ? n_src + 1 : n; /* members[] holds this many (exec.c group_of) */
    /* checked once per collective, so mesh_spread scans a node's block, not the whole group, per
     * member: O(n), not O(n^2), a collective */
    int sorted = mesh && ascending(members, stored);
    for (int i = 0; i < n_src && i < n; i++) {
        int src = members[i], dst = members[(i + 1) % n];
        if (src / gpus_per_node == dst / gpus_per_node) {
            int k = mesh ? mesh_spread(members, stored, i, sorted, gpus_per_node, fab, edge_bytes, fn, ctx) : -1;
            if (k < 0) {
                fn(ctx, src, dst, 0, edge_bytes);
                k = 1;
            }
            flows += k;
        } else {
            for (int ch = 0; ch < nics; ch++)
                fn(ctx, src, dst, ch, edge_bytes / nics);
            flows += nics;
        }
    }
    return flows;
}

/* The first of the NICs local to GPU `local` and how many there are. */
static int local_nic(int local, int gpn, int nics, int *count)
{
    *count = nics > gpn ? nics / gpn : 1;
    return nics > gpn ? local * *count : local * nics / gpn;
}

int coll_p2p_flows(int src, int dst, int gpus_per_node, int nics, int pxn, double bytes, coll_flow_fn fn, void *ctx)
{
    if (bytes <= 0 || src == dst)
        return 0;
    int gpn = gpus_per_node, ns = src / gpn, nd = dst / gpn, flows = 0, cs, cd;
    if (ns == nd) {
        fn(ctx, src, dst, 0, bytes);
        return 1;
    }
    int nic_s = local_nic(src % gpn, gpn, nics, &cs), nic_d = local_nic(dst % gpn, gpn, nics, &cd);
    if (pxn) {
        int relay = src;
        if (nic_s != nic_d) { /* over NVLink to the GPU local to the receiver's NIC first */
            relay = ns * gpn + (nics > gpn ? dst % gpn : nic_d * gpn / nics);
            fn(ctx, src, relay, 0, bytes);
            flows++;
        }
        for (int j = 0; j < cd; j++, flows++)
            fn(ctx, relay, dst, nic_d + j, bytes / cd);
        return flows;
    }
    int n = cs > cd ? cs : cd;
    for (int j = 0; j < n; j++, flows++)
        fn(ctx, src, dst, NET_CH_XNIC(nic_s + j % cs, nic_d + j % cd), bytes / n);
    return flows;
}

/* One direction: push = 1 GPUs -> place, else place -> GPUs. */
static int xport_dir(const cost_group *g, int push, const int *members, int n, int gpn, int nics, double S,
                     coll_flow_fn fn, void *ctx)
{
    int flows = 0;
    if (g->transport == XPORT_HOST || g->transport == XPORT_NVME) {
        int ep = g->transport == XPORT_HOST ? NET_EP_HOST : g->via_gpu ? NET_EP_NVME : NET_EP_NVME_HOST;
        for (int i = 0; i < n; i++, flows++)
            push ? fn(ctx, members[i], ep, 0, S) : fn(ctx, ep, members[i], 0, S);
        return flows;
    }
    int one = push ? g->aggregation : g->multicast;
    int far = one ? NET_EP_SWITCH : NET_EP_INNET; /* where each GPU's copy ends / starts */
    for (int i = 0; i < n; i++, flows++) {
        int ch = members[i] % gpn % nics;
        push ? fn(ctx, members[i], far, ch, S) : fn(ctx, far, members[i], ch, S);
    }
    if (one) { /* the single copy through the node's port */
        push ? fn(ctx, NET_EP_SWITCH, NET_EP_INNET, 0, S) : fn(ctx, NET_EP_INNET, NET_EP_SWITCH, 0, S);
        flows++;
    }
    if (push && g->update_Bps > 0) {
        fn(ctx, NET_EP_INNET, NET_EP_UPDATE, 0, S);
        flows++;
    }
    return flows;
}

int coll_xport_flows(const cost_group *g, cost_coll kind, const int *members, int n, int gpus_per_node, int nics,
                     double bytes, coll_flow_fn fn, void *ctx)
{
    if (n < 1 || bytes <= 0)
        return 0;
    int flows = 0;
    if (kind != COLL_REDUCESCATTER)
        flows += xport_dir(g, 0, members, n, gpus_per_node, nics, bytes, fn, ctx);
    if (kind != COLL_ALLGATHER)
        flows += xport_dir(g, 1, members, n, gpus_per_node, nics, bytes, fn, ctx);
    return flows;
}

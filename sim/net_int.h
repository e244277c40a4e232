/* net_int.h — the network's state, shared by its two halves and nothing else: the links and
 * routes (net.c) and the flows with their max-min fair rates (flow.c). Not a public header:
 * everything outside sim/net.c and sim/flow.c goes through net.h. */
#ifndef SC_NET_INT_H
#define SC_NET_INT_H

#include <stddef.h>
#include <stdint.h>

#include "idpool.h"
#include "net.h"
#include "topo.h"

#define NAME_LEN 48
/* Flow-list entries a link holds inline, in its own record, before it needs its own array (4 ints:
 * most links carry a few flows at once). */
#define NET_FL_SLOT 4

/* A link is one 64-byte line (the array is 64-byte aligned): what adding, removing, collecting a
 * component and filling touch, its flow list included while it fits inline (so adding or removing
 * a flow touches one line per link). Its latency, read only when routes are priced, is apart
 * (net.lat). The scratch of a solve is apart too (net_lsol, by component index). */
typedef struct net_link {
    _Alignas(64) double cap; /* capacity, B/s                                               */
    double bytes; /* carried from time 0 to t, B                                            */
    double t;     /* time `bytes` is accounted up to, s                                     */
    double load;  /* sum of the rates of the flows on it since t, B/s                       */
    int nfl, capfl; /* flows on it; room in its list (NET_FL_SLOT: inline, more: own array)  */
    /* sparse-set memberships (no clearing between uses): valid only while the array they
     * index holds this link's id there, within its current length */
    int comp_ix; /* in comp_links: the component being collected or solved                   */
    int pend_ix; /* in pend: the open batch's seed links                                      */
    union {      /* ids of the flows crossing it (net_link_fl): inline until the list outgrows
                    NET_FL_SLOT entries, then its own heap array (capfl > NET_FL_SLOT)       */
        int in[NET_FL_SLOT];
        int *own;
    } fl;
} net_link;

/* Link l's flow list (nfl entries). */
static inline int *net_link_fl(net_link *l)
{
    return l->capfl > NET_FL_SLOT ? l->fl.own : l->fl.in;
}
static inline const int *net_link_cfl(const net_link *l)
{
    return l->capfl > NET_FL_SLOT ? l->fl.own : l->fl.in;
}

/* A link's scratch during one solve, indexed by its place in comp_links. */
typedef struct net_lsol {
    double res;      /* capacity not yet given to frozen flows, B/s                          */
    int nun;         /* flows on it not yet frozen                                           */
    uint32_t stamp;  /* heap entries with another stamp are stale                            */
    uint64_t pushed; /* == round: already re-queued in this filling round                    */
} net_lsol;

/* A flow's state is split by who reads it, so that each pass touches one cache line per flow
 * (issue 22: at 16k GPUs the flows and links are megabytes, far beyond the cache). Its record is
 * one 64-byte line: what its start, its completion (the executors' checks, detaching it) and the
 * search for a component read. */
typedef struct net_flow {
    _Alignas(64) uint64_t tag; /* the caller's                                              */
    int comp_ix; /* in comp_flows while in the component being solved (sparse set, as links) */
    int nl;
    int lk[NET_PATH_MAX];  /* its links, in path order                                      */
    int pos[NET_PATH_MAX]; /* its index in each link's flow list                            */
    uint32_t version;
    int32_t event; /* the caller's completion event for it (net_flow_set_event), -1 = none */
    int live;
} net_flow;

/* Its clock, apart (32-byte aligned): what apply, the links' loads and finish times read. */
typedef struct net_fclk {
    _Alignas(32) double remaining; /* B left at time t                                     */
    double t;         /* s                                                                  */
    double rate;      /* B/s since t (NAN between attach and the first solve)               */
} net_fclk;

/* A flow's scratch during one solve, indexed by its place in comp_flows. */
typedef struct net_fsol {
    double new_rate; /* the rate the solve gives it, B/s                                     */
    uint64_t frozen; /* round in which its rate was fixed; 0 = not yet                       */
} net_fsol;

typedef struct heap_ent {
    double key; /* fair share res / nun of the link when pushed, B/s                        */
    int link;
    uint32_t stamp;
} heap_ent;

struct net {
    int nodes, gpn, nics, n_gpus; /* nodes and GPUs with links: the represented ones (quotient) */
    int full_nodes, full_gpus;    /* the cluster's: equal to the above unless a quotient        */
    int n_leaves;                 /* leaves with links: those of the represented pods           */
    topo_shape topo; /* the switches between nodes (sim/topo.h)                             */
    spec_fabric_kind kind;
    int intra;     /* intra-node links per node                                            */
    int per_node;  /* links per node: intra + 2 * nics                                     */
    int leaf_base; /* id of leaf 0's up link                                               */
    int host_base; /* id of GPU 0's link to host memory (then its link back), 2 per GPU; -1:
                      the PCIe fabric's own links                                            */
    int innet_base;/* id of "sw>innet", then "innet>sw", "innet.update"; -1 = no such node  */
    int nvme_base; /* id of node 0's "n0.nvme>cpu" (read), then "n0.cpu>nvme" (write), 2 per
                      node; -1 = the cluster gives no NVMe                                   */
    int n_links;
    int *mesh_id;  /* [i * gpn + j]: offset of link i>j inside a node block, -1 = none       */
    int *mesh_via; /* [i * gpn + j]: intermediate GPU for i>j, -1 = direct                  */
    net_link *links;
    double *lat;   /* per link: its latency, s                                              */
    char (*names)[NAME_LEN];

    /* per-flow arrays, flow_cap entries each, in one allocation that starts at flows (flow.c) */
    net_flow *flows;
    net_fclk *fclk;
    net_fsol *fsol;    /* comp_flows' scratch                                                    */
    idp_pool free_ids; /* the free ids below flow_hw, the lowest taken first (idpool.h)         */
    int flow_cap, flow_hw, n_live;
    int *comp_flows;  /* flow_cap entries                                                   */
    int *comp_links;  /* n_links entries                                                    */
    net_lsol *lsol;   /* n_links entries: comp_links' scratch                                */
    int *changed;     /* flow_cap entries                                                   */
    int n_changed;
    heap_ent *heap;   /* n_links + NET_PATH_MAX * flow_cap entries (bound of one solve)       */
    size_t heap_n;
    uint64_t round;
    double now; /* time of the last add / remove, s                                          */
    int batching;  /* between net_batch_begin and net_batch_end: solve once at the end         */
    int *pend;     /* the batch's seed links (n_links entries)                                 */
    int n_pend;
};

#endif

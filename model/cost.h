/* cost.h — how long things take: compute as a roofline with a shape-dependent GEMM efficiency,
 * and collectives as latency + bytes / bandwidth per algorithm and link tier, with nccl-tests'
 * bus-bandwidth factors and NCCL's latency structure (src/graph/tuning.cc). Parameters come from
 * a calibration file (configs/calibrations/). Both engines call these same functions.
 * Not here: which collectives a layout issues (model/layout) or overlap (the engines). */
#ifndef SC_COST_H
#define SC_COST_H

#include "kernels.h"
#include "nccl.h"
#include "spec.h"
#include "workload.h"

typedef enum { TIER_NVLINK, TIER_PCIE, TIER_NET, N_TIERS } cost_tier;
typedef enum { ALGO_RING, ALGO_TREE, N_ALGOS } cost_algo;
typedef enum { COLL_ALLGATHER, COLL_REDUCESCATTER, COLL_ALLREDUCE, N_COLLS } cost_coll;
/* How a communicator moves its bytes. NCCL: rings/trees among the GPUs (the kinds' usual
 * meaning). The others move data between each member GPU and one place, and read the kinds as
 * directions: all-gather = fetch parameters (to the GPU), reduce-scatter = push gradients (from
 * the GPU), all-reduce = both.
 *  - XPORT_HOST: each GPU and its own host over its PCIe link (DMA copy engines; ZeRO-Offload).
 *  - XPORT_INNET: every GPU and the in-network optimizer node through the node NICs and the
 *    optimizer node's switch port (LuWu): the port carries 1 copy with multicast / aggregation,
 *    else one per GPU; each node's NICs carry one copy per GPU of the node.
 *  - XPORT_NVME: each GPU (via_gpu: through its PCIe link and a pinned host buffer) or its
 *    host memory (via_gpu = 0) and the node's local NVMe, whose read / write throughput the
 *    `concurrent` ranks of a node share (ZeRO-Infinity, Rajbhandari et al. SC'21 §6.1-6.2). */
typedef enum { XPORT_NCCL, XPORT_HOST, XPORT_INNET, XPORT_NVME } cost_transport;
/* Where an optimizer step runs: on the GPU (HBM-bound), the host CPU (ZeRO-Offload's CPU
 * Adam), or the in-network optimizer node. */
typedef enum { OPT_GPU, OPT_HOST, OPT_INNET, OPT_HOST_NVME, OPT_HOST_TORCH } cost_opt_where;
/* OPT_HOST_NVME: CPU Adam with its fp32 states on NVMe (cost_optimizer_time_at).
 * OPT_HOST_TORCH: torch.optim.Adam on the host CPU (FSDP1 CPUOffload, layout_offload.c): the
 * node's CPU Adam rate (spec_cluster.cpu_adam_params_per_s, DeepSpeedCPUAdam) times
 * COST_TORCH_CPU_ADAM_RATIO. Source: deepspeedai/DeepSpeed PR #735 (2021-02-08, R. Yazdani
 * Aminabadi): on one host and one 11.6B-parameter GPT-2, DeepSpeed's CPU-Adam "reduces the
 * optimizer time from 56 seconds to 8.2 seconds" against torch.adam: torch's CPU Adam runs at
 * 8.2 / 56 of CPU-Adam's rate (the same PR gives SPEC_CPU_ADAM_REF_RATE, spec.h). */
#define COST_TORCH_CPU_ADAM_RATIO (8.2 / 56.0)

/* One calibrated number: its value, its standard deviation (0 = taken from a datasheet or a
 * published microbenchmark, not fitted), and where it came from. */
typedef struct cost_param {
    double v;
    double sd;
} cost_param;

/* The stack parameters of an anchored calibration (model/calib_anchor.h, "anchor" object): the
 * compute kernels' efficiency as a factor on the base's (1 = the base), the framework's overhead
 * per hook, s, and the network's bandwidth efficiency; each with its standard error (0: none).
 * status: COST_ANCHOR_BASE kept from the base, _FITTED, _BOUND held at a physical bound,
 * _UNDETERMINED the runs could not tell it (held at the base value). */
enum { COST_STACK_COMPUTE, COST_STACK_HOOK, COST_STACK_NET, COST_N_STACK };
enum { COST_ANCHOR_BASE, COST_ANCHOR_FITTED, COST_ANCHOR_BOUND, COST_ANCHOR_UNDETERMINED };
typedef struct cost_anchor {
    int on;
    char cluster[SPEC_NAME_MAX]; /* the cluster of the runs it was fitted to          */
    int framework;               /* spec_framework whose hook overhead it holds       */
    cost_param p[COST_N_STACK];
    int status[COST_N_STACK];
    int n_runs, host_runs;       /* its runs; of them offloaded (zero3-, zero2-offload: the optimizer
                                    step on the host, which no stack parameter describes)  */
} cost_anchor;

typedef struct cost_calib {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    char cluster[SPEC_NAME_MAX]; /* the cluster it was made for ("" = any)                    */
    /* compute */
    cost_param gemm_eff;        /* large-GEMM fraction of dense peak                        */
    cost_param gemm_overhead_s; /* per-GEMM fixed cost: t = overhead + F / (peak * eff), s   */
    cost_param gemm_tile;       /* output tile edge, elements: m and n run as whole tiles
                                   (tile quantization); 0 = none                            */
    cost_param hbm_eff;         /* fraction of HBM bandwidth memory-bound kernels reach       */
    cost_param opt_bytes_per_param; /* HBM bytes an Adam step moves per local parameter, B    */
    cost_param overlap_slowdown;    /* compute runs this fraction slower while a collective
                                       shares the GPU (NCCL kernels take SMs); 0 = none       */
    /* communication */
    cost_param bw_eff[N_TIERS];   /* achievable fraction of line rate per tier               */
    cost_param hop_lat_s[N_TIERS];/* latency of one ring step over this tier, s              */
    cost_param base_lat_s[N_ALGOS];/* fixed latency of one collective per algorithm, s       */
    cost_param tree_bw_factor;    /* tree all-reduce bandwidth relative to ring (NCCL .92)   */
    /* kernel models (model/kernels), from the file's "kernels" object or, without a file,
     * the arch's defaults; kern.gemm_eff == 0 (a file without one, calibrations fitted
     * without a base, tests): the roofline of gemm_eff / gemm_overhead_s / gemm_tile above
     * instead */
    kern_calib kern;
    /* NCCL's algorithms and protocols (model/nccl.h); nccl.on = 0: the plain ring/tree above */
    nccl_params nccl;
    /* framework overheads (model/framework.h; optional "frameworks" object, defaults in
     * cost_calib_framework_defaults with their sources; ideal: 0) */
    cost_param fw_hook_s[N_FRAMEWORKS]; /* per hook invocation (DeepSpeed sub-module fetch /
                                           release, FSDP unit pre/post hooks), s            */
    cost_param fw_coll_s[N_FRAMEWORKS]; /* per collective issued (Python-side bookkeeping,
                                           flattening, stream waits, allocator), s          */
    /* stack parameters `calibrate anchor` fitted to measured steps (model/calib_anchor.h): the
     * values above already include them; on = 0: not anchored */
    cost_anchor anchor;
} cost_calib;

/* With an "nccl" calibration, an algorithm returned by cost_coll_best is a code naming NCCL's
 * (algorithm, protocol); cost_coll_latency / cost_coll_edge_bytes accept it like ALGO_*. */
#define COST_ALGO_NCCL_BASE 16
static inline cost_algo cost_algo_nccl(nccl_algo a, nccl_proto p)
{
    return (cost_algo)(COST_ALGO_NCCL_BASE + (int)a * NCCL_N_PROTOS + (int)p);
}
/* Name of an algorithm code: "ring", "tree", or NCCL's "nvls-tree/Simple". */
const char *cost_algo_name(cost_algo a, char *buf, int n);

/* Geometry of a communicator as the cost model sees it: n ranks over k nodes, m per node;
 * `concurrent` groups of the same shape run at once on each node and share its NICs. */
typedef struct cost_group {
    int n, k, m;
    int concurrent;
    double intra_bw_Bps; /* per-rank line rate inside a node for this group's members, B/s */
    cost_tier intra_tier;
    double inter_bw_Bps; /* node NIC line rate available to one group, B/s (before eff)     */
    double leaf_factor;  /* <= 1: spine oversubscription when the group crosses leaves      */
    /* non-NCCL transports (cost_group_host / cost_group_innet); XPORT_NCCL = 0 elsewhere     */
    cost_transport transport;
    double port_bw_Bps;  /* INNET: the optimizer node's port line rate, B/s                    */
    int multicast, aggregation; /* INNET: switch capabilities (1 copy through the port)      */
    double update_Bps;   /* INNET: > 0 when the node applies the optimizer to pushed gradients
                            as they arrive: its update rate in gradient bytes/s               */
    double nvme_read_Bps, nvme_write_Bps; /* NVME: the node's drives together, B/s          */
    int via_gpu;         /* NVME: 1 the data ends on the GPU (PCIe too), 0 in host memory     */
} cost_group;

/* Group geometry on cluster c with `nodes` nodes: k nodes spanned, the local GPU indices of one
 * group's members on a node (m of them), and how many such groups share a node. */
void cost_group_make(const spec_cluster *c, int k, const int *locals, int m, int concurrent, cost_group *g);
/* On an NVLink mesh: the per-rank ring rate (B/s) of the one group whose members have these
 * local indices (its slowest member's links to the others; a member with none relays over half a
 * link), where cost_group_make gives every group of a shape its slowest translate's rate. 0 on
 * other fabrics. (AxoNN's copies per local index, an_titem.lead in model/analytic.h.) */
double cost_mesh_group_bw(const spec_cluster *c, const int *locals, int m);

/* The network between nodes. leaf_factor of a group (<= 1) whose k nodes are node_stride nodes
 * apart (1: consecutive), all groups of its shape running at once: the share of a node's NIC
 * stream the leaf uplinks (rail leaf uplinks, dragonfly global links) give it when it spans
 * leaves. cost_group_make sets it for node_stride 1. */
void cost_group_spread(const spec_cluster *c, int node_stride, cost_group *g);
/* Uplink capacity of one leaf (rail leaf, dragonfly group), in NICs' line rates. */
double cost_net_uplink_nics(const spec_cluster *c);
/* Dragonfly: the fraction of a group's global links a ring's traffic gets (adaptive routing:
 * 1/2 with more than two groups in the machine, max_nodes); 1 for fat-tree and rail. */
double cost_net_global_frac(const spec_cluster *c);

/* A rank and its host over PCIe (n = 1: the rank alone; intra_bw = PCIe line rate). */
void cost_group_host(const spec_cluster *c, cost_group *g);
/* All `nodes` x G ranks and the cluster's in-network optimizer node; update = 1: pushes are
 * followed on the node by the optimizer step at its rate (elem_bytes per gradient element). */
void cost_group_innet(const spec_cluster *c, int nodes, int update, double elem_bytes, cost_group *g);

/* A rank (via_gpu = 1) or its host memory and the node's NVMe, shared by its G GPUs. */
void cost_group_nvme(const spec_cluster *c, int via_gpu, cost_group *g);

/* Effective per-rank bus bandwidth of a group, B/s: min(intra, inter) after efficiencies. */
double cost_group_busbw(const cost_calib *cal, const cost_group *g);

/* nccl-tests bus-bandwidth factor: (n-1)/n for all-gather and reduce-scatter, 2(n-1)/n for
 * all-reduce (nccl-tests doc/PERFORMANCE.md). */
static inline double cost_busbw_frac(int n) { return (double)(n - 1) / n; } /* (n-1)/n, n > 1 */
static inline double cost_busbw_factor(cost_coll kind, int n)
{
    if (n <= 1)
        return 0;
    double f = cost_busbw_frac(n);
    return kind == COLL_ALLREDUCE ? 2 * f : f;
}

/* Time of one collective of `bytes` (nccl-tests S: all-gather output, reduce-scatter input,
 * all-reduce buffer) with an algorithm; chunks > 1 issues it as that many equal pieces. */
double cost_coll_time(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, int chunks,
                      const cost_group *g);
/* Its two parts: the latency (chunks x per-collective latency) and the bytes each rank moves
 * over its busiest edge, busbw_factor x S (tree all-reduce: / tree_bw_factor). time =
 * latency + edge_bytes / cost_group_busbw. The simulator moves edge_bytes as flows. */
double cost_coll_latency(const cost_calib *cal, cost_coll kind, cost_algo algo, int chunks, const cost_group *g);
double cost_coll_edge_bytes(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, const cost_group *g);
/* The latency of one point-to-point send within a 2-rank group (a pipeline's stages): one ring
 * step, priced as the collectives price it: NCCL's ring/Simple (base + the hop of the tier
 * joining them + the network floor across nodes) with an "nccl" calibration, else the plain
 * ring's base + hop. One home for a network hop's latency, whichever path sends. */
double cost_p2p_latency(const cost_calib *cal, const cost_group *pair);
/* The same for a collective issued as `chunks` equal pieces (each piece its own call). */
double cost_coll_edge_bytes_n(const cost_calib *cal, cost_coll kind, cost_algo algo, double bytes, int chunks,
                              const cost_group *g);
/* The faster algorithm (ring, or tree for multi-node all-reduce), as NCCL picks by its model. */
double cost_coll_best(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                      cost_algo *chosen);
/* Collectives of one class on one group take the same time at every size and piece count
 * (cost_coll_best, cost_coll_best_lat, cost_coll_best_lat_c), bit for bit: over NCCL both models
 * read the kind only as all-reduce or not (nccl_kind_class; the plain model's ring and tree
 * terms and busbw factor alike), so an all-gather and a reduce-scatter share a class there; the
 * host, NVMe and in-network transports time the two directions apart: each kind its own. */
static inline int cost_coll_class(cost_coll kind, const cost_group *g)
{
    return g->transport == XPORT_NCCL ? nccl_kind_class((int)kind) : 2 + (int)kind;
}
/* cost_coll_best of `bytes` and of 1 byte (its latency part) at once: the same bits as the
 * two calls, the NCCL shape's usability and latencies taken once. */
void cost_coll_best_lat(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                        double *t, double *t_one);
/* The collectives of one estimate share their communicators: the NCCL shape's tables (nccl_tab)
 * of each (kind, communicator) met, and its latest 1-byte time per piece count, kept here and
 * reused (cost_coll_best_lat_c; the same bits as cost_coll_best_lat). Keyed by the communicator's
 * address and kind class (nccl_kind_class: all-gather and reduce-scatter share): one cache per estimate (n = 0 to start), over groups that do not change
 * while it lives; the calibration the same throughout. The powers of the chunk efficiency are
 * shared by all its entries (nccl_pow_memo). */
#define COST_CC_N 8
typedef struct cost_coll_cache {
    int n;
    struct {
        const cost_group *g;
        int kind, chunks; /* chunks: the piece count `one` is for (-1: none yet) */
        double one;       /* the 1-byte time of `chunks` pieces                 */
        nccl_shape s;
        nccl_tab tab;
    } e[COST_CC_N];
    nccl_pow_memo pm; /* the chunk efficiency's powers (emptied with the first entry) */
} cost_coll_cache;
void cost_coll_best_lat_c(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g,
                          cost_coll_cache *cc, double *t, double *t_one);
/* The same with the algorithm pinned (force: an nccl_algo, as NCCL_ALGO pins it; -1 = free): the
 * best protocol of that algorithm. Without an "nccl" calibration, ring (0) or tree (1). */
double cost_coll_pick(const cost_calib *cal, cost_coll kind, double bytes, int chunks, const cost_group *g, int force,
                      cost_algo *chosen);

/* One GEMM timed from its shape (with kernel models; else the roofline, see cost_calib) (kern_gemm_time: tiles and waves over the SMs, efficiency by
 * tile and K, peak of the math: fp32 for 4-byte elements, else bf16), bounded below by its
 * bytes at HBM x hbm_eff. */
double cost_gemm_time(const cost_calib *cal, const spec_cluster *c, const wl_gemm *g, double elem_bytes);
/* Forward time of one copy of a layer as kernels: its linear-layer GEMMs (in the layer's
 * gemm_dtype), attention's core fused (FlashAttention, kern_flash_time) or as two batched
 * 16-bit GEMMs, and its memory-bound kernels (ew bytes at HBM x hbm_eff + launches).
 * Backward: each GEMM's data- and weight-gradient GEMMs at their own shapes, the fused
 * attention backward, the backward element-wise kernels. Recompute: what checkpointing
 * repeats in the backward (full: the forward; selective: the unfused core, else nothing). */
double cost_layer_fwd_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes);
double cost_layer_bwd_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes);
double cost_layer_recompute_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes);
/* The three at once, each the same bits as its function above, at less cost: a GEMM shape the
 * three repeat is timed once (a table local to the call), full checkpointing's recompute is
 * the forward already computed. */
void cost_layer_times(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes, double *fwd,
                      double *bwd, double *rec);
/* The GPU's GEMM rate in each math (kern_gemm_rate_of), taken at the first GEMM asking for it and
 * shared by the cost_layer_times_r calls of one estimate (rated = 0 to start; the calibration
 * and cluster the same throughout): cost_layer_times with it, the same bits. */
typedef struct cost_gemm_rates {
    unsigned rated; /* bit d: rate[d] taken */
    kern_gemm_rate rate[KD_N];
} cost_gemm_rates;
void cost_layer_times_r(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, double elem_bytes,
                        cost_gemm_rates *r, double *fwd, double *bwd, double *rec);
/* One linear GEMM of layer l as linear_times times it inside the layer's forward (grad = 0),
 * its data gradient (grad = 1) or its weight gradient (grad = 2, always whole): the first GEMM
 * of that role, at the layer's math, userbuffer / async-TP chunks and their chunk factor
 * included (the roofline: roof_gemm, a gradient priced as its forward, as layer_bwd does). 0
 * where the layer has no such GEMM or it is attention's core. The same lin_gemm_t / gemm_t
 * (cost.c) whose sum the layer times are. */
double cost_layer_gemm_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, wl_gemm_role role,
                            int grad, double elem_bytes);
/* Attention's core of one copy of layer l as the layer times price it: forward (bwd = 0) or
 * backward (bwd = 1); fused (kern_attn_times) or its two GEMMs (the roofline: roof_gemm's, the
 * backward twice the forward, as layer_times). 0 where the layer has no core. */
double cost_layer_core_time(const cost_calib *cal, const spec_cluster *c, const wl_layer *l, int bwd,
                            double elem_bytes);
/* The kernel calibration in use: cal->kern, or the arch defaults when it has none. */
const kern_calib *cost_kern(const cost_calib *cal, const spec_cluster *c, kern_calib *tmp);
/* Adam step over `params` local parameters: memory-bound. */
double cost_optimizer_time(const cost_calib *cal, const spec_cluster *c, double params);
/* The same where it runs: GPU as above; host: params / the node's CPU Adam rate; in-network
 * node: params / its optimizer rate; host with states on NVMe: see cost_optimizer_nvme_time. */
double cost_optimizer_time_at(const cost_calib *cal, const spec_cluster *c, cost_opt_where where, double params);
/* An optimizer step priced from fused AdamW's time s_fused (cost_optimizer_time_at): another
 * implementation's or SGD's HBM bytes over fused's (`scale`, fw_sched.opt_scale), plus `launches`
 * kernel launches of cal->kern.launch_s each (for-loop: fw_opt_tensor_launches per tensor).
 * scale 0 (a graph no framework scheduled): s_fused. The one rule of both engines' steps. */
double cost_optimizer_impl_time(const cost_calib *cal, double s_fused, double scale, double launches);
/* ZeRO-Infinity's optimizer step with its states on NVMe, for `params` parameters on a node
 * (its G GPUs' shards): CPU Adam sub-group by sub-group (`subgroup` parameters per rank each),
 * each read from NVMe (fp32 master, m, v and the fp32 gradient: 16 B/param) and written back
 * (16 B/param: the states, and the gradient written out at the boundary), DeepSpeed's
 * pipeline_read / pipeline_write overlapping the I/O of the neighbouring sub-groups with the
 * compute (ZeRO-Infinity §6.2): max(compute, I/O) plus the first sub-group's read and the
 * last one's write, which nothing hides. */
#define COST_NVME_OPT_READ_B 16.0
#define COST_NVME_OPT_WRITE_B 16.0
double cost_optimizer_nvme_time(const spec_cluster *c, double params, double subgroup_params);
/* Bytes one member moves over its own link for a collective of S = bytes (cost_rank_bytes): NCCL:
 * busbw factor x S; host / in-network: S each way (x 2 for all-reduce). cost_rank_bytes_f: the
 * same with g's busbw fraction given, frac = cost_busbw_frac(g->n) where g->n > 1 (any value
 * otherwise): the same bits, for callers that keep it per communicator. */
static inline double cost_rank_bytes_f(cost_coll kind, const cost_group *g, double bytes, double frac)
{
    if (g->transport == XPORT_NCCL)
        return (g->n <= 1 ? 0 : kind == COLL_ALLREDUCE ? 2 * frac : frac) * bytes;
    return (kind == COLL_ALLREDUCE ? 2 : 1) * bytes;
}
static inline double cost_rank_bytes(cost_coll kind, const cost_group *g, double bytes)
{
    return cost_rank_bytes_f(kind, g, bytes, g->n > 1 ? cost_busbw_frac(g->n) : 0);
}

/* Load and validate a calibration JSON (values as numbers or {"value", "sd", "source"}). */
int cost_calib_load(const char *path, cost_calib *out, sc_err *err) SC_MUST_CHECK;
int cost_calib_parse(const char *json, const char *source, cost_calib *out, sc_err *err) SC_MUST_CHECK;
/* Defaults from NCCL's model and datasheet rules of thumb, for a GPU arch (when no file). */
void cost_calib_defaults(const spec_cluster *c, cost_calib *out);
/* The framework overheads alone (every calibration starts from these). */
void cost_calib_framework_defaults(cost_calib *out);

#endif

/* layout.h — the op graph of one training step per rank: the one contract between "what a
 * layout does" and "how long it takes". Both engines (model/analytic, sim/) run this graph with
 * the same rules and the same cost functions, so they agree wherever there is no contention.
 * Not here: time (model/cost), memory (model/memory).
 *
 * Shape of the graph. A step is grad_accum micro-steps, then boundary ops. A micro-step is a
 * sequence of items: forward embed, blocks, head; backward head, blocks, embed. An item is one
 * layer copy repeated `count` times, each copy being:
 *     gathers (0-2 collectives, e.g. all-gather of its parameters; hierarchical = 2 in order),
 *     compute (forward, or recompute + backward),
 *     inline collectives (0-4, e.g. tensor parallelism's all-reduce of partial outputs) that
 *       the layer cannot finish without: issued when a fraction 1 - inline_overlap of the
 *       compute is done, the rest of the compute (e.g. weight-gradient GEMMs) running beside them,
 *     reduces (0-2 collectives, e.g. reduce-scatter of its gradients).
 * Execution rules (every rank has a compute stream and FW_STREAMS FIFO communication streams;
 * the ideal schedule uses stream 0 only, frameworks put reductions on their own streams):
 *   - copies are numbered c = 0, 1, ... across the whole step; with prefetch depth d, the gathers
 *     of copies 0..d-1 are issued at step start, and when compute c-1 ends (the host reaches
 *     copy c) the rank issues the reduces of copy c-1, then the gathers of copy c+d;
 *   - a collective starts when its communication stream is free and it has been issued (and, in
 *     the simulator, when every member of its group has reached it); a reduce on another stream
 *     than the item's previous reduce also waits for that one to end;
 *   - compute c starts when compute c-1 has ended and the gathers of copy c have completed;
 *     it ends when its compute has run and its inline collectives have completed;
 *   - after the last copy: its reduces, then the boundary ops in order, each after the previous
 *     one and after the end of all compute and communication so far.
 * These rules are DeepSpeed's ZeRO-3 prefetch (issue the next layers' all-gathers at a layer's
 * pre-forward hook, reduce-scatter from the post-backward hook) with one NCCL stream. */
#ifndef SC_LAYOUT_H
#define SC_LAYOUT_H

#include "cost.h"
#include "framework.h"
#include "spec.h"
#include "workload.h"

/* Named communicators. Ranks r = node * G + local; p = partition/shard size. */
typedef enum {
    GRP_WORLD,     /* all N ranks                                                    */
    GRP_PARTITION, /* contiguous blocks of p ranks (MiCS partition, HSDP shard)      */
    GRP_REPLICA,   /* ranks with the same r mod p (N/p of them)                      */
    GRP_RAIL,      /* same local index, same partition, across its k nodes           */
    GRP_INTRA,     /* the G ranks of one node inside one partition                   */
    GRP_SECONDARY, /* ZeRO++ hpZ: contiguous blocks of hpz ranks                     */
    GRP_AX0,       /* strided axes (tensor / AxoNN grids): rank r's group on axis a is   */
    GRP_AX1,       /* base + i * ax_stride[a], i < ax_size[a], base the rank with that   */
    GRP_AX2,       /* coordinate zeroed                                                  */
    GRP_AX3,
    GRP_HOST,      /* a rank and its own host CPU memory, over PCIe (rank alone: n = 1)  */
    GRP_INNET,     /* all N ranks and the in-network optimizer node                      */
    GRP_INNET_UPD, /* the same, the node updating the pushed gradients as they arrive     */
    GRP_NODE,      /* the G ranks of one node (ZeRO++ qgZ intra-node all-to-all)           */
    GRP_XRAIL,     /* ranks with the same local index on every node (qgZ inter-node step)   */
    GRP_NVME,      /* a rank and its node's NVMe, through host buffers (rank alone: n = 1)   */
    GRP_NVME_HOST, /* a rank's host memory and its node's NVMe (rank alone: n = 1)          */
    N_GROUPS
} lo_group_kind;

typedef struct lo_coll {
    cost_coll kind;
    lo_group_kind group;
    double bytes; /* nccl-tests S: all-gather output, reduce-scatter input, all-reduce buffer */
    int chunks;   /* issued as this many equal back-to-back pieces (buckets)              */
    int offload;  /* 1: moved by NICs / copy engines, not an NCCL kernel on the GPU: compute
                     runs beside it without interference                                  */
    int stream;   /* communication stream (0 .. FW_STREAMS-1; the framework's, 0 = the one
                     stream of the ideal schedule). A reduce on another stream than the
                     item's previous reduce starts after that one ends (it consumes it). */
} lo_coll;

typedef enum { LO_FWD, LO_BWD } lo_pass;

typedef struct lo_item {
    lo_pass pass;
    int layer;      /* index into wl.layer                                                 */
    int count;      /* consecutive identical copies                                        */
    int recompute;  /* backward: the forward is recomputed first (checkpointing)            */
    int n_gather;
    lo_coll gather[2];
    int n_inline;
    lo_coll inl[4];
    double inline_overlap; /* fraction of the compute that runs beside the inline ones     */
    unsigned inline_tail;  /* bit k: inline collective k is issued when the compute ends, not
                              beside it (the last chunks of a chunked GEMM + reduce-scatter,
                              layout_tensor.c)                                               */
    int n_reduce;
    lo_coll reduce[3];
    int hooks;             /* framework hook invocations per copy (sub-modules, FSDP units):
                              host time the compute stream waits, cost_calib.fw_hook_s each   */
    double hbm_bytes;      /* framework kernels per copy (ZeRO++ quantization, FSDP2 copy-in /
                              copy-out): HBM bytes read + written, run on the compute stream  */
    double host_s;         /* framework host time per copy beyond the hooks while the GPU idles
                              (DeepSpeed < 0.6: fw_sched.fetch_host_s per fetch), s          */
} lo_item;

#define LO_MAX_ITEMS (2 * WL_MAX_LAYERS)

typedef struct lo_micro {
    int n_items;
    lo_item item[LO_MAX_ITEMS];
} lo_micro;

typedef struct lo_bop {
    int is_optimizer; /* 1: Adam over opt_params local parameters; 0: the collective      */
    double opt_params;
    lo_coll coll;
    cost_opt_where opt_where; /* where the optimizer runs (GPU = 0 unless offloaded)      */
} lo_bop;

/* Pipeline parallelism (megatron with p > 1; layout_pipe.c). Virtual stage k = c x p + s is
 * model chunk c of stage (rank position) s, as Megatron-LM numbers them; one micro-batch runs
 * forward through k = 0 .. p v - 1 and backward the other way, each hop between different
 * stages a point-to-point send of p2p_bytes per rank (tensor-parallel rank to rank). */
#define LO_MAX_VSTAGES 1024
#define LO_MAX_STAGES 256
typedef struct lo_pipe {
    int p, v, m;               /* stages, chunks per stage, micro-batches per step            */
    spec_pipe_sched sched;     /* GPipe, or 1F1B (interleaved when v > 1)                     */
    int n_vstages;             /* p x v                                                       */
    int blocks[LO_MAX_VSTAGES];/* transformer blocks of each virtual stage; the embedding is on
                                  virtual stage 0, the head and loss on the last              */
    double stage_params[LO_MAX_STAGES]; /* parameters one rank of stage s holds (1 / t)       */
    double vstage_params[LO_MAX_VSTAGES]; /* of which each virtual stage's (one model chunk)   */
    double p2p_bytes;          /* one send: [seq (/ t with sp), micro_batch, hidden], B        */
    int dp;                    /* data-parallel replicas (GRP_AX3)                            */
} lo_pipe;

/* One op of a stage's schedule: forward or backward of micro-batch mb through chunk c. */
typedef struct lo_pipe_op {
    int bwd, mb, chunk;
} lo_pipe_op;

typedef struct lo_graph {
    spec_layout layout;
    spec_framework framework;     /* who schedules it (model/framework.h)                */
    fw_sched sched;               /* its schedule parameters for this layout             */
    int nodes, gpus_per_node, n_ranks;
    int prefetch;                 /* d: gathers issued ahead                            */
    int bwd_prefetch_p1;          /* 0: d in the backward too; else its backward depth + 1:
                                     a copy's gathers are issued when the host reaches copy
                                     (its index - its pass's depth), at step start if < 0   */
    int grad_accum;
    double elem_bytes;
    int local_layers;             /* 1: lw holds the layers as one rank computes them
                                     (tensor-parallel layouts shrink the GEMMs); 0: the
                                     workload's own layers apply (layout_layer)              */
    wl_layer lw[WL_MAX_LAYERS];
    int ax_stride[4], ax_size[4]; /* GRP_AX0..3 (size 1: unused)                          */
    cost_group group[N_GROUPS];   /* geometry of each communicator (n = 1: unused)       */
    lo_micro micro;               /* micro-steps 0 .. grad_accum-2                       */
    lo_micro last;                /* the last micro-step                                 */
    int n_boundary;
    lo_bop boundary[4];
    int pipelined;                /* 1: pipe below applies; micro / last / boundary hold stage 0's
                                     layers of one micro-batch (volumes, describe), and the
                                     engines run the pipeline schedule of layout_pipe_*          */
    lo_pipe pipe;
} lo_graph;

/* Build the graph of layout l for workload w on `nodes` nodes of cluster c. The layout must
 * have passed spec_layout_check. */
void layout_build(const wl *w, const spec_training *t, const spec_layout *l, const spec_cluster *c, int nodes,
                  lo_graph *g);

/* Layer i as one rank of g computes it (w: the workload g was built from). */
const wl_layer *layout_layer(const lo_graph *g, const wl *w, int i);

/* Members of rank r's communicator of this kind, ascending, into out (capacity n_ranks);
 * returns how many. */
int layout_group_members(const lo_graph *g, lo_group_kind kind, int r, int *out);
/* Which group of `kind` rank r belongs to, 0 .. N-1: equal for exactly the ranks that
 * layout_group_members lists together (the simulator indexes its per-group state by it). */
int layout_group_index(const lo_graph *g, lo_group_kind kind, int r);

/* Bytes one rank sends per step under ring algorithms: sum of busbw_factor x S over every
 * collective (the ZeRO paper's communication volume, e.g. ZeRO-3: 3 x 2 B x params x (n-1)/n
 * per micro-step); host / in-network transports count the S a rank fetches or pushes
 * (cost_rank_bytes). by_kind (optional) splits it per collective kind. */
double layout_comm_bytes(const lo_graph *g, double by_kind[N_COLLS]);

/* The same split per communicator kind (e.g. per AxoNN axis); returns the total. */
double layout_comm_bytes_by_group(const lo_graph *g, double by_group[N_GROUPS]);

/* The step's volume as terms, for any grad_accum without the graph (the analytical engine's
 * sweep memo keeps it beside a graph's timings): every collective of a micro-step, of the last
 * micro-step and of the boundary, in the order layout_comm_bytes sums them, with its copies
 * and the bytes one rank moves per copy (cost_rank_bytes). */
#define LO_MAX_VOL_TERMS (2 * LO_MAX_ITEMS * 9 + 4)
typedef struct lo_vol_term {
    double count;          /* copies per micro-step (boundary: 1)                         */
    double bytes;          /* per copy and rank, B                                        */
    cost_coll kind;
    lo_group_kind group;
} lo_vol_term;
typedef struct lo_volume {
    int n_micro, n_last, n_bound; /* terms: micro-step's, then the last's, then the boundary's */
    lo_vol_term term[LO_MAX_VOL_TERMS];
} lo_volume;
void layout_volume(const lo_graph *g, lo_volume *v);
/* layout_comm_bytes of a graph with v's terms and grad_accum micro-steps, bit for bit; by_kind
 * and by_group (optional) receive the splits. */
double layout_volume_bytes(const lo_volume *v, int grad_accum, double by_kind[N_COLLS], double by_group[N_GROUPS]);

/* ---- pipelines (layout_pipe.c) ---- */
/* Blocks of each of the p x v virtual stages: layers / (p v) each, the remainder one more to
 * the virtual stages after the first (which carries the embedding), in order. */
void layout_pipe_split(int layers, int p, int v, int *blocks);
/* The ops of stage s in the order its rank runs them (2 m v of them, into out): GPipe: all
 * forwards, then all backwards; 1F1B (PipeDream-Flush, Narayanan et al. SC'21 §2.2): p - s - 1
 * warm-up forwards, then one forward and one backward alternately, then the cool-down
 * backwards; interleaved 1F1B (SC'21 §2.2.2, Megatron-LM schedules.py): micro-batches in groups
 * of p, forwards chunk by chunk within a group (backwards chunks in reverse), (p - s - 1) x 2 +
 * (v - 1) x p warm-up forwards. Returns the count. */
int layout_pipe_order(const lo_pipe *pp, int s, lo_pipe_op *out);
/* Virtual stage of chunk c on stage s, and the neighbours of virtual stage k: the one feeding its
 * forward (k - 1) and the one feeding its backward (k + 1); -1 at the ends. */
int layout_pipe_vstage(const lo_pipe *pp, int s, int c);
/* The op graph of one micro-batch through virtual stage k of a pipelined g: its layers
 * (embedding on the first, head on the last), tensor-parallel items, no data-parallel reduce,
 * no boundary. w: the workload g was built from; lw_out receives the stage's layers. */
void layout_pipe_stage(const lo_graph *g, const wl *w, const spec_training *t, int k, lo_graph *out, wl *lw_out);
/* Pipeline bubble fraction of the schedule in closed form (Narayanan et al. SC'21 §2.2):
 * GPipe and 1F1B (p - 1) / (m + p - 1), interleaved (p - 1) / (v m + p - 1) (the bubble shrinks
 * v-fold: (p - 1) / v forward-backward times over m + (p - 1) / v). */
double layout_pipe_bubble(int p, int v, int m);

/* Bytes one rank moves per step between its GPU, its host memory and its node's NVMe under
 * zero3-offload (ZeRO-Offload / ZeRO-Infinity); 0 for layouts that offload nothing. */
typedef struct lo_offload_traffic {
    double param_h2d;        /* 16-bit parameter shards fetched to the GPU over PCIe (param=cpu|nvme) */
    double param_nvme_read;  /* of which read from NVMe first (param=nvme)                  */
    double grad_d2h;         /* gradient shards copied to host memory over PCIe              */
    double update_h2d;       /* updated parameter shard copied back (param on the GPU; the last
                                sub-group's copy: the rest overlaps the CPU step)              */
    double opt_nvme_read;    /* optimizer states + fp32 gradients read from NVMe (opt=nvme)   */
    double opt_nvme_write;   /* the same written (states back, gradients out)                */
    double param_nvme_write; /* updated 16-bit parameter shard written to NVMe (param=nvme)   */
} lo_offload_traffic;
void layout_offload_traffic(const lo_graph *g, lo_offload_traffic *out);

const char *layout_group_name(lo_group_kind k);
const char *layout_coll_name(cost_coll k);

#endif

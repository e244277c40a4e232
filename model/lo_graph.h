/* lo_graph.h — the op graph's types (the rules that give them meaning are in layout.h): named
 * communicators, collectives, items, micro-steps, boundary ops, pipeline stages, the graph.
 * Types only, so the family files (layout_dp.c, layout_tensor.c, layout_pipe.c,
 * layout_offload.c) and the kinds' rows build on them without layout.c's API. */
#ifndef SC_LO_GRAPH_H
#define SC_LO_GRAPH_H

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
                     runs beside it without interference; LO_OFFLOAD_ACT (2): the same, one
                     of activation_offload's copies (layout_offload_traffic counts them)   */
    int stream;   /* communication stream (0 .. FW_STREAMS-1; the framework's, 0 = the one
                     stream of the ideal schedule). A reduce on another stream than the
                     item's previous reduce starts after that one ends (it consumes it). */
} lo_coll;
#define LO_OFFLOAD_ACT 2

/* A copy fused with one GEMM of the item (PyTorch async TP, layout_tensor.c atp_block;
 * Transformer Engine's userbuffers under Megatron --tp-comm-overlap, tpo_block): part of inline
 * collective `coll`, run beside (chunks - bare) / chunks of that GEMM and of nothing else, so
 * its own excess over that part is exposed (analytic.c pair_hidden, both engines). */
typedef struct lo_pair {
    unsigned char coll;  /* index into lo_item.inl                                          */
    unsigned char role;  /* wl_gemm_role of the GEMM it runs beside                          */
    unsigned char pass;  /* LO_PAIR_FWD / _DGRAD / _WGRAD / _REC: the forward GEMM, its data
                            or weight gradient, or checkpointing's recompute of the forward
                            (op_rec of it)                                                  */
    unsigned char share; /* its bytes, relative to the other pairs of `coll` (weights)        */
    unsigned char chunks;/* the GEMM's chunks (1: whole; t above 255 clamped, tp_pair)     */
    unsigned char bare;  /* of them, those no copy runs beside (the ring's / pipeline's
                            first or last; 0: bulk, the copy beside the whole GEMM)          */
} lo_pair;
/* LO_MAX_PAIRS: a --tp-comm-overlap backward with checkpointing's recompute pairs 10 (tpo_block);
 * LO_MAX_INLINE: the most any builder fills, megatron's (layout_tensor.c tp_item): such a
 * backward's all-gathers, bulk re-gather, reduce-scatters and tail (tpo_block: 4), context
 * parallelism's ring (cp_item: 1) and current scaling's amax all-reduce (fp8_amax_reduce: 1):
 * 6 (zero2=1, refused with cp > 1 in spec_layout.c, swaps the ring for stage2_reduce's 1; the
 * data-parallel reduce goes inline only with overlap off, which megatron's grammar has no key
 * for). fsdp2 holds at most 5 (atp_block's 3, torch_ring_item's 2).
 * Builders assert room where a later one adds to what earlier ones filled. */
enum { LO_PAIR_FWD, LO_PAIR_DGRAD, LO_PAIR_REC, LO_PAIR_WGRAD, LO_MAX_PAIRS = 10, LO_MAX_INLINE = 6 };

typedef enum { LO_FWD, LO_BWD } lo_pass;

typedef struct lo_item {
    lo_pass pass;
    int layer;      /* index into wl.layer                                                 */
    int count;      /* consecutive identical copies                                        */
    int recompute;  /* backward: the forward is recomputed first (checkpointing)            */
    int n_gather;
    lo_coll gather[2];
    int n_inline;
    lo_coll inl[LO_MAX_INLINE];
    double inline_overlap; /* fraction of the compute that runs beside the inline ones (the
                              unpaired ones; paired copies add their GEMMs', time_micro)    */
    unsigned inline_tail;  /* bit k: inline collective k is issued when the compute ends, not
                              beside it (the last chunks of a chunked GEMM + reduce-scatter,
                              layout_tensor.c)                                               */
    int n_pair;            /* inline collectives split into copies fused with one GEMM each */
    lo_pair pair[LO_MAX_PAIRS];
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

/* Pipeline parallelism (megatron or fsdp2 with p > 1; layout_pipe.c). Virtual stage k = c x p + s is
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
    int vstage_units[LO_MAX_VSTAGES]; /* FSDP2: the chunk's FSDP units, one reduce-scatter each;
                                         0 (megatron): its gradient buckets (layout_pipe.c)   */
    int stage_units[LO_MAX_STAGES];   /* FSDP2: the stage's units, one all-gather each; 0: buckets */
    double stage_tensors[LO_MAX_STAGES]; /* parameter tensors one rank of stage s updates
                                         (fw_param_tensors over its layers): its optimizer's
                                         per-tensor launches (analytic_pipe.c)                 */
    double p2p_bytes;          /* one send: [seq (/ t with sp), micro_batch, hidden], B        */
    double tied_params;        /* the last stage's copy of the word embeddings (tied head), per
                                  rank, already in its stage_params / the last vstage_params;
                                  its gradient all-reduced with stage 0's (layout_pipe_tied_params) */
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

#endif

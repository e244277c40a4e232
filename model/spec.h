/* spec.h — the validated input of every prediction: cluster, model, training, layout and
 * scenario specs, loaded from JSON (Jansson) or a DeepSpeed ds_config.json and checked once.
 * After a spec_* loader returns 0 the rest of shardcast may trust every field here.
 * Not here: anything derived (parameters, FLOPs: model/workload; bytes per GPU: model/memory).
 * Internal units are SI (s, B, B/s, FLOP/s); JSON keys carry theirs (see configs/README.md). */
#ifndef SC_SPEC_H
#define SC_SPEC_H

#include "err.h"

#define SPEC_NAME_MAX 64
#define SPEC_SOURCE_MAX 512
#define SPEC_MAX_GPUS_PER_NODE 64

/* ---- cluster ------------------------------------------------------------------------- */
typedef enum {
    FABRIC_NVSWITCH,    /* every GPU has links_per_gpu links into a non-blocking switch   */
    FABRIC_NVLINK_MESH, /* explicit GPU-GPU links (V100 hybrid cube mesh, Perlmutter 4x)   */
    FABRIC_PCIE         /* no NVLink: GPU-GPU traffic crosses PCIe (workstations)         */
} spec_fabric_kind;

typedef struct spec_gpu {
    char name[SPEC_NAME_MAX]; /* "A100-SXM4-40GB"                                      */
    char arch[16];            /* "volta" | "ampere" | "hopper" | "ada" | "blackwell" | "cpu" */
    double peak_flops;        /* dense FP16/BF16 tensor-core peak, FLOP/s              */
    double hbm_bytes;         /* device memory, bytes                                  */
    double hbm_bw_Bps;        /* device memory bandwidth, B/s                          */
} spec_gpu;

typedef struct spec_fabric {
    spec_fabric_kind kind;
    double link_bw_Bps; /* one NVLink, one direction, B/s (datasheet line rate)            */
    int links_per_gpu;  /* NVSwitch: links from each GPU to the switch plane               */
    /* NVLINK_MESH: links[i][j] = number of links from GPU i to GPU j (symmetric, 0 = none) */
    unsigned char links[SPEC_MAX_GPUS_PER_NODE][SPEC_MAX_GPUS_PER_NODE];
} spec_fabric;

typedef enum { NET_FAT_TREE, NET_RAIL, NET_DRAGONFLY } spec_net_topology;

/* An in-network optimizer node (LuWu, arXiv 2409.00918): holds the parameters and optimizer
 * states, attached to the top switch of the network (the leaf with one leaf, else the spine). */
typedef struct spec_innet {
    int present;             /* 0 = the cluster has none                                  */
    double port_bw_Bps;      /* its switch port, one direction, B/s                      */
    double mem_bytes;        /* memory for parameters + optimizer states, bytes          */
    int aggregation;         /* the switch sums gradients on their way (else N copies in) */
    int multicast;           /* the switch replicates parameters (else N copies out)      */
    double opt_params_per_s; /* Adam update throughput, parameters/s                     */
} spec_innet;

/* CPU Adam default, parameters/s per node: ZeRO-Offload (Ren et al., USENIX ATC 2021) Table 2
 * [recall]: CPU-Adam updates 1e9 parameters in about 1.2 s on a DGX-2 host (2x Xeon 8168). */
#define SPEC_CPU_ADAM_DEFAULT 0.8e9

typedef struct spec_cluster {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    spec_gpu gpu;
    int gpus_per_node;
    spec_fabric fabric;
    double pcie_bw_Bps;       /* GPU <-> host (and NIC) PCIe, one direction, B/s         */
    int nics_per_node;
    double nic_bw_Bps;        /* one NIC, one direction, B/s                             */
    double host_mem_bytes;    /* host DRAM per node, bytes (0 = not given)               */
    double cpu_adam_params_per_s; /* host CPU Adam throughput per node, parameters/s      */
    spec_net_topology topology;
    double oversubscription;  /* leaf uplink oversubscription (1 = non-blocking)         */
    double switch_latency_s;  /* one switch hop, s                                       */
    int nodes_per_leaf;       /* nodes under one leaf switch                             */
    int max_nodes;            /* largest node count that can be ordered (0 = unbounded)  */
    double price_usd_per_hour;/* per node, on-demand                                     */
    spec_innet innet;         /* optional in-network optimizer node                      */
} spec_cluster;

/* ---- model --------------------------------------------------------------------------- */
typedef struct spec_model {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    int encoder;          /* 1 = BERT-style bidirectional encoder, 0 = decoder          */
    int layers, hidden, heads, kv_heads, ffn, seq_len, vocab;
    int swiglu;           /* 1 = gate/up/down MLP (3 matrices), 0 = 2-matrix GeLU MLP    */
    int rmsnorm;          /* 1 = RMSNorm (weight only), 0 = LayerNorm (weight + bias)    */
    int bias;             /* linear layers carry biases                                  */
    int tied_embeddings;  /* LM head shares the token embedding                          */
    int learned_positions;/* learned position embedding (seq_len x hidden)               */
    double published_params; /* the total the source quotes, for `describe` (0 = none)   */
} spec_model;

/* ---- training ------------------------------------------------------------------------ */
typedef enum { PREC_BF16, PREC_FP16, PREC_FP32 } spec_precision;

typedef struct spec_training {
    int micro_batch;        /* sequences per GPU per micro-step                          */
    int grad_accum;         /* micro-steps per optimizer step                            */
    spec_precision precision;
    int act_ckpt;           /* full activation checkpointing (recompute forward)         */
    int flash_attention;    /* fused attention: no s x s scores stored                   */
    int prefetch_layers;    /* sharded layouts: layers all-gathered ahead of use         */
    double bucket_bytes;    /* gradient / all-gather bucket, bytes                       */
    double reserve_bytes;   /* CUDA context, NCCL buffers, allocator slack, bytes        */
} spec_training;

/* ---- layout -------------------------------------------------------------------------- */
typedef enum {
    LAYOUT_DDP,
    LAYOUT_ZERO1,
    LAYOUT_ZERO2,
    LAYOUT_ZERO3,
    LAYOUT_MICS,   /* p = partition group size, hier = hierarchical all-gather          */
    LAYOUT_HSDP,   /* p = shard group size; sync_boundary = all-reduce only at boundary  */
    LAYOUT_ZEROPP, /* p = hpZ secondary partition size                                  */
    LAYOUT_TP,     /* Megatron-LM tensor parallelism over t GPUs of a node, data parallel
                      (zero1 = 1: ZeRO-1) across the N/t replicas                          */
    LAYOUT_AXONN,  /* AxoNN 4D: a Gx x Gy x Gz tensor-parallel grid, Gdata replicas        */
    LAYOUT_ZERO3_OFFLOAD, /* ZeRO-3, optimizer states and update on the host CPU        */
    LAYOUT_LUWU    /* LuWu: parameters and optimizer on an in-network optimizer node      */
} spec_layout_kind;

#define SPEC_AXES 4 /* AxoNN grid axes x, y, z, d */
/* The most GPUs a study may have (2^22): every product of group sizes and node counts fits an int. */
#define SPEC_MAX_RANKS (1 << 22)

typedef struct spec_layout {
    spec_layout_kind kind;
    int p;             /* shard / partition group size (0 = all ranks, for ZeRO)         */
    int hier;          /* MiCS: hierarchical all-gather across nodes (default 1)         */
    int sync_boundary; /* HSDP: replica all-reduce only at the accumulation boundary    */
    int t;             /* TP: tensor-parallel degree                                     */
    int zero1;         /* TP: optimizer states sharded over the replicas (default 1)     */
    int grid[SPEC_AXES]; /* AxoNN: Gx, Gy, Gz, Gdata (Gdata 0 = GPUs / (Gx Gy Gz))        */
    char placement[SPEC_AXES + 1]; /* AxoNN: the axes from the innermost (consecutive ranks,
                                      inside a node) outwards, a permutation of "xyzd"     */
    int overlap;       /* TP/AxoNN: collectives overlap independent compute (default 1)  */
} spec_layout;

/* ---- scenario ------------------------------------------------------------------------ */
#define SPEC_MAX_LIST 32
typedef struct spec_scenario {
    char name[SPEC_NAME_MAX];
    char source[SPEC_SOURCE_MAX];
    char cluster[256];              /* name or path, resolved like --cluster          */
    char model[256];
    int nodes[SPEC_MAX_LIST];
    int n_nodes;
    char layouts[SPEC_MAX_LIST][64];
    int n_layouts;
    spec_training training;         /* defaults, then the scenario's "training" object */
} spec_scenario;

/* Defaults used when a training spec leaves a key out (documented in configs/README.md). */
void spec_training_defaults(spec_training *t);

/* Loaders: parse + validate a file. Errors name the file and the JSON path. */
int spec_load_cluster(const char *path, spec_cluster *out, sc_err *err);
int spec_load_model(const char *path, spec_model *out, sc_err *err);
/* Applies the keys present in the file on top of *out (call spec_training_defaults first). */
int spec_load_training(const char *path, spec_training *out, sc_err *err);
int spec_load_scenario(const char *path, spec_scenario *out, sc_err *err);
/* DeepSpeed ds_config.json: training fields on top of *t, and the layout it implies. */
int spec_load_ds_config(const char *path, spec_training *t, spec_layout *layout, sc_err *err);

/* The same from a string already in memory (tests, fuzzing); `source` names it in errors. */
int spec_parse_cluster(const char *json, const char *source, spec_cluster *out, sc_err *err);
int spec_parse_model(const char *json, const char *source, spec_model *out, sc_err *err);
int spec_parse_training(const char *json, const char *source, spec_training *out, sc_err *err);

/* Layout strings: "ddp", "zero1", "zero2", "zero3", "mics:p=8", "mics:p=16,hier=0",
 * "hsdp:p=8", "hsdp:p=8,sync=boundary", "zeropp:hpz=8", "tp:t=8[,zero1=0|1][,overlap=0|1]",
 * "axonn:x=X,y=Y,z=Z[,d=D][,placement=xyzd][,overlap=0|1]", "zero3-offload", "luwu". */
int spec_layout_parse(const char *s, spec_layout *out, sc_err *err);
/* Canonical string of a layout ("mics:p=16,hier=0"), into buf. */
const char *spec_layout_str(const spec_layout *l, char *buf, unsigned long n);
/* The layout on this cluster and node count: p divides the GPU count and aligns with nodes. */
int spec_layout_check(const spec_layout *l, const spec_cluster *c, int nodes, sc_err *err);
/* 1 when p orders the axes x, y, z, d (a permutation of "xyzd"), else 0. */
int spec_placement_valid(const char *p);
/* Size and stride of each grid axis (x, y, z, d) of layout l on n_ranks GPUs: axonn its grid
 * under its placement (innermost axis stride 1; an empty placement is "xyzd"), tp tensor on x
 * and data on d, every other layout one axis of size 1. Returns 0, or -1 when the placement is
 * not a permutation or the grid does not divide n_ranks. */
int spec_layout_axes(const spec_layout *l, int n_ranks, int size[SPEC_AXES], int stride[SPEC_AXES]);
/* The layout on this model: tensor parallelism splits attention heads (tp: t | heads and
 * kv_heads; axonn: y | heads and kv_heads, x and y | hidden and ffn). */
int spec_layout_check_model(const spec_layout *l, const spec_model *m, sc_err *err);
/* Node count possible on this cluster (1..max_nodes). `source` names the option/file. */
int spec_nodes_check(const spec_cluster *c, int nodes, const char *source, sc_err *err);
/* Shard group size of a layout on n ranks (ddp: 1, zero1-3: n, mics/hsdp: p, zeropp: n). */
int spec_layout_shard(const spec_layout *l, int n_ranks);

const char *spec_precision_str(spec_precision p);
const char *spec_fabric_str(spec_fabric_kind k);

/* Resolve a name ("p4d.24xlarge") or a path to a readable file. kind is "clusters",
 * "models", "calibrations", "scenarios" or "training". Search order: the name as a path;
 * $SHARDCAST_CONFIGS/<kind>/<name>.json; each of roots[]/<kind>/<name>.json. */
int spec_resolve(const char *kind, const char *name, const char *const *roots, int n_roots,
                 char *out, unsigned long outlen, sc_err *err);

#endif

/* common.h — what every subcommand shares: the options that name a cluster, model, training and
 * layouts (with scenario files and DeepSpeed configs), config lookup beside the binary, number
 * lists, atomic file output and error printing. Not here: any one command's logic. */
#ifndef SC_CLI_COMMON_H
#define SC_CLI_COMMON_H

#include <getopt.h>
#include <stdio.h>

#include "../base/err.h"
#include "../model/spec.h"

#define CLI_MAX_NODES 64
#define CLI_MAX_LAYOUTS 64
#define CLI_N_EW 12 /* the on|off implementation flags, --norm-fp32 (1042) .. --rope-unfused (1053) */

/* Raw option values, applied in a fixed order by cli_setup_load: scenario, then training and
 * ds-config files, then single flags (flags override files). */
typedef struct cli_setup {
    const char *scenario, *cluster_name, *model_name, *training_file, *ds_config, *nodes_arg;
    const char *layout_args[CLI_MAX_LAYOUTS];
    int n_layout_args;
    int micro_batch, grad_accum, prefetch; /* 0 = not given */
    const char *precision;
    int act_ckpt;                          /* -1 not given */
    int no_interference;                   /* --interference off: overlap_slowdown = 0 */
    int json;
    const char *placement;                 /* --placement: AxoNN axes, innermost first    */
    const char *framework;                 /* --framework (NULL: the files' or ideal)      */
    const char *accelerate;                /* --accelerate-config: an accelerate FSDP YAML */
    int attn_kernel;                       /* --attention-kernel: spec_attn_kernel, 0 not given */
    const char *stack;                     /* --stack: a named software stack (configs/stacks) */
    int accel_layout;                      /* index of the layout it gave, -1 none         */
    int strict;                            /* --strict: a ds_config key not modelled is an error */
    int reduce_dtype, opt_impl;            /* --reduce-dtype, --optimizer (0: not given)   */
    int ew_flag[CLI_N_EW];                 /* --norm-fp32 .. --rope-unfused: -1 not given */
    int nccl_algo, nccl_simple;            /* --nccl-algo: 1 + nccl_algo; --nccl-proto simple (0: not given) */
    double dropout[2];                     /* --hidden-dropout, --attention-dropout (-1: not given) */
    spec_ds_report ds_report;              /* what --ds-config left unmodelled             */
    const char *const *accept;             /* the shared options (long names) the command takes,
                                            * NULL-terminated; NULL: all of them. Set before parsing */
    const char *const *refuse;             /* or those it does not take (NULL: none)           */
    const char *first_shared;              /* the first shared option given but --json (its long
                                            * name), NULL none: for commands that take them only
                                            * in some uses */
    const char *shared_given[16];          /* the shared options given but --json, in order (the
                                            * first 16): what a use would ignore is named */
    int n_shared_given;
    /* loaded */
    spec_cluster cluster;
    spec_model model;
    spec_training training;
    int nodes[CLI_MAX_NODES];
    int n_nodes;
    spec_layout layouts[CLI_MAX_LAYOUTS];
    int n_layouts;
    char config_roots[2][4096];
    char scenario_cluster[256], scenario_model[256]; /* names a scenario gave */
} cli_setup;

/* The getopt_long entries of the shared options; a command appends its own. */
#define CLI_COMMON_LONGOPTS                                                                          \
    {"scenario", required_argument, 0, 1000}, {"cluster", required_argument, 0, 1001},                \
        {"model", required_argument, 0, 1002}, {"training", required_argument, 0, 1003},              \
        {"ds-config", required_argument, 0, 1004}, {"nodes", required_argument, 0, 1005},             \
        {"layout", required_argument, 0, 1006}, {"layouts", required_argument, 0, 1006},              \
        {"micro-batch", required_argument, 0, 1007}, {"grad-accum", required_argument, 0, 1008},      \
        {"precision", required_argument, 0, 1009}, {"checkpointing", required_argument, 0, 1010},     \
        {"prefetch", required_argument, 0, 1011}, {"json", no_argument, 0, 1012},                    \
        {"placement", required_argument, 0, 1013}, {"interference", required_argument, 0, 1014},       \
        {"framework", required_argument, 0, 1015}, {"strict", no_argument, 0, 1016},                  \
        {"accelerate-config", required_argument, 0, 1017}, {"attention-kernel", required_argument, 0, 1018}, \
        {"stack", required_argument, 0, 1019}, CLI_IMPL_LONGOPTS

/* Issue 27's implementation options (training keys of the same names, configs/README.md). */
#define CLI_IMPL_LONGOPTS                                                                            \
    {"reduce-dtype", required_argument, 0, 1040}, {"optimizer", required_argument, 0, 1041},         \
        {"norm-fp32", required_argument, 0, 1042}, {"rope-fp32", required_argument, 0, 1043},         \
        {"repeat-kv", required_argument, 0, 1044}, {"loss-fp32", required_argument, 0, 1045},         \
        {"swiglu-unfused", required_argument, 0, 1046}, {"tp-comm-overlap", required_argument, 0, 1047},      \
        {"gelu-unfused", required_argument, 0, 1048}, {"mask-unfused", required_argument, 0, 1049},          \
        {"autocast", required_argument, 0, 1050},                                                  \
        {"overlap-param-gather", required_argument, 0, 1051}, {"fused-linear-ce", required_argument, 0, 1052}, \
        {"rope-unfused", required_argument, 0, 1053},                                              \
        {"nccl-algo", required_argument, 0, 1060}, {"nccl-proto", required_argument, 0, 1061},     \
        {"hidden-dropout", required_argument, 0, 1062}, {"attention-dropout", required_argument, 0, 1063}

/* The shared options' help; CLI_SHAPE_HELP without --json, for a command whose output is not
 * JSON (sweep: a CSV). */
#define CLI_COMMON_HELP CLI_SHAPE_HELP "  --json                 machine-readable output on stdout\n"
#define CLI_SHAPE_HELP                                                                                \
    "  --scenario FILE|NAME   cluster, model, nodes, layouts and training from a scenario\n"        \
    "  --cluster NAME|FILE    cluster spec (configs/clusters), e.g. p4d.24xlarge\n"                  \
    "  --model NAME|FILE      model spec (configs/models), e.g. gpt3-175b; or a Hugging Face\n"     \
    "                         config.json: hf:path/config.json[,seq=N]\n"                          \
    "  --nodes LIST           node counts: 16 | 2,4,8 | 4..64 (doubling)\n"                          \
    "  --layout L             one layout; repeat the option for more (a layout's options take\n"    \
    "                         the commas): ddp zero1[:p=P] zero2[:p=P]\n"                           \
    "                         zero3[:cp=C] (= fsdp2:dp=D,cp=C) mics:p=P[,hier=0]\n"                  \
    "                         fsdp2:dp=D[,cp=C],t=T[,p=P][,asynctp=1][,schedule=S] (torchtitan\n"  \
    "                         2-D to 4-D: FSDP2 over D x C, sequence-parallel TP over T in a\n"     \
    "                         node, P pipeline stages, S 1f1b|interleaved-1f1b|gpipe;\n"            \
    "                         micro-batch = per T x C x P group, --grad-accum micro-batches)\n"    \
    "                         hsdp:p=P[,sync=boundary] raf:p=P (FSDP2 reshard_after_forward=P)\n"    \
    "                         zeropp[:hpz=P][,qwz=1][,qgz=1] shard_grad_op hybrid_shard_zero2:p=P\n" \
    "                         tp:t=T[,zero1=0][,overlap=0] axonn:x=X,y=Y,z=Z[,d=D][,overlap=0]\n"     \
    "                         megatron:t=T,p=P[,vp=V][,sp=0][,zero1=0][,sched=gpipe] (Megatron-LM\n"  \
    "                         3D: tensor t, pipeline p, interleaved with vp chunks per stage,\n"    \
    "                         sequence parallel, distributed optimizer; micro-batch = per replica;\n" \
    "                         cp=C context parallel: sequence / C, ring attention;\n"               \
    "                         split=embed+loss|embed|loss|even, first=N, last=N: Megatron-Core's\n"  \
    "                         uneven pipeline split, embedding / loss counted as a layer, or N\n"   \
    "                         layers on the first / last stage; zero2=1 with p=1: gradients\n"    \
    "                         reduced to their owners every micro-step, PaddleNLP sharding stage 2)\n" \
    "                         zero3-offload[:param=gpu|cpu|nvme][,opt=cpu|nvme] (ZeRO-Offload;\n"   \
    "                         ZeRO-Infinity: parameter shards and Adam states on host or NVMe;\n"   \
    "                         --framework fsdp: param=cpu only, FSDP1 CPUOffload(offload_params=\n" \
    "                         True): shards copied to the GPU before each all-gather, gradients\n"  \
    "                         back after each reduce-scatter, torch Adam on the host)\n"          \
    "                         zero2-offload (ZeRO-Offload on ZeRO-2: 16-bit parameters on every\n"  \
    "                         GPU, gradient partitions and Adam on the host CPU)\n"              \
    "                         luwu (in-network optimizer node)\n"                                   \
    "  --placement P          AxoNN axes from inside a node outwards (default xyzd, the tensor\n"    \
    "                         axes on NVLink); applies to axonn layouts that do not set one\n"     \
    "  --training FILE|NAME   training spec (micro-batch, precision, checkpointing, ...)\n"          \
    "  --ds-config FILE       DeepSpeed ds_config.json (training + ZeRO/MiCS/ZeRO++ layout;\n"      \
    "                         implies --framework deepspeed; keys not modelled listed on stderr)\n" \
    "  --accelerate-config F  Hugging Face accelerate FSDP config (YAML): sharding strategy,\n"    \
    "                         FSDP version, prefetch, precision; implies --framework fsdp|fsdp2\n" \
    "  --strict               a ds_config / accelerate key not modelled is an error (exit 2)\n"  \
    "  --framework F          who schedules the layout: ideal (default: the papers' schedules),\n" \
    "                         deepspeed, fsdp, fsdp2, megatron (buckets, streams, prefetch, hooks)\n" \
    "                         NAME@VERSION picks a release's schedule (deepspeed@0.5: synchronous\n" \
    "                         per-parameter fetch; default: today's)\n" \
    "  --attention-kernel K   fa1 | triton2022 | xformers | fa2 | fa3 | sdpa-flash | sdpa-cudnn |\n" \
    "                         sdpa-efficient | unfused (default: the stack's, else fa2; xformers on V100)\n" \
    "  --stack NAME           a named software stack (configs/stacks; shardcast list stacks): its\n" \
    "                         kernel, framework, execution...; explicit options and keys win\n" \
    "  --micro-batch B        sequences per GPU per micro-step (megatron: per model replica)\n"                                    \
    "  --grad-accum S         micro-steps per optimizer step\n"                                      \
    "  --precision P          bf16 | fp16 | fp32 (FP32 math) | tf32 | fp8 (Hopper); the GPU must have it\n" \
    "  --checkpointing C      on|full, off|none, selective (attention core only), op\n"             \
    "                         (torchtitan's op-level SAC: every second matmul and the\n"          \
    "                         element-wise ops recomputed), save_dot_except_mlpwi or\n"          \
    "                         save_qkv_proj (MaxText remat policies: q, k, v, out_proj and the\n" \
    "                         MLP output kept, or q, k, v only; the rest recomputed) (default full)\n" \
    "  --reduce-dtype D       gradient reductions in fp32 or param (the 16-bit dtype); default:\n" \
    "                         the framework's (FSDP / FSDP2 MixedPrecision: param_dtype)\n"       \
    "  --optimizer O          AdamW: fused (28 B/param), foreach or forloop (80 B/param);\n"       \
    "                         default: foreach for fsdp / fsdp2 (torch.optim), else fused\n"      \
    "  --norm-fp32 on|off     eager norms in fp32 as separate kernels (default off)\n"            \
    "  --rope-fp32 on|off     eager rotary through complex fp32 (default off)\n"                  \
    "  --rope-unfused on|off  eager 16-bit rotary as five kernels, Hugging Face\n"                \
    "                         apply_rotary_pos_emb (default off; --rope-fp32 wins)\n"        \
    "  --repeat-kv on|off     GQA K/V repeated in HBM + attention output copied (default off)\n"  \
    "  --loss-fp32 on|off     eager loss: on logits.float() + cross_entropy kernels, off 16-bit\n" \
    "                         (default: fp32 inside the loss, as Megatron / DeepSpeed)\n"         \
    "  --swiglu-unfused on|off eager SwiGLU as silu then mul (default off)\n" \
    "  --gelu-unfused on|off  eager tanh GELU as eight kernels, Hugging Face gelu_new (default off)\n" \
    "  --mask-unfused on|off  unfused attention's scale, causal mask and padding mask as three\n" \
    "                         kernels, Hugging Face GPT-2 (default off: one)\n" \
    "  --autocast on|off      torch.cuda.amp: fp32 weights cast per forward, unfused softmax and\n" \
    "                         dropout in fp32 (default off: 16-bit parameters, as DeepSpeed)\n" \
    "  --tp-comm-overlap on|off Megatron sequence-parallel all-gathers / reduce-scatters run\n" \
    "                         beside their GEMMs in chunks, as Transformer Engine's userbuffers\n" \
    "                         (default off; acts with megatron sp only)\n" \
    "  --overlap-param-gather on|off Megatron-Core distributed optimizer: the updated\n" \
    "                         parameters all-gathered beside the next forward, layer by layer\n" \
    "                         (default off: after the optimizer; framework megatron, zero1)\n" \
    "  --fused-linear-ce on|off the head's projection and the cross-entropy fused in token chunks\n" \
    "                         (Liger-Kernel): no whole fp32 logits in memory (default off)\n" \
    "  --hidden-dropout P     dropout after attention's projection and the MLP, 0 to < 1 (0: no\n" \
    "                         kernels, no masks; default: framework megatron 0.1, else 0.1 for a\n" \
    "                         GELU model, 0 for SwiGLU; a Hugging Face config.json states it)\n" \
    "  --attention-dropout P  dropout on the attention probabilities, same defaults (unfused\n" \
    "                         attention prices its kernel; inside FlashAttention it is not priced)\n" \
    "  --nccl-algo A          NCCL_ALGO as the run pinned it: ring | tree | nvls | nvls-tree | pat;\n" \
    "                         every collective uses it where it applies (default: NCCL's choice)\n" \
    "  --nccl-proto simple    NCCL_PROTO=Simple as the run pinned it (LL / LL128 pins not modelled)\n" \
    "  --prefetch K           layers all-gathered ahead (sharded layouts, default 1)\n"             \
    "  --interference on|off  compute slowed while NCCL kernels share the GPU (default on: the\n"     \
    "                         calibration's overlap_slowdown; off: 0)\n"

/* Fill config_roots from the binary's location; zero the setup. */
void cli_setup_init(cli_setup *s, const char *argv0);
/* Handle one shared option; returns 1 if it was one, 0 if not, <0 on a bad value (err set). */
int cli_setup_opt(cli_setup *s, int opt, const char *arg, sc_err *err) SC_MUST_CHECK;
/* Load what was named. need: bit 1 cluster, 2 model, 4 nodes, 8 layouts. */
enum { NEED_CLUSTER = 1, NEED_MODEL = 2, NEED_NODES = 4, NEED_LAYOUTS = 8 };
int cli_setup_load(cli_setup *s, int need, sc_err *err) SC_MUST_CHECK;

/* Resolve a config name of a kind ("clusters") to a path. */
int cli_resolve(const cli_setup *s, const char *kind, const char *name, char *out, size_t n, sc_err *err) SC_MUST_CHECK;

/* A decimal integer from lo to hi (no sign but '-', no spaces, no trailing text); opt names it. */
int cli_parse_int(const char *arg, const char *opt, long lo, long hi, int *out, sc_err *err) SC_MUST_CHECK;
/* "4..64" (doubling), "2,4,8", "16" -> list; source names the option in errors. */
int cli_parse_int_list(const char *arg, const char *source, int *out, int max, int *n, sc_err *err) SC_MUST_CHECK;

/* s with control characters written as \xHH (input echoed back must not drive the terminal). */
void cli_escape(const char *s, char *out, size_t n);
/* Print "shardcast: source: path: text" to stderr; returns the exit status (2 input, 1 runtime). */
int cli_fail(const sc_err *err, int rc) SC_MUST_CHECK;
/* Unknown option / missing argument: one line and a hint; returns 2. */
int cli_usage_error(const char *cmd, const char *what) SC_MUST_CHECK;
/* getopt_long's ':' (an option without its value) or anything else it returned that the command
 * does not know (an unknown option), said by cli_usage_error about argv[optind - 1], with the
 * long option of opts (getopt_long's table; NULL: none) it is a typo of; returns 2. */
int cli_getopt_error(const char *cmd, int opt, char **argv, const struct option *opts) SC_MUST_CHECK;

/* Write `len` bytes to path whole or not at all (base/atomic.h: unique temporary, fsync, rename). */
int cli_write_atomic(const char *path, const char *data, size_t len, sc_err *err) SC_MUST_CHECK;

/* Print a JSON value (taking its reference) on stdout, indented; returns exit status 0/1. */
struct json_t;
int cli_print_json(struct json_t *v) SC_MUST_CHECK;

/* "stack: NAME; attention KERNEL, eager|compiled": the header line every prediction prints. */
void cli_print_stack(const cli_setup *s);

/* Bytes as GiB with 2 decimals. */
double cli_gib(double bytes);

#endif

/* common.c — shared option handling and output helpers for the subcommands (see common.h). */
#include "common.h"

#include "../base/str.h"
#include "../model/kernels.h"
#include "../model/stack.h"

#include "../model/spec_hf.h"
#include "../model/framework.h"
#include "../model/layout_tensor.h"
#include "../model/nccl.h"

#include "../base/atomic.h"
#include "../base/proc.h"

#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <jansson.h>
#include <sys/stat.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_setup_init(cli_setup *s, const char *argv0)
{
    memset(s, 0, sizeof *s);
    s->act_ckpt = -1;
    for (int i = 0; i < CLI_N_EW; i++)
        s->ew_flag[i] = -1;
    s->dropout[0] = s->dropout[1] = -1;
    spec_training_defaults(&s->training);
    char exe[4096];
    proc_self_dir(argv0, exe, sizeof exe);
    snprintf(s->config_roots[0], sizeof s->config_roots[0], "%.4080s/configs", exe);
    snprintf(s->config_roots[1], sizeof s->config_roots[1], "%.4060s/../share/shardcast/configs", exe);
}

int cli_parse_int(const char *arg, const char *opt, long lo, long hi, int *out, sc_err *err)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < lo || v > hi || !(isdigit((unsigned char)arg[0]) || arg[0] == '-'))
        return sc_err_set(err, SC_EINPUT, opt, "", "expected an integer from %ld to %ld, got \"%s\"", lo, hi, arg);
    *out = (int)v;
    return 0;
}

int cli_parse_int_list(const char *arg, const char *source, int *out, int max, int *n, sc_err *err)
{
    *n = 0;
    const char *dots = strstr(arg, "..");
    if (dots) {
        char lo_s[32];
        size_t len = (size_t)(dots - arg);
        if (len == 0 || len >= sizeof lo_s)
            return sc_err_set(err, SC_EINPUT, source, "", "expected A..B, got \"%s\"", arg);
        memcpy(lo_s, arg, len);
        lo_s[len] = '\0';
        int lo, hi;
        if (cli_parse_int(lo_s, source, 1, 1000000, &lo, err) || cli_parse_int(dots + 2, source, 1, 1000000, &hi, err))
            return SC_EINPUT;
        if (hi < lo)
            return sc_err_set(err, SC_EINPUT, source, "", "expected A..B with A <= B, got \"%s\"", arg);
        long top = lo;
        while (top * 2 <= hi)
            top *= 2;
        if (top != hi) /* 4..6 would run 4 alone: the doubling never reaches B */
            return sc_err_set(err, SC_EINPUT, source, "",
                              "expected A..B doubling from A to B (B = A x 2^k, e.g. %d..%ld), got \"%s\"; "
                              "for other values give a list, e.g. %d,%d",
                              lo, top == lo ? 2L * lo : top, arg, lo, hi);
        for (long v = lo; v <= hi; v *= 2) {
            if (*n >= max)
                return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d values, got more in \"%s\"", max, arg);
            out[(*n)++] = (int)v;
        }
        return 0;
    }
    char buf[1024];
    if (strlen(arg) >= sizeof buf)
        return sc_err_set(err, SC_EINPUT, source, "", "expected a shorter list");
    if (arg[0] == ',' || strstr(arg, ",,") || (*arg && arg[strlen(arg) - 1] == ','))
        return sc_err_set(err, SC_EINPUT, source, "", "expected numbers separated by single commas, got \"%s\"", arg);
    snprintf(buf, sizeof buf, "%s", arg);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (*n >= max)
            return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d values, got more in \"%s\"", max, arg);
        if (cli_parse_int(tok, source, 1, 1000000, &out[*n], err))
            return SC_EINPUT;
        for (int k = 0; k < *n; k++) /* "2,2": the same rows twice, weak-scaling efficiency 1 against itself */
            if (out[k] == out[*n])
                return sc_err_set(err, SC_EINPUT, source, "", "expected distinct values, got %d twice in \"%s\"", out[k], arg);
        (*n)++;
    }
    if (*n == 0)
        return sc_err_set(err, SC_EINPUT, source, "", "expected a number or a list, got \"%s\"", arg);
    return 0;
}

/* --framework NAME[@RELEASE] refused: a name one typo away is named ("deepsped": deepspeed), a
 * known name with a release that does not parse says so; SC_EINPUT. */
static int framework_error(const char *arg, sc_err *err)
{
    const char *names[N_FRAMEWORKS + 1];
    for (int i = 0; i < N_FRAMEWORKS; i++)
        names[i] = spec_framework_str((spec_framework)i);
    names[N_FRAMEWORKS] = NULL;
    char name[64], say[160];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "@"), arg);
    if (spec_framework_parse(name) >= 0)
        return sc_err_set(err, SC_EINPUT, "--framework", "",
                          "expected a release after '@' as MAJOR.MINOR[.PATCH] (deepspeed@0.5; only deepspeed's "
                          "are modelled), got \"%s\"", arg);
    str_did_you_mean(name, names, say, sizeof say);
    return sc_err_set(err, SC_EINPUT, "--framework", "",
                      "expected ideal, deepspeed, fsdp, fsdp2 or megatron, got \"%s\" (a release may follow: "
                      "deepspeed@0.5)%s",
                      arg, say);
}

/* --reduce-dtype, --optimizer and the element-wise on|off flags (issue 27). */
static int impl_opt(cli_setup *s, int opt, const char *arg, sc_err *err)
{
    static const char *const EW[] = {"--norm-fp32", "--rope-fp32", "--repeat-kv", "--loss-fp32", "--swiglu-unfused",
                                     "--tp-comm-overlap", "--gelu-unfused", "--mask-unfused",
                                     "--autocast", "--overlap-param-gather", "--fused-linear-ce",
                                     "--rope-unfused"};
    switch (opt) {
    case 1040:
        if (!strcmp(arg, "fp32"))
            s->reduce_dtype = REDUCE_FP32;
        else if (!strcmp(arg, "param") || !strcmp(arg, "bf16") || !strcmp(arg, "fp16"))
            s->reduce_dtype = REDUCE_PARAM;
        else
            return sc_err_set(err, SC_EINPUT, "--reduce-dtype", "", "expected fp32, param, bf16 or fp16, got \"%s\"", arg);
        return 1;
    case 1041:
        if (!strcmp(arg, "fused"))
            s->opt_impl = OPT_IMPL_FUSED;
        else if (!strcmp(arg, "foreach"))
            s->opt_impl = OPT_IMPL_FOREACH;
        else if (!strcmp(arg, "forloop"))
            s->opt_impl = OPT_IMPL_FORLOOP;
        else
            return sc_err_set(err, SC_EINPUT, "--optimizer", "", "expected fused, foreach or forloop, got \"%s\"", arg);
        return 1;
    case 1060:
        for (int a = 0; a < NCCL_N_ALGOS; a++)
            if (!strcasecmp(arg, nccl_algo_name((nccl_algo)a)) ||
                (a == NCCL_NVLS_TREE && !strcasecmp(arg, "nvlstree"))) { /* NCCL's own spelling */
                s->nccl_algo = a + 1;
                return 1;
            }
        return sc_err_set(err, SC_EINPUT, "--nccl-algo", "", "expected ring, tree, nvls, nvls-tree or pat, got \"%s\"",
                          arg);
    case 1062:
    case 1063: {
        const char *name = opt == 1062 ? "--hidden-dropout" : "--attention-dropout";
        char *end;
        double p = strtod(arg, &end);
        if (end == arg || *end || !(p >= 0 && p < 1))
            return sc_err_set(err, SC_EINPUT, name, "", "expected a probability from 0 to below 1, got \"%s\"", arg);
        s->dropout[opt - 1062] = p;
        return 1;
    }
    case 1061:
        if (strcasecmp(arg, "simple"))
            return sc_err_set(err, SC_EINPUT, "--nccl-proto", "",
                              "expected simple (LL and LL128 pins are not modelled), got \"%s\"", arg);
        s->nccl_simple = 1;
        return 1;
    case 1042:
    case 1043:
    case 1044:
    case 1045:
    case 1046:
    case 1047:
    case 1048:
    case 1049:
    case 1050:
    case 1051:
    case 1052:
    case 1053:
        if (strcmp(arg, "on") && strcmp(arg, "off"))
            return sc_err_set(err, SC_EINPUT, EW[opt - 1042], "", "expected on or off, got \"%s\"", arg);
        s->ew_flag[opt - 1042] = !strcmp(arg, "on");
        return 1;
    }
    return 0;
}

int cli_setup_opt(cli_setup *s, int opt, const char *arg, sc_err *err)
{
    switch (opt) {
    case 1000: s->scenario = arg; return 1;
    case 1001: s->cluster_name = arg; return 1;
    case 1002: s->model_name = arg; return 1;
    case 1003: s->training_file = arg; return 1;
    case 1004: s->ds_config = arg; return 1;
    case 1005: s->nodes_arg = arg; return 1;
    case 1006:
        if (s->n_layout_args >= CLI_MAX_LAYOUTS)
            return sc_err_set(err, SC_EINPUT, "--layout", "", "expected at most %d layouts", CLI_MAX_LAYOUTS);
        s->layout_args[s->n_layout_args++] = arg;
        return 1;
    case 1007: return cli_parse_int(arg, "--micro-batch", 1, 1 << 20, &s->micro_batch, err) ? SC_EINPUT : 1;
    case 1008: return cli_parse_int(arg, "--grad-accum", 1, 1 << 20, &s->grad_accum, err) ? SC_EINPUT : 1;
    case 1009:
        if (strcmp(arg, "bf16") && strcmp(arg, "fp16") && strcmp(arg, "fp32") && strcmp(arg, "tf32") &&
            strcmp(arg, "fp8"))
            return sc_err_set(err, SC_EINPUT, "--precision", "", "expected bf16, fp16, fp32, tf32 or fp8, got \"%s\"",
                              arg);
        s->precision = arg;
        return 1;
    case 1010:
        if (!strcmp(arg, "on") || !strcmp(arg, "1") || !strcmp(arg, "full"))
            s->act_ckpt = CKPT_FULL;
        else if (!strcmp(arg, "off") || !strcmp(arg, "0") || !strcmp(arg, "none"))
            s->act_ckpt = CKPT_NONE;
        else if (!strcmp(arg, "selective"))
            s->act_ckpt = CKPT_SELECTIVE;
        else if (!strcmp(arg, "op"))
            s->act_ckpt = CKPT_OP;
        else if (!strcmp(arg, "save_dot_except_mlpwi"))
            s->act_ckpt = CKPT_MT_DOTS;
        else if (!strcmp(arg, "save_qkv_proj"))
            s->act_ckpt = CKPT_MT_QKV;
        else
            return sc_err_set(err, SC_EINPUT, "--checkpointing", "",
                              "expected on, off, full, none, selective, op, save_dot_except_mlpwi or "
                              "save_qkv_proj, got \"%s\"", arg);
        return 1;
    case 1011: return cli_parse_int(arg, "--prefetch", 0, 64, &s->prefetch, err) ? SC_EINPUT : 1;
    case 1012: s->json = 1; return 1;
    case 1013:
        if (!spec_placement_valid(arg))
            return sc_err_set(err, SC_EINPUT, "--placement", "",
                              "expected the axes x, y, z, d from inside a node outwards (a permutation of \"xyzd\"), got "
                              "\"%s\"",
                              arg);
        s->placement = arg;
        return 1;
    case 1014:
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            s->no_interference = !strcmp(arg, "off");
            return 1;
        }
        return sc_err_set(err, SC_EINPUT, "--interference", "", "expected on or off, got \"%s\"", arg);
    case 1015: {
        int ver;
        if (spec_framework_parse_at(arg, &ver) < 0)
            return framework_error(arg, err);
        if (ver && spec_framework_parse_at(arg, &ver) != FW_DEEPSPEED) /* framework.c models DeepSpeed's releases only */
            return sc_err_set(err, SC_EINPUT, "--framework", "",
                              "expected a release only after deepspeed (deepspeed@0.5: the releases modelled), got "
                              "\"%s\"",
                              arg);
        s->framework = arg;
        return 1;
    }
    case 1016: s->strict = 1; return 1;
    case 1017: s->accelerate = arg; return 1;
    case 1018:
        if ((s->attn_kernel = spec_attn_kernel_parse(arg)) < 0)
            return sc_err_set(err, SC_EINPUT, "--attention-kernel", "",
                              "expected fa1, triton2022, xformers, fa2, fa3, sdpa-flash, sdpa-cudnn, sdpa-efficient or "
                              "unfused, got \"%s\"",
                              arg);
        return 1;
    case 1019: s->stack = arg; return 1;
    }
    return impl_opt(s, opt, arg, err);
}

int cli_resolve(const cli_setup *s, const char *kind, const char *name, char *out, size_t n, sc_err *err)
{
    /* an empty value (--cluster ""): said for the option, not for the configs folder it names */
    static const char *const OPT[][2] = {{"clusters", "--cluster"},         {"models", "--model"},
                                         {"scenarios", "--scenario"},       {"training", "--training"},
                                         {"stacks", "--stack"}}; /* calibrations: --calibration or --base */
    for (size_t i = 0; (!name || !*name) && i < sizeof OPT / sizeof OPT[0]; i++)
        if (!strcmp(kind, OPT[i][0]))
            return sc_err_set(err, SC_EINPUT, OPT[i][1], "", "expected a name or a path, got nothing");
    const char *roots[2] = {s->config_roots[0], s->config_roots[1]};
    return spec_resolve(kind, name, roots, 2, out, n, err);
}

/* What the ds_config (or accelerate config) left unmodelled, one stderr line per key;
 * --strict: the first is an error. */
static int ds_notes(cli_setup *s, const char *file, sc_err *err)
{
    const spec_ds_report *r = &s->ds_report;
    if (s->strict && r->n)
        return sc_err_set(err, SC_EINPUT, file, r->path[0], "%s (--strict makes a key shardcast does not model an error)", r->why[0]);
    return 0;
}

/* The notes of ds_notes, printed once everything else was validated (an error comes first). */
static void ds_print_notes(const cli_setup *s, const char *file)
{
    const spec_ds_report *r = &s->ds_report;
    for (int i = 0; i < r->n; i++)
        fprintf(stderr, "shardcast: %s: %s: ignored: %s\n", file, r->path[i], r->why[i]);
    if (r->auto_mb || r->auto_ga || r->auto_batch)
        fprintf(stderr,
                "shardcast: %s: \"auto\" batch keys take shardcast's --micro-batch / --grad-accum (Hugging Face: "
                "--per_device_train_batch_size, --gradient_accumulation_steps; train_batch_size = their product x "
                "world size)\n",
                s->ds_config);
}

/* ds_config train_batch_size against micro-batch x accumulation x data-parallel ranks, per node
 * count; derives the accumulation when the file left it out (one node count only). */
static int ds_batch(cli_setup *s, sc_err *err)
{
    if (s->training.ga_from_batch && s->n_nodes > 1)
        return sc_err_set(err, SC_EINPUT, s->ds_config, "$.train_batch_size",
                          "fixes the gradient accumulation for one node count, got %d node counts (give "
                          "gradient_accumulation_steps or one --nodes)",
                          s->n_nodes);
    for (int j = 0; j < s->n_nodes; j++)
        for (int i = 0; i < s->n_layouts; i++) {
            const spec_layout *l = &s->layouts[i];
            int n = s->nodes[j] * s->cluster.gpus_per_node;
            /* the model's own batch rule (spec_layout_batch_share): tp and axonn count the
             * micro-batch per GPU, megatron per replica (issue 26: this divided tp by t and
             * axonn by x y z, and megatron by nothing) */
            int rc = spec_ds_check_batch(&s->training, n / spec_layout_batch_share(l), s->ds_config, err);
            if (rc)
                return rc;
        }
    return 0;
}

/* The named stack (--stack, else the training spec's "stack") under the explicit settings. */
static int apply_stack(cli_setup *s, sc_err *err)
{
    char path[4096];
    int rc = cli_resolve(s, "stacks", s->training.stack, path, sizeof path, err);
    if (rc) {
        if (s->stack) /* the option and the name it gave ("no shipped stacks of that name") */
            snprintf(err->source, sizeof err->source, "--stack %.200s", s->stack);
        return rc;
    }
    stack_bundle b;
    if ((rc = stack_load(path, &b, err)))
        return rc;
    stack_apply(&b, &s->training);
    return 0;
}

/* "zero3,ddp" or "zero3 mics:p=8": a layout and more in one argument (a layout's options follow
 * its ':', so a comma before any ':', or a space, ends it); 1 with the first in first[n] when it
 * parses alone, else 0. */
static int two_layouts(const char *str, char *first, size_t n)
{
    size_t k = strcspn(str, ", :");
    if (str[k] != ',' && str[k] != ' ')
        k = strcspn(str, " ");
    if (!str[k] || !k)
        return 0;
    snprintf(first, n, "%.*s", (int)k, str);
    spec_layout l;
    return spec_layout_parse(first, &l, NULL) == 0;
}

static int add_layout(cli_setup *s, const char *str, const char *source, sc_err *err)
{
    if (s->n_layouts >= CLI_MAX_LAYOUTS)
        return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d layouts", CLI_MAX_LAYOUTS);
    char with[160];
    if (s->placement && !strncmp(str, "axonn:", 6) && !strstr(str, "placement=")) {
        snprintf(with, sizeof with, "%s,placement=%s", str, s->placement);
        str = with;
    }
    int rc = spec_layout_parse(str, &s->layouts[s->n_layouts], err);
    if (rc) {
        char first[128];
        if (two_layouts(str, first, sizeof first))
            sc_err_set(err, SC_EINPUT, "", "", "expected one layout, got \"%.100s\": give each its own --layout "
                       "(--layout %s --layout ...)", str, first);
        snprintf(err->source, sizeof err->source, "%s", source);
        return rc;
    }
    /* the same layout twice (as written, or spelt two ways: zero3 and zero3:cp=1) would print
     * two identical rows: refused, naming it (polish15) */
    char a[128], b[128];
    spec_layout_str(&s->layouts[s->n_layouts], a, sizeof a);
    for (int i = 0; i < s->n_layouts; i++)
        if (!strcmp(a, spec_layout_str(&s->layouts[i], b, sizeof b)))
            return sc_err_set(err, SC_EINPUT, source, "", "layout %s given twice (layout %d and %d); give each once",
                              a, i + 1, s->n_layouts + 1);
    s->n_layouts++;
    return 0;
}

/* What cli_setup_load says once the setup is valid: the file whose notes are pending, and the
 * layout a ds_config implied when --layout replaced it. */
typedef struct setup_said {
    const char *notes_from;
    char replaced[96];
    char overridden[200]; /* the flags that replaced a value a file gave: "--micro-batch 1 (ds.json: 2)" */
} setup_said;

static int setup_load(cli_setup *s, int need, setup_said *said, sc_err *err);

/* Options given on (flag or training key) that no layout of the run can act on are said, not
 * dropped silently (and a combination the framework itself refuses, async TP without compile): --tp-comm-overlap acts on megatron layouts with sequence parallelism and
 * t > 1 (layout_tensor.c), --overlap-param-gather on the distributed optimizer under
 * --framework megatron (model/layout_tensor.h says where each acts). */
static void ignored_option_notes(const cli_setup *s)
{
    const spec_training *t = &s->training;
    int tpo = (t->given & SPEC_GIVEN_TPO) && t->tp_comm_overlap > 0 && s->n_layouts > 0;
    int opg = (t->given & SPEC_GIVEN_OPG) && t->overlap_param_gather > 0 && s->n_layouts > 0;
    for (int i = 0; i < s->n_layouts; i++) {
        const spec_layout *l = &s->layouts[i];
        if (lo_tp_comm_overlap_acts(l))
            tpo = 0;
        if (lo_param_gather_acts(t, l))
            opg = 0;
    }
    /* torchtitan refuses async TP in eager mode (parallelize_llama.py: "Async TP requires
     * --training.compile"): said, and priced as given */
    for (int i = 0; i < s->n_layouts; i++) {
        char lay[96];
        if (s->layouts[i].atp && t->execution != EXEC_COMPILED)
            fprintf(stderr,
                    "shardcast: note: %s with eager execution: torchtitan runs async TP only under torch.compile "
                    "(--stack torchtitan-compile); priced as given, with eager element-wise kernels\n",
                    spec_layout_str(&s->layouts[i], lay, sizeof lay));
    }
    if (tpo)
        fprintf(stderr, "shardcast: note: --tp-comm-overlap on is ignored: it acts only on megatron layouts with "
                        "sequence parallelism and t > 1 (megatron:t=T,p=P), and none is given\n");
    if (opg)
        fprintf(stderr, "shardcast: note: --overlap-param-gather on is ignored: it acts only on the distributed "
                        "optimizer (a megatron or tp layout with zero1) under --framework megatron, and %s\n",
                t->framework == FW_MEGATRON ? "no such layout is given" : "the framework is not megatron");
}

/* An accelerate config's num_processes / num_machines (the launch it was written for) that the
 * node counts predicted do not match: said, as the prediction follows --nodes. */
static void acc_launch_note(const cli_setup *s)
{
    const spec_ds_report *r = &s->ds_report;
    int g = s->cluster.gpus_per_node, P = r->acc_processes, M = r->acc_machines, off = 0;
    if (!s->accelerate || g < 1 || (!P && !M))
        return;
    char counts[128] = "";
    size_t o = 0;
    for (int j = 0; j < s->n_nodes; j++) {
        off |= (P && s->nodes[j] * g != P) || (M && s->nodes[j] != M);
        if (o < sizeof counts)
            o += (size_t)snprintf(counts + o, sizeof counts - o, "%s%d", j ? "," : "", s->nodes[j]);
    }
    if (!off)
        return;
    char launch[96];
    if (P && M)
        snprintf(launch, sizeof launch, "num_processes %d, num_machines %d", P, M);
    else
        snprintf(launch, sizeof launch, P ? "num_processes %d" : "num_machines %d", P ? P : M);
    char whole[96] = "";
    if (P && (P % g || (M && M != P / g)))
        snprintf(whole, sizeof whole, "; %d processes on %d machine%s do not fill whole nodes of %d GPUs", P, M ? M : 1,
                 M > 1 ? "s" : "", g);
    fprintf(stderr,
            "shardcast: note: %s: %s (the launch it was written for) differ%s from the job predicted, --nodes %s x %d "
            "GPUs of %s; the prediction follows --nodes%s\n",
            s->accelerate, launch, P && M ? "" : "s", counts, g, s->cluster.name, whole);
}

int cli_setup_load(cli_setup *s, int need, sc_err *err)
{
    setup_said said = {NULL, "", ""};
    int rc = setup_load(s, need, &said, err);
    if (rc)
        return rc; /* the error alone: no notes before it */
    if (said.notes_from)
        ds_print_notes(s, said.notes_from);
    acc_launch_note(s);
    if ((need & NEED_CLUSTER) && s->cluster.name[0] && !s->cluster.gpu.clock_ratio_given)
        fprintf(stderr,
                "shardcast: note: %s: $.gpu.clock_ratio not given: every peak at the short-burst rate the "
                "kernel constants were fitted to (1.0); every shipped cluster sets the sustained ratio under the "
                "power cap (configs/README.md, docs/COMPUTE.md \"Clocks\")\n",
                s->cluster_name ? s->cluster_name : s->cluster.name);
    for (int i = 0; i < s->n_layouts && s->cluster.gpus_per_node > 0; i++) {
        int k = spec_layout_tp_nodes(&s->layouts[i], s->cluster.gpus_per_node);
        char lay[96];
        if (k > 1)
            fprintf(stderr,
                    "shardcast: warning: %s spans %d nodes of %d GPUs: its tensor-parallel all-reduces (every block, "
                    "forward and backward) cross the network and are priced at the NICs' bandwidth\n",
                    spec_layout_str(&s->layouts[i], lay, sizeof lay), k, s->cluster.gpus_per_node);
    }
    ignored_option_notes(s);
    spec_framework fw = s->training.framework; /* --framework over the framework a file implies */
    const char *file = s->ds_config ? s->ds_config : s->accelerate;
    if (s->framework && file && (s->ds_config ? fw != FW_DEEPSPEED : fw != FW_FSDP && fw != FW_FSDP2))
        fprintf(stderr, "shardcast: note: --framework %s replaces the framework %s implies (%s); its other keys still apply\n",
                s->framework, file, s->ds_config ? "deepspeed" : "fsdp or fsdp2");
    if (said.overridden[0])
        fprintf(stderr, "shardcast: note: flags replace what the files gave: %s\n", said.overridden);
    if (said.replaced[0]) {
        char lays[256] = "";
        size_t o = 0;
        for (int i = 0; i < s->n_layout_args && o < sizeof lays; i++)
            o += (size_t)snprintf(lays + o, sizeof lays - o, "%s%s", i ? ", " : "", s->layout_args[i]);
        fprintf(stderr, "shardcast: --layout %s replaces the layout %s implies (%s); its other keys still apply\n",
                lays, s->ds_config, said.replaced);
    }
    return 0;
}

/* The scenario's cluster, model, node counts, training and layouts, each unless given on the
 * command line. */
static int setup_scenario(cli_setup *s, sc_err *err)
{
    char path[4096];
    int rc;
    spec_scenario sc;
    if ((rc = cli_resolve(s, "scenarios", s->scenario, path, sizeof path, err)) ||
        (rc = spec_load_scenario(path, &sc, err)))
        return rc;
    if (!s->cluster_name)
        s->cluster_name = memcpy(s->scenario_cluster, sc.cluster, sizeof sc.cluster);
    if (!s->model_name)
        s->model_name = memcpy(s->scenario_model, sc.model, sizeof sc.model);
    if (!s->nodes_arg) {
        memcpy(s->nodes, sc.nodes, sizeof(int) * (size_t)sc.n_nodes);
        s->n_nodes = sc.n_nodes;
    }
    s->training = sc.training;
    if (!s->n_layout_args)
        for (int i = 0; i < sc.n_layouts; i++)
            if ((rc = add_layout(s, sc.layouts[i], path, err)))
                return rc;
    return 0;
}

/* A spec file refused for a key it does not know, which is another kind of config: a Hugging
 * Face config.json (a string model_type, which no spec has) or a DeepSpeed ds_config
 * (zero_optimization or train_micro_batch_size_per_gpu): say so and the option that reads it
 * (--model hf:FILE, --ds-config FILE); else err stands. SC_EINPUT either way. */
static int other_config(const char *path, const char *given, sc_err *err)
{
    struct stat st; /* a named pipe was read once already: not opened again */
    if (strncmp(err->text, "unknown key", 11) || stat(path, &st) || !S_ISREG(st.st_mode))
        return SC_EINPUT;
    json_t *root = json_load_file(path, 0, NULL);
    int hf = json_is_string(json_object_get(root, "model_type"));
    const char *ds = json_object_get(root, "zero_optimization")                 ? "zero_optimization"
                     : json_object_get(root, "train_micro_batch_size_per_gpu") ? "train_micro_batch_size_per_gpu"
                                                                               : NULL;
    json_decref(root);
    if (hf)
        sc_err_set(err, SC_EINPUT, path, "",
                   "a Hugging Face config.json (it has model_type), not a shardcast spec: give --model %s%.200s",
                   SPEC_HF_PREFIX, given);
    else if (ds)
        sc_err_set(err, SC_EINPUT, path, "",
                   "a DeepSpeed ds_config (it has %s), not a shardcast spec: give --ds-config %.200s", ds, given);
    return SC_EINPUT;
}

/* The training file, the DeepSpeed and Accelerate configs (their layouts, unless --layout), then
 * the --layout and --nodes arguments. */
static int setup_files(cli_setup *s, setup_said *said, sc_err *err)
{
    char path[4096];
    int rc;
    if (s->ds_config && s->accelerate) /* the second file's keys silently replaced the first's */
        return sc_err_set(err, SC_EINPUT, "--accelerate-config", "",
                          "a job runs under one framework: give --ds-config (DeepSpeed) or --accelerate-config "
                          "(FSDP), not both");
    if (s->training_file) {
        if ((rc = cli_resolve(s, "training", s->training_file, path, sizeof path, err)))
            return rc;
        if ((rc = spec_load_training(path, &s->training, err)))
            return rc == SC_EINPUT ? other_config(path, s->training_file, err) : rc;
    }
    if (s->ds_config) {
        spec_layout l;
        if ((rc = spec_load_ds_config_ex(s->ds_config, &s->training, &l, &s->ds_report, err)))
            return rc;
        if ((rc = ds_notes(s, s->ds_config, err)))
            return rc;
        said->notes_from = s->ds_config;
        if (!s->n_layout_args && !s->n_layouts)
            s->layouts[s->n_layouts++] = l;
        else if (s->n_layout_args)
            spec_layout_str(&l, said->replaced, sizeof said->replaced);
    }
    s->accel_layout = -1;
    if (s->accelerate) {
        spec_layout l;
        if (said->notes_from) /* the ds_config's notes, before the accelerate config's replace them */
            ds_print_notes(s, said->notes_from);
        said->notes_from = s->accelerate;
        if ((rc = spec_load_accelerate(s->accelerate, 0, &s->training, &l, &s->ds_report, err)) ||
            (rc = ds_notes(s, s->accelerate, err)))
            return rc;
        if (!s->n_layout_args && !s->n_layouts) {
            s->accel_layout = s->n_layouts;
            s->layouts[s->n_layouts++] = l;
        }
    }
    for (int i = 0; i < s->n_layout_args; i++)
        if ((rc = add_layout(s, s->layout_args[i], "--layout", err)))
            return rc;
    if (s->nodes_arg &&
        (rc = cli_parse_int_list(s->nodes_arg, "--nodes", s->nodes, CLI_MAX_NODES, &s->n_nodes, err)))
        return rc;
    return 0;
}

/* The training options of the command line over the files' values, the stack, the attention
 * kernel, and each layout checked against the framework. */
static int setup_training(cli_setup *s, sc_err *err)
{
    int rc;
    if (s->micro_batch)
        s->training.micro_batch = s->micro_batch;
    if (s->grad_accum) {
        s->training.grad_accum = s->grad_accum;
        s->training.ga_from_batch = 0;
    }
    if (s->prefetch)
        s->training.prefetch_layers = s->prefetch;
    if (s->act_ckpt >= 0)
        s->training.act_ckpt = s->act_ckpt;
    if (s->reduce_dtype)
        s->training.reduce_dtype = s->reduce_dtype;
    if (s->opt_impl)
        s->training.opt_impl = s->opt_impl;
    int *ew[CLI_N_EW] = {&s->training.norm_fp32, &s->training.rope_fp32, &s->training.repeat_kv, &s->training.loss_fp32,
                   &s->training.swiglu_unfused, &s->training.tp_comm_overlap, &s->training.gelu_unfused,
                   &s->training.mask_unfused, &s->training.autocast, &s->training.overlap_param_gather,
                   &s->training.fused_linear_ce, &s->training.rope_unfused};
    static const unsigned ew_given[CLI_N_EW] = {SPEC_GIVEN_NORM, SPEC_GIVEN_ROPE, SPEC_GIVEN_RKV, SPEC_GIVEN_LOSS,
                                          SPEC_GIVEN_SWIGLU, SPEC_GIVEN_TPO, SPEC_GIVEN_GELU, SPEC_GIVEN_MASK,
                                          SPEC_GIVEN_AMP, SPEC_GIVEN_OPG, SPEC_GIVEN_FLCE,
                                          SPEC_GIVEN_ROPEU};
    for (int i = 0; i < CLI_N_EW; i++)
        if (s->ew_flag[i] >= 0) {
            *ew[i] = s->ew_flag[i];
            s->training.given |= ew_given[i];
        }
    if (s->dropout[0] >= 0)
        s->training.hidden_dropout = s->dropout[0];
    if (s->dropout[1] >= 0)
        s->training.attention_dropout = s->dropout[1];
    if (s->precision) {
        static const char *const pn[] = {"bf16", "fp16", "fp32", "tf32", "fp8"};
        for (int i = 0; i < 5; i++)
            if (!strcmp(s->precision, pn[i]))
                s->training.precision = (spec_precision)i;
        s->training.precision_given = 1;
    }
    if (s->framework) {
        int ver;
        s->training.framework = (spec_framework)spec_framework_parse_at(s->framework, &ver);
        s->training.framework_version = ver; /* a bare name: today's release */
    }
    if (s->act_ckpt >= 0)
        s->training.given |= SPEC_GIVEN_CKPT;
    if (s->framework || s->ds_config || s->accelerate) /* those files imply their framework */
        s->training.given |= SPEC_GIVEN_FW;
    if (s->reduce_dtype || s->accelerate) /* accelerate's mixed_precision sets the reduce dtype */
        s->training.given |= SPEC_GIVEN_RD;
    if (s->opt_impl)
        s->training.given |= SPEC_GIVEN_OPT;
    if (s->stack)
        snprintf(s->training.stack, sizeof s->training.stack, "%s", s->stack);
    if (s->training.stack[0] && (rc = apply_stack(s, err)))
        return rc;
    if (s->attn_kernel > 0) {
        s->training.given |= SPEC_GIVEN_AK;
        s->training.attn_kernel = s->attn_kernel;
        s->training.flash_attention = s->attn_kernel != AK_UNFUSED;
        s->training.flash_version = s->attn_kernel == AK_FA3 ? 3 : 2;
    }
    for (int i = 0; i < s->n_layouts; i++)
        if ((rc = fw_check(s->training.framework, &s->layouts[i], err))) {
            if (s->training.stack[0] && !(s->training.given & SPEC_GIVEN_FW)) /* the stack's framework */
                snprintf(err->source, sizeof err->source, "--stack %.200s", s->training.stack);
            return rc;
        }
    return 0;
}

/* The cluster (required), the training checked against its GPU, an Accelerate HYBRID_SHARD layout
 * sized to a node. */
static int setup_cluster(cli_setup *s, sc_err *err)
{
    char path[4096];
    int rc;
    if (!s->cluster_name)
        return sc_err_set(err, SC_EINPUT, "--cluster", "", "required (a name such as p4d.24xlarge, or a file)");
    if ((rc = cli_resolve(s, "clusters", s->cluster_name, path, sizeof path, err)) ||
        (rc = spec_load_cluster(path, &s->cluster, err)))
        return rc;
    /* the default precision (bf16) on a GPU without bf16 runs as fp16; a precision asked
     * for that the GPU lacks is an error naming where it came from */
    if (!s->training.precision_given && s->training.precision == PREC_BF16 && !strcmp(s->cluster.gpu.arch, "volta"))
        s->training.precision = PREC_FP16;
    const char *psrc = s->precision ? "--precision" : s->attn_kernel > 0 ? "--attention-kernel"
                       : s->training.stack[0] && !(s->training.given & SPEC_GIVEN_AK) ? "--stack" : s->ds_config ? s->ds_config
                       : s->training_file                      ? s->training_file
                       : s->scenario                           ? s->scenario
                                                               : "training";
    if ((rc = spec_training_check(&s->cluster, &s->training, psrc, err)))
        return rc;
    if (s->accel_layout >= 0) /* HYBRID_SHARD: a node */
        spec_layout_default_group(&s->layouts[s->accel_layout], s->cluster.gpus_per_node);
    return 0;
}

/* The model (required): a shipped name or file, or a Hugging Face config (hf:...). */
static int setup_model(cli_setup *s, sc_err *err)
{
    char path[4096];
    int rc;
    const char *model = s->model_name;
    if (!model)
        return sc_err_set(err, SC_EINPUT, "--model", "", "required (a name such as gpt3-175b, or a file)");
    if (!strncmp(model, SPEC_HF_PREFIX, strlen(SPEC_HF_PREFIX))) {
        char derived[1024];
        double drop[2];
        if ((rc = spec_hf_arg_dropout(model + strlen(SPEC_HF_PREFIX), &s->model, drop, derived, sizeof derived, err)))
            return rc;
        if (s->training.hidden_dropout < 0) /* the config states it; a key or option given wins */
            s->training.hidden_dropout = drop[0];
        if (s->training.attention_dropout < 0)
            s->training.attention_dropout = drop[1];
        fprintf(stderr, "shardcast: model from %s\n", derived); /* for the user to check */
    } else if ((rc = cli_resolve(s, "models", model, path, sizeof path, err)) ||
               (rc = spec_load_model(path, &s->model, err))) {
        return rc == SC_EINPUT ? other_config(path, model, err) : rc;
    }
    if (s->ds_config) /* "auto" buckets: Hugging Face sizes them from the hidden size */
        spec_ds_resolve_auto(&s->ds_report, s->model.hidden, &s->training);
    return 0;
}

/* A flag that replaces the value a file (training, ds_config, accelerate) gave: "--micro-batch 1
 * (ds.json: 2)", appended to said->overridden (flags over files, said as --layout over a file's
 * layout is). pre / post: the value before and after the files; flag: the option's (0 / -1: not
 * given). */
static void said_override(setup_said *said, const cli_setup *s, const char *opt, int pre, int post, int flag,
                          const char *flag_s, const char *post_s)
{
    const char *file = s->ds_config ? s->ds_config : s->accelerate ? s->accelerate : s->training_file;
    size_t o = strlen(said->overridden);
    if (file && pre != post && flag != post && o < sizeof said->overridden)
        snprintf(said->overridden + o, sizeof said->overridden - o, "%s%s %s (%s: %s)", o ? ", " : "", opt, flag_s,
                 file, post_s);
}

/* The files, then the flags over them, each flag that replaced a file's value recorded. */
static int setup_files_flags(cli_setup *s, setup_said *said, sc_err *err)
{
    const spec_training pre = s->training;
    int rc = setup_files(s, said, err);
    if (rc)
        return rc;
    const spec_training *t = &s->training;
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", s->micro_batch), snprintf(b, sizeof b, "%d", t->micro_batch);
    if (s->micro_batch)
        said_override(said, s, "--micro-batch", pre.micro_batch, t->micro_batch, s->micro_batch, a, b);
    snprintf(a, sizeof a, "%d", s->grad_accum), snprintf(b, sizeof b, "%d", t->grad_accum);
    if (s->grad_accum)
        said_override(said, s, "--grad-accum", pre.grad_accum, t->grad_accum, s->grad_accum, a, b);
    if (s->act_ckpt >= 0)
        said_override(said, s, "--checkpointing", pre.act_ckpt, t->act_ckpt, s->act_ckpt, spec_ckpt_str(s->act_ckpt),
                      spec_ckpt_str(t->act_ckpt));
    /* a file that states the default precision (bf16) is told apart by precision_given */
    int prec_from_file = t->precision_given && !pre.precision_given;
    for (int i = 0; s->precision && i < 5; i++)
        if (!strcmp(s->precision, spec_precision_str((spec_precision)i)))
            said_override(said, s, "--precision", prec_from_file ? -1 : (int)pre.precision, t->precision, i,
                          s->precision, spec_precision_str(t->precision));
    return setup_training(s, err);
}

static int setup_load(cli_setup *s, int need, setup_said *said, sc_err *err)
{
    int rc;
    if ((s->scenario && (rc = setup_scenario(s, err))) || (rc = setup_files_flags(s, said, err)))
        return rc;
    if ((need & NEED_CLUSTER) && (rc = setup_cluster(s, err)))
        return rc;
    if ((need & NEED_MODEL) && (rc = setup_model(s, err)))
        return rc;
    if ((need & NEED_NODES) && !s->n_nodes)
        return sc_err_set(err, SC_EINPUT, "--nodes", "", "required (a node count such as 16, or a list 2,4,8)");
    if (need & NEED_NODES && need & NEED_CLUSTER)
        for (int i = 0; i < s->n_nodes; i++)
            if ((rc = spec_nodes_check(&s->cluster, s->nodes[i], "--nodes", err)))
                return rc;
    if ((need & NEED_LAYOUTS) && !s->n_layouts)
        return sc_err_set(err, SC_EINPUT, "--layout", "", "required (e.g. --layout zero3 --layout mics:p=8)");
    if ((need & NEED_LAYOUTS) && (need & NEED_NODES) && (need & NEED_CLUSTER))
        for (int i = 0; i < s->n_layouts; i++)
            for (int j = 0; j < s->n_nodes; j++)
                if ((rc = spec_layout_check(&s->layouts[i], &s->cluster, s->nodes[j], err)))
                    return rc;
    if ((need & NEED_LAYOUTS) && (need & NEED_MODEL))
        for (int i = 0; i < s->n_layouts; i++)
            if ((rc = spec_layout_check_model(&s->layouts[i], &s->model, err)))
                return rc;
    if (s->training.train_batch && (need & NEED_NODES) && (need & NEED_CLUSTER))
        return ds_batch(s, err);
    return 0;
}

void cli_escape(const char *s, char *out, size_t n)
{
    static const char HEX[] = "0123456789abcdef";
    size_t i = 0;
    for (; *s && i + 5 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f) {
            out[i++] = '\\';
            out[i++] = 'x';
            out[i++] = HEX[c >> 4];
            out[i++] = HEX[c & 15];
        } else {
            out[i++] = (char)c;
        }
    }
    out[i] = '\0';
}

int cli_fail(const sc_err *err, int rc)
{
    char buf[1024], safe[4096];
    cli_escape(sc_err_str(err, buf, sizeof buf), safe, sizeof safe);
    fprintf(stderr, "shardcast: %s\n", safe);
    return rc == SC_EINPUT ? 2 : 1;
}

/* The long options of opts nearest to "--name[=value]" as "--a or --b" into out, when it is a
 * typo of them; else 0 and "". */
static int near_option(const char *bad, const struct option *opts, char *out, size_t n)
{
    out[0] = '\0';
    if (!opts || !bad || strncmp(bad, "--", 2))
        return 0;
    char name[64];
    snprintf(name, sizeof name, "%s", bad + 2);
    name[strcspn(name, "=")] = '\0';
    const char *names[80];
    int k = 0;
    for (int i = 0; opts[i].name && k < 79; i++)
        names[k++] = opts[i].name;
    names[k] = NULL;
    char near[160];
    int nn = str_nearest_all(name, names, near, sizeof near);
    /* "--" before each name: "a or b" -> "--a or --b" */
    size_t o = 0;
    for (const char *p = near; nn && *p && o + 3 < n; p++) {
        if (p == near || (p[-1] == ' ' && strncmp(p, "or ", 3)))
            out[o++] = '-', out[o++] = '-';
        out[o++] = *p;
    }
    out[o < n ? o : n - 1] = '\0';
    return nn;
}

int cli_getopt_error(const char *cmd, int opt, char **argv, const struct option *opts)
{
    char what[260];
    const char *bad = argv[optind - 1];
    if (opt == ':') {
        snprintf(what, sizeof what, "option '%.150s' needs a value", bad);
    } else {
        char near[160];
        int nn = near_option(bad, opts, near, sizeof near);
        snprintf(what, sizeof what, "unknown option '%.100s'%s%.100s%s", bad ? bad : "?", nn ? "; did you mean " : "", near,
                 nn ? "?" : "");
    }
    return cli_usage_error(cmd, what);
}

int cli_usage_error(const char *cmd, const char *what)
{
    char safe[1024];
    cli_escape(what, safe, sizeof safe);
    fprintf(stderr, "shardcast%s%s: %s (try 'shardcast%s%s --help')\n", cmd ? " " : "", cmd ? cmd : "", safe,
            cmd ? " " : "", cmd ? cmd : "");
    return 2;
}

int cli_write_atomic(const char *path, const char *data, size_t len, sc_err *err)
{
    return at_write(path, data, len, err);
}

double cli_gib(double bytes) { return bytes / 1073741824.0; }

#include "commands.h"

static int in_names(const char *const *names, const char *name)
{
    for (const char *const *a = names; *a; a++)
        if (!strcmp(*a, name))
            return 1;
    return 0;
}

/* A shared option the command does not take (not in s->accept, or in s->refuse) is answered as
 * an unknown option: accepted and ignored, it would silently not change the job. */
static int not_taken(const cli_setup *s, const char *cmd, const char *name)
{
    if ((!s->accept || in_names(s->accept, name)) && (!s->refuse || !in_names(s->refuse, name)))
        return 0;
    char what[200];
    snprintf(what, sizeof what, "unknown option '--%.150s'", name);
    return cli_usage_error(cmd, what);
}

int cli_getopt(int argc, char **argv, const char *cmd, const char *help, const struct option *extra, int n_extra,
               cli_setup *s, int (*own)(int opt, const char *arg, void *ctx), void *ctx)
{
    static const struct option common[] = {CLI_COMMON_LONGOPTS};
    const int n_common = (int)(sizeof common / sizeof common[0]);
    struct option all[64];
    int n = 0;
    for (int i = 0; i < n_common; i++)
        all[n++] = common[i];
    for (int i = 0; i < n_extra && n < 62; i++)
        all[n++] = extra[i];
    all[n++] = (struct option){"help", no_argument, 0, 'h'};
    all[n] = (struct option){0, 0, 0, 0};
    char shorts[32] = ":h";
    for (int i = 0; i < n_extra; i++) /* single-letter aliases: {"out", .., 'o'} gives -o */
        if (extra[i].val > 0 && extra[i].val < 128 && strlen(shorts) < sizeof shorts - 3) {
            size_t l = strlen(shorts);
            shorts[l] = (char)extra[i].val;
            shorts[l + 1] = extra[i].has_arg == required_argument ? ':' : '\0';
            shorts[l + 2] = '\0';
        }
    optind = 1;
    opterr = 0;
    for (;;) {
        int idx = -1; /* set only when a long option matched */
        int opt = getopt_long(argc, argv, shorts, all, &idx);
        if (opt == -1)
            break;
        if (opt == 'h') {
            fputs(help, stdout);
            return -1;
        }
        if (opt == '?' || opt == ':')
            return cli_getopt_error(cmd, opt, argv, all);
        int rc = idx >= 0 && idx < n_common ? not_taken(s, cmd, all[idx].name) : 0;
        if (rc)
            return rc;
        if (idx >= 0 && idx < n_common && strcmp(all[idx].name, "json")) {
            if (!s->first_shared)
                s->first_shared = all[idx].name;
            if (s->n_shared_given < (int)(sizeof s->shared_given / sizeof s->shared_given[0]))
                s->shared_given[s->n_shared_given++] = all[idx].name;
        }
        sc_err err;
        rc = cli_setup_opt(s, opt, optarg, &err);
        if (rc < 0)
            return cli_fail(&err, rc);
        if (rc == 1)
            continue;
        if (own) {
            rc = own(opt, optarg, ctx);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int cli_print_json(json_t *v)
{
    if (!v) {
        fprintf(stderr, "shardcast: out of memory building JSON output\n");
        return 1;
    }
    char *txt = json_dumps(v, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(v);
    if (!txt)
        return 1;
    puts(txt);
    free(txt);
    return 0;
}

int cli_args(int argc, char **argv, const char *cmd, const char *help, const struct option *extra, int n_extra,
             cli_setup *s, int (*own)(int opt, const char *arg, void *ctx), void *ctx, int positional,
             const char *what, int *status)
{
    int rc = cli_getopt(argc, argv, cmd, help, extra, n_extra, s, own, ctx);
    if (rc) {
        *status = rc < 0 ? 0 : rc;
        return 1;
    }
    if (argc - optind != positional) {
        char stray[160]; /* what=NULL: no positional taken, the first stray one named */
        snprintf(stray, sizeof stray, "unexpected argument '%.100s'%s", optind < argc ? argv[optind] : "",
                 argc - optind > 1 ? " (and more)" : "");
        *status = cli_usage_error(cmd, what ? what : stray);
        return 1;
    }
    return 0;
}

void cli_print_stack(const cli_setup *s)
{
    const spec_training *t = &s->training;
    printf("stack: %s; attention %s, %s\n", t->stack[0] ? t->stack : "none (defaults)",
           t->flash_attention ? spec_attn_kernel_str(kern_attn_resolve(t->attn_kernel, s->cluster.gpu.arch)) : "unfused",
           t->execution == EXEC_COMPILED ? "compiled" : "eager");
}

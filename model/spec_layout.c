/* spec_layout.c — layout strings ("mics:p=16,hier=0"), the kinds' names and memory columns, the
 * axes of a grid, and the resolution of config names to files. Not here: a kind's checks,
 * replica, batch rule and shard (the family files through layout_kind.c), what a layout does
 * per step (model/layout.c) or how much memory it needs (model/memory.c). */
#include "spec.h"

#include "../base/str.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ctype.h>
#include <dirent.h>
#include <strings.h>

/* How a kind divides one model state over its GPUs (memory columns; spec_layout_states_of). */
typedef enum state_div {
    DIV_1,       /* replicated                                              */
    DIV_N,       /* every GPU (ZeRO's N)                                    */
    DIV_P,       /* the group size p (MiCS, HSDP)                           */
    DIV_P_OR_N,  /* p when given, else every GPU (zero1:p, zero2:p)         */
    DIV_T,       /* the tensor-parallel size t (Megatron-LM)                */
    DIV_XYZ,     /* AxoNN's x y z grid (replicated over d)                  */
    DIV_ZERO1_N, /* zero1=1 (tp's default): every GPU, else t               */
} state_div;

/* How a kind keeps its parameters between uses. */
typedef enum param_use {
    USE_WHOLE,   /* not sharded: gradient buckets                                      */
    USE_LAYER,   /* sharded, each layer gathered before use (with prefetch)            */
    USE_LAYER_Z, /* AxoNN: gathered along z when z > 1, else used in place            */
    USE_MODEL,   /* sharded, every layer kept gathered from forward to backward        */
} param_use;

/* The one table of layout kinds, index = spec_layout_kind: its name (also plan's family name),
 * the options it takes (the first `required` must be given), an example, how the parse
 * error's list of layouts spells it, and its memory columns (model/memory.c: ZeRO §3 Fig. 1,
 * N replaced by the group size where the layout shards over a group). */
static const struct kind_def {
    const char *name;
    const char *keys;
    int required; /* how many leading keys must be given */
    const char *example;
    const char *hint;
    state_div params, grads, optim;
    param_use use;
} KINDS[] = {
    [LAYOUT_DDP] = {"ddp", "", 0, "ddp", "ddp", DIV_1, DIV_1, DIV_1, USE_WHOLE},
    [LAYOUT_ZERO1] = {"zero1", "p", 0, "zero1:p=8", "zero1[:p=P]", DIV_1, DIV_1, DIV_P_OR_N, USE_WHOLE},
    [LAYOUT_ZERO2] = {"zero2", "p", 0, "zero2:p=8", "zero2[:p=P]", DIV_1, DIV_P_OR_N, DIV_P_OR_N, USE_WHOLE},
    /* cp: context parallelism (model/cp.h; torchtitan spells it fsdp2:dp=D,cp=C); raf=0:
     * FSDP2's fully_shard(reshard_after_forward=False), parsed as shard_grad_op (the two
     * do not combine: layout_finish) */
    [LAYOUT_ZERO3] = {"zero3", "raf,cp", 0, "zero3:raf=0", "zero3[:cp=C|raf=0]", DIV_N, DIV_N, DIV_N, USE_LAYER},
    [LAYOUT_MICS] = {"mics", "p,hier", 1, "mics:p=8", "mics:p=P", DIV_P, DIV_P, DIV_P, USE_LAYER},
    [LAYOUT_HSDP] = {"hsdp", "p,sync", 1, "hsdp:p=8", "hsdp:p=P", DIV_P, DIV_P, DIV_P, USE_LAYER},
    /* + hpZ's secondary copy (memory.c) */
    [LAYOUT_ZEROPP] = {"zeropp", "hpz,qwz,qgz", 0, "zeropp:hpz=8", "zeropp[:hpz=P]", DIV_N, DIV_N,
                       DIV_N, USE_LAYER},
    /* Megatron-LM: states split t ways; ZeRO-1 splits Adam's over the replicas */
    [LAYOUT_TP] = {"tp", "t,zero1,overlap", 1, "tp:t=8", "tp:t=T", DIV_T, DIV_T, DIV_ZERO1_N, USE_WHOLE},
    /* every layer's weights sharded over the x y z grid, replicated over d */
    [LAYOUT_AXONN] = {"axonn", "x,y,z,d,placement,overlap", 3, "axonn:x=2,y=2,z=2", "axonn:x=X,y=Y,z=Z", DIV_XYZ,
                      DIV_XYZ, DIV_XYZ, USE_LAYER_Z},
    /* gradients and optimizer states on the host or NVMe, parameters as param= says (memory.c) */
    [LAYOUT_ZERO3_OFFLOAD] = {"zero3-offload", "param,opt", 0, "zero3-offload:param=nvme,opt=nvme",
                              "zero3-offload[:param=cpu|nvme]", DIV_N, DIV_1, DIV_1, USE_LAYER},
    /* everything on the optimizer node (memory.c) */
    [LAYOUT_LUWU] = {"luwu", "", 0, "luwu", "luwu", DIV_1, DIV_1, DIV_1, USE_LAYER},
    [LAYOUT_SHARD_GRAD_OP] = {"shard_grad_op", "", 0, "shard_grad_op", "shard_grad_op", DIV_N, DIV_N, DIV_N,
                              USE_MODEL},
    [LAYOUT_HSDP_ZERO2] = {"hybrid_shard_zero2", "p", 1, "hybrid_shard_zero2:p=8", "hybrid_shard_zero2:p=P", DIV_P,
                           DIV_P, DIV_P, USE_MODEL},
    /* pipeline stages: memory_pipe.c, not these columns */
    [LAYOUT_MEGATRON] = {"megatron", "t,p,vp,sp,zero1,sched,cp,split,first,last,zero2", 2, "megatron:t=8,p=4", "megatron:t=T,p=P", DIV_1,
                         DIV_1, DIV_1, USE_WHOLE},
    /* FSDP2's reshard_after_forward=p: zero3's columns (+ the post-forward shards, layout_dp.c) */
    [LAYOUT_RAF] = {"raf", "p", 1, "raf:p=8", "raf:p=P", DIV_N, DIV_N, DIV_N, USE_LAYER},
    /* ZeRO-2's columns; its gradient partitions and optimizer states on the host (memory.c) */
    [LAYOUT_ZERO2_OFFLOAD] = {"zero2-offload", "", 0, "zero2-offload", "zero2-offload", DIV_1, DIV_N, DIV_N,
                              USE_WHOLE},
};
#define N_KINDS (int)(sizeof KINDS / sizeof KINDS[0])

int spec_layout_n_kinds(void) { return N_KINDS; }

int spec_layout_make(const char *name, spec_layout *out, sc_err *err)
{
    int rc = spec_layout_parse("ddp", out, err); /* parse's defaults, a kind without options */
    for (int i = 0; !rc && i < N_KINDS; i++)
        if (!strcmp(name, KINDS[i].name)) {
            out->kind = (spec_layout_kind)i;
            return 0;
        }
    return rc ? rc : spec_layout_parse(name, out, err); /* its error: the kinds there are */
}

const char *spec_layout_kind_name(spec_layout_kind k) { return (int)k >= 0 && (int)k < N_KINDS ? KINDS[k].name : NULL; }

static double state_divisor(state_div d, const spec_layout *l, double n)
{
    switch (d) {
    case DIV_N: return n;
    case DIV_P: return l->p;
    case DIV_P_OR_N: return l->p ? l->p : n;
    case DIV_T: return l->t;
    case DIV_XYZ: return (double)l->grid[0] * l->grid[1] * l->grid[2];
    case DIV_ZERO1_N: return l->zero1 ? n : l->t;
    default: return 1;
    }
}

void spec_layout_states_of(const spec_layout *l, int n_ranks, spec_layout_states *out)
{
    memset(out, 0, sizeof *out);
    out->div[0] = out->div[1] = out->div[2] = 1;
    if ((int)l->kind < 0 || (int)l->kind >= N_KINDS)
        return;
    const struct kind_def *k = &KINDS[l->kind];
    const double n = n_ranks;
    out->div[0] = state_divisor(k->params, l, n);
    out->div[1] = state_divisor(k->grads, l, n);
    out->div[2] = state_divisor(k->optim, l, n);
    out->sharded = k->use == USE_LAYER || k->use == USE_MODEL || (k->use == USE_LAYER_Z && l->grid[2] > 1);
    out->keep_full = k->use == USE_MODEL;
}

/* torchtitan's spelling, which parses to zero3 (parse_fsdp2), last in the list of layouts. */
static const char FSDP2_HINT[] = "fsdp2:dp=D[,cp=C][,t=T][,p=P][,schedule=S]";

/* "ddp, zero1[:p=P], ..., fsdp2:dp=D[,cp=C]...": every kind's hint and fsdp2's, for the parse
 * errors (SC_ERR_TEXT holds them with the "expected one of" around them and the input). */
static const char *layout_hint(char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i <= N_KINDS && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", i < N_KINDS ? KINDS[i].hint : FSDP2_HINT);
    return buf;
}

static int is_readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

static int parse_pos_int(const char *v, int *out)
{
    if (!isdigit((unsigned char)v[0]))
        return -1;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < 1 || x > SPEC_MAX_RANKS)
        return -1;
    *out = (int)x;
    return 0;
}

/* Index of key in a comma-separated list, or -1. */
static int key_index(const char *list, const char *key)
{
    int i = 0;
    size_t n = strlen(key);
    for (const char *p = list; *p; i++) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == n && !strncmp(p, key, n))
            return i;
        if (!c)
            break;
        p = c + 1;
    }
    return -1;
}

static int parse_bool(const char *s, const char *key, const char *val, int *out, sc_err *err)
{
    if (strcmp(val, "0") && strcmp(val, "1"))
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s=0 or %s=1, got \"%s\"", s, key, key, val);
    *out = val[0] == '1';
    return 0;
}

int spec_placement_valid(const char *p)
{
    int seen[SPEC_AXES] = {0};
    if (!p || strlen(p) != SPEC_AXES)
        return 0;
    for (int i = 0; i < SPEC_AXES; i++) {
        const char *q = strchr("xyzd", p[i]);
        if (!q || seen[q - "xyzd"]++)
            return 0;
    }
    return 1;
}

int spec_layout_axes(const spec_layout *l, int n_ranks, int size[SPEC_AXES], int stride[SPEC_AXES])
{
    const char *pl = "xyzd";
    for (int a = 0; a < SPEC_AXES; a++)
        size[a] = stride[a] = 1;
    if (l->kind == LAYOUT_TP) {
        if (l->t < 1 || n_ranks % l->t)
            return -1;
        size[0] = l->t;
        size[3] = n_ranks / l->t;
    } else if (l->kind == LAYOUT_MEGATRON) {
        /* Megatron-LM's rank order tp-dp-pp (parallel_state.py, order "tp-cp-ep-dp-pp"): tensor
         * on x (stride 1), data on d (stride t), pipeline stages on z (stride t x dp) */
        int pp = l->pp > 0 ? l->pp : 1;
        if (l->t < 1 || n_ranks % (l->t * pp))
            return -1;
        size[0] = l->t;
        size[2] = pp;
        size[3] = n_ranks / (l->t * pp);
        pl = "xdzy";
    } else if (l->kind == LAYOUT_AXONN) {
        int xyz = l->grid[0] * l->grid[1] * l->grid[2];
        if (xyz < 1 || n_ranks % xyz)
            return -1;
        for (int a = 0; a < SPEC_AXES - 1; a++)
            size[a] = l->grid[a];
        size[3] = n_ranks / xyz;
        if (l->placement[0])
            pl = l->placement;
        if (!spec_placement_valid(pl))
            return -1;
    }
    int st = 1;
    for (int i = 0; i < SPEC_AXES; i++) {
        int a = (int)(strchr("xyzd", pl[i]) - "xyzd");
        stride[a] = st;
        st *= size[a];
    }
    if (l->kind == LAYOUT_ZERO3 && (l->t > 1 || l->pp > 1)) {
        /* fsdp2:dp=D[,cp=C],t=T[,p=P]: torchtitan's mesh ["pp", "dp_shard", "cp", "tp"], tp
         * innermost, pp outermost (pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
         * torchtitan/parallelisms/parallel_dims.py build_mesh L51-53): megatron's "tp-cp-dp-pp";
         * d holds a stage's t-strided ranks, dp x cp, FSDP2's dp_shard_cp (parallelize_llama.py
         * L83-85 at 9dec370) */
        int t = l->t > 1 ? l->t : 1, pp = l->pp > 1 ? l->pp : 1, cp = l->cp > 1 ? l->cp : 1;
        if (n_ranks % (t * pp * cp))
            return -1;
        for (int a = 0; a < SPEC_AXES; a++)
            size[a] = stride[a] = 1;
        size[0] = t;
        size[1] = cp;
        size[2] = pp;
        size[3] = n_ranks / (t * pp);
        stride[3] = t;
        if (cp > 1)
            stride[1] = t;
        if (pp > 1)
            stride[2] = t * size[3];
        return 0;
    }
    if (l->kind == LAYOUT_ZERO3 && l->cp > 1) { /* cp adjacent on y, the rest of the ranks on d */
        if (n_ranks % l->cp)
            return -1;
        for (int a = 0; a < SPEC_AXES; a++)
            size[a] = stride[a] = 1;
        size[1] = l->cp;
        size[3] = n_ranks / l->cp;
        stride[3] = l->cp;
        return 0;
    }
    if (l->kind == LAYOUT_MEGATRON && l->cp > 1) {
        /* context parallelism on y, inside d: "tp-cp-ep-dp-pp" puts the cp ranks at stride t; d
         * keeps all t-strided ranks of a stage, dp x cp, the group that reduces the gradients
         * and shards the distributed optimizer (Megatron-Core's data-parallel group with cp) */
        if (size[3] % l->cp)
            return -1;
        size[1] = l->cp;
        stride[1] = l->t;
    }
    return 0;
}

static int parse_placement(const char *s, const char *val, char *out, sc_err *err)
{
    if (spec_placement_valid(val)) {
        memcpy(out, val, SPEC_AXES + 1);
        return 0;
    }
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "in \"%s\": expected placement to order the axes x, y, z, d from inside a node outwards (a "
                      "permutation of \"xyzd\", e.g. placement=xyzd), got \"%s\"",
                      s, val);
}

/* torchtitan's spelling, fsdp2:dp=D[,cp=C][,t=T][,p=P][,asynctp=0|1][,schedule=S] (FSDP2 over
 * dp_shard x cp, its parallelize_llama): with t = p = 1 it is zero3 over all D x cp ranks with
 * context parallelism (cp.h); with t = T > 1 (cp = 1) zero3 over the D data-parallel ranks of
 * each tensor-parallel group of T, composed with sequence-parallel TP (asynctp=1: async TP;
 * layout_dp.c); with p = P > 1 (cp = 1) torch.distributed.pipelining's stages over FSDP2 and TP
 * (layout_pipe.c lo_build_pipe): schedule=1f1b (the default), interleaved-1f1b (torchtitan's two
 * stages per rank: pytorch/torchtitan@9dec370ad26b5f8e9a7333a0e36165018262644b
 * torchtitan/parallelisms/pipelining_utils.py generate_split_points L24-27) or gpipe; cp = C > 1
 * with t or p: the ring over the C ranks of each context-parallel group (cp.h) composed with TP
 * (each rank's heads / t) and the stages, FSDP2 over dp x cp (layout_dp.c). */
static int parse_fsdp2_schedule(const char *s, const char *val, spec_layout *out, sc_err *err)
{
    if (!strcmp(val, "1f1b") || !strcmp(val, "gpipe") || !strcmp(val, "interleaved-1f1b")) {
        out->sched = val[0] == 'g' ? PIPE_GPIPE : PIPE_1F1B;
        out->vp = val[0] == 'i' ? 2 : 1;
        return 0;
    }
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "in \"%s\": expected schedule=1f1b, interleaved-1f1b or gpipe, got \"%s\"", s, val);
}

static int parse_fsdp2(const char *s, spec_layout *out, sc_err *err)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", s + 6);
    int dp = 0, cp = 1, t = 1, p = 1, atp = 0, seen = 0;
    char *save = NULL;
    for (char *opt = strtok_r(buf, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(opt, '=');
        int *num = NULL, bit = 0;
        if (eq)
            *eq = '\0';
        const char *key = opt, *val = eq ? eq + 1 : "";
        if (!strcmp(key, "dp"))
            num = &dp, bit = 1;
        else if (!strcmp(key, "cp"))
            num = &cp, bit = 2;
        else if (!strcmp(key, "t"))
            num = &t, bit = 4;
        else if (!strcmp(key, "p"))
            num = &p, bit = 8;
        else if (!strcmp(key, "asynctp"))
            num = &atp, bit = 16;
        else if (!strcmp(key, "schedule"))
            bit = 32;
        if (!eq || !bit)
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "in \"%s\": expected dp, cp, t, p, asynctp or schedule as key=value, got \"%s\"", s, opt);
        if (seen & bit)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": option \"%s\" given twice", s, key);
        seen |= bit;
        int rc = bit == 16 ? parse_bool(s, key, val, num, err) : bit == 32 ? parse_fsdp2_schedule(s, val, out, err) : 0;
        if (rc)
            return rc;
        if (num && bit != 16 && parse_pos_int(val, num))
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s to be a positive integer, got \"%s\"",
                              s, key, val);
    }
    if (!(seen & 1))
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": missing dp=D (e.g. \"fsdp2:dp=4,cp=2\")", s);
    if ((seen & 32) && p <= 1)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": a pipeline schedule needs pipeline stages, p > 1 (e.g. \"fsdp2:dp=8,t=8,p=8,schedule=1f1b\")",
                          s);
    if (atp && t <= 1)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": asynctp=1 needs tensor parallelism, t > 1 (e.g. \"fsdp2:dp=4,t=2,asynctp=1\")", s);
    out->kind = LAYOUT_ZERO3;
    out->dp = dp;
    out->cp = cp;
    out->t = t > 1 || p > 1 ? t : 0; /* a pipeline's stage graph divides by t (layout_pipe.c) */
    out->atp = atp;
    out->pp = p;
    /* the stages' optimizer states sharded over dp (FSDP2): the pipeline engines' distributed
     * optimizer (zero1: reduce-scatter, Adam on the shard, all-gather; analytic_pipe.c) */
    out->zero1 = 1;
    return 0;
}

/* split=even|embed|loss|embed+loss: Megatron-Core's account_for_embedding_in_pipeline_split /
 * account_for_loss_in_pipeline_split (layout_pipe.c layout_pipe_split_layout). */
static int parse_split(const char *s, const char *val, spec_layout *out, sc_err *err)
{
    int e = !strcmp(val, "embed") || !strcmp(val, "embed+loss"), lo = !strcmp(val, "loss") || !strcmp(val, "embed+loss");
    if (!e && !lo && strcmp(val, "even"))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": expected split=even, embed, loss or embed+loss, got \"%s\"", s, val);
    out->split_embed = e;
    out->split_loss = lo;
    return 0;
}

/* One key=value of layout s (kind, the key's index ki in its kind's keys) into out; raf=0 into
 * *raf. */
static int layout_option(const char *s, int kind, int ki, const char *key, const char *val, spec_layout *out,
                         int *raf, sc_err *err)
{
    int rc = 0, *num = NULL;
    if (kind == LAYOUT_MEGATRON && !strcmp(key, "p"))
        num = &out->pp;
    else if (!strcmp(key, "vp"))
        num = &out->vp;
    else if (!strcmp(key, "cp"))
        num = &out->cp;
    else if (!strcmp(key, "first"))
        num = &out->first;
    else if (!strcmp(key, "last"))
        num = &out->last;
    else if (!strcmp(key, "p") || !strcmp(key, "hpz"))
        num = &out->p;
    else if (!strcmp(key, "t"))
        num = &out->t;
    else if (kind == LAYOUT_AXONN && ki < SPEC_AXES)
        num = &out->grid[ki];
    if (num) {
        if (parse_pos_int(val, num))
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s to be a positive integer, got \"%s\"",
                              s, key, val);
    } else if (!strcmp(key, "sp")) {
        rc = parse_bool(s, key, val, &out->sp, err);
    } else if (!strcmp(key, "sched")) {
        if (strcmp(val, "1f1b") && strcmp(val, "gpipe"))
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected sched=1f1b or sched=gpipe, got \"%s\"",
                              s, val);
        out->sched = !strcmp(val, "gpipe") ? PIPE_GPIPE : PIPE_1F1B;
    } else if (!strcmp(key, "split")) {
        rc = parse_split(s, val, out, err);
    } else if (!strcmp(key, "raf")) {
        rc = parse_bool(s, key, val, raf, err);
    } else if (!strcmp(key, "hier")) {
        rc = parse_bool(s, key, val, &out->hier, err);
    } else if (!strcmp(key, "zero1")) {
        rc = parse_bool(s, key, val, &out->zero1, err);
    } else if (!strcmp(key, "zero2")) {
        rc = parse_bool(s, key, val, &out->zero2, err);
    } else if (!strcmp(key, "qwz")) {
        rc = parse_bool(s, key, val, &out->qwz, err);
    } else if (!strcmp(key, "qgz")) {
        rc = parse_bool(s, key, val, &out->qgz, err);
    } else if (!strcmp(key, "overlap")) {
        rc = parse_bool(s, key, val, &out->overlap, err);
    } else if (!strcmp(key, "placement")) {
        rc = parse_placement(s, val, out->placement, err);
    } else if (!strcmp(key, "param") || !strcmp(key, "opt")) {
        int prm = key[0] == 'p';
        spec_offload v = !strcmp(val, "cpu") ? OFF_CPU : !strcmp(val, "nvme") ? OFF_NVME
                         : prm && !strcmp(val, "gpu") ? OFF_GPU : (spec_offload)-1;
        if ((int)v < 0)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s=%s, got \"%s\"", s, key,
                              prm ? "gpu, cpu or nvme" : "cpu or nvme", val);
        *(prm ? &out->off_param : &out->off_opt) = v;
    } else if (!strcmp(key, "sync")) {
        if (strcmp(val, "micro") && strcmp(val, "boundary"))
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected sync=micro or sync=boundary, got \"%s\"",
                              s, val);
        out->sync_boundary = !strcmp(val, "boundary");
    }
    return rc;
}

/* After the options: raf=0 (FSDP2's reshard_after_forward=False), the required keys given, an
 * AxoNN grid that fits. */
static int layout_finish(const char *s, int kind, const struct kind_def *ko, const int *seen, int raf,
                         spec_layout *out, sc_err *err)
{
    /* FSDP2 reshard_after_forward=False keeps the unsharded parameters after forward and skips
     * the backward all-gather (pytorch/pytorch torch/distributed/fsdp/_fully_shard/_fully_shard.py
     * at 1d2fbd40143b39ea06145b8865f79d0605325d9f, fully_shard's docstring): FSDP1's
     * SHARD_GRAD_OP, one kind, so its canonical string is shard_grad_op */
    if (kind == LAYOUT_ZERO3 && !raf)
        out->kind = LAYOUT_SHARD_GRAD_OP;
    if (kind == LAYOUT_ZERO3 && !raf && out->cp > 1)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": context parallelism (cp) with raf=0 is not modelled; drop one of them", s);
    for (int i = 0; i < ko->required; i++)
        if (!seen[i]) {
            char k[16];
            const char *p = ko->keys;
            for (int j = 0; j < i; j++)
                p = strchr(p, ',') + 1;
            snprintf(k, sizeof k, "%.*s", (int)strcspn(p, ","), p);
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": missing %s=%s (e.g. \"%s\")", s, k,
                              kind == LAYOUT_AXONN ? "N" : kind == LAYOUT_TP || (kind == LAYOUT_MEGATRON && i == 0) ? "T" : "P",
                              ko->example);
        }
    /* megatron zero2=1 (PaddleNLP's sharding stage 2 beside tensor parallelism): the optimizer
     * sharded as zero1=1 shards it, and no pipeline or context parallelism (PaddleNLP runs stage 2
     * only without a pipeline: layout_tensor.c lo_tp_item) */
    if (kind == LAYOUT_MEGATRON && out->zero2 && !out->zero1)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": zero2=1 shards the gradients and the optimizer states; it needs zero1=1", s);
    if (kind == LAYOUT_MEGATRON && out->zero2 && (out->pp > 1 || out->cp > 1 || out->vp > 1))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": zero2=1 is modelled without pipeline stages or context parallelism "
                          "(p = 1, cp = 1), as PaddleNLP runs sharding stage 2", s);
    if (kind == LAYOUT_AXONN) { /* every product of the axes then fits an int */
        long long prod = 1;
        for (int a = 0; a < SPEC_AXES; a++)
            prod *= out->grid[a] ? out->grid[a] : 1;
        if (prod > SPEC_MAX_RANKS)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected a grid of at most %d GPUs, got %lld", s,
                              SPEC_MAX_RANKS, prod);
    }
    return 0;
}

int spec_layout_parse(const char *s, spec_layout *out, sc_err *err)
{
    char buf[128], hint[SC_ERR_TEXT];
    memset(out, 0, sizeof *out);
    out->hier = 1;
    out->zero1 = 1;
    out->overlap = 1;
    memcpy(out->placement, "xyzd", SPEC_AXES + 1);
    out->pp = out->vp = out->cp = 1;
    out->sp = 1;
    out->sched = PIPE_1F1B;
    if (!s || !*s || strlen(s) >= sizeof buf)
        return sc_err_set(err, SC_EINPUT, "layout", "", "expected one of %s, got \"%.60s\"", layout_hint(hint, sizeof hint), s ? s : "");
    snprintf(buf, sizeof buf, "%s", s);
    if (!strncmp(buf, "fsdp2:", 6))
        return parse_fsdp2(s, out, err);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    int kind = -1;
    for (int i = 0; i < N_KINDS; i++)
        if (!strcmp(buf, KINDS[i].name))
            kind = i;
    if (kind < 0) { /* a typo of a kind's name ("zero-3"): that name, not the whole list */
        const char *names[N_KINDS + 2];
        for (int i = 0; i < N_KINDS; i++)
            names[i] = KINDS[i].name;
        names[N_KINDS] = "fsdp2", names[N_KINDS + 1] = NULL;
        char near[160];
        if (str_nearest_all(buf, names, near, sizeof near))
            return sc_err_set(err, SC_EINPUT, "layout", "", "unknown layout \"%s\"; did you mean %s? (layouts: "
                              "shardcast predict --help)", s, near);
        return sc_err_set(err, SC_EINPUT, "layout", "", "expected one of %s, got \"%s\"", layout_hint(hint, sizeof hint), s);
    }
    out->kind = (spec_layout_kind)kind;
    const struct kind_def *ko = &KINDS[kind];
    if (!colon) {
        if (ko->required)
            return sc_err_set(err, SC_EINPUT, "layout", "", "\"%s\" needs its %s, e.g. \"%s\"", s,
                              ko->required > 1 ? "grid" : "group size", ko->example);
        return 0;
    }
    if (!*ko->keys)
        return sc_err_set(err, SC_EINPUT, "layout", "", "\"%s\" takes no options, got \"%s\"", KINDS[kind].name, s);
    if (!colon[1] && !ko->required) /* "zero3-offload:": a ':' with nothing after it */
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected key=value options after ':' (e.g. \"%s\") or no ':'",
                          s, ko->example);
    if (colon[1] && (colon[1] == ',' || strstr(colon + 1, ",,") || colon[strlen(colon + 1)] == ','))
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected key=value options separated by single commas", s);
    char *save = NULL;
    int seen[16] = {0}, raf = 1;
    for (char *opt = strtok_r(colon + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(opt, '=');
        if (!eq)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected key=value, got \"%s\"", s, opt);
        *eq = '\0';
        const char *key = opt, *val = eq + 1;
        int ki = key_index(ko->keys, key);
        if (ki < 0) {
            char list[96] = "";
            for (const char *p = ko->keys; *p; p++)
                snprintf(list + strlen(list), sizeof list - strlen(list), *p == ',' ? ", " : "%c", *p);
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": unknown option \"%s\" (expected %s)", s, key, list);
        }
        if (seen[ki]++)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": option \"%s\" given twice", s, key);
        int rc = layout_option(s, kind, ki, key, val, out, &raf, err);
        if (rc)
            return rc;
    }
    return layout_finish(s, kind, ko, seen, raf, out, err);
}

/* megatron's split options as its string ends with them: ",split=embed+loss", ",first=N,last=M" */
static void megatron_split_str(const spec_layout *l, char *out, size_t n)
{
    int o = 0;
    out[0] = 0;
    if (l->split_embed || l->split_loss)
        o = snprintf(out, n, ",split=%s", l->split_embed && l->split_loss ? "embed+loss" : l->split_embed ? "embed" : "loss");
    if (l->first > 0 && o >= 0 && (size_t)o < n)
        o += snprintf(out + o, n - (size_t)o, ",first=%d", l->first);
    if (l->last > 0 && o >= 0 && (size_t)o < n)
        snprintf(out + o, n - (size_t)o, ",last=%d", l->last);
}

const char *spec_layout_str(const spec_layout *l, char *buf, unsigned long n)
{
    switch (l->kind) {
    case LAYOUT_MICS:
        snprintf(buf, n, l->hier ? "mics:p=%d" : "mics:p=%d,hier=0", l->p);
        break;
    case LAYOUT_HSDP:
        snprintf(buf, n, l->sync_boundary ? "hsdp:p=%d,sync=boundary" : "hsdp:p=%d", l->p);
        break;
    case LAYOUT_ZEROPP: {
        char h[24] = "";
        if (l->p)
            snprintf(h, sizeof h, "hpz=%d", l->p);
        snprintf(buf, n, "zeropp%s%s%s%s%s", l->p || l->qwz || l->qgz ? ":" : "", h,
                 l->qwz ? (l->p ? ",qwz=1" : "qwz=1") : "", l->qgz ? (l->p || l->qwz ? ",qgz=1" : "qgz=1") : "", "");
        break;
    }
    case LAYOUT_ZERO1:
    case LAYOUT_ZERO2:
        if (l->p)
            snprintf(buf, n, "%s:p=%d", KINDS[l->kind].name, l->p);
        else
            snprintf(buf, n, "%s", KINDS[l->kind].name);
        break;
    case LAYOUT_HSDP_ZERO2:
        snprintf(buf, n, "hybrid_shard_zero2:p=%d", l->p);
        break;
    case LAYOUT_RAF:
        snprintf(buf, n, "raf:p=%d", l->p);
        break;
    case LAYOUT_ZERO3:
        if (l->dp && (l->pp > 1 || l->t > 1)) {
            char cp[16] = "", pp[48] = "";
            if (l->cp > 1)
                snprintf(cp, sizeof cp, ",cp=%d", l->cp);
            if (l->pp > 1)
                snprintf(pp, sizeof pp, ",p=%d", l->pp);
            snprintf(buf, n, "fsdp2:dp=%d%s,t=%d%s%s%s%s", l->dp, cp, l->t, pp, l->atp ? ",asynctp=1" : "",
                     l->pp > 1 ? ",schedule=" : "",
                     l->pp <= 1 ? "" : l->sched == PIPE_GPIPE ? "gpipe" : l->vp > 1 ? "interleaved-1f1b" : "1f1b");
        }
        else if (l->dp)
            snprintf(buf, n, "fsdp2:dp=%d,cp=%d", l->dp, l->cp > 1 ? l->cp : 1);
        else if (l->cp > 1)
            snprintf(buf, n, "zero3:cp=%d", l->cp);
        else
            snprintf(buf, n, "zero3");
        break;
    case LAYOUT_TP:
        snprintf(buf, n, "tp:t=%d%s%s", l->t, l->zero1 ? "" : ",zero1=0", l->overlap ? "" : ",overlap=0");
        break;
    case LAYOUT_AXONN: {
        char d[24] = "";
        if (l->grid[3])
            snprintf(d, sizeof d, ",d=%d", l->grid[3]);
        snprintf(buf, n, "axonn:x=%d,y=%d,z=%d%s%s%s%s", l->grid[0], l->grid[1], l->grid[2], d,
                 strcmp(l->placement, "xyzd") && l->placement[0] ? ",placement=" : "",
                 strcmp(l->placement, "xyzd") && l->placement[0] ? l->placement : "", l->overlap ? "" : ",overlap=0");
        break;
    }
    case LAYOUT_MEGATRON: {
        char vp[16] = "", cp[16] = "", sp[64] = "";
        if (l->vp > 1)
            snprintf(vp, sizeof vp, ",vp=%d", l->vp);
        if (l->cp > 1)
            snprintf(cp, sizeof cp, ",cp=%d", l->cp);
        megatron_split_str(l, sp, sizeof sp);
        snprintf(buf, n, "megatron:t=%d,p=%d%s%s%s%s%s%s%s", l->t, l->pp > 0 ? l->pp : 1, vp, l->sp ? "" : ",sp=0",
                 l->zero1 ? "" : ",zero1=0", l->zero2 ? ",zero2=1" : "", l->sched == PIPE_GPIPE ? ",sched=gpipe" : "",
                 cp, sp);
        break;
    }
    case LAYOUT_ZERO3_OFFLOAD: {
        static const char *const T[] = {"gpu", "cpu", "nvme"};
        int prm = l->off_param != OFF_GPU, opt = l->off_opt == OFF_NVME;
        snprintf(buf, n, "zero3-offload%s%s%s%s%s", prm || opt ? ":" : "", prm ? "param=" : "", prm ? T[l->off_param] : "",
                 opt ? (prm ? ",opt=" : "opt=") : "", opt ? "nvme" : "");
        break;
    }
    default:
        snprintf(buf, n, "%s", KINDS[l->kind].name);
    }
    return buf;
}

int spec_nodes_check(const spec_cluster *c, int nodes, const char *source, sc_err *err)
{
    if (nodes < 1)
        return sc_err_set(err, SC_EINPUT, source, "", "expected a node count >= 1, got %d", nodes);
    if (c->max_nodes && nodes > c->max_nodes)
        return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d node%s of %s, got %d", c->max_nodes,
                          c->max_nodes == 1 ? "" : "s", c->name, nodes);
    return 0;
}

int spec_resolve(const char *kind, const char *name, const char *const *roots, int n_roots, char *out,
                 unsigned long outlen, sc_err *err)
{
    size_t n = (size_t)outlen;
    if (!name || !*name)
        return sc_err_set(err, SC_EINPUT, kind, "", "expected a name or a path, got nothing");
    if (is_readable_file(name)) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    struct stat st;
    errno = 0;
    /* a named pipe is read once, to its end, with a size cap, as every JSON reader does
     * (base/jsonrd.c): taken as the other readers take it (issue 31 item 8) */
    if (stat(name, &st) == 0 && S_ISFIFO(st.st_mode) && access(name, R_OK) == 0) {
        snprintf(out, n, "%s", name);
        return 0;
    }
    if (stat(name, &st) == 0 && !S_ISREG(st.st_mode))
        return sc_err_unreadable(err, name, S_ISDIR(st.st_mode) ? "is a directory, expected a file"
                                                                : "not a regular file, expected a file");
    if (strchr(name, '/') || strstr(name, ".json")) {
        int e = errno ? errno : (access(name, R_OK) ? errno : EACCES);
        return sc_err_unreadable(err, name, strerror(e));
    }
    const char *env = getenv("SHARDCAST_CONFIGS");
    const char *dirs[9] = {0};
    int nd = 0;
    const int has_env = env && *env;
    if (has_env)
        dirs[nd++] = env;
    for (int i = 0; i < n_roots && nd < 9; i++)
        if (roots[i])
            dirs[nd++] = roots[i];
    for (int i = 0; i < nd; i++) {
        snprintf(out, n, "%s/%s/%s.json", dirs[i], kind, name);
        if (is_readable_file(out))
            return 0;
    }
    out[0] = '\0';
    char near[4 * SPEC_NAME_MAX + 32] = "";
    if (spec_suggest(kind, name, dirs, nd, near, sizeof near) == 0) {
        char best[4 * SPEC_NAME_MAX];
        snprintf(best, sizeof best, "%.*s", (int)sizeof best - 1, near);
        snprintf(near, sizeof near, "; did you mean %s?", best);
    } else {
        near[0] = '\0';
    }
    return sc_err_set(err, SC_EINPUT, name, "",
                      "no such file, and no shipped %s of that name%s (looked in %s/%s; `shardcast list %s` shows them)",
                      kind, near, nd ? dirs[has_env && nd > 1 ? 1 : 0] : "configs", kind, kind);
}

/* Add cand to the names tied at the best distance (sorted, at most SUGGEST_MAX kept). */
enum { SUGGEST_MAX = 3 };
static void suggest_add(char tied[SUGGEST_MAX][SPEC_NAME_MAX], int *n, const char *cand)
{
    int at = 0;
    while (at < *n && strcmp(tied[at], cand) < 0)
        at++;
    if (at == SUGGEST_MAX)
        return;
    for (int k = (*n < SUGGEST_MAX ? *n : SUGGEST_MAX - 1); k > at; k--)
        memcpy(tied[k], tied[k - 1], SPEC_NAME_MAX);
    snprintf(tied[at], SPEC_NAME_MAX, "%s", cand);
    if (*n < SUGGEST_MAX)
        (*n)++;
}

int spec_suggest(const char *kind, const char *name, const char *const *dirs, int n_dirs, char *out,
                 unsigned long outlen)
{
    int best = 1000, best_raw = 1000, n_tied = 0, n_all = 0; /* kept, and all at the best distance */
    char tied[SUGGEST_MAX][SPEC_NAME_MAX];
    size_t ln = strlen(name);
    /* close enough to be a typo: a third of the name's letters, at least 2 */
    int limit = (int)(ln / 3) > 2 ? (int)(ln / 3) : 2;
    for (int i = 0; i < n_dirs; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/%s", dirs[i], kind);
        DIR *d = opendir(dir);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l <= 5 || strcmp(e->d_name + l - 5, ".json") || l - 5 >= SPEC_NAME_MAX)
                continue;
            char cand[SPEC_NAME_MAX];
            memcpy(cand, e->d_name, l - 5);
            cand[l - 5] = '\0';
            int raw = str_edit_distance(name, cand, 1), dist = raw;
            if (ln >= 3 && !strncasecmp(cand, name, ln))
                dist = dist < 1 ? dist : 1; /* a prefix: "p4d" -> "p4d.24xlarge" */
            if (dist < best || (dist == best && raw < best_raw)) /* then the fewer edits */
                best = dist, best_raw = raw, n_tied = n_all = 0;
            int dup = 0; /* the same name under two roots */
            for (int k = 0; k < n_tied; k++)
                dup |= !strcmp(tied[k], cand);
            if (dist == best && raw == best_raw && !dup)
                n_all++, suggest_add(tied, &n_tied, cand);
        }
        closedir(d);
    }
    /* every name at the best distance, "a or b" ("llama3-405b": llama3-70b and llama3.1-405b
     * are both two edits away; naming one would pick for the user) */
    size_t o = 0;
    if (outlen)
        out[0] = '\0';
    for (int k = 0; k < n_tied && o < outlen; k++)
        o += (size_t)snprintf(out + o, (size_t)outlen - o, "%s%s", k ? (k == n_tied - 1 && n_all == n_tied ? " or " : ", ") : "",
                              tied[k]);
    if (n_all > n_tied && o < outlen)
        snprintf(out + o, (size_t)outlen - o, " or %d more", n_all - n_tied);
    return n_tied && best <= limit ? 0 : -1;
}

int spec_layout_tp_nodes(const spec_layout *l, int gpus_per_node)
{
    if ((l->kind != LAYOUT_TP && l->kind != LAYOUT_MEGATRON) || gpus_per_node < 1 || l->t <= gpus_per_node)
        return 1;
    return l->t / gpus_per_node;
}

/* spec_layout.c — layout strings ("mics:p=16,hier=0"), their checks against a cluster and node
 * count, and the resolution of config names to files. Not here: what a layout does per step
 * (model/layout.c) or how much memory it needs (model/memory.c). */
#include "spec.h"

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
    /* cp: context parallelism (model/cp.h); torchtitan spells it fsdp2:dp=D,cp=C */
    [LAYOUT_ZERO3] = {"zero3", "cp", 0, "zero3:cp=2", "zero3", DIV_N, DIV_N, DIV_N, USE_LAYER},
    [LAYOUT_MICS] = {"mics", "p,hier", 1, "mics:p=8", "mics:p=P", DIV_P, DIV_P, DIV_P, USE_LAYER},
    [LAYOUT_HSDP] = {"hsdp", "p,sync", 1, "hsdp:p=8", "hsdp:p=P", DIV_P, DIV_P, DIV_P, USE_LAYER},
    /* + hpZ's secondary copy (memory.c) */
    [LAYOUT_ZEROPP] = {"zeropp", "hpz,qwz,qgz", 0, "zeropp:hpz=8", "zeropp[:hpz=P][,qwz=1][,qgz=1]", DIV_N, DIV_N,
                       DIV_N, USE_LAYER},
    /* Megatron-LM: states split t ways; ZeRO-1 splits Adam's over the replicas */
    [LAYOUT_TP] = {"tp", "t,zero1,overlap", 1, "tp:t=8", "tp:t=T", DIV_T, DIV_T, DIV_ZERO1_N, USE_WHOLE},
    /* every layer's weights sharded over the x y z grid, replicated over d */
    [LAYOUT_AXONN] = {"axonn", "x,y,z,d,placement,overlap", 3, "axonn:x=2,y=2,z=2", "axonn:x=X,y=Y,z=Z", DIV_XYZ,
                      DIV_XYZ, DIV_XYZ, USE_LAYER_Z},
    /* gradients and optimizer states on the host or NVMe, parameters as param= says (memory.c) */
    [LAYOUT_ZERO3_OFFLOAD] = {"zero3-offload", "param,opt", 0, "zero3-offload:param=nvme,opt=nvme",
                              "zero3-offload[:param=cpu|nvme][,opt=nvme]", DIV_N, DIV_1, DIV_1, USE_LAYER},
    /* everything on the optimizer node (memory.c) */
    [LAYOUT_LUWU] = {"luwu", "", 0, "luwu", "luwu", DIV_1, DIV_1, DIV_1, USE_LAYER},
    [LAYOUT_SHARD_GRAD_OP] = {"shard_grad_op", "", 0, "shard_grad_op", "shard_grad_op", DIV_N, DIV_N, DIV_N,
                              USE_MODEL},
    [LAYOUT_HSDP_ZERO2] = {"hybrid_shard_zero2", "p", 1, "hybrid_shard_zero2:p=8", "hybrid_shard_zero2:p=P", DIV_P,
                           DIV_P, DIV_P, USE_MODEL},
    /* pipeline stages: memory_pipe.c, not these columns */
    [LAYOUT_MEGATRON] = {"megatron", "t,p,vp,sp,zero1,sched,cp", 2, "megatron:t=8,p=4", "megatron:t=T,p=P", DIV_1,
                         DIV_1, DIV_1, USE_WHOLE},
};
#define N_KINDS (int)(sizeof KINDS / sizeof KINDS[0])

int spec_layout_n_kinds(void) { return N_KINDS; }

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

/* "ddp, zero1[:p=P], ...": every kind's hint, for the parse errors. */
static const char *layout_hint(char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < N_KINDS && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%s", i ? ", " : "", KINDS[i].hint);
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
 * dp_shard x cp, its parallelize_llama): with t = p = 1 and no async TP it is zero3 over all
 * D x cp ranks with context parallelism (cp.h); composites with TP or PP are not modelled. */
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
        if (bit == 16) {
            int rc = parse_bool(s, key, val, num, err);
            if (rc)
                return rc;
        } else if (num && parse_pos_int(val, num)) {
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected %s to be a positive integer, got \"%s\"",
                              s, key, val);
        }
    }
    if (!(seen & 1))
        return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": missing dp=D (e.g. \"fsdp2:dp=4,cp=2\")", s);
    if (t > 1 || p > 1 || atp || (seen & 32))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "in \"%s\": FSDP2 composed with tensor or pipeline parallelism (t, p, asynctp, schedule) is "
                          "not modelled; fsdp2:dp=D,cp=C (zero3 over D x C ranks with context parallelism) is", s);
    out->kind = LAYOUT_ZERO3;
    out->dp = dp;
    out->cp = cp;
    return 0;
}

int spec_layout_parse(const char *s, spec_layout *out, sc_err *err)
{
    char buf[128], hint[320];
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
    if (kind < 0)
        return sc_err_set(err, SC_EINPUT, "layout", "", "expected one of %s, got \"%s\"", layout_hint(hint, sizeof hint), s);
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
    int seen[8] = {0};
    for (char *opt = strtok_r(colon + 1, ",", &save); opt; opt = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(opt, '=');
        if (!eq)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": expected key=value, got \"%s\"", s, opt);
        *eq = '\0';
        const char *key = opt, *val = eq + 1;
        int ki = key_index(ko->keys, key);
        if (ki < 0) {
            char list[64] = "";
            for (const char *p = ko->keys; *p; p++)
                snprintf(list + strlen(list), sizeof list - strlen(list), *p == ',' ? ", " : "%c", *p);
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": unknown option \"%s\" (expected %s)", s, key, list);
        }
        if (seen[ki]++)
            return sc_err_set(err, SC_EINPUT, "layout", "", "in \"%s\": option \"%s\" given twice", s, key);
        int rc = 0, *num = NULL;
        if (kind == LAYOUT_MEGATRON && !strcmp(key, "p"))
            num = &out->pp;
        else if (!strcmp(key, "vp"))
            num = &out->vp;
        else if (!strcmp(key, "cp"))
            num = &out->cp;
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
        } else if (!strcmp(key, "hier")) {
            rc = parse_bool(s, key, val, &out->hier, err);
        } else if (!strcmp(key, "zero1")) {
            rc = parse_bool(s, key, val, &out->zero1, err);
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
        if (rc)
            return rc;
    }
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
    case LAYOUT_ZERO3:
        if (l->dp)
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
        char vp[16] = "", cp[16] = "";
        if (l->vp > 1)
            snprintf(vp, sizeof vp, ",vp=%d", l->vp);
        if (l->cp > 1)
            snprintf(cp, sizeof cp, ",cp=%d", l->cp);
        snprintf(buf, n, "megatron:t=%d,p=%d%s%s%s%s%s", l->t, l->pp > 0 ? l->pp : 1, vp, l->sp ? "" : ",sp=0",
                 l->zero1 ? "" : ",zero1=0", l->sched == PIPE_GPIPE ? ",sched=gpipe" : "", cp);
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

int spec_layout_shard(const spec_layout *l, int n_ranks)
{
    switch (l->kind) {
    case LAYOUT_DDP: return 1;
    case LAYOUT_MICS:
    case LAYOUT_HSDP:
    case LAYOUT_HSDP_ZERO2: return l->p;
    case LAYOUT_ZERO1:
    case LAYOUT_ZERO2: return l->p ? l->p : n_ranks;
    case LAYOUT_TP: return l->zero1 ? n_ranks : l->t; /* optimizer states: t-way TP x replicas */
    case LAYOUT_AXONN: return l->grid[0] * l->grid[1] * l->grid[2];
    case LAYOUT_MEGATRON: return l->zero1 ? n_ranks : l->t * (l->pp > 0 ? l->pp : 1);
    default: return n_ranks;
    }
}

int spec_nodes_check(const spec_cluster *c, int nodes, const char *source, sc_err *err)
{
    if (nodes < 1)
        return sc_err_set(err, SC_EINPUT, source, "", "expected a node count >= 1, got %d", nodes);
    if (c->max_nodes && nodes > c->max_nodes)
        return sc_err_set(err, SC_EINPUT, source, "", "expected at most %d nodes of %s, got %d", c->max_nodes, c->name,
                          nodes);
    return 0;
}

/* Cumulative products of the AxoNN axes in placement order must each divide the node's GPUs or
 * be a multiple of them: every communicator then lies inside one node or spans whole nodes with
 * the same members on each (the placement rule of the AxoNN paper, §V). */
static int axonn_check(const spec_layout *l, const char *name, int n, int g, sc_err *err)
{
    long long big = 1;
    for (int i = 0; i < SPEC_AXES - 1; i++)
        big *= l->grid[i] > 0 ? l->grid[i] : 0;
    if (big < 1 || big > n) /* also keeps the products below in int */
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z = %lld to divide the %d GPUs", name, big, n);
    int prod = (int)big;
    if (n % prod)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z = %d to divide the %d GPUs", name, prod, n);
    if (l->grid[3] && prod * l->grid[3] != n)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected x*y*z*d to equal the %d GPUs, got %d", name, n,
                          prod * l->grid[3]);
    int size[SPEC_AXES], stride[SPEC_AXES];
    const char *pl = l->placement[0] ? l->placement : "xyzd";
    if (spec_layout_axes(l, n, size, stride))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: placement \"%s\" is not a permutation of xyzd", name, pl);
    for (int i = 0; i < SPEC_AXES; i++) { /* the ranks of the axes up to the i-th innermost */
        int a = (int)(strchr("xyzd", pl[i]) - "xyzd"), cum = stride[a] * size[a];
        if (!(g % cum == 0 || cum % g == 0))
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: placement %s puts %d ranks in the innermost axes; expected a divisor or multiple of "
                              "the %d GPUs per node",
                              name, pl, cum, g);
    }
    return 0;
}

/* Megatron-LM 3D: tensor parallelism inside a node, t x pp dividing the GPUs, the t x dp ranks
 * of one stage a divisor or a multiple of a node (stage neighbours then pair up rank by rank
 * across nodes, or inside one); cp ranks at stride t (cp.h). */
static int megatron_check(const spec_layout *l, const char *name, int n, int g, sc_err *err)
{
    int pp = l->pp > 0 ? l->pp : 1;
    if (g % l->t)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: tensor parallelism stays inside a node: expected t dividing %d GPUs per node, got %d",
                          name, g, l->t);
    if (n % (l->t * pp))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected t*p = %d to divide the %d GPUs", name, l->t * pp, n);
    int stage = n / pp; /* ranks of one pipeline stage: t x dp */
    if (!(g % stage == 0 || stage % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a pipeline stage holds %d GPUs; expected a divisor or multiple of the %d GPUs per node",
                          name, stage, g);
    if (l->cp > 1 && stage % (l->t * l->cp))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected t*p*cp = %d to divide the %d GPUs", name,
                          l->t * pp * l->cp, n);
    if (l->cp > 1 && !(g % (l->t * l->cp) == 0 || (l->t * l->cp) % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: a context-parallel group spans t*cp = %d ranks; expected a divisor or multiple of the %d "
                          "GPUs per node", name, l->t * l->cp, g);
    if (l->vp > 1 && l->sched == PIPE_GPIPE)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: virtual stages (vp) need the interleaved 1F1B schedule; drop sched=gpipe or vp", name);
    if (l->vp > 1 && pp < 2)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: virtual stages (vp=%d) need p >= 2", name, l->vp);
    return 0;
}

/* spec_layout_check with the layout's name for the message already formatted. */
static int check_named(const spec_layout *l, const spec_cluster *c, int nodes, const char *name, sc_err *err)
{
    if ((long long)nodes * c->gpus_per_node > SPEC_MAX_RANKS || nodes < 1 || c->gpus_per_node < 1)
        return sc_err_set(err, SC_EINPUT, "--nodes", "", "expected at most %d GPUs in all, got %d nodes x %d", SPEC_MAX_RANKS,
                          nodes, c->gpus_per_node);
    int n = nodes * c->gpus_per_node, g = c->gpus_per_node, p = l->p;
    if (l->kind == LAYOUT_TP) {
        /* inside a node (t divides its GPUs), or across nodes (t a multiple of them, dividing the
         * GPUs): its all-reduces then ride the NICs, priced like any group spanning nodes (the
         * CLI warns, spec_layout_tp_across) */
        if (g % l->t && (l->t % g || n % l->t))
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: expected t dividing %d GPUs per node, or a multiple of it dividing the %d GPUs, "
                              "got %d",
                              name, g, n, l->t);
        return 0;
    }
    if (l->kind == LAYOUT_AXONN)
        return axonn_check(l, name, n, g, err);
    if (l->kind == LAYOUT_MEGATRON)
        return megatron_check(l, name, n, g, err);
    if (l->kind == LAYOUT_ZERO3 && (l->cp > 1 || l->dp)) {
        /* cp ranks adjacent (torchtitan's mesh: cp inside dp_shard), a group inside a node or
         * spanning whole ones */
        if (l->dp && (long long)l->dp * l->cp != n)
            return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected dp x cp = %d GPUs, got %d x %d", name, n,
                              l->dp, l->cp);
        if (n % l->cp || !(g % l->cp == 0 || l->cp % g == 0))
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: expected cp dividing the %d GPUs and dividing or a multiple of the %d GPUs per "
                              "node, got %d", name, n, g, l->cp);
        return 0;
    }
    if (l->kind == LAYOUT_ZERO3_OFFLOAD && (l->off_param == OFF_NVME || l->off_opt == OFF_NVME) &&
        !(c->nvme_read_Bps > 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a cluster with local NVMe ($.node.nvme_read_GBps, nvme_write_GBps, "
                          "nvme_capacity_GB), got %s without", name, c->name);
    if (l->kind == LAYOUT_LUWU && !c->innet.present)
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a cluster with an in_network_optimizer (LuWu keeps the model on it), "
                          "got %s without one", name, c->name);
    if (l->kind != LAYOUT_MICS && l->kind != LAYOUT_HSDP && l->kind != LAYOUT_ZEROPP && l->kind != LAYOUT_HSDP_ZERO2 &&
        !((l->kind == LAYOUT_ZERO1 || l->kind == LAYOUT_ZERO2) && p))
        return 0;
    if (l->kind == LAYOUT_ZEROPP && !p)
        return 0; /* no hpZ: nothing to align */
    if (p < 1 || p > n || n % p)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: expected a group size dividing the %d GPUs (%d nodes x %d), got %d",
                          name, n, nodes, g, p);
    /* A group either lives inside one node or spans whole nodes, so that groups never share a
     * node unevenly (MiCS paper §3.2; DeepSpeed requires the same of mics_shard_size). */
    if (!(g % p == 0 || p % g == 0))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: expected a group size that divides or is a multiple of %d GPUs per node, got %d", name, g, p);
    return 0;
}

int spec_layout_check(const spec_layout *l, const spec_cluster *c, int nodes, sc_err *err)
{
    /* the name is only for a message: a sweep checks a million points a second, almost all
     * fine, so check first without one and format it only to say what is wrong */
    int rc = check_named(l, c, nodes, "", NULL);
    if (!rc || !err)
        return rc;
    char name[64];
    spec_layout_str(l, name, sizeof name);
    return check_named(l, c, nodes, name, err);
}

int spec_layout_check_training(const spec_layout *l, const spec_training *t, sc_err *err)
{
    if (l->kind != LAYOUT_MEGATRON || l->vp <= 1 || l->pp <= 1 || t->grad_accum % l->pp == 0)
        return 0;
    char name[64];
    spec_layout_str(l, name, sizeof name);
    /* Megatron-LM's interleaved schedule runs micro-batches in groups of p (schedules.py) */
    return sc_err_set(err, SC_EINPUT, "layout", "",
                      "%s: the interleaved schedule needs the micro-batches per step (grad_accum %d) to be a multiple "
                      "of p = %d", name, t->grad_accum, l->pp);
}

int spec_layout_check_model(const spec_layout *l, const spec_model *m, sc_err *err)
{
    char name[64];
    spec_layout_str(l, name, sizeof name);
    int split_heads = l->kind == LAYOUT_TP || l->kind == LAYOUT_MEGATRON ? l->t : l->kind == LAYOUT_AXONN ? l->grid[1] : 1;
    if (l->kind == LAYOUT_MEGATRON) {
        int v = (l->pp > 0 ? l->pp : 1) * (l->vp > 0 ? l->vp : 1);
        if (m->layers < v)
            return sc_err_set(err, SC_EINPUT, "layout", "", "%s: %d pipeline stages x virtual stages, but %s has %d layers",
                              name, v, m->name, m->layers);
        /* Megatron-LM: the interleaved schedule needs layers divisible by p x vp */
        if (l->vp > 1 && m->layers % v)
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: interleaving needs the %d layers of %s divisible by p x vp = %d", name, m->layers,
                              m->name, v);
        /* Transformer Engine's load-balanced split: 2 cp chunks of the sequence (cp.c) */
        if (l->cp > 1 && m->seq_len % (2 * l->cp))
            return sc_err_set(err, SC_EINPUT, "layout", "",
                              "%s: context parallelism cuts the sequence into 2 x cp = %d chunks; %s's sequence %d is "
                              "not divisible by it", name, 2 * l->cp, m->name, m->seq_len);
    }
    if (l->kind == LAYOUT_ZERO3 && l->cp > 1 && m->seq_len % (2 * l->cp))
        return sc_err_set(err, SC_EINPUT, "layout", "",
                          "%s: context parallelism cuts the sequence into 2 x cp = %d chunks; %s's sequence %d is not "
                          "divisible by it", name, 2 * l->cp, m->name, m->seq_len);
    if ((l->kind == LAYOUT_TP || l->kind == LAYOUT_MEGATRON) && (m->ffn % l->t || m->hidden % l->t))
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways", name, m->hidden,
                          m->ffn, m->name, l->t);
    if (m->heads % split_heads || m->kv_heads % split_heads)
        return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits the attention heads %d ways; %s has %d heads and %d "
                          "key/value heads", name, split_heads, m->name, m->heads, m->kv_heads);
    if (l->kind == LAYOUT_AXONN)
        for (int a = 0; a < 2; a++)
            if (m->hidden % l->grid[a] || m->ffn % l->grid[a])
                return sc_err_set(err, SC_EINPUT, "layout", "", "%s: splits hidden %d and ffn %d of %s %d ways (%c)", name,
                                  m->hidden, m->ffn, m->name, l->grid[a], "xy"[a]);
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
        return sc_err_set(err, SC_EINPUT, name, "", "cannot read %s file: %s", kind,
                          S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    if (strchr(name, '/') || strstr(name, ".json")) {
        int e = errno ? errno : (access(name, R_OK) ? errno : EACCES);
        return sc_err_set(err, SC_EINPUT, name, "", "cannot read %s file: %s", kind, strerror(e));
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
    char near[SPEC_NAME_MAX + 32] = "";
    if (spec_suggest(kind, name, dirs, nd, near, sizeof near) == 0) {
        char best[SPEC_NAME_MAX];
        snprintf(best, sizeof best, "%.*s", (int)sizeof best - 1, near);
        snprintf(near, sizeof near, "; did you mean %s?", best);
    } else {
        near[0] = '\0';
    }
    return sc_err_set(err, SC_EINPUT, name, "",
                      "no such file, and no shipped %s of that name%s (looked in %s/%s; `shardcast list %s` shows them)",
                      kind, near, nd ? dirs[has_env && nd > 1 ? 1 : 0] : "configs", kind, kind);
}

/* Levenshtein distance, case-insensitive, of two short strings (names are < 64 chars). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 1000;
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            int best = sub < up + 1 ? sub : up + 1;
            row[j] = best < row[j - 1] + 1 ? best : row[j - 1] + 1;
            diag = up;
        }
    }
    return row[lb];
}

int spec_suggest(const char *kind, const char *name, const char *const *dirs, int n_dirs, char *out,
                 unsigned long outlen)
{
    int best = 1000;
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
            int dist = edit_distance(name, cand);
            if (ln >= 3 && !strncasecmp(cand, name, ln))
                dist = dist < 1 ? dist : 1; /* a prefix: "p4d" -> "p4d.24xlarge" */
            if (dist < best || (dist == best && strcmp(cand, out) < 0)) {
                best = dist;
                snprintf(out, (size_t)outlen, "%s", cand);
            }
        }
        closedir(d);
    }
    return best <= limit ? 0 : -1;
}

int spec_layout_tp_nodes(const spec_layout *l, int gpus_per_node)
{
    if ((l->kind != LAYOUT_TP && l->kind != LAYOUT_MEGATRON) || gpus_per_node < 1 || l->t <= gpus_per_node)
        return 1;
    return l->t / gpus_per_node;
}

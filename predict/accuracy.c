/* accuracy.c — case files, metric conversion, the folder walk and running the cases (see
 * accuracy.h). Validation happens once, here, when a case is loaded; running a case never fails
 * (it gets a status). Not here: the statistics over the results and the committed figures
 * (accuracy_stats.c). */
#include "accuracy.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../model/framework.h"
#include "../base/jsonrd.h"
#include "../base/str.h"
#include "../model/memory.h"
#include "../model/stack.h"
#include "../model/workload.h"

#define GIB 1073741824.0

static const char *const METRICS[] = {"tokens_per_s_per_gpu", "tokens_per_s", "samples_per_s", "step_s",
                                      "tflops_per_gpu", "mfu", NULL};
/* ACC_FLOPS_NONE has no name in a file: the JSON enum starts at ACC_FLOPS_6N. */
static const char *const CONVENTIONS[] = {"6N", "6N+attn", "megatron", "megatron-norecompute", "explicit", NULL};
static const char *const FRAMEWORKS[] = {"deepspeed", "fsdp", "fsdp2", "megatron", "axonn", "other", NULL};
static const char *const STATUS[] = {"ok", "oom", "unsupported", "impossible", "error"};

const char *acc_metric_name(acc_metric m) { return METRICS[m]; }
const char *acc_flops_name(acc_flops f) { return f == ACC_FLOPS_NONE ? "none" : CONVENTIONS[f - 1]; }
const char *acc_status_name(acc_status s) { return STATUS[s]; }

/* ---- conversions (validation/README.md) ------------------------------------------------ */

double acc_flops_per_token(acc_flops conv, const spec_model *m, double params, double explicit_fpt)
{
    const double L = m->layers, h = m->hidden, s = m->seq_len, V = m->vocab;
    switch (conv) {
    case ACC_FLOPS_6N: return 6 * params;
    case ACC_FLOPS_6N_ATTN: return 6 * params + 12 * L * h * s; /* PaLM App. B, no causal halving */
    case ACC_FLOPS_MEGATRON: /* Narayanan et al. SC'21 eq. (3) / (B s): full recompute, 4 passes */
        return 96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
    case ACC_FLOPS_MEGATRON_NORECOMPUTE: /* Korthikanti et al. 2022: model FLOPs, 3 passes */
        return 72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h));
    case ACC_FLOPS_EXPLICIT: return explicit_fpt;
    case ACC_FLOPS_NONE: break;
    }
    return 0;
}

double acc_tokens_per_s_per_gpu(const acc_measured *m, int seq_len, int gpus, double global_tokens, double fpt)
{
    switch (m->metric) {
    case ACC_TOKENS_PER_S_PER_GPU: return m->value;
    case ACC_TOKENS_PER_S: return m->value / gpus;
    case ACC_SAMPLES_PER_S: return m->value * seq_len / gpus;
    case ACC_STEP_S: return global_tokens / m->value / gpus;
    case ACC_TFLOPS_PER_GPU: return m->value * 1e12 / fpt;
    case ACC_MFU: return m->value * m->peak_flops / fpt;
    }
    return NAN;
}

/* ---- loading a case ------------------------------------------------------------------- */

/* An error from a spec parsed out of an inline object: its paths start at "$"; make them start
 * at the object's place in the case ("$.model"). */
static int reroot(sc_err *err, const char *file, const char *at, int rc)
{
    char p[128];
    snprintf(p, sizeof p, "%s%s", at, err->path[0] == '$' ? err->path + 1 : "");
    snprintf(err->path, sizeof err->path, "%s", p);
    snprintf(err->source, sizeof err->source, "%s", file);
    return rc;
}

/* Parse an inline object as a spec through the spec loaders (one validation for every file). */
static int inline_spec(jr *r, const json_t *obj, const char *at, int (*parse)(const char *, const char *, void *, sc_err *),
                       void *out)
{
    char *text = json_dumps(obj, JSON_REAL_PRECISION(17));
    if (!text)
        return sc_err_set(r->err, SC_ERUNTIME, r->src, at, "out of memory");
    int rc = parse(text, r->src, out, r->err);
    free(text);
    return rc ? reroot(r->err, r->src, at, rc) : 0;
}
static int parse_model(const char *t, const char *src, void *out, sc_err *err) { return spec_parse_model(t, src, out, err); }
static int parse_training(const char *t, const char *src, void *out, sc_err *err)
{
    return spec_parse_training(t, src, out, err);
}

static int is_path_ref(const char *ref)
{
    size_t n = strlen(ref);
    return strchr(ref, '/') || (n > 5 && !strcmp(ref + n - 5, ".json"));
}

/* A cluster or model reference: a path relative to the validation directory (it has a '/' or
 * ends in .json), else a shipped name. */
static int resolve_ref(jr *r, const acc_paths *p, const char *kind, const char *key, const char *ref, char *out,
                       size_t n)
{
    char at[64];
    snprintf(at, sizeof at, "$.%s", key);
    if (is_path_ref(ref)) {
        int k = snprintf(out, n, "%s/%s", p->dir, ref);
        if (k > 0 && (size_t)k < n && access(out, R_OK) == 0)
            return 0;
        return sc_err_set(r->err, SC_EINPUT, r->src, at, "expected a %s file relative to %s, got \"%s\" (%s)",
                          kind, p->dir, ref, strerror(errno));
    }
    sc_err ignore;
    if (spec_resolve(!strcmp(kind, "cluster") ? "clusters" : "models", ref, p->roots, p->n_roots, out, n,
                     &ignore) == 0)
        return 0;
    return sc_err_set(r->err, SC_EINPUT, r->src, at,
                      "expected a shipped %s name or a path relative to %s, got \"%s\" (no such %s)", kind, p->dir,
                      ref, kind);
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The folder a file is in ("" when none). */
static void folder_name(const char *path, char *out, size_t n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    char *s = strrchr(buf, '/');
    if (!s) {
        snprintf(out, n, "%s", "");
        return;
    }
    *s = '\0';
    snprintf(out, n, "%s", base_name(buf));
}

static int valid_date(const char *d)
{
    size_t n = strlen(d);
    for (int i = 0; i < 4; i++)
        if (d[i] < '0' || d[i] > '9')
            return 0;
    if (n == 4)
        return 1;
    if (n != 7 || d[4] != '-' || d[5] < '0' || d[5] > '1' || d[6] < '0' || d[6] > '9')
        return 0;
    int mo = (d[5] - '0') * 10 + (d[6] - '0');
    return mo >= 1 && mo <= 12;
}

static int load_measured(jr *r, const json_t *root, acc_case *c)
{
    static const char *const keys[] = {"metric", "value", "flop_convention", "peak_tflops", "flops_per_token", NULL};
    const char *at = "$.measured";
    json_t *m;
    int rc, metric = 0, conv = -1;
    acc_measured *x = &c->measured;
    double peak = 0;
    if ((rc = jr_obj(r, root, "$", "measured", 1, &m)) || (rc = jr_only_keys(r, m, at, keys)) ||
        (rc = jr_enum(r, m, at, "metric", METRICS, 1, &metric)) || (rc = jr_pos(r, m, at, "value", 1, &x->value)) ||
        (rc = jr_enum(r, m, at, "flop_convention", CONVENTIONS, 0, &conv)) ||
        (rc = jr_pos(r, m, at, "peak_tflops", 0, &peak)) ||
        (rc = jr_pos(r, m, at, "flops_per_token", 0, &x->flops_per_token)))
        return rc;
    x->metric = (acc_metric)metric;
    x->convention = conv < 0 ? ACC_FLOPS_NONE : (acc_flops)(conv + 1);
    x->peak_flops = peak * 1e12;
    int flop_metric = x->metric == ACC_TFLOPS_PER_GPU || x->metric == ACC_MFU;
    if (flop_metric && x->convention == ACC_FLOPS_NONE)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.measured.flop_convention",
                          "missing required key (expected one of \"6N\", \"6N+attn\", \"megatron\", "
                          "\"megatron-norecompute\", \"explicit\" with metric %s)",
                          METRICS[metric]);
    if (x->metric == ACC_MFU && peak == 0)
        return jr_missing(r, "$.measured.peak_tflops", "the peak TFLOPS per GPU the source divided by, with metric mfu");
    if (x->metric == ACC_MFU && x->value > 1)
        return jr_bad(r, "$.measured.value", "a fraction from 0 to 1 with metric mfu", json_object_get(m, "value"));
    if (x->convention == ACC_FLOPS_EXPLICIT && x->flops_per_token == 0)
        return jr_missing(r, "$.measured.flops_per_token", "a positive number with flop_convention explicit");
    if (x->convention != ACC_FLOPS_EXPLICIT && x->flops_per_token > 0)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.measured.flops_per_token",
                          "expected only with flop_convention \"explicit\", got flop_convention \"%s\"",
                          acc_flops_name(x->convention));
    return 0;
}

/* A stack bundle of exactly this name is shipped (configs/stacks/<name>.json under a root). */
static int stack_shipped(const char *name, const void *ctx)
{
    const acc_paths *p = ctx;
    char path[2048];
    sc_err ignore;
    return spec_resolve("stacks", name, p->roots, p->n_roots, path, sizeof path, &ignore) == 0;
}

/* The training object's "stack" (its own, or ran's: accuracy_ran.h) applied under what the
 * object states explicitly, as `--stack` is (model/stack.h). */
static int apply_stack(jr *r, const acc_paths *p, spec_training *t)
{
    char path[2048];
    stack_bundle b;
    sc_err lerr;
    if (spec_resolve("stacks", t->stack, p->roots, p->n_roots, path, sizeof path, &lerr))
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.training.stack", "expected a shipped stack (configs/stacks/<name>.json), got \"%s\"",
                          t->stack);
    int rc = stack_load(path, &b, r->err);
    if (!rc)
        stack_apply(&b, t);
    return rc;
}

/* $.model: a shipped name, a path relative to the directory, or an inline object; $.seq_len over it. */
static int case_model(jr *r, json_t *root, const acc_paths *p, acc_case *c)
{
    char path[2048];
    int rc;
    /* model: a name, a path, or an inline object */
    json_t *mo = json_object_get(root, "model");
    if (!mo)
        return jr_missing(r, "$.model", "a shipped model name, a path relative to the directory, or a model object");
    if (json_is_object(mo)) {
        if ((rc = inline_spec(r, mo, "$.model", parse_model, &c->model)))
            return rc;
        snprintf(c->model_ref, sizeof c->model_ref, "inline:%s", c->model.name);
    } else if (json_is_string(mo)) {
        if ((rc = jr_str(r, root, "$", "model", 1, c->model_ref, sizeof c->model_ref)) ||
            (rc = resolve_ref(r, p, "model", "model", c->model_ref, path, sizeof path)) ||
            (rc = spec_load_model(path, &c->model, r->err)))
            return rc;
    } else {
        return jr_bad(r, "$.model", "a model name, a path or a model object", mo);
    }
    if ((rc = jr_int(r, root, "$", "seq_len", 1, 1 << 24, 0, &c->model.seq_len)))
        return rc;

    return 0;
}

/* $.training over the defaults and what the source ran, the framework and stack; then the layout
 * (one shardcast does not model is noted, not an error). */
static int case_training(jr *r, json_t *root, const acc_paths *p, acc_case *c)
{
    int rc;
    /* training: defaults, then the object (required: a case states what it ran) */
    json_t *tr;
    spec_training_defaults(&c->training);
    if ((rc = jr_obj(r, root, "$", "training", 1, &tr)))
        return rc;
    /* what the source ran, where the training object does not say otherwise (accuracy_ran.h) */
    if (acc_ran_apply(&c->ran, c->framework, tr, stack_shipped, p, &c->ran_applied))
        return sc_err_set(r->err, SC_ERUNTIME, r->src, "$.ran", "out of memory");
    if ((rc = inline_spec(r, tr, "$.training", parse_training, &c->training)))
        return rc;
    /* who ran it schedules the layout (model/framework.h), unless the training object names one;
     * AxoNN and other stacks run the papers' schedules (ideal) */
    if (!json_object_get(tr, "framework")) {
        int f = spec_framework_parse(c->framework);
        c->training.framework = f > 0 ? (spec_framework)f : FW_IDEAL;
    }
    c->training.given |= SPEC_GIVEN_FW; /* the case's framework, not a stack's, ran it */
    if (c->training.stack[0] && (rc = apply_stack(r, p, &c->training)))
        return rc;

    /* layout: one shardcast does not accept is reported when the case runs, not an error */
    sc_err lerr;
    c->layout_ok = spec_layout_parse(c->layout_str, &c->layout, &lerr) == 0;
    if (!c->layout_ok)
        snprintf(c->unsupported, sizeof c->unsupported, "shardcast does not model layout \"%.100s\"", c->layout_str);
    else if (fw_check(c->training.framework, &c->layout, &lerr))
        snprintf(c->unsupported, sizeof c->unsupported, "%.200s", lerr.text);

    return 0;
}

/* $.measured, as tokens/s per GPU. */
static int case_measured(jr *r, json_t *root, acc_case *c)
{
    int rc;
    /* measured, as tokens/s per GPU */
    if ((rc = load_measured(r, root, c)))
        return rc;
    wl w;
    wl_build(&c->model, &c->training, &w);
    c->params = w.params;
    c->flops_per_token =
        acc_flops_per_token(c->measured.convention, &c->model, c->params, c->measured.flops_per_token);
    /* the global batch: micro_batch x grad_accum per data-parallel replica. Every layout counts
     * micro_batch per GPU except megatron, whose micro-batch is Megatron-LM's, per model
     * replica of t x p (x cp) GPUs (validation/README.md, configs/README.md). */
    double replicas = c->gpus;
    if (c->layout_ok)
        replicas /= spec_layout_batch_share(&c->layout);
    double global_tokens =
        (double)c->training.micro_batch * c->training.grad_accum * replicas * (double)c->model.seq_len;
    c->measured_tps = acc_tokens_per_s_per_gpu(&c->measured, c->model.seq_len, c->gpus, global_tokens,
                                               c->flops_per_token);
    if (!isfinite(c->measured_tps) || c->measured_tps <= 0)
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.measured.value",
                          "expected a value giving a positive finite tokens/s per GPU, got %g", c->measured_tps);

    return 0;
}

static int case_from(jr *r, json_t *root, const acc_paths *p, acc_case *c)
{
    static const char *const keys[] = {"schema", "name", "source_id", "source", "date", "confidence", "framework",
                                       "cluster", "calibration", "nodes", "model", "seq_len", "training", "layout",
                                       "compare_group", "measured", "note", "ran", NULL};
    int rc, fw = 0;
    char schema[32];
    if ((rc = jr_only_keys(r, root, "$", keys)) || (rc = jr_str(r, root, "$", "schema", 1, schema, sizeof schema)))
        return rc;
    if (strcmp(schema, "shardcast-case/1"))
        return jr_bad(r, "$.schema", "\"shardcast-case/1\"", json_object_get(root, "schema"));
    if ((rc = jr_str(r, root, "$", "name", 1, c->name, sizeof c->name)) ||
        (rc = jr_str(r, root, "$", "source_id", 1, c->source_id, sizeof c->source_id)) ||
        (rc = jr_str(r, root, "$", "source", 1, c->source, sizeof c->source)) ||
        (rc = jr_str(r, root, "$", "date", 1, c->date, sizeof c->date)) ||
        (rc = jr_str(r, root, "$", "confidence", 1, c->confidence, sizeof c->confidence)) ||
        (rc = jr_enum(r, root, "$", "framework", FRAMEWORKS, 1, &fw)) ||
        (rc = jr_str(r, root, "$", "cluster", 1, c->cluster_ref, sizeof c->cluster_ref)) ||
        (rc = jr_str(r, root, "$", "calibration", 0, c->calib_ref, sizeof c->calib_ref)) ||
        (rc = jr_int(r, root, "$", "nodes", 1, 1000000, 1, &c->nodes)) ||
        (rc = jr_str(r, root, "$", "layout", 1, c->layout_str, sizeof c->layout_str)) ||
        (rc = jr_str(r, root, "$", "compare_group", 0, c->compare_group, sizeof c->compare_group)) ||
        (rc = jr_str(r, root, "$", "note", 0, c->note, sizeof c->note)))
        return rc;
    snprintf(c->framework, sizeof c->framework, "%s", FRAMEWORKS[fw]);
    if (!valid_date(c->date))
        return jr_bad(r, "$.date", "a date YYYY or YYYY-MM", json_object_get(root, "date"));
    if ((rc = acc_ran_load(r, root, &c->ran)))
        return rc;

    /* the file's place names the case: <source_id>/<name>.json */
    char want[160], folder[1024];
    snprintf(want, sizeof want, "%s.json", c->name);
    if (strcmp(base_name(r->src), want))
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.name", "expected the file name without .json (\"%.60s\"), got \"%s\"",
                          base_name(r->src), c->name);
    folder_name(r->src, folder, sizeof folder);
    if (strcmp(folder, c->source_id))
        return sc_err_set(r->err, SC_EINPUT, r->src, "$.source_id", "expected the folder name (\"%.60s\"), got \"%s\"",
                          folder, c->source_id);

    /* cluster */
    char path[2048];
    if ((rc = resolve_ref(r, p, "cluster", "cluster", c->cluster_ref, path, sizeof path)) ||
        (rc = spec_load_cluster(path, &c->cluster, r->err)))
        return rc;
    c->gpus = c->nodes * c->cluster.gpus_per_node;

    if ((rc = case_model(r, root, p, c)) || (rc = case_training(r, root, p, c)) || (rc = case_measured(r, root, c)))
        return rc;

    /* the case's "calibration" (a shipped name), else the shipped calibration of the cluster by
     * its name: a derived cluster names the calibration of the cluster it was derived from */
    return pred_calib_load(&c->cluster, c->calib_ref[0] ? c->calib_ref : NULL, p->roots, p->n_roots, &c->cal, c->calib_path, sizeof c->calib_path,
                           r->err);
}

int acc_case_load(const char *text, const char *file, const acc_paths *p, acc_case *out, sc_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", file);
    jr r = {out->file, err};
    json_t *root;
    int rc = jr_load_root(&r, text, &root);
    if (rc)
        return rc;
    rc = case_from(&r, root, p, out);
    json_decref(root);
    return rc;
}

/* ---- running a case ------------------------------------------------------------------- */

void acc_run_case(const acc_case *c, pred_engine e, acc_outcome *out)
{
    memset(out, 0, sizeof *out);
    out->ran = 1;
    if (c->unsupported[0]) {
        out->status = ACC_UNSUPPORTED;
        snprintf(out->why, sizeof out->why, "%s", c->unsupported);
        return;
    }
    pred_input in = {&c->cluster, &c->model, &c->training, c->nodes, &c->layout, &c->cal, NULL};
    sc_err err;
    if (pred_check(&in, "$.nodes", &err)) {
        out->status = ACC_IMPOSSIBLE;
        char buf[512];
        snprintf(out->why, sizeof out->why, "%s", sc_err_str(&err, buf, sizeof buf));
        return;
    }
    pred_result res;
    if (pred_eval(&in, e, NULL, &res, &err)) {
        out->status = ACC_ERROR;
        char buf[512];
        snprintf(out->why, sizeof out->why, "%s engine failed: %s", pred_engine_name(e), sc_err_str(&err, buf, sizeof buf));
        return;
    }
    out->step_s = res.r.step_s;
    out->mem_GiB = res.r.mem.total / GIB;
    double tps = res.r.tokens_per_s / res.gpus;
    if (!isfinite(out->step_s) || out->step_s <= 0 || !isfinite(tps) || tps <= 0 || !isfinite(out->mem_GiB)) {
        out->status = ACC_ERROR;
        snprintf(out->why, sizeof out->why, "%s engine gave a non-finite or non-positive result (step %g s, %g tokens/s/GPU)",
                 pred_engine_name(e), out->step_s, tps);
        return;
    }
    if (!res.r.mem.fits) {
        double short_by, need, cap;
        const char *where = mem_short_where(&res.r.mem, &short_by, &need, &cap);
        out->status = ACC_OOM;
        snprintf(out->why, sizeof out->why, "predicted not to fit: needs %.1f GiB on the %s, has %.1f GiB",
                 need / GIB, where ? where : "GPU", cap / GIB);
        return;
    }
    out->status = ACC_OK;
    out->predicted_tps = tps;
    out->error = tps / c->measured_tps - 1;
}

/* ---- a suite ---------------------------------------------------------------------------- */

struct acc_suite {
    int n, cap;
    acc_case *cases;
    acc_outcome *outcomes[PRED_N_ENGINES];
};

void acc_suite_free(acc_suite *s)
{
    if (!s)
        return;
    free(s->cases);
    for (int e = 0; e < PRED_N_ENGINES; e++)
        free(s->outcomes[e]);
    free(s);
}

int acc_n_cases(const acc_suite *s) { return s->n; }
const acc_case *acc_case_at(const acc_suite *s, int i) { return &s->cases[i]; }
acc_case *acc_case_mut(acc_suite *s, int i) { return &s->cases[i]; }
const acc_outcome *acc_outcome_at(const acc_suite *s, int i, pred_engine e) { return &s->outcomes[e][i]; }

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_json(const char *n)
{
    size_t l = strlen(n);
    return l > 5 && !strcmp(n + l - 5, ".json");
}

/* Room for one more case; NULL when out of memory. */
static acc_case *grow(acc_suite *s)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        acc_case *c = realloc(s->cases, sizeof *c * (size_t)cap);
        if (!c)
            return NULL;
        s->cases = c;
        s->cap = cap;
    }
    return &s->cases[s->n];
}

static int load_folder(acc_suite *s, const acc_paths *p, const char *folder, sc_err *err)
{
    char dpath[1200];
    snprintf(dpath, sizeof dpath, "%s/%s", p->dir, folder);
    struct dirent **ents;
    int n = scandir(dpath, &ents, NULL, by_name);
    if (n < 0)
        return sc_err_set(err, SC_EINPUT, dpath, "", "cannot read directory: %s", strerror(errno));
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        if (!rc && nm[0] != '.' && ends_json(nm)) {
            char file[1024];
            acc_case *c = grow(s);
            if (!c) {
                rc = sc_err_set(err, SC_ERUNTIME, dpath, "", "out of memory");
            } else if (snprintf(file, sizeof file, "%s/%s", dpath, nm) >= (int)sizeof file) {
                rc = sc_err_set(err, SC_EINPUT, dpath, "", "expected a shorter path, got %s", nm);
            } else if (!(rc = acc_case_load(NULL, file, p, c, err))) {
                for (int j = 0; j < s->n && !rc; j++)
                    if (!strcmp(s->cases[j].name, c->name))
                        rc = sc_err_set(err, SC_EINPUT, file, "$.name", "expected a unique case name, got \"%s\" (also %s)",
                                        c->name, s->cases[j].file);
                if (!rc)
                    s->n++;
            }
        }
        free(ents[i]);
    }
    free(ents);
    return rc;
}

int acc_load_dir(const acc_paths *p, acc_suite **out, sc_err *err)
{
    *out = NULL;
    acc_suite *s = calloc(1, sizeof *s);
    if (!s)
        return sc_err_set(err, SC_ERUNTIME, p->dir, "", "out of memory");
    struct dirent **ents;
    int n = scandir(p->dir, &ents, NULL, by_name);
    if (n < 0) {
        free(s);
        return sc_err_set(err, SC_EINPUT, p->dir, "", "cannot read directory: %s", strerror(errno));
    }
    int rc = 0, found = 0, n_src = 0;
    const char **srcs = calloc((size_t)n + 1, sizeof *srcs); /* the sources, for "did you mean" */
    for (int i = 0; i < n; i++) {
        const char *nm = ents[i]->d_name;
        char sub[1200];
        snprintf(sub, sizeof sub, "%s/%s", p->dir, nm);
        int source = nm[0] != '.' && strcmp(nm, "clusters") && strcmp(nm, "models") && is_dir(sub);
        if (source && srcs)
            srcs[n_src++] = nm;
        if (!rc && source && (!p->only_source || !strcmp(nm, p->only_source))) {
            found = 1;
            rc = load_folder(s, p, nm, err);
        }
    }
    if (!rc && p->only_source && !found) {
        char say[180] = ""; /* "dgxc-maxtxt": did you mean dgxc-maxtext? */
        if (srcs)
            str_did_you_mean(p->only_source, srcs, say, sizeof say);
        rc = sc_err_set(err, SC_EINPUT, "--source", "", "expected a folder of %s, got \"%s\" (no such source)%s", p->dir,
                        p->only_source, say);
    }
    for (int i = 0; i < n; i++)
        free(ents[i]);
    free(ents);
    free(srcs);
    for (int e = 0; !rc && e < PRED_N_ENGINES; e++)
        if (!(s->outcomes[e] = calloc((size_t)(s->n ? s->n : 1), sizeof(acc_outcome))))
            rc = sc_err_set(err, SC_ERUNTIME, p->dir, "", "out of memory");
    if (rc) {
        acc_suite_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void acc_run(acc_suite *s, pred_engine e, acc_progress_fn progress, void *ctx)
{
    for (int i = 0; i < s->n; i++) {
        acc_run_case(&s->cases[i], e, &s->outcomes[e][i]);
        if (progress)
            progress(ctx, i + 1, s->n, &s->cases[i]);
    }
}

void acc_suite_rows(const acc_suite *s, pred_engine e, acc_row *rows)
{
    for (int i = 0; i < s->n; i++) {
        const acc_case *c = &s->cases[i];
        const acc_outcome *o = &s->outcomes[e][i];
        rows[i] = (acc_row){c->name,          c->source_id,   c->compare_group, c->layout_str,
                            o->ran && o->status == ACC_OK, o->predicted_tps, c->measured_tps, c->framework,
                            c->ran.stack,     c->model.seq_len};
    }
}

/* accuracy.h — the published-accuracy suite: load case files (validation/README.md, schema
 * shardcast-case/1), convert each measured metric to tokens/s per GPU, predict every case with
 * an engine through the front door (predict/eval), and hand the results to the statistics as
 * rows. The statistics (n, MAPE, median bias, Spearman, layout order within compare groups) and
 * the committed figures (validation/figures.json) are accuracy_stats.h, included here.
 * Not here: printing, CSV or Markdown (cli/accuracy*.c); fitting anything to the cases — they are
 * the validation set, and no calibration parameter may be derived from them except the
 * frameworks' host costs, leave-one-source-out (accuracy_fit.h). */
#ifndef SC_PRED_ACCURACY_H
#define SC_PRED_ACCURACY_H

#include <stddef.h>

#include "../model/cost.h"
#include "../model/spec.h"
#include "accuracy_ran.h"
#include "accuracy_stats.h"
#include "eval.h"

/* ---- a case ---------------------------------------------------------------------------- */

/* Measured metrics (validation/README.md "Metrics"); the table there gives tokens/s per GPU. */
typedef enum {
    ACC_TOKENS_PER_S_PER_GPU, /* as published                                     */
    ACC_TOKENS_PER_S,         /* whole job                                        */
    ACC_SAMPLES_PER_S,        /* whole job, sequences/s                           */
    ACC_STEP_S,               /* one optimizer step, s                            */
    ACC_TFLOPS_PER_GPU,       /* achieved 1e12 FLOP/s per GPU under a convention  */
    ACC_MFU                   /* fraction of peak_tflops under a convention       */
} acc_metric;

/* FLOP conventions (validation/README.md "FLOP conventions"). */
typedef enum {
    ACC_FLOPS_NONE,                 /* not given                                           */
    ACC_FLOPS_6N,                   /* 6 P                                                  */
    ACC_FLOPS_6N_ATTN,              /* 6 P + 12 L h s (PaLM, Chowdhery et al. 2022, App. B) */
    ACC_FLOPS_MEGATRON,             /* 96 L h^2 (1 + s/(6h) + V/(16 L h)) (Narayanan SC'21) */
    ACC_FLOPS_MEGATRON_NORECOMPUTE, /* 72 L h^2 (1 + s/(6h) + V/(12 L h)) (Korthikanti 2022) */
    ACC_FLOPS_EXPLICIT              /* the source's own flops_per_token                      */
} acc_flops;

typedef struct acc_measured {
    acc_metric metric;
    double value;           /* in the metric's unit                                        */
    acc_flops convention;   /* ACC_FLOPS_NONE when the case gives none                     */
    double peak_flops;      /* mfu: the peak the source divided by, FLOP/s per GPU (0 = none) */
    double flops_per_token; /* explicit convention: FLOP per token (0 = none)               */
} acc_measured;

/* One case, loaded and validated: plain data (callers read it; acc_case_load fills it). */
typedef struct acc_case {
    char file[1024];          /* the case file as found                                     */
    char name[128];           /* unique; the file name without .json                        */
    char source_id[128];      /* the folder name                                            */
    char source[1024];        /* where the measurement is published                        */
    char date[16];            /* YYYY or YYYY-MM                                           */
    char confidence[1024];
    char framework[16];       /* deepspeed | fsdp | fsdp2 | megatron | axonn | other        */
    char note[2048];          /* "" when none                                              */
    char cluster_ref[256];    /* as written: a shipped name or a path under the directory   */
    char calib_ref[256];      /* "calibration": a shipped calibration name, "" = the cluster's */
    char model_ref[256];      /* as written, or "inline:<name>" for an inline model object */
    char layout_str[128];     /* as written                                                 */
    char compare_group[128];  /* "" when none                                              */
    int nodes, gpus;          /* gpus = nodes x the cluster's GPUs per node                */
    spec_cluster cluster;
    spec_model model;         /* with the case's seq_len applied                           */
    spec_training training;   /* defaults, then the case's training object                 */
    int layout_ok;            /* layout_str is a layout shardcast accepts                  */
    spec_layout layout;       /* valid when layout_ok                                       */
    char unsupported[256];    /* what the case uses that shardcast does not model yet (a
                                 layout, fp8 training), "" when nothing: then it runs        */
    acc_measured measured;
    double params;            /* P as `shardcast describe` counts it                       */
    double flops_per_token;   /* the convention's FLOP per token (0 when no convention)    */
    double measured_tps;      /* measured tokens/s per GPU                                  */
    cost_calib cal;           /* calibrations/<cluster name>.json, else built-in defaults   */
    char calib_path[1024];    /* the calibration file used, "" for the defaults            */
    acc_ran ran;              /* what the source ran ("ran", accuracy_field.h); given = 0 when
                                 the case does not say                                       */
    acc_ran_applied ran_applied; /* what of ran went into training (accuracy_ran.h)           */
} acc_case;

/* Where names and relative paths resolve: `dir` is the validation directory (cluster and model
 * paths in a case are relative to it); roots are the config roots for shipped names
 * (spec_resolve: the name as a path, $SHARDCAST_CONFIGS, then each root). */
typedef struct acc_paths {
    const char *dir;
    const char *const *roots;
    int n_roots;
    const char *only_source; /* acc_load_dir: only this <source_id>/ folder (NULL = all)     */
} acc_paths;

/* Load one case: from text when text != NULL (file then only names it), else from the file.
 * name must equal the file's base name without .json and source_id the name of the folder it
 * is in. Errors (SC_EINPUT) name the file, the JSON path, what was expected and what was found.
 * A layout shardcast does not accept, or training precision "fp8", is not an error: the case
 * loads with `unsupported` saying what (and fp8 counts as bf16 for the rest of the checks). */
SC_MUST_CHECK int acc_case_load(const char *text, const char *file, const acc_paths *p, acc_case *out, sc_err *err);

/* FLOP per token of a convention for a model with P parameters (README formulas). */
double acc_flops_per_token(acc_flops conv, const spec_model *m, double params, double explicit_fpt);
/* A measured metric as tokens/s per GPU. seq_len in tokens, gpus the job's GPUs,
 * global_tokens the tokens of one optimizer step (step_s), fpt the FLOP per token
 * (tflops_per_gpu, mfu). */
double acc_tokens_per_s_per_gpu(const acc_measured *m, int seq_len, int gpus, double global_tokens, double fpt);

const char *acc_metric_name(acc_metric m);
const char *acc_flops_name(acc_flops f);

/* ---- running a case ------------------------------------------------------------------- */

typedef enum {
    ACC_OK,          /* predicted                                                          */
    ACC_OOM,         /* predicted not to fit in GPU memory (the measured run did)           */
    ACC_UNSUPPORTED, /* a layout or precision shardcast does not model yet                  */
    ACC_IMPOSSIBLE,  /* node count, layout or tensor split not possible on cluster / model  */
    ACC_ERROR        /* the engine failed or produced a non-finite number (a bug)           */
} acc_status;

typedef struct acc_outcome {
    int ran;                 /* 0 until the case was run with this engine                  */
    acc_status status;
    char why[256];           /* the reason when status != ACC_OK                           */
    double predicted_tps;    /* predicted tokens/s per GPU (ACC_OK only)                   */
    double error;            /* predicted / measured - 1 (ACC_OK only): > 0 too optimistic */
    double step_s;           /* predicted step time, s (ACC_OK and ACC_OOM)                */
    double mem_GiB;          /* predicted memory per GPU, GiB (ACC_OK and ACC_OOM)         */
} acc_outcome;

/* Predict one case with an engine. Never fails: a case that cannot run gets a status. */
void acc_run_case(const acc_case *c, pred_engine e, acc_outcome *out);

const char *acc_status_name(acc_status s);

/* ---- a suite: the cases of a directory ---------------------------------------------- */

typedef struct acc_suite acc_suite;

/* Every case under p->dir: each <source_id>/ folder's *.json, folders and files in name order;
 * the folders clusters/ and models/ hold specs, not cases. Names must be unique. An empty
 * directory gives an empty suite. With p->only_source, only that folder (which must exist). */
SC_MUST_CHECK int acc_load_dir(const acc_paths *p, acc_suite **out, sc_err *err);
void acc_suite_free(acc_suite *s);
int acc_n_cases(const acc_suite *s);
const acc_case *acc_case_at(const acc_suite *s, int i);
/* The same, to change (predict/accuracy_fit.c puts a fitted value into its calibration). */
acc_case *acc_case_mut(acc_suite *s, int i);

/* Run every case with engine e; progress (may be NULL) is called after each case. */
typedef void (*acc_progress_fn)(void *ctx, int done, int total, const acc_case *c);
void acc_run(acc_suite *s, pred_engine e, acc_progress_fn progress, void *ctx);
/* The outcome of case i with engine e (ran = 0 when not run). */
const acc_outcome *acc_outcome_at(const acc_suite *s, int i, pred_engine e);

/* ---- statistics (accuracy_stats.h) --------------------------------------------------- */

/* rows[i] for every case of s under engine e (rows has acc_n_cases(s) entries; the strings
 * point into s): the input of acc_summarize. */
void acc_suite_rows(const acc_suite *s, pred_engine e, acc_row *rows);

#endif

/* trainlog.h — the step time or throughput of a real training run as its tool printed it:
 * DeepSpeed (throughput timer: CurrSamplesPerSec= / SamplesPerSec=, or "samples/sec"),
 * Megatron-LM ("elapsed time per iteration (ms)"), torchtitan ("tps", "mfu"), Composer /
 * llm-foundry ("throughput/tokens_per_sec"), Hugging Face Trainer ("train_samples_per_second"),
 * nanotron ("tokens_per_sec_per_gpu"). One value per logged step; warm-up entries dropped; the
 * median of the rest with its spread.
 * Not here: the job's shape (cluster, model, layout: the caller's), turning a rate into a step
 * time (cli/calanchor.c, with the model's tokens per step). */
#ifndef SC_CAL_TRAINLOG_H
#define SC_CAL_TRAINLOG_H

#include "../base/err.h"

typedef enum {
    TL_STEP_S,              /* seconds per optimizer step                       */
    TL_SAMPLES_PER_S,       /* whole job, sequences per second                  */
    TL_TOKENS_PER_S,        /* whole job                                        */
    TL_TOKENS_PER_S_PER_GPU /* per GPU                                          */
} tl_metric;

typedef struct tl_result {
    char format[16];   /* deepspeed | megatron | torchtitan | composer | hf-trainer | nanotron */
    tl_metric metric;
    int n_found;       /* entries in the log                                      */
    int n_warmup;      /* the first ones dropped                                   */
    double median;     /* of the rest, in the metric's unit                        */
    double spread_rel; /* their sample sd / median (0 with one entry)              */
    double mfu;        /* torchtitan: median MFU of the same entries, fraction (0: none) */
} tl_result;

/* Read "FORMAT:FILE". warmup < 0: drop the first max(1, n/5) entries when there are 3 or more
 * (a run's first steps compile, allocate and fill caches), none otherwise; else that many.
 * SC_EINPUT naming the file (or --log) for an unknown format, no entries, or all dropped. */
int tl_read(const char *spec, int warmup, tl_result *out, sc_err *err) SC_MUST_CHECK;
/* The same from text (file names it in errors). */
int tl_parse(const char *format, const char *text, const char *file, int warmup, tl_result *out,
             sc_err *err) SC_MUST_CHECK;

const char *tl_metric_name(tl_metric m);

#endif

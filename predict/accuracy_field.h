/* accuracy_field.h — the accuracy suite read the way the field runs training (issue 27 item 11,
 * issue 30 item 4): what each case's source ran (the optional "ran" object of a case: stack,
 * framework version, attention kernel, reduce dtype, checkpointing), the bias per framework and
 * per stack macro-averaged over sources (each source one vote, so one large source cannot
 * dominate), the error by sequence length, and decision quality: for every compare group the
 * measured throughput of the fastest-predicted layout over the measured best ("pick/best").
 * Not here: the per-source statistics and the figures file (accuracy_stats.h), loading or running
 * cases (accuracy.h), printing (cli/). Works on plain rows, so tests can hand-make them. */
#ifndef SC_PRED_ACCURACY_FIELD_H
#define SC_PRED_ACCURACY_FIELD_H

#include <stddef.h>

#include "../base/err.h"
#include "../base/jsonrd.h"

/* The suite's two error statistics, one home for every caller: acc_mape, the mean of |e[i]|
 * (0 when n = 0); acc_median_sort, the median of v[0..n) by GSL, sorting v in place (NAN when
 * n <= 0). Fractions in, fractions out. */
double acc_mape(const double *e, int n);
double acc_median_sort(double *v, int n);


struct acc_row;

/* ---- what a case's source ran ("ran" object of a case, validation/README.md) -------------- */

typedef struct acc_ran {
    int given;                  /* 0 when the case has no "ran" object (then every field is "") */
    char stack[32];             /* ACC_STACKS: the software stack, e.g. "megatron-deepspeed"    */
    char framework_version[96]; /* as the source states it ("unstated" when it does not)        */
    char attention_kernel[24];  /* ACC_ATTENTION_KERNELS                                        */
    char reduce_dtype[16];      /* gradient reduction dtype: fp32 | bf16 | fp16 | unstated       */
    char checkpointing[16];     /* none | full | selective | op | partial | unstated             */
    char where[512];            /* optional: where the source states these ("" when not given)  */
} acc_ran;

extern const char *const ACC_STACKS[];            /* NULL-terminated */
extern const char *const ACC_ATTENTION_KERNELS[]; /* NULL-terminated */

/* Read the optional "ran" object of a case root (absent: out->given = 0). Errors name the file
 * and the JSON path ($.ran.attention_kernel), what was expected and what was found. */
SC_MUST_CHECK int acc_ran_load(jr *r, const json_t *root, acc_ran *out);

/* ---- bias per framework and per stack, macro-averaged over sources ------------------------ */

typedef enum { ACC_BY_FRAMEWORK, ACC_BY_STACK } acc_by;

typedef struct acc_macro {
    char key[32];          /* the framework or the stack ("unrecorded" for a case without "ran") */
    int n, n_not_run;      /* cases predicted; cases of the key without a prediction              */
    int n_sources;         /* sources with at least one predicted case of the key                 */
    double bias_macro_pct; /* mean over those sources of each one's median signed error x 100    */
    double mape_macro_pct; /* mean over those sources of each one's MAPE                          */
    double bias_pooled_pct;/* median signed error over all the key's cases x 100 (for contrast)  */
} acc_macro;

/* One entry per distinct key in order of first appearance; NAN figures when n = 0. 0, or
 * SC_ERUNTIME when out of memory. *out is malloc'd (free it). */
SC_MUST_CHECK int acc_macro_by(const struct acc_row *rows, int n, acc_by by, acc_macro **out, int *n_out, sc_err *err);

/* ---- error by sequence length ---------------------------------------------------------------- */

#define ACC_N_SEQ_BANDS 4
typedef struct acc_seqband {
    const char *label; /* "<= 2k", "(2k, 4k]", "(4k, 16k)", ">= 16k"                 */
    int lo, hi;        /* tokens: lo < seq_len <= hi (hi = 0: no upper bound; >= 16k: lo = 16383) */
    int n, n_sources;  /* cases predicted in the band; their sources                  */
    double median_pct, mape_pct; /* median signed error and MAPE x 100; NAN when n = 0 */
} acc_seqband;

SC_MUST_CHECK int acc_seq_bands(const struct acc_row *rows, int n, acc_seqband out[ACC_N_SEQ_BANDS], sc_err *err);

/* ---- decision quality: pick / best per compare group ---------------------------------------- */

typedef struct acc_decision {
    const char *group, *source_id; /* point into the rows                                      */
    int n, n_run;                  /* cases of the group; with a prediction                    */
    int pick, best;                /* row index of the fastest predicted and the fastest
                                      measured among the cases run (-1 when none)              */
    double pick_best;              /* measured[pick] / measured[best], 0..1; NAN when n_run < 2 */
} acc_decision;

typedef struct acc_pickbest {
    char source_id[128]; /* "" for overall                                                    */
    int groups;          /* groups judged (at least two layouts predicted)                    */
    double median, min;  /* of pick/best over them; NAN when groups = 0                       */
} acc_pickbest;

typedef struct acc_decisions {
    int n_groups;
    acc_decision *groups;  /* in order of first appearance                                   */
    acc_pickbest overall;
    int n_sources;
    acc_pickbest *sources; /* sources with a compare group, in order of first appearance     */
} acc_decisions;

/* Pick/best of every compare group of rows: among the group's cases with a prediction, the one
 * predicted fastest (tokens/s per GPU; the first on a tie) against the one measured fastest.
 * 0, or SC_ERUNTIME when out of memory. */
SC_MUST_CHECK int acc_decide(const struct acc_row *rows, int n, acc_decisions *out, sc_err *err);
void acc_decisions_free(acc_decisions *d);

/* ---- committed figures: the "decisions" of an engine in validation/figures.json ------------ */

/* {"overall": {"groups", "median", "min"}, "sources": {id: {...}}}; NULL when out of memory. */
json_t *acc_decisions_json(const acc_decisions *d);
/* Compare d with the committed object o at path `at` (absent o: nothing to compare): worse when
 * fewer groups are judged, or the median or the minimum of pick/best, overall or of a source,
 * fell by more than tol. Each finding is a line appended to report (as acc_figures_check). */
SC_MUST_CHECK int acc_decisions_check(jr *r, const json_t *o, const char *at, const acc_decisions *d, double tol,
                                      char *report, size_t report_len, int *worse);

/* Append one finding of a figures check to report (a line, cut at len; accuracy_stats.c uses it too) and count it in *worse. */
void acc_report_line(char *report, size_t len, int *worse, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif

/* accuracy_stats.h — the statistics of the published-accuracy suite over its results: per source
 * and overall n, MAPE, median bias, Spearman rank correlation and the layout order within compare
 * groups; and the committed figures (validation/figures.json): written, read back and compared.
 * Not here: case files, the suite or running it (accuracy.h, which includes this header);
 * printing or report files (cli/). Works on plain rows, so tests can hand-make them. */
#ifndef SC_PRED_ACCURACY_STATS_H
#define SC_PRED_ACCURACY_STATS_H

#include <stddef.h>

#include "../base/err.h"
#include "accuracy_field.h"
#include "eval.h"

/* ---- statistics ------------------------------------------------------------------------ */

/* One case as the statistics see it. */
typedef struct acc_row {
    const char *name, *source_id, *compare_group, *layout; /* compare_group "" = none */
    int ok;                                                  /* has a prediction        */
    double predicted, measured;                              /* tokens/s per GPU        */
    const char *framework, *stack; /* the case's framework and its "ran" stack (NULL or "" =
                                      unrecorded: accuracy_field.h)                          */
    int seq_len;                   /* tokens (0 = unknown)                                   */
} acc_row;

typedef struct acc_stats {
    char source_id[128];  /* "" for the overall line                                       */
    int n;                /* cases with a prediction                                        */
    int n_not_run;        /* cases without one (OOM, unsupported, impossible, error)        */
    double mape_pct;      /* mean |error| x 100; NAN when n = 0                             */
    double bias_pct;      /* median signed error x 100; NAN when n = 0                      */
    double spearman;      /* rank correlation of predicted vs measured within the source;
                             NAN when n < 3 or either side is constant (overall: NAN)      */
    int pairs, pairs_right; /* layout pairs judged, and in the right order                 */
} acc_stats;

typedef enum { ACC_PAIR_RIGHT, ACC_PAIR_WRONG, ACC_PAIR_TIE, ACC_PAIR_NOT_RUN } acc_pair_state;

/* Two cases of one compare group with different layouts. */
typedef struct acc_pair {
    int a, b;               /* row indices, a < b                                           */
    acc_pair_state state;   /* TIE: equal measured values (not judged); NOT_RUN: one lacks a
                               prediction (not judged)                                     */
    double measured_ratio;  /* measured a / measured b                                       */
    double predicted_ratio; /* predicted a / predicted b (NAN when not run)                 */
} acc_pair;

typedef struct acc_summary {
    acc_stats overall;
    int n_sources;
    acc_stats *sources;     /* in order of first appearance                                 */
    int n_pairs;
    acc_pair *pairs;        /* by group in order of first appearance, then a, b             */
    /* the field's view (accuracy_field.h): bias per framework and per stack, macro-averaged
       over sources; the error by sequence length; pick/best per compare group */
    int n_by_framework, n_by_stack;
    acc_macro *by_framework, *by_stack;
    acc_seqband seq_bands[ACC_N_SEQ_BANDS];
    acc_decisions decisions;
} acc_summary;

/* Statistics of rows (hand-made in tests, or acc_suite_rows in accuracy.h). 0, or SC_ERUNTIME when out of
 * memory or a value is not finite and positive. acc_summary_free releases the arrays. */
SC_MUST_CHECK int acc_summarize(const acc_row *rows, int n, acc_summary *out, sc_err *err);
void acc_summary_free(acc_summary *s);

/* ---- committed figures (validation/figures.json, schema shardcast-figures/1) ------------ */

/* A JSON text of the figures of the engines given (summaries[i] for engines[i]): per engine
 * the overall and per-source n, MAPE and bias. Returns a malloc'd string or NULL (no memory). */
char *acc_figures_dump(const pred_engine *engines, const acc_summary *const *summaries, int n_engines);

/* Compare s (engine e) with the figures in path: worse when the overall MAPE or a source's
 * MAPE exceeds the committed one by more than tol_pts percentage points, or when fewer cases
 * of a source (or overall) run than committed, or a committed source has none now. Each
 * finding is one line appended to report (NUL-terminated, truncated to report_len); *worse
 * counts them. The engine's "decisions" (pick/best, accuracy_field.h), when committed, are
 * checked as well: fewer groups judged, or a median or minimum lower by more than 0.005. Returns 0, or SC_EINPUT when the file cannot be read or is not in the schema,
 * or lacks the engine. */
SC_MUST_CHECK int acc_figures_check(const char *path, pred_engine e, const acc_summary *s, double tol_pts, char *report,
                      size_t report_len, int *worse, sc_err *err);

#endif

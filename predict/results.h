/* results.h — the result rows of a study as CSV: one column table (name, kind, format) that both
 * writes the sweep CSV (res_csv_header, res_csv_row) and reads it back (res_csv_load, for plot),
 * so the two can never disagree about a column. Not here: which points a sweep runs (cli/sweep),
 * how rows become plots (cli/plot). */
#ifndef SC_PRED_RESULTS_H
#define SC_PRED_RESULTS_H

#include <stdio.h>

#include "eval.h"

/* Every column, in CSV order. */
typedef enum {
    RES_CLUSTER, RES_MODEL, RES_ENGINE, RES_NODES, RES_GPUS, RES_LAYOUT, RES_MB, RES_ACCUM, RES_GLOBAL, RES_FITS,
    RES_STEP, RES_SPS, RES_TOKENS, RES_TFLOPS, RES_HW_TFLOPS, RES_MFU, RES_EFF, RES_COMPUTE, RES_AG, RES_RS,
    RES_AR, RES_OPT, RES_IDLE, RES_COMM, RES_MEM, RES_SHORT, RES_HBM,
    RES_N_COLS
} res_col;
#define RES_BIT(c) (1u << (c))

/* The text columns' slots in a row (every other column is a number). */
enum { RES_T_CLUSTER, RES_T_MODEL, RES_T_ENGINE, RES_T_LAYOUT, RES_N_TEXT };

/* Column c's header name ("samples_per_s"); its text slot, or -1 for a number. */
const char *res_col_name(res_col c);
int res_text_slot(res_col c);

/* ---- writing ---- */

/* One point as a row: the names of its cluster and model, the front door's result, and the
 * per-GPU throughput relative to the smallest node count (NAN: none, written empty). */
typedef struct res_point {
    const char *cluster, *model;
    const pred_result *p;
    double weak_eff;
} res_point;

/* A text field per RFC 4180: quoted when it holds a comma, a quote, CR or LF, quotes doubled;
 * always quoted when `always`. No separator. Other CSV writers use it too (accuracy -o). */
void res_csv_text(FILE *f, const char *s, int always);
void res_csv_header(FILE *f);
/* One row and its '\n'. Text per RFC 4180 (quoted when it holds a comma, a quote, CR or LF; the
 * layout always quoted). */
void res_csv_row(FILE *f, const res_point *pt);

/* ---- reading ---- */

typedef struct res_row {
    int line;                    /* 1-based line in the file                 */
    char text[RES_N_TEXT][96];   /* cluster, model, engine, layout           */
    double v[RES_N_COLS];        /* numeric columns in their CSV units       */
} res_row;

typedef struct res_table {
    const char *path;
    res_row *rows;
    int n;
    int has[RES_N_COLS];    /* column read (present in the header, and needed or optional) */
    int varies[RES_N_COLS]; /* text or number differs between rows                         */
} res_table;

/* Load a sweep CSV: the columns in `need` (a RES_BIT mask; each required) and those in
 * `optional` when present. Rows with a non-empty "error" column are skipped; weak_scaling_eff
 * may be empty (NAN). Errors name the file, the line and the column. */
int res_csv_load(const char *path, unsigned need, unsigned optional, res_table *t, sc_err *err) SC_MUST_CHECK;
void res_table_free(res_table *t);

#endif

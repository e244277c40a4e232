/* accuracy_int.h — private to `shardcast accuracy`, shared by its two files: cli/accuracy.c (the
 * options, the command, text and JSON printing and the helpers both print with) and
 * cli/accuracy_report.c (the report writers: CSV, plot data, Markdown, figures, and --check) and
 * cli/accuracy_field.c (bias per framework and stack, by sequence length, pick/best).
 * Nothing else includes it; the suite and its statistics are predict/accuracy.h. */
#ifndef SC_CLI_ACCURACY_INT_H
#define SC_CLI_ACCURACY_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "../predict/accuracy.h"
#include "../predict/accuracy_fit.h"
#include "../predict/accuracy_floor.h"

typedef struct cli_acc_opts {
    const char *dir, *csv, *check, *figures, *markdown, *plot_data, *source;
    int json, progress, engines[PRED_N_ENGINES]; /* engines[e]: run engine e */
    int anchored;                                /* --anchored (cli/accuracy_anchor.c) */
    const char *floor;                           /* --floor (cli/accuracy_floor.c)     */
    const char *fit_host, *fitted;               /* --fit-host, --fitted (cli/accuracy_fit.c) */
} cli_acc_opts;

typedef struct cli_acc_run {
    const cli_acc_opts *o;
    acc_suite *s;
    int n;
    pred_engine eng[PRED_N_ENGINES];
    int n_eng;
    acc_summary sum[PRED_N_ENGINES]; /* by index into eng[] */
    acc_row *rows[PRED_N_ENGINES];
    char dir[4096];
    int have_fit;                    /* fit holds the table the cases were predicted with */
    acc_fit_table fit;
    char fit_path[4096];
    char fit_shown[256];             /* fit_path as the report names it (configs/... when shipped) */
} cli_acc_run;

/* ---- printing helpers (cli/accuracy.c) ------------------------------------------------------ */

/* "simulator" or "analytical model". */
const char *cli_acc_engine_long(pred_engine e);
/* "-" for an undefined number, else v with `dec` decimals ("%+.1f" when sign). */
const char *cli_acc_fmt_num(char *buf, size_t n, int sign, int dec, double v);
/* The status column of case i: "ok", or the reason; per engine when they differ. */
void cli_acc_status_text(const cli_acc_run *r, int i, char *buf, size_t n);
/* "right", "WRONG", "tie" or "not run". */
const char *cli_acc_pair_word(acc_pair_state s);
/* A markdown table's two header lines: lead (e.g. "| source | groups |"), then for each engine of r
 * "<engine> a | <engine> b |"; align (e.g. "|---|---:|"), then "---:|---:|" per engine. */
void cli_acc_md_engine_head(FILE *f, const cli_acc_run *r, const char *lead, const char *align, const char *a,
                            const char *b);
/* The clusters predicted with built-in default calibrations, as "a, b (k cases)" into buf; 0
 * when none. */
int cli_acc_default_calibs(const cli_acc_run *r, char *buf, size_t n);
/* Text on stdout: per "ran" key how many cases had it written into training, agreed, kept the
 * training object's own value, or named what the engine lacks (with those names). */
void cli_acc_print_ran(const cli_acc_run *r);
/* {key: {"fate", "value"}} of one case's ran mapping (keys with fate none left out). */
json_t *cli_acc_ran_json(const acc_ran_applied *a);
/* The same counts as a markdown section (docs/ACCURACY.md). */
void cli_acc_markdown_ran(const cli_acc_run *r, FILE *f);

/* ---- the field's view (cli/accuracy_field.c) ------------------------------------------------ */

/* Text on stdout: per engine the bias by framework and by stack (macro over sources) and by
 * sequence length; then pick/best per compare group and per source. */
void cli_acc_print_field(const cli_acc_run *r);
/* The same as Markdown sections into f (docs/ACCURACY.md). */
void cli_acc_markdown_field(const cli_acc_run *r, FILE *f);
/* The same for engine index k as a JSON object (NULL when out of memory). */
json_t *cli_acc_field_json(const cli_acc_run *r, int k);

/* ---- the torch.compile gain (cli/accuracy_compile.c) ------------------------------------------ */

/* Text on stdout / a Markdown section: every eager / compiled pair of one source, measured and
 * predicted gain per engine, the difference in points. */
void cli_acc_print_compile(const cli_acc_run *r);
void cli_acc_markdown_compile(const cli_acc_run *r, FILE *f);
/* --check's guard: each pair predicted more than ACC_COMPILE_TOL_PTS off, one line on stderr
 * naming path; the count. */
int cli_acc_check_compile(const cli_acc_run *r, const char *path);

/* ---- report files (cli/accuracy_report.c): each whole or absent (base/atomic) -------------- */

/* -o: every case and engine as CSV (RFC 4180). */
SC_MUST_CHECK int cli_acc_write_csv(const cli_acc_run *r, const char *path, sc_err *err);
/* --plot-data: one block per source, "measured predicted" (the model engine when it ran). */
SC_MUST_CHECK int cli_acc_write_plot_data(const cli_acc_run *r, const char *path, sc_err *err);
/* --markdown: the report (docs/ACCURACY.md). */
SC_MUST_CHECK int cli_acc_write_markdown(const cli_acc_run *r, const char *path, sc_err *err);
/* --write-figures: the committed figures (validation/figures.json). */
SC_MUST_CHECK int cli_acc_write_figures(const cli_acc_run *r, const char *path, sc_err *err);
/* --check: compare with the committed figures; the findings on stderr. 0 ok, 1 worse, or the
 * exit status of bad input (already reported). */
SC_MUST_CHECK int cli_acc_check_figures(const cli_acc_run *r, const char *path);

/* --anchored: the anchored figures instead of the shipped ones (cli/accuracy_anchor.c): text or
 * --json, --markdown (its section of the file), --write-figures, --check. Returns the exit status. */
int cli_acc_anchored(const cli_acc_run *r);

/* ---- fitted host costs (cli/accuracy_fit.c) ------------------------------------------------ */

/* --fitted FILE (default: configs/fitted/framework-host.json under a config root, if there; "none":
 * no table): load it and put each case's held-out value into its calibration. The exit status
 * of bad input, else 0. */
int cli_acc_fitted_load(cli_acc_run *r, const char *const *roots, int n_roots);
/* --fit-host FILE: fit, print, write FILE. The exit status. */
int cli_acc_fit_host(cli_acc_run *r);
/* The report's section "Fitted values (leave-one-source-out)". */
void cli_acc_markdown_fit(const cli_acc_run *r, FILE *f);

/* --floor FILE (cli/accuracy_floor.c): load it before the run (exit 2 on bad input) ... */
int cli_acc_floor_load(const char *path, acc_floor *f);
/* ... and check every engine's decisions after it: 0 ok, 1 a breach (each said on stderr). */
int cli_acc_check_floor(const cli_acc_run *r, const char *path, const acc_floor *f);

#endif

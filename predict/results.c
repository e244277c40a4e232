/* results.c — the sweep CSV written and read from one column table (see results.h). */
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "../base/str.h"

enum { F_TEXT, F_INT, F_G9, F_G6 };

/* name, text slot (-1: a number), how a number is printed */
static const struct {
    const char *name;
    int text_slot;
    int fmt; /* F_INT: %.0f, F_G9: %.9g, F_G6: %.6g */
} COLS[RES_N_COLS] = {
    [RES_CLUSTER] = {"cluster", RES_T_CLUSTER, F_TEXT},
    [RES_MODEL] = {"model", RES_T_MODEL, F_TEXT},
    [RES_ENGINE] = {"engine", RES_T_ENGINE, F_TEXT},
    [RES_NODES] = {"nodes", -1, F_INT},
    [RES_GPUS] = {"gpus", -1, F_INT},
    [RES_LAYOUT] = {"layout", RES_T_LAYOUT, F_TEXT},
    [RES_MB] = {"micro_batch", -1, F_INT},
    [RES_ACCUM] = {"grad_accum", -1, F_INT},
    [RES_GLOBAL] = {"global_batch", -1, F_INT},
    [RES_FITS] = {"fits", -1, F_INT},
    [RES_STEP] = {"step_s", -1, F_G9},
    [RES_SPS] = {"samples_per_s", -1, F_G9},
    [RES_TOKENS] = {"tokens_per_s", -1, F_G9},
    [RES_TFLOPS] = {"model_tflops_per_gpu", -1, F_G9},
    [RES_HW_TFLOPS] = {"hw_tflops_per_gpu", -1, F_G9},
    [RES_MFU] = {"mfu", -1, F_G9},
    [RES_EFF] = {"weak_scaling_eff", -1, F_G9}, /* empty where there is no baseline */
    [RES_COMPUTE] = {"compute_s", -1, F_G9},
    [RES_AG] = {"exposed_allgather_s", -1, F_G9},
    [RES_RS] = {"exposed_reducescatter_s", -1, F_G9},
    [RES_AR] = {"exposed_allreduce_s", -1, F_G9},
    [RES_OPT] = {"optimizer_s", -1, F_G9},
    [RES_IDLE] = {"idle_s", -1, F_G9},
    [RES_COMM] = {"comm_GB_per_rank", -1, F_G6},
    [RES_MEM] = {"mem_total_GiB", -1, F_G6},
    [RES_SHORT] = {"mem_short_GiB", -1, F_G6},
    [RES_HBM] = {"hbm_GiB", -1, F_G6},
};

const char *res_col_name(res_col c) { return c < RES_N_COLS ? COLS[c].name : ""; }

int res_text_slot(res_col c) { return c < RES_N_COLS ? COLS[c].text_slot : -1; }

/* ---- writing ---------------------------------------------------------------------------- */

void res_csv_header(FILE *f)
{
    for (int c = 0; c < RES_N_COLS; c++)
        fprintf(f, "%s%s", c ? "," : "", COLS[c].name);
    fputc('\n', f);
}

/* A text field per RFC 4180: quoted when it holds a comma, a quote, CR or LF (names may: "gpt,x"),
 * quotes doubled; always quoted when `always` (the layout column). */
void res_csv_text(FILE *f, const char *s, int always)
{
    if (!always && !strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void res_csv_row(FILE *f, const res_point *pt)
{
    const pred_result *p = pt->p;
    const an_result *r = &p->r;
    char lay[64];
    spec_layout_str(&p->layout, lay, sizeof lay);
    const char *text[RES_N_TEXT] = {pt->cluster, pt->model, pred_engine_name(p->engine), lay};
    double v[RES_N_COLS] = {
        [RES_NODES] = p->nodes, [RES_GPUS] = p->gpus, [RES_MB] = p->training.micro_batch,
        [RES_ACCUM] = p->training.grad_accum, [RES_GLOBAL] = r->samples_per_step, [RES_FITS] = r->mem.fits,
        [RES_STEP] = r->step_s, [RES_SPS] = r->samples_per_s, [RES_TOKENS] = r->tokens_per_s,
        [RES_TFLOPS] = r->model_tflops_per_gpu, [RES_HW_TFLOPS] = r->hw_tflops_per_gpu, [RES_MFU] = r->mfu,
        [RES_EFF] = pt->weak_eff, [RES_COMPUTE] = r->compute_s, [RES_AG] = r->exposed_s[COLL_ALLGATHER],
        [RES_RS] = r->exposed_s[COLL_REDUCESCATTER], [RES_AR] = r->exposed_s[COLL_ALLREDUCE],
        [RES_OPT] = r->optimizer_s, [RES_IDLE] = r->idle_s, [RES_COMM] = r->comm_bytes / 1e9,
        [RES_MEM] = r->mem.total / 1073741824.0, [RES_SHORT] = r->mem.short_by / 1073741824.0,
        [RES_HBM] = r->mem.hbm / 1073741824.0,
    };
    for (int c = 0; c < RES_N_COLS; c++) {
        if (c)
            fputc(',', f);
        if (COLS[c].text_slot >= 0)
            res_csv_text(f, text[COLS[c].text_slot], c == RES_LAYOUT);
        else if (!(c == RES_EFF && !isfinite(v[c])))
            fprintf(f, COLS[c].fmt == F_INT ? "%.0f" : COLS[c].fmt == F_G9 ? "%.9g" : "%.6g", v[c]);
    }
    fputc('\n', f);
}

/* ---- reading ---------------------------------------------------------------------------- */

void res_table_free(res_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

/* Split one CSV line in place (RFC 4180 quotes, "" inside quotes); returns the field count, -1 on
 * a bad quote, -2 on more than max fields. */
static int csv_split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return -2;
        char *start = p, *w = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0')
                    return -1;
                if (*p == '"') {
                    if (p[1] == '"') {
                        *w++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            if (*p != ',' && *p != '\0')
                return -1;
        } else {
            while (*p && *p != ',')
                *w++ = *p++;
        }
        char end = *p;
        *w = '\0';
        f[n++] = start;
        if (end == '\0')
            return n;
        p++;
    }
}

/* One numeric field: the rules of its column. */
static int parse_field(const res_table *t, int line, int c, const char *s, double *out, sc_err *err)
{
    char where[128];
    snprintf(where, sizeof where, "line %d, column %s", line, COLS[c].name);
    if (!*s) {
        if (c == RES_EFF) { /* sweep leaves it empty where there is no baseline */
            *out = NAN;
            return 0;
        }
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected a number, found an empty field");
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected a number, got \"%.60s\"", s);
    if ((c == RES_GPUS || c == RES_MB) && (v < 1 || v > 1e7 || v != floor(v)))
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected a positive integer, got \"%.60s\"", s);
    if (c == RES_FITS && v != 0 && v != 1)
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected 0 or 1, got \"%.60s\"", s);
    if (v < 0)
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected a non-negative number, got \"%.60s\"", s);
    *out = v;
    return 0;
}

#define CSV_MAX_FIELDS 256

/* Where a CSV is read: each column's field index (-1: absent), the header's field count (0:
 * before it), the rows' capacity, the line, sweep's "error" column (-1: none). */
typedef struct csv_read {
    int idx[RES_N_COLS], n_header, cap, lineno, err_col;
} csv_read;

/* The header's nf fields: each name once, the needed columns present, t->has set. */
static int csv_header(csv_read *cr, char **f, int nf, unsigned need, unsigned optional, res_table *t, const char *where,
                      sc_err *err)
{
    cr->n_header = nf;
    for (int i = 0; i < nf; i++) /* a name twice: which one is meant is not ours to guess */
        for (int j = 0; j < i; j++)
            if (!strcmp(str_trim(f[i]), str_trim(f[j])))
                return sc_err_set(err, SC_EINPUT, t->path, where, "expected each column once in the header, found \"%s\" in "
                                  "columns %d and %d", str_trim(f[i]), j + 1, i + 1);
    for (int i = 0; i < nf; i++) {
        const char *name = str_trim(f[i]);
        if (!strcmp(name, "error"))
            cr->err_col = i;
        for (int c = 0; c < RES_N_COLS; c++)
            if (cr->idx[c] < 0 && !strcmp(name, COLS[c].name))
                cr->idx[c] = i;
    }
    for (int c = 0; c < RES_N_COLS; c++) {
        if ((need & RES_BIT(c)) && cr->idx[c] < 0)
            return sc_err_set(err, SC_EINPUT, t->path, where,
                              "expected a column \"%s\" in the header (a CSV from 'shardcast sweep'), found none",
                              COLS[c].name);
        t->has[c] = cr->idx[c] >= 0 && ((need | optional) & RES_BIT(c));
    }
    return 0;
}

/* A data line's fields appended to t as a row (its text and numeric columns checked). */
static int csv_row(csv_read *cr, char **f, res_table *t, sc_err *err)
{
    if (t->n == cr->cap) {
        cr->cap = cr->cap ? cr->cap * 2 : 64;
        res_row *nr = realloc(t->rows, sizeof(res_row) * (size_t)cr->cap);
        if (!nr)
            return sc_err_set(err, SC_ERUNTIME, t->path, "", "out of memory");
        t->rows = nr;
    }
    res_row *r = &t->rows[t->n];
    memset(r, 0, sizeof *r);
    r->line = cr->lineno;
    r->v[RES_FITS] = 1;
    for (int c = 0; c < RES_N_COLS; c++) {
        if (!t->has[c])
            continue;
        char *s = str_trim(f[cr->idx[c]]);
        int slot = COLS[c].text_slot, rc;
        if (slot >= 0) {
            if (strlen(s) >= sizeof r->text[slot]) {
                char where[64];
                snprintf(where, sizeof where, "line %d, column %s", cr->lineno, COLS[c].name);
                return sc_err_set(err, SC_EINPUT, t->path, where, "expected at most %d characters",
                                  (int)sizeof r->text[slot] - 1);
            }
            snprintf(r->text[slot], sizeof r->text[slot], "%s", s);
        } else if ((rc = parse_field(t, cr->lineno, c, s, &r->v[c], err))) {
            return rc;
        }
    }
    t->n++;
    return 0;
}

/* One non-blank line: the header first (JSON refused), then rows as wide as it; a row sweep marked
 * in its error column is skipped. */
static int csv_line(csv_read *cr, char *line, unsigned need, unsigned optional, res_table *t, sc_err *err)
{
    char *f[CSV_MAX_FIELDS];
    char where[64];
    snprintf(where, sizeof where, "line %d", cr->lineno);
    if (!cr->n_header && (line[0] == '{' || line[0] == '['))
        return sc_err_set(err, SC_EINPUT, t->path, where,
                          "expected a CSV header (from 'shardcast sweep'), found JSON (a trace? use --kind timeline)");
    int nf = csv_split(line, f, CSV_MAX_FIELDS);
    if (nf == -1)
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected a closing quote before the next comma or the end of the line");
    if (nf == -2)
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected at most %d columns", CSV_MAX_FIELDS);
    if (!cr->n_header) /* the header */
        return csv_header(cr, f, nf, need, optional, t, where, err);
    if (nf != cr->n_header)
        return sc_err_set(err, SC_EINPUT, t->path, where, "expected %d fields as in the header, found %d", cr->n_header, nf);
    if (cr->err_col >= 0 && *str_trim(f[cr->err_col])) /* a point sweep could not predict: not drawn */
        return 0;
    return csv_row(cr, f, t, err);
}

int res_csv_load(const char *path, unsigned need, unsigned optional, res_table *t, sc_err *err)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    char *buf = NULL;
    size_t len;
    int rc = jr_slurp(path, (size_t)1 << 30, &buf, &len, err) /* at most 1 GiB; no devices */;
    if (rc)
        return rc;
    csv_read cr = {.n_header = 0, .cap = 0, .lineno = 0, .err_col = -1}; /* sweep marks invalid points in "error" */
    for (int c = 0; c < RES_N_COLS; c++)
        cr.idx[c] = -1;
    char *p = buf;
    if (!strncmp(p, "\xEF\xBB\xBF", 3)) /* UTF-8 byte-order mark */
        p += 3;
    while (*p) {
        char *line = p, *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p);
        }
        cr.lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        if (!*str_trim(line))
            continue;
        if ((rc = csv_line(&cr, line, need, optional, t, err)))
            goto fail;
    }
    if (!cr.n_header) {
        rc = sc_err_set(err, SC_EINPUT, path, "", "expected a CSV header line (from 'shardcast sweep'), found an empty file");
        goto fail;
    }
    if (!t->n) {
        rc = sc_err_set(err, SC_EINPUT, path, "", "expected at least one data row after the header, found none");
        goto fail;
    }
    for (int i = 1; i < t->n; i++)
        for (int c = 0; c < RES_N_COLS; c++)
            if (COLS[c].text_slot >= 0 ? strcmp(t->rows[i].text[COLS[c].text_slot], t->rows[0].text[COLS[c].text_slot]) != 0
                           : !(t->rows[i].v[c] == t->rows[0].v[c] || (isnan(t->rows[i].v[c]) && isnan(t->rows[0].v[c]))))
                t->varies[c] = 1;
    free(buf);
    return 0;
fail:
    free(buf);
    res_table_free(t);
    return rc;
}


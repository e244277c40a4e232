/* accuracy_anchor.c — `shardcast accuracy --anchored`: the anchored figures (predict/
 * accuracy_anchor.h) as text or --json, their section of docs/ACCURACY.md (--markdown: the part
 * between the anchored markers, replaced or appended), their committed figures (--write-figures)
 * and the guard (--check). Not here: the shipped-calibration report (cli/accuracy*.c). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/jsonrd.h"
#include "../predict/accuracy_anchor.h"
#include "accuracy_int.h"
#include "common.h"

#define MARK_BEGIN "<!-- accuracy --anchored: begin (make accuracy-report writes this part) -->"
#define MARK_END "<!-- accuracy --anchored: end -->"
/* --check: a MAPE worse than the committed one by more than this many points fails (as the
 * shipped figures' guard, cli/accuracy_report.c) */
#define CHECK_SLACK_PTS 0.5

static void print_text(const acc_anchor_sum *a)
{
    printf("anchored accuracy: per source, document, cluster, framework and offload (host optimizer or not) with >= 3 runs,\n"
           "the stack anchored on the run of median GPU count (calibrate anchor: one parameter, the compute level\n"
           "first), the others predicted (analytical model); err = predicted / measured tokens/s per GPU - 1\n\n");
    printf("%-28s %7s %5s %10s %8s %13s  %s\n", "source", "groups", "n", "MAPE %", "bias %", "shipped MAPE %",
           "anchors");
    for (int i = 0; i <= a->n_src; i++) {
        const acc_anchor_src *s = i < a->n_src ? &a->src[i] : NULL;
        if (s)
            printf("%-28s %7d %5d %10.1f %+8.1f %13.1f  %s\n", s->source_id, s->groups, s->n, 100 * s->mape,
                   100 * s->bias, 100 * s->shipped_mape, s->anchors);
        else
            printf("%-28s %7s %5d %10.1f %+8.1f %13.1f\n", "overall", "", a->n, 100 * a->mape, 100 * a->bias,
                   100 * a->shipped_mape);
    }
}

/* The figures; with runs, every held-out run too (--json; the figures file keeps the summary). */
static json_t *to_json(const acc_anchor_sum *a, int runs)
{
    json_t *src = json_array();
    for (int i = 0; i < a->n_src && src; i++) {
        const acc_anchor_src *s = &a->src[i];
        json_array_append_new(src, json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:s}", "source_id", s->source_id,
                                             "groups", s->groups, "n", s->n, "mape_pct", 100 * s->mape, "bias_pct",
                                             100 * s->bias, "shipped_mape_pct", 100 * s->shipped_mape, "anchors",
                                             s->anchors));
    }
    json_t *root = json_pack("{s:s, s:o, s:{s:i, s:f, s:f, s:f}}", "schema", "shardcast-anchored-figures/1", "sources",
                             src, "overall", "n", a->n, "mape_pct", 100 * a->mape, "bias_pct", 100 * a->bias,
                             "shipped_mape_pct", 100 * a->shipped_mape);
    json_t *held = runs && root ? json_array() : NULL;
    for (int i = 0; held && i < a->n_held; i++) {
        const acc_anchor_held *h = &a->held[i];
        json_array_append_new(held, json_pack("{s:s, s:s, s:s, s:f, s:f}", "name", h->name, "source_id",
                                              a->src[h->src].source_id, "anchor", h->anchor, "error_pct",
                                              100 * h->error, "shipped_error_pct", 100 * h->shipped));
    }
    if (held)
        json_object_set_new(root, "runs", held);
    return root;
}

/* The Markdown section (between the markers); notes (may be NULL): DIR/anchored-notes.md, the
 * hand-written word on what each source's anchored error leaves (kept across regenerations). */
static char *section(const acc_anchor_sum *a, const char *notes)
{
    size_t cap = 8192 + (size_t)a->n_src * 512 + (notes ? strlen(notes) : 0), l = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
#define ADD(...) l += (size_t)snprintf(b + l, cap - l, __VA_ARGS__)
    ADD("%s\n## Anchored on one run per source (`shardcast accuracy --anchored`)\n\n", MARK_BEGIN);
    ADD("What a user who measured one run of their own job can expect: for every source with at least three\n"
        "runs on one cluster and framework published in one document (the case's `source` up to its first\n"
        "space or comma: one measurement campaign, one stack release; offloaded runs, whose optimizer step\n"
        "runs on the host, apart from GPU-only ones), `calibrate anchor` fits one stack parameter to the run of median\n"
        "GPU count: the compute-kernel efficiency (bounded to keep every kernel at or below its datasheet\n"
        "peak), or where that is held at its bound the next one (network efficiency, then the framework's\n"
        "per-hook overhead); the other runs are predicted with it (analytical model). Held-out runs only:\n"
        "the anchor is not counted. These runs are the validation set: each source's anchor is one of its\n"
        "own runs, never used for another source or a shipped value. `shipped MAPE` is the shipped\n"
        "calibration on the same runs.\n\n");
    ADD("| source | groups | runs predicted | MAPE %% | bias %% | shipped MAPE %% | anchored on |\n"
        "|---|---:|---:|---:|---:|---:|---|\n");
    for (int i = 0; i < a->n_src; i++) {
        const acc_anchor_src *s = &a->src[i];
        ADD("| %s | %d | %d | %.1f | %+.1f | %.1f | %s |\n", s->source_id, s->groups, s->n, 100 * s->mape,
            100 * s->bias, 100 * s->shipped_mape, s->anchors);
    }
    ADD("| **overall** | | %d | **%.1f** | %+.1f | %.1f | |\n\n", a->n, 100 * a->mape, 100 * a->bias,
        100 * a->shipped_mape);
    ADD("Bias is the median signed error (+: too optimistic). `make check` guards these figures\n"
        "(`validation/figures-anchored.json`) as it guards the shipped ones.\n");
    if (notes && notes[0])
        ADD("\n%s%s", notes, notes[strlen(notes) - 1] == '\n' ? "" : "\n");
    ADD("%s\n", MARK_END);
#undef ADD
    return b;
}

/* docs/ACCURACY.md with its anchored section replaced (or appended when it has none); DIR's
 * anchored-notes.md, when there is one, closes the section. */
static int write_markdown(const acc_anchor_sum *a, const char *dir, const char *path, sc_err *err)
{
    char *old = NULL, *notes = NULL, npath[4200];
    size_t len = 0, nlen = 0;
    snprintf(npath, sizeof npath, "%s/anchored-notes.md", dir);
    FILE *nf = fopen(npath, "rb");
    if (nf) {
        fclose(nf);
        int rc = jr_slurp(npath, JR_MAX_FILE, &notes, &nlen, err);
        if (rc)
            return rc;
    }
    char *sec = section(a, notes);
    free(notes);
    if (!sec)
        return sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        int rc = jr_slurp(path, JR_MAX_FILE, &old, &len, err);
        if (rc) {
            free(sec);
            return rc;
        }
    }
    const char *b = old ? strstr(old, MARK_BEGIN) : NULL, *e = b ? strstr(b, MARK_END) : NULL;
    size_t pre = old ? (b ? (size_t)(b - old) : len) : 0;
    const char *post = e ? e + strlen(MARK_END) : "";
    if (post[0] == '\n')
        post++;
    size_t n = pre + strlen(sec) + strlen(post) + 2;
    char *out = malloc(n);
    int rc;
    if (!out) {
        rc = sc_err_set(err, SC_ERUNTIME, path, "", "out of memory");
    } else {
        int sep = pre && old[pre - 1] != '\n';
        int k = snprintf(out, n, "%.*s%s%s%s", (int)pre, old ? old : "", sep ? "\n" : "", sec, post);
        rc = cli_write_atomic(path, out, (size_t)k, err);
    }
    free(out), free(old), free(sec);
    return rc;
}

/* --check: the committed figures against this run. */
static int check(const acc_anchor_sum *a, const char *path)
{
    sc_err err;
    jr r = {path, &err};
    json_t *root;
    int rc = jr_load_root(&r, NULL, &root);
    if (rc)
        return cli_fail(&err, rc);
    json_t *ov = json_object_get(root, "overall"), *src = json_object_get(root, "sources");
    if (!json_is_object(ov) || !json_is_array(src)) {
        json_decref(root);
        sc_err_set(&err, SC_EINPUT, path, "$", "expected shardcast-anchored-figures/1 (overall, sources)");
        return cli_fail(&err, SC_EINPUT);
    }
    int bad = 0;
    double m0 = json_number_value(json_object_get(ov, "mape_pct"));
    int n0 = (int)json_integer_value(json_object_get(ov, "n"));
    if (a->n < n0 || 100 * a->mape > m0 + CHECK_SLACK_PTS) {
        fprintf(stderr, "shardcast accuracy --anchored: overall: %d runs, MAPE %.1f %% (committed: %d, %.1f %%)\n",
                a->n, 100 * a->mape, n0, m0);
        bad = 1;
    }
    size_t i;
    json_t *x;
    json_array_foreach(src, i, x) {
        const char *id = json_string_value(json_object_get(x, "source_id"));
        double m = json_number_value(json_object_get(x, "mape_pct"));
        const acc_anchor_src *s = NULL;
        for (int q = 0; q < a->n_src && id; q++)
            if (!strcmp(a->src[q].source_id, id))
                s = &a->src[q];
        if (!s || 100 * s->mape > m + CHECK_SLACK_PTS) {
            fprintf(stderr, "shardcast accuracy --anchored: %s: %s (committed MAPE %.1f %%)\n", id ? id : "?",
                    s ? "MAPE worse" : "no longer anchored", m);
            bad = 1;
        }
    }
    json_decref(root);
    return bad;
}

int cli_acc_anchored(const cli_acc_run *r)
{
    sc_err err;
    acc_anchor_sum *a = malloc(sizeof *a);
    if (!a) {
        sc_err_set(&err, SC_ERUNTIME, "accuracy", "", "out of memory");
        return cli_fail(&err, SC_ERUNTIME);
    }
    int rc = acc_anchored(r->s, a, &err), status = rc ? cli_fail(&err, rc) : 0;
    if (!status) {
        if (r->o->json)
            status = cli_print_json(to_json(a, 1));
        else
            print_text(a);
    }
    if (!status && r->o->markdown && (rc = write_markdown(a, r->dir, r->o->markdown, &err)))
        status = cli_fail(&err, rc);
    if (!status && r->o->figures) {
        json_t *fig = to_json(a, 0);
        char *t = fig ? json_dumps(fig, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) : NULL;
        json_decref(fig);
        if (!t || (rc = cli_write_atomic(r->o->figures, t, strlen(t), &err)))
            status = cli_fail(&err, t ? rc : sc_err_set(&err, SC_ERUNTIME, r->o->figures, "", "out of memory"));
        free(t);
    }
    if (!status && r->o->check)
        status = check(a, r->o->check);
    free(a);
    return status;
}

/* accuracy_floor.c — the decision-quality floor file and its check (accuracy_floor.h). Not
 * here: pick/best itself (accuracy_field.c), the committed figures (accuracy_stats.c). */
#include "accuracy_floor.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/jsonrd.h"

/* A fraction in (0, 1] at $.key. */
static int read_frac(jr *r, const json_t *root, const char *key, double *out)
{
    int rc = jr_pos(r, root, "$", key, 1, out);
    if (rc)
        return rc;
    if (*out > 1) {
        char at[64];
        snprintf(at, sizeof at, "$.%s", key);
        return jr_bad(r, at, "a pick/best fraction in (0, 1]", json_object_get(root, key));
    }
    return 0;
}

static int read_below(jr *r, const json_t *root, acc_floor *f)
{
    json_t *below;
    int rc = jr_obj(r, root, "$", "below", 0, &below);
    if (rc || !below)
        return rc;
    const char *group;
    json_t *why;
    json_object_foreach(below, group, why) {
        char at[200];
        snprintf(at, sizeof at, "$.below.%.150s", group);
        if (!json_is_string(why) || !json_string_length(why))
            return jr_bad(r, at, "a string saying why the group is below the floor", why);
        if (f->n_below == ACC_FLOOR_MAX_BELOW || strlen(group) >= sizeof f->below[0])
            return jr_bad(r, at, "at most 32 groups, names under 128 characters", why);
        snprintf(f->below[f->n_below++], sizeof f->below[0], "%s", group);
    }
    return 0;
}

int acc_floor_load(const char *path, acc_floor *f, sc_err *err)
{
    static const char *const keys[] = {"schema", "source", "min", "median", "below", NULL};
    memset(f, 0, sizeof *f);
    jr r = {path, err};
    json_t *root;
    int rc = jr_load_root(&r, NULL, &root);
    if (rc)
        return rc;
    char schema[48], source[512];
    if (!(rc = jr_only_keys(&r, root, "$", keys)) && !(rc = jr_str(&r, root, "$", "schema", 1, schema, sizeof schema))) {
        if (strcmp(schema, "shardcast-decision-floor/1"))
            rc = jr_bad(&r, "$.schema", "\"shardcast-decision-floor/1\"", json_object_get(root, "schema"));
        else if (!(rc = jr_str(&r, root, "$", "source", 1, source, sizeof source)) &&
                 !(rc = read_frac(&r, root, "min", &f->min)))
            rc = read_frac(&r, root, "median", &f->median);
        if (!rc)
            rc = read_below(&r, root, f);
    }
    json_decref(root);
    return rc;
}

static int listed(const acc_floor *f, const char *group)
{
    for (int i = 0; i < f->n_below; i++)
        if (!strcmp(f->below[i], group))
            return 1;
    return 0;
}

void acc_floor_check(const acc_floor *f, const acc_decisions *d, char *report, size_t len, int *worse)
{
    for (int i = 0; i < d->n_groups; i++) {
        const acc_decision *g = &d->groups[i];
        if (!isfinite(g->pick_best))
            continue; /* not judged: fewer than two layouts predicted */
        int known = listed(f, g->group);
        if (g->pick_best < f->min && !known)
            acc_report_line(report, len, worse,
                            "pick/best of group %.100s (%.100s) is %.3f, under the floor %.3f: the layout predicted "
                            "fastest measured %.1f %% below the best one's throughput",
                            g->group, g->source_id, g->pick_best, f->min, 100 * (1 - g->pick_best));
        else if (g->pick_best >= f->min && known)
            acc_report_line(report, len, worse,
                            "group %.100s is listed below the floor but its pick/best is %.3f (>= %.3f): remove it "
                            "from \"below\"",
                            g->group, g->pick_best, f->min);
    }
    for (int i = 0; i < f->n_below; i++) {
        int found = 0;
        for (int k = 0; k < d->n_groups && !found; k++)
            found = !strcmp(d->groups[k].group, f->below[i]) && isfinite(d->groups[k].pick_best);
        if (!found)
            acc_report_line(report, len, worse, "group %.100s is listed below the floor but no run judged it",
                            f->below[i]);
    }
    if (d->overall.groups > 0 && !(d->overall.median >= f->median))
        acc_report_line(report, len, worse, "overall median pick/best %.3f, under the floor %.3f", d->overall.median,
                        f->median);
}

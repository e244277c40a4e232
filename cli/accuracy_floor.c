/* accuracy_floor.c — shardcast accuracy --floor FILE: the decision-quality floor (issue 30,
 * predict/accuracy_floor.h) loaded before the run and checked after it, per engine. Not here:
 * the relative guard against committed figures (--check, cli/accuracy_report.c). */
#include "accuracy_int.h"

#include <stdio.h>
#include <string.h>

#include "common.h"

int cli_acc_floor_load(const char *path, acc_floor *f)
{
    sc_err err;
    int rc = acc_floor_load(path, f, &err);
    return rc ? cli_fail(&err, rc) : 0;
}

int cli_acc_check_floor(const cli_acc_run *r, const char *path, const acc_floor *f)
{
    int worse_all = 0;
    for (int k = 0; k < r->n_eng; k++) {
        char report[4096] = "";
        int worse = 0;
        acc_floor_check(f, &r->sum[k].decisions, report, sizeof report, &worse);
        for (char *l = strtok(report, "\n"); l; l = strtok(NULL, "\n"))
            fprintf(stderr, "shardcast accuracy: %s: %s: %s\n", path, pred_engine_name(r->eng[k]), l);
        if (!worse)
            fprintf(stderr, "accuracy floor: %s: every compare group at pick/best >= %.3f or listed in %s, median %.3f\n",
                    pred_engine_name(r->eng[k]), f->min, path, r->sum[k].decisions.overall.median);
        worse_all += worse;
    }
    return worse_all ? 1 : 0;
}

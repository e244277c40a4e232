/* fuzz_import.c — nccl-tests logs through `calibrate import`, then the round trip the command
 * promises: the document written as text, read back by the measurement loader (it once refused
 * what import wrote) and fitted on a shipped cluster. The first input byte picks the options
 * (--kind given or not, --in-place). */
#include "fuzz_common.h"

#include <gsl/gsl_errno.h>

#include "../../calibrate/fit.h"
#include "../../calibrate/import.h"
#include "../../calibrate/measure.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    gsl_set_error_handler_off(); /* as cli/main.c does */
    return 0;
}

static void round_trip(json_t *doc)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    if (!text)
        return;
    json_error_t je;
    json_t *back = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!back) {
        fprintf(stderr, "fuzz: import wrote JSON it cannot read back: %s\n", je.text);
        abort();
    }
    cal_meas *m;
    sc_err err;
    if (cal_meas_from_json(back, "reloaded", &m, &err)) {
        fprintf(stderr, "fuzz: the loader refuses what import wrote: %s: %s\n", err.path, err.text);
        abort();
    }
    json_decref(back);
    const spec_cluster *c = fz_cluster(0);
    if (c && !cal_meas_check(m, c, &err)) {
        cost_calib base, out;
        cal_fit_report rep;
        cost_calib_defaults(c, &base);
        FZ_EXPECT(cal_fit(m, c, &base, "defaults", &out, &rep, &err));
    }
    cal_meas_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cal_import_opts o = {0};
    if (size) {
        o.kind = data[0] & 1 ? "all-reduce" : NULL;
        o.in_place = (data[0] >> 1) & 1;
        data++, size--;
    }
    char *paths[1] = {(char *)fz_file(data, size)};
    json_t *doc = NULL;
    sc_err err;
    int rc = cal_import_nccl_tests(paths, 1, &o, &doc, &err);
    FZ_EXPECT(rc);
    if (rc == 0) {
        round_trip(doc);
        json_decref(doc);
    }
    return 0;
}

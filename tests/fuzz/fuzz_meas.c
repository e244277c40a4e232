/* fuzz_meas.c — measurements.json from the harness: collectives, GEMMs, memory bandwidth,
 * interference, steps; a loaded file is checked against shipped clusters (NVSwitch and NVLink
 * mesh) and its collectives' groups built as validate and the fit build them. */
#include "fuzz_common.h"

#include "../../calibrate/measure.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cal_meas *m = NULL;
    sc_err err;
    int rc = cal_meas_load(fz_file(data, size), &m, &err);
    FZ_EXPECT(rc);
    if (rc == 0) {
        for (int ci = 0; ci < 2; ci++) {
            const spec_cluster *c = fz_cluster(ci);
            if (!c || cal_meas_check(m, c, &err))
                continue;
            for (int i = 0; i < m->n_coll; i++) {
                cost_group g;
                cal_meas_group(c, &m->coll[i], &g);
            }
        }
        cal_meas_free(m);
    }
    return 0;
}

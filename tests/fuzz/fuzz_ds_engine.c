/* fuzz_ds_engine.c — a DeepSpeed ds_config.json taken as `predict --ds-config` takes it (the
 * "auto" buckets from the model, train_batch_size against the data-parallel ranks) through both
 * engines on a shipped cluster and node count the input's length picks (fuzz_engine.h): a crash,
 * an assertion, a status other than 0 / SC_EINPUT, or a NaN / Inf result is a finding. */
#include "fuzz_engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int nodes[] = {1, 2, 4};
    spec_training t;
    spec_layout l;
    spec_ds_report rep;
    sc_err err;
    spec_training_defaults(&t);
    memset(&l, 0, sizeof l);
    memset(&rep, 0, sizeof rep);
    int rc = spec_load_ds_config_ex(fz_file(data, size), &t, &l, &rep, &err);
    FZ_EXPECT(rc);
    if (rc || !fz_model())
        return 0;
    spec_ds_resolve_auto(&rep, fz_model()->hidden, &t);
    int ci = (int)(size % 2), n = nodes[size / 2 % 3]; /* p4d or p3dn */
    const spec_cluster *c = fz_cluster(ci);
    if (!c || spec_nodes_check(c, n, "fuzz", &err))
        return 0;
    rc = spec_layout_check(&l, c, n, &err); /* before the batch rule, as cli/common.c has it */
    FZ_EXPECT(rc);
    if (rc)
        return 0;
    if (t.train_batch) { /* cli/common.c ds_batch */
        int share = spec_layout_batch_share(&l);
        rc = share > 0 ? spec_ds_check_batch(&t, n * c->gpus_per_node / share, "fuzz", &err) : SC_EINPUT;
        FZ_EXPECT(rc);
        if (rc)
            return 0;
    }
    fz_engines(&t, &l, ci, n);
    return 0;
}

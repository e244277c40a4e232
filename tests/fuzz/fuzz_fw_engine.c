/* fuzz_fw_engine.c — a layout string under each framework and a training the input's first
 * bytes pick, through both engines (fuzz_engine.h). Bytes 0-5: framework (and DeepSpeed 0.5),
 * cluster, node count, micro-batch, gradient accumulation (a power of two up to 2^20, or a
 * small count), prefetch / checkpointing / FSDP knobs; the rest is the layout ("hsdp:p=8",
 * "megatron:t=2,p=4,vp=2", ...). A crash, an assertion, a status other than 0 / SC_EINPUT, or a
 * NaN / Inf result is a finding. */
#include "fuzz_engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    return 0;
}

static void fz_training(const uint8_t *b, spec_training *t)
{
    spec_training_defaults(t);
    t->framework = (spec_framework)(b[0] % N_FRAMEWORKS);
    if (t->framework == FW_DEEPSPEED && (b[0] / N_FRAMEWORKS) % 4 == 1)
        t->framework_version = 500; /* deepspeed@0.5: synchronous per-parameter fetch */
    t->micro_batch = 1 + b[3] % 16;
    t->grad_accum = b[4] & 0x80 ? 1 << (b[4] % 21) : 1 + b[4] % 64;
    t->prefetch_layers = b[5] % 8;
    t->act_ckpt = (b[5] >> 3) % 3;
    t->backward_prefetch = (b[5] >> 5) % 3;
    t->limit_all_gathers = (b[5] >> 7) ? 0 : -1;
    t->given |= SPEC_GIVEN_FW;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const int nodes[] = {1, 2, 3, 4, 8, 16};
    if (size < 6)
        return 0;
    spec_training t;
    fz_training(data, &t);
    char *s = fz_str(data + 6, size - 6);
    if (!s)
        return 0;
    spec_layout l;
    sc_err err;
    int rc = spec_layout_parse(s, &l, &err);
    FZ_EXPECT(rc);
    if (rc == 0)
        fz_engines(&t, &l, data[1] % 3, nodes[data[2] % 6]);
    free(s);
    return 0;
}

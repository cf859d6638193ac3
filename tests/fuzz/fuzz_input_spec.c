/* fuzz_input_spec.c - libFuzzer target: one `--input NAME:DIMS` value through
 * fp_bind_parse_input_spec and, when it parses, the analysis stopped after shapes on a small model
 * (binding, shape inference, metrics), as `fuseplan shapes --input SPEC MODEL` runs it. */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/bind.h"
#include "fuzz_target.h"

#define FZ_SPEC_MODEL FP_SOURCE_DIR "/models/eps_story.onnx"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_glib_fatal();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    g_autofree char *spec = g_strndup((const char *)data, size); /* argv strings end at a NUL */
    g_autoptr(fp_model) scratch = fp_model_new("spec", "none");
    g_autoptr(GError) err = NULL;
    g_autofree char *name = NULL;
    fp_shape shape;
    if (!fp_bind_parse_input_spec(scratch, spec, &name, &shape, &err)) {
        if (!err || !*err->message) {
            fprintf(stderr, "fuzz: refusal without a message, or IR left invalid: '%s'\n", err ? err->message : "");
            abort();
        }
        return 0;
    }
    char *inputs[] = {spec, NULL};
    fp_analysis_opts o = {.inputs = inputs,
                          .batch = (int64_t)(size % 3),
                          .stop = FP_PIPELINE_SHAPES,
                          .what_if = FP_DT_UNDEFINED};
    g_autoptr(GError) aerr = NULL;
    fp_analysis_free(fp_analysis_run(FZ_SPEC_MODEL, &o, &aerr));
    return 0;
}

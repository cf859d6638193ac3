/* test_options.c - the options the analyzing commands share (cli/options.c), validated once: every
 * bad value of every shared option, given to every command that takes the option (through the C
 * library, which runs the executable's commands; compare through the executable), is refused with exit 2, nothing on standard
 * output and one line, the same line from every command; a gate that fails still fails under any
 * accepted option. */
#include <CUnit/CUnit.h>
#include <glib/gstdio.h>
#include <string.h>

#include "lib/fuseplan.h"
#include "tutil.h"

#define MODEL "models/resnet_tiny.onnx"
#define DECODER "models/decoder_tiny.onnx"

/* The option groups of cli/options.h a command takes, as the test knows them. */
enum { BIND = 1, BATCH = 2, STEP = 4, WHATIF = 8, PLAN = 16, CAPACITY = 32, TOP = 64 };

typedef struct {
    const char *args[8]; /* the command and its fixed arguments, MODEL standing for the model */
    unsigned groups;
} command;

static const command commands[] = {
    {{"report", "MODEL"}, BIND | BATCH | STEP | WHATIF | TOP},
    {{"gate", "MODEL", "--policy", "tests/data/policies/pass.ini"}, BIND | BATCH | STEP | WHATIF},
    {{"diff", "MODEL", "MODEL"}, BIND | BATCH | STEP | WHATIF},
    {{"explain", "MODEL"}, BIND | BATCH | STEP | WHATIF},
    {{"memory", "MODEL"}, BIND | BATCH | STEP | WHATIF | PLAN | TOP},
    {{"headroom", "MODEL", "--device", "h100"}, BIND | STEP | WHATIF | PLAN | CAPACITY},
    {{"shapes", "MODEL"}, BIND | BATCH | STEP | WHATIF},
    {{"train", "MODEL", "--no-headroom"}, BIND | BATCH | CAPACITY | TOP},
    {{"compare", "MODEL", "--profile", "tests/data/profiles/ort/resnet_tiny.extended.json"},
     BIND | BATCH | STEP | WHATIF | TOP},
};

typedef struct {
    unsigned group;
    const char *opt, *value, *needle; /* needle: what the one line says */
    bool decoder;                     /* on the decoder sample (its KV cache) */
} bad_value;

static const bad_value bad[] = {
    {BATCH, "--batch", "-1", "--batch -1: expected a whole number from 1 to 2^62"},
    {BATCH, "--batch", "0", "--batch 0: expected a whole number from 1 to 2^62"},
    {BATCH, "--batch", "abc", "--batch abc: expected a whole number"},
    {BATCH, "--batch", "1.5", "--batch 1.5: expected a whole number"},
    {BATCH, "--batch", "9223372036854775807", "--batch 9223372036854775807: expected a whole number"},
    {BATCH, "--batch", "1152921504606846976", "the model's tensors hold 2^62 bytes or more"}, /* 2^60 */
    {BIND, "--input", "input:-1x3x64x64", "is not an integer in [0, 2^62] or '?'"},
    {BIND, "--input", "input", "expected NAME:DIMS"},
    {BIND, "--input", "nosuch:1x3x64x64", "nosuch"},
    {BIND, "--input", "input:4611686018427387904x3x64x64", "the model's tensors hold 2^62 bytes or more"}, /* 2^62 */
    {BIND, "--dim", "batch=-2", "--dim 'batch=-2': expected NAME=N"},
    {BIND, "--dim", "batch", "--dim 'batch': expected NAME=N"},
    {BIND, "--dim", "nosuch=3", "nosuch"},
    {BIND, "--batch-dim", "nosuch", "--batch-dim nosuch: no input has a dimension named so"},
    {STEP, "--context", "0", "--context 0: expected a whole number from 1 to 2^62", true},
    {STEP, "--context", "-4", "--context -4: expected a whole number", true},
    {STEP, "--context", "many", "--context many: expected a whole number", true},
    {STEP, "--context", "64", "--context / --phase: the model has no KV cache"},
    {STEP, "--phase", "train", "--phase train: expected decode or prefill", true},
    {WHATIF, "--weight-dtype", "int3", "--weight-dtype int3: expected fp32, fp16, bf16, fp8, int8 or int4"},
    {WHATIF, "--group-size", "0", "--group-size 0: expected a whole number from 1 to 2^62"},
    {WHATIF, "--kv-dtype", "int4", "--kv-dtype int4: expected fp32, fp16, bf16, fp8 or int8", true},
    {WHATIF, "--kv-block", "0", "--kv-block 0: expected a whole number from 1 to 2^62", true},
    {WHATIF, "--kv-block", "-16", "--kv-block -16: expected a whole number", true},
    {WHATIF, "--precision-mode", "fp8", "--precision-mode fp8: expected force_fp16 or must_keep_origin_dtype"},
    {PLAN, "--strategy", "fastest", "--strategy fastest: one of naive, greedy_by_size, best_fit, best"},
    {PLAN, "--schedule", "random", "--schedule random: one of given, optimized"},
    {PLAN, "--align", "0", "--align 0: expected a whole number from 1 to 1073741824"},
    {CAPACITY, "--memory", "0", "--memory 0: must be above 0 bytes"},
    {CAPACITY, "--memory", "lots", "--memory lots: expected a size"},
    {CAPACITY, "--reserve", "120%", "--reserve 120%: a percentage from 0% to below 100%"},
    {CAPACITY, "--reserve", "-1%", "--reserve -1%: a percentage"},
    {CAPACITY, "--max-batch", "0", "--max-batch 0: expected a whole number from 1 to 2^62"},
    {TOP, "--top", "-1", "--top -1: expected a whole number from 0 to 2147483647"},
    {TOP, "--top", "ten", "--top ten: expected a whole number"},
};

/* One run from the source tree through the library, or the executable for the commands the
 * library does not run (compare): status, output, messages (g_free). */
static int run(const char *const *args, char **out, char **msg)
{
    if (strcmp(args[0], "compare") == 0) {
        tu_run_result r = tu_run(args);
        *out = g_strdup(r.out);
        *msg = g_strdup(r.err);
        int status = r.status;
        tu_run_clear(&r);
        return status;
    }
    int argc = 0;
    while (args[argc])
        argc++;
    char *o = NULL, *m = NULL;
    size_t len = 0;
    int rc = fuseplan_run(argc, args, NULL, &o, &len, &m);
    *out = g_strdup(o ? o : "");
    *msg = g_strdup(m ? m : "");
    fuseplan_free(o);
    fuseplan_free(m);
    return rc;
}

/* c's arguments on model with `extra` appended (NULL-terminated; the strings are not copied). */
static void build_args(const command *c, const char *model, const char *const *extra, const char **args)
{
    size_t n = 0;
    for (size_t i = 0; c->args[i]; i++)
        args[n++] = strcmp(c->args[i], "MODEL") == 0 ? model : c->args[i];
    for (size_t i = 0; extra && extra[i]; i++)
        args[n++] = extra[i];
    args[n] = NULL;
}

/* Every bad value, to every command that takes its option: exit 2, no output, one line, the same. */
static void test_bad_values(void)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    for (size_t b = 0; b < G_N_ELEMENTS(bad); b++) {
        g_autofree char *first = NULL;
        const char *first_cmd = NULL;
        for (size_t c = 0; c < G_N_ELEMENTS(commands); c++) {
            if (!(commands[c].groups & bad[b].group))
                continue;
            const char *extra[] = {bad[b].opt, bad[b].value, NULL}, *args[16];
            build_args(&commands[c], bad[b].decoder ? DECODER : MODEL, extra, args);
            g_autofree char *out = NULL, *msg = NULL;
            int rc = run(args, &out, &msg);
            bool one = rc == 2 && !*out && tu_lines(msg) == 1 && strstr(msg, bad[b].needle);
            if (!one)
                fprintf(stderr, "\n  %s %s %s: exit %d, %zu bytes out, '%s'", args[0], bad[b].opt, bad[b].value, rc,
                        strlen(out), msg);
            CU_ASSERT(one);
            if (!first) {
                first = g_strdup(msg);
                first_cmd = args[0];
            } else if (strcmp(first, msg) != 0) {
                fprintf(stderr, "\n  %s %s: %s says '%s', %s '%s'", bad[b].opt, bad[b].value, args[0], msg, first_cmd,
                        first);
                CU_FAIL("the commands refuse a value with different lines");
            }
        }
    }
}

/* The executable refuses as the library does (one case per group, spot-checked). */
static void test_executable_alike(void)
{
    const char *model = FP_SOURCE_DIR "/" MODEL;
    tu_expect_cli_error((const char *[]){"report", model, "--batch", "0", NULL}, NULL,
                        "--batch 0: expected a whole number from 1 to 2^62");
    tu_expect_cli_error((const char *[]){"train", model, "--batch", "-1", NULL}, NULL,
                        "--batch -1: expected a whole number from 1 to 2^62");
    tu_expect_cli_error((const char *[]){"headroom", model, "--device", "h100", "--max-batch", "0", NULL}, NULL,
                        "--max-batch 0: expected a whole number");
    tu_expect_cli_error((const char *[]){"memory", model, "--align", "-64", NULL}, NULL,
                        "--align -64: expected a whole number");
}

/* A policy resnet_tiny fails (its activations are above 1 byte): exit 1 under any accepted option.
 * An input of an unknown batch has it bound by --batch: left unknown, no activation has a size (the
 * flatten's shape computation, the only one, is ReshapeFusion's constant on the default target). */
static void test_gate_still_fails(void)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    const char *policy_text = "[gate]\nmax_activation_mb = 0.000001\n";
    g_autofree char *policy = tu_write_temp(policy_text, strlen(policy_text), ".ini");
    const char *accepted[][5] = {
        {NULL},
        {"--batch", "1", NULL},
        {"--batch", "7", NULL},
        {"--input", "input:2x3x64x64", NULL},
        {"--input", "input:?x3x64x64", "--batch", "3", NULL},
        {"--dim", "batch=3", NULL},
        {"--batch-dim", "batch", "--batch", "2", NULL},
        {"--weight-dtype", "int8", NULL},
        {"--strict", NULL},
    };
    for (size_t i = 0; i < G_N_ELEMENTS(accepted); i++) {
        const char *args[12] = {"gate", MODEL, "--policy", policy};
        size_t n = 4;
        for (size_t k = 0; accepted[i][k]; k++)
            args[n++] = accepted[i][k];
        args[n] = NULL;
        g_autofree char *out = NULL, *msg = NULL;
        int rc = run(args, &out, &msg);
        if (rc != 1)
            fprintf(stderr, "\n  gate with %s %s: exit %d, '%s'", accepted[i][0] ? accepted[i][0] : "(nothing)",
                    accepted[i][0] ? accepted[i][1] : "", rc, msg);
        CU_ASSERT_EQUAL(rc, 1);
    }
    g_unlink(policy);
}

/* The policy's device and target, when they do not load, are refused naming the file and the key. */
static void test_policy_names_key(void)
{
    const char *text[] = {"[gate]\ndevice = no_such_device\n", "[gate]\ntarget = no_such_target\n"};
    const char *key[] = {"[gate] device:", "[gate] target:"};
    for (size_t i = 0; i < G_N_ELEMENTS(text); i++) {
        g_autofree char *policy = tu_write_temp(text[i], strlen(text[i]), ".ini");
        tu_expect_cli_error((const char *[]){"gate", FP_SOURCE_DIR "/" MODEL, "--policy", policy, NULL}, policy,
                            key[i]);
        g_unlink(policy);
    }
}

FP_TEST_SUITE(register_options)
{
    CU_pSuite s = CU_add_suite("options", NULL, NULL);
    CU_add_test(s, "bad_values", test_bad_values);
    CU_add_test(s, "executable_alike", test_executable_alike);
    CU_add_test(s, "gate_still_fails", test_gate_still_fails);
    CU_add_test(s, "policy_names_key", test_policy_names_key);
}

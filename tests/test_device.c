/* test_device.c - device suite: shipped profiles, .ini validation errors, lookup, roofline
 * arithmetic on tests/data/devices/round.ini, the cost-model groups ([launch], [saturation],
 * [cache]) and their roofline terms, the calibrate SGEMM kernels and cache levels, and the
 * `devices` and `calibrate` commands through the CLI. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "calibration/calibrate.h"
#include "devices/device.h"
#include "passes/roofline.h"
#include "tutil.h"

#define ROUND_INI FP_SOURCE_DIR "/tests/data/devices/round.ini"

static const char *const shipped[] = {"a100", "ascend310p", "ascend910b", "cpu-avx2", "h100", "h200", NULL};

/* Runs `body` with $FUSEPLAN_DEVICES set to dir (NULL: unset), restoring it afterwards. */
typedef void (*env_body)(void *);
static void with_devices_env(const char *dir, env_body body, void *data)
{
    g_autofree char *old = g_strdup(g_getenv("FUSEPLAN_DEVICES"));
    if (dir)
        g_setenv("FUSEPLAN_DEVICES", dir, TRUE);
    else
        g_unsetenv("FUSEPLAN_DEVICES");
    body(data);
    if (old)
        g_setenv("FUSEPLAN_DEVICES", old, TRUE);
    else
        g_unsetenv("FUSEPLAN_DEVICES");
}

static void check_shipped(void *unused)
{
    (void)unused;
    g_auto(GStrv) names = fp_device_list();
    for (size_t i = 0; shipped[i]; i++)
        CU_ASSERT(g_strv_contains((const char *const *)names, shipped[i]));
    for (size_t i = 0; names[i]; i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_device) d = fp_device_load(names[i], &err);
        if (!d)
            fprintf(stderr, "\n  %s: %s", names[i], err->message);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        CU_ASSERT_STRING_EQUAL(d->name, names[i]);
        CU_ASSERT(g_strv_contains(fp_device_targets(), d->target));
        CU_ASSERT(d->peak_flops[FP_DT_FLOAT] > 0);
        CU_ASSERT(d->bandwidth > 0);
        CU_ASSERT(d->memory_bytes > 0);
        CU_ASSERT(d->align_bytes > 0 && (d->align_bytes & (d->align_bytes - 1)) == 0);
        for (int c = 0; c < FP_CLASS_COUNT; c++)
            CU_ASSERT(d->efficiency[c] > 0 && d->efficiency[c] <= 1);
        CU_ASSERT(d->bw_efficiency > 0 && d->bw_efficiency <= 1);
    }
}

static void test_shipped(void) { with_devices_env(NULL, check_shipped, NULL); }

/* fp_device_load of a file holding `text` fails with one line naming the file and `needle`. */
static void expect_invalid(const char *text, const char *needle)
{
    g_autofree char *path = tu_write_temp(text, strlen(text), ".ini");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(path, &err);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT(g_error_matches(err, FP_DEVICE_ERROR, FP_DEVICE_ERROR_INVALID));
    CU_ASSERT(g_str_has_prefix(err->message, path));
    CU_ASSERT_PTR_NULL(strchr(err->message, '\n'));
    if (!strstr(err->message, needle))
        fprintf(stderr, "\n  expected '%s' in: %s", needle, err->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, needle));
    g_unlink(path);
}

#define DEV \
    "[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=5e-6\nalign_bytes=256\n"
#define PEAK "[peak]\nfp32=1e12\n"

static void test_invalid(void)
{
    /* the base text is valid */
    const char *good = DEV PEAK "[rule.cuda.x]\nanything=at all\n";
    g_autofree char *ok = tu_write_temp(good, strlen(good), ".ini");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(ok, &err);
    CU_ASSERT_PTR_NOT_NULL(d);
    g_unlink(ok);

    expect_invalid(DEV "[peak]\nfp32=1e12\nfp33=1e12\n",
                   "[peak] fp33: unknown key (valid keys: fp64, fp32, fp16, bf16, fp8e4m3, fp8e5m2, int8, int4)");
    expect_invalid(DEV PEAK "[efficiency]\nconvolution=0.5\n",
                   "[efficiency] convolution: unknown key (valid keys: conv,");
    expect_invalid(DEV PEAK "[devices]\nx=1\n", "[devices]: unknown group (valid groups: device, peak, efficiency");
    expect_invalid(DEV PEAK "[rule.]\nx=1\n", "[rule.]: unknown group");
    /* wrong type */
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=fast\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "align_bytes=64\n" PEAK,
                   "[device] bandwidth: 'fast' is not a number");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=lots\nlaunch_overhead=0\n"
                   "align_bytes=64\n" PEAK,
                   "[device] memory_bytes: 'lots' is not a number");
    expect_invalid(
        "[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1000000000.5\nlaunch_overhead=0\n"
        "align_bytes=64\n" PEAK,
        "[device] memory_bytes: '1000000000.5' is not a whole number");
    expect_invalid(DEV "[peak]\nfp32=12 TFLOPS\n", "[peak] fp32: '12 TFLOPS' is not a number");
    /* missing required key or group */
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nmemory_bytes=1e9\nlaunch_overhead=0\nalign_bytes=64\n" PEAK,
                   "[device] bandwidth: missing required key");
    expect_invalid(DEV "[peak]\nfp16=1e12\n", "[peak] fp32: missing required key");
    expect_invalid(DEV, "[peak]: missing required group");
    expect_invalid("", "[device]: missing required group");
    /* negative, zero, out of range, unit mistakes */
    expect_invalid(DEV "[peak]\nfp32=1e12\nfp16=-1\n", "[peak] fp16: -1 must be > 0");
    expect_invalid(DEV "[peak]\nfp32=0\n", "[peak] fp32: 0 must be > 0");
    expect_invalid(DEV PEAK "[efficiency]\nmatmul=1.5\n", "[efficiency] matmul: 1.5 is outside (0, 1]");
    expect_invalid(DEV PEAK "[efficiency]\nbandwidth=0\n", "[efficiency] bandwidth: 0 is outside (0, 1]");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=2039\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "align_bytes=64\n" PEAK,
                   "[device] bandwidth: 2039 is implausibly small: the unit is bytes/s");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=5\n"
                   "align_bytes=64\n" PEAK,
                   "[device] launch_overhead: 5 is implausibly large: the unit is seconds");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=-1e-6\n"
                   "align_bytes=64\n" PEAK,
                   "[device] launch_overhead: -1e-6 must be >= 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "run_overhead=-2e-6\nalign_bytes=64\n" PEAK,
                   "[device] run_overhead: -2e-6 must be >= 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "run_overhead=3\nalign_bytes=64\n" PEAK,
                   "[device] run_overhead: 3 is implausibly large: the unit is seconds");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "input_overhead=-7e-8\nalign_bytes=64\n" PEAK,
                   "[device] input_overhead: -7e-8 must be >= 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "output_overhead=fast\nalign_bytes=64\n" PEAK,
                   "[device] output_overhead");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "weight_bandwidth=0\nalign_bytes=64\n" PEAK,
                   "[device] weight_bandwidth: 0 must be > 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "weight_bandwidth=20\nalign_bytes=64\n" PEAK,
                   "[device] weight_bandwidth: 20 is implausibly small: the unit is bytes/s");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "weight_bandwidth=fast\nalign_bytes=64\n" PEAK,
                   "[device] weight_bandwidth");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "weight_l3_bandwidth=-5e10\nalign_bytes=64\n" PEAK,
                   "[device] weight_l3_bandwidth: -5e10 must be > 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "weight_l3_bandwidth=50\nalign_bytes=64\n" PEAK,
                   "[device] weight_l3_bandwidth: 50 is implausibly small: the unit is bytes/s");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "denormal_mac_s=-2e-9\nalign_bytes=64\n" PEAK,
                   "[device] denormal_mac_s: -2e-9 must be >= 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "denormal_mac_s=2\nalign_bytes=64\n" PEAK,
                   "[device] denormal_mac_s: 2 is implausibly large: the unit is seconds");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "denormal_mac_s=slow\nalign_bytes=64\n" PEAK,
                   "[device] denormal_mac_s");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "denormal_exp_s=-1\nalign_bytes=64\n" PEAK,
                   "[device] denormal_exp_s: -1 must be >= 0");
    expect_invalid("[device]\ndescription=t\ntarget=cuda\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
                   "align_bytes=48\n" PEAK,
                   "[device] align_bytes: 48 is not a power of two");
    expect_invalid(
        "[device]\ndescription=t\ntarget=tpu\nbandwidth=1e12\nmemory_bytes=1e9\nlaunch_overhead=0\n"
        "align_bytes=64\n" PEAK,
        "[device] target: unknown target 'tpu' (one of: ort-cpu, ort-cpu-all, ort-cpu-extended, ort-cpu-basic, cuda, tensorrt, ascend910b, ascend310p)");
    expect_invalid(DEV PEAK "[calibration]\nthreads=-2\n", "[calibration] threads: -2 must be > 0");
    expect_invalid(DEV "threads=0\n" PEAK, "[device] threads: 0 must be > 0");
    expect_invalid(DEV "threads=many\n" PEAK, "[device] threads: 'many' is not a number");
    expect_invalid(DEV "threads=5000\n" PEAK, "[device] threads: 5000 is too large");
    /* the cost-model groups */
    expect_invalid(DEV PEAK "[launch]\nconvolution=1e-6\n", "[launch] convolution: unknown key (valid keys: conv,");
    expect_invalid(DEV PEAK "[launch]\nconv=-1e-6\n", "[launch] conv: -1e-6 must be >= 0");
    expect_invalid(DEV PEAK "[launch]\ngroup=2\n", "[launch] group: 2 is implausibly large: the unit is seconds");
    expect_invalid(DEV PEAK "[launch]\nim2col_row=-3e-9\n", "[launch] im2col_row: -3e-9 must be >= 0");
    expect_invalid(DEV PEAK "[launch]\nim2col_row=fast\n", "[launch] im2col_row: 'fast' is not a number");
    expect_invalid(DEV PEAK "[launch]\nmixed=-6e-8\n", "[launch] mixed: -6e-8 must be >= 0");
    expect_invalid(DEV PEAK "[launch]\nrow=3e-9\n", "[launch] row: unknown key (valid keys: conv,");
    expect_invalid(DEV PEAK "[launch]\noutput=-1e-7\n", "[launch] output: -1e-7 must be >= 0");
    expect_invalid(DEV PEAK "[launch]\noutput=many\n", "[launch] output: 'many' is not a number");
    expect_invalid(DEV PEAK "[saturation]\nmatmul=0\n", "[saturation] matmul: 0 must be > 0 (FLOP)");
    expect_invalid(DEV PEAK "[saturation]\ngemv=-1\n", "[saturation] gemv: -1 must be >= 0 (FLOP; 0: none)");
    expect_invalid(DEV PEAK "[saturation]\nconv=1e20\n", "[saturation] conv: 1e20 is implausibly large");
    expect_invalid(DEV PEAK "[cache]\nl2_bytes=1048576\n", "[cache] l2_bandwidth: missing: a cache level needs both");
    expect_invalid(DEV PEAK "[cache]\nl1_bytes=100\nl1_bandwidth=4e11\n",
                   "[cache] l1_bytes: 100 is implausibly small: the unit is bytes");
    expect_invalid(DEV PEAK "[cache]\nl1_bytes=65536\nl1_bandwidth=400\n",
                   "[cache] l1_bandwidth: 400 is implausibly small: the unit is bytes/s");
    expect_invalid(DEV PEAK "[cache]\nl1_bytes=1048576\nl1_bandwidth=4e11\nl3_bytes=65536\nl3_bandwidth=1e11\n",
                   "[cache] l3_bytes: 65536 is not larger than l1_bytes: levels grow outward");
    expect_invalid(DEV PEAK "[cache]\nl4_bytes=65536\n", "[cache] l4_bytes: unknown key (valid keys: l1_bytes,");
    expect_invalid(DEV PEAK "[cache]\nl3_bytes=33554432\nl3_bandwidth=1e11\nlast_from=0\n",
                   "[cache] last_from: 0 must be > 0");
    expect_invalid(DEV PEAK "[cache]\nl3_bytes=33554432\nl3_bandwidth=1e11\nlast_from=5\n",
                   "[cache] last_from: 5 is above 4: a share of the last level's capacity");
    expect_invalid(DEV PEAK "[cache]\nlast_from=most\n", "[cache] last_from: 'most' is not a number");
    expect_invalid(DEV PEAK "[cache]\nl3_bytes=33554432\nl3_bandwidth=1e11\nlast_life=0\n",
                   "[cache] last_life: 0 must be > 0");
    expect_invalid(DEV PEAK "[cache]\nlast_life=-0.01\n", "[cache] last_life: -0.01 must be > 0");
    expect_invalid(DEV PEAK "[cache]\nlast_life=soon\n", "[cache] last_life: 'soon' is not a number");
    /* not an .ini at all */
    expect_invalid("fp32 = 1e12\n", "");
}

static void test_not_found(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load("no-such-device", &err);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT(g_error_matches(err, FP_DEVICE_ERROR, FP_DEVICE_ERROR_NOT_FOUND));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "no device profile 'no-such-device' (known: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err->message, "a100"));
    g_clear_error(&err);
    d = fp_device_load("/nonexistent/dir/x.ini", &err);
    CU_ASSERT_PTR_NULL(d);
    CU_ASSERT_PTR_NOT_NULL(err && strstr(err->message, "/nonexistent/dir/x.ini: cannot open"));
    g_clear_error(&err);
    d = fp_device_load("../etc/passwd", &err); /* a path: read and rejected as a profile */
    CU_ASSERT_PTR_NULL(d);
}

static void check_env_lookup(void *dir)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load("myround", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(d->name, "myround");
    g_autofree char *expect = g_build_filename(dir, "myround.ini", NULL);
    CU_ASSERT_STRING_EQUAL(d->path, expect);
    g_auto(GStrv) names = fp_device_list();
    CU_ASSERT(g_strv_contains((const char *const *)names, "myround"));
    CU_ASSERT(g_strv_contains((const char *const *)names, "a100"));
}

static void test_env_lookup(void)
{
    g_autofree char *dir = g_dir_make_tmp("fuseplan-devices-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    g_autofree char *text = NULL;
    gsize len = 0;
    CU_ASSERT_FATAL(g_file_get_contents(ROUND_INI, &text, &len, NULL));
    g_autofree char *path = g_build_filename(dir, "myround.ini", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(path, text, (gssize)len, NULL));
    with_devices_env(dir, check_env_lookup, dir);
    g_unlink(path);
    g_rmdir(dir);
}

static fp_device *load_round(void)
{
    g_autoptr(GError) err = NULL;
    fp_device *d = fp_device_load(ROUND_INI, &err);
    if (!d)
        fprintf(stderr, "\n  %s", err->message);
    return d;
}

static void test_round_values(void)
{
    g_autoptr(fp_device) d = load_round();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(d->name, "round");
    CU_ASSERT_EQUAL(d->memory_bytes, 1000000000u);
    CU_ASSERT_EQUAL(d->align_bytes, 64u);
    /* classes without a key take `other`, which defaults to 1 */
    CU_ASSERT_DOUBLE_EQUAL(d->efficiency[FP_CLASS_CONV], 0.25, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d->efficiency[FP_CLASS_MATMUL], 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d->efficiency[FP_CLASS_EW], 1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(d->bw_efficiency, 0.5, 1e-12);
    /* peaks and their fallbacks */
    CU_ASSERT_DOUBLE_EQUAL(fp_device_peak(d, FP_DT_FLOAT16), 2e12, 1);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_peak(d, FP_DT_UINT8), 4e12, 1);          /* uint8 -> int8 */
    CU_ASSERT_DOUBLE_EQUAL(fp_device_peak(d, FP_DT_BFLOAT16), 1e12, 1);       /* none -> fp32 */
    CU_ASSERT_DOUBLE_EQUAL(fp_device_peak(d, FP_DT_FLOAT8E5M2FNUZ), 1e12, 1); /* chain ends at fp32 */
    CU_ASSERT_DOUBLE_EQUAL(fp_device_peak(d, FP_DT_INT64), 1e12, 1);
    /* [rule.*] kept for the fusion pass */
    g_autofree char *rule = g_key_file_get_string(d->keyfile, "rule.test", "anything", NULL);
    CU_ASSERT_STRING_EQUAL(rule, "goes here, unvalidated");
}

static void test_roofline(void)
{
    g_autoptr(fp_device) d = load_round();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    /* ridge = peak / bandwidth */
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_ridge(d, FP_DT_FLOAT), 10.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_ridge(d, FP_DT_FLOAT16), 20.0, 1e-9);
    /* effective: (1e12 * 0.5) / (1e11 * 0.5) = 10; conv (0.25) 5 */
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_ridge_effective(d, FP_DT_FLOAT, FP_CLASS_MATMUL), 10.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_ridge_effective(d, FP_DT_FLOAT, FP_CLASS_CONV), 5.0, 1e-9);

    /* compute-bound matmul: 1e9 FLOP / (1e12 * 0.5) = 2 ms; 1e6 B / (1e11 * 0.5) = 20 us */
    fp_roofline r = fp_roofline_eval(d, 1000000000, 1000000, FP_DT_FLOAT, FP_CLASS_MATMUL);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, 2e-3, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.memory_s, 2e-5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.launch_s, 1e-5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 2e-3 + 1e-5, 1e-15);
    CU_ASSERT_EQUAL(r.bound, FP_BOUND_COMPUTE);
    CU_ASSERT_STRING_EQUAL(fp_bound_name(r.bound), "compute");
    CU_ASSERT_DOUBLE_EQUAL(r.intensity, 1000.0, 1e-9);

    /* the same work in fp16 halves the compute time */
    r = fp_roofline_eval(d, 1000000000, 1000000, FP_DT_FLOAT16, FP_CLASS_MATMUL);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, 1e-3, 1e-15);

    /* memory-bound elementwise: 1e6 FLOP / 1e12 = 1 us; 1.2e7 B / 5e10 = 240 us */
    r = fp_roofline_eval(d, 1000000, 12000000, FP_DT_FLOAT, FP_CLASS_EW);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.memory_s, 2.4e-4, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 2.4e-4 + 1e-5, 1e-15);
    CU_ASSERT_EQUAL(r.bound, FP_BOUND_MEMORY);
    CU_ASSERT_STRING_EQUAL(fp_bound_name(r.bound), "memory");
    CU_ASSERT_DOUBLE_EQUAL(r.intensity, 1.0 / 12, 1e-12);

    /* at the effective ridge (conv: 5 FLOP/B) both roofs take the same time: memory-bound tie */
    r = fp_roofline_eval(d, 5000000, 1000000, FP_DT_FLOAT, FP_CLASS_CONV);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, r.memory_s, 1e-15);
    CU_ASSERT_EQUAL(r.bound, FP_BOUND_MEMORY);

    /* nothing to do: only the launch; no traffic but work: infinite intensity */
    r = fp_roofline_eval(d, 0, 0, FP_DT_FLOAT, FP_CLASS_DATA);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 1e-5, 1e-15);
    CU_ASSERT_EQUAL(r.bound, FP_BOUND_MEMORY);
    CU_ASSERT_DOUBLE_EQUAL(r.intensity, 0, 0);
    r = fp_roofline_eval(d, 1000, 0, FP_DT_FLOAT, FP_CLASS_OTHER);
    CU_ASSERT(isinf(r.intensity));
    CU_ASSERT_EQUAL(r.bound, FP_BOUND_COMPUTE);
}

static void test_keyfile_roundtrip(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) a = fp_device_load("h100", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    g_autoptr(fp_device) round = load_round();
    CU_ASSERT_PTR_NOT_NULL_FATAL(round);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(a);
    g_autoptr(fp_device) b = fp_device_from_keyfile(kf, "/somewhere/copy.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->name, "copy");
    CU_ASSERT_STRING_EQUAL(b->description, a->description);
    CU_ASSERT_STRING_EQUAL(b->target, a->target);
    for (int t = 0; t < FP_DT_COUNT; t++)
        CU_ASSERT_DOUBLE_EQUAL(b->peak_flops[t], a->peak_flops[t], a->peak_flops[t] * 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(b->bandwidth, a->bandwidth, 1);
    CU_ASSERT_EQUAL(b->memory_bytes, a->memory_bytes);
    CU_ASSERT_EQUAL(b->align_bytes, a->align_bytes);
    CU_ASSERT_DOUBLE_EQUAL(b->launch_overhead, a->launch_overhead, 1e-15);
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        CU_ASSERT_DOUBLE_EQUAL(b->efficiency[c], a->efficiency[c], 1e-12);
    /* other groups are carried over */
    g_autoptr(GKeyFile) kf2 = fp_device_to_keyfile(round);
    CU_ASSERT(g_key_file_has_group(kf2, "rule.test"));
}

/* A profile with every cost-model group, round numbers (1e12 FLOP/s, 1e11 B/s, 10 us launch). */
#define MODEL_INI                                                                                       \
    "[device]\ndescription=t\ntarget=ort-cpu\nbandwidth=1e11\nmemory_bytes=1e9\nlaunch_overhead=1e-5\n" \
    "align_bytes=64\n[peak]\nfp32=1e12\n[efficiency]\nconv=0.5\nmatmul=0.25\nbandwidth=0.5\n"           \
    "[saturation]\nconv=16e6\nmatmul=2e6\n[launch]\nconv=4e-6\nelementwise=1e-6\ngroup=1e-7\n"          \
    "im2col_row=2e-9\noutput=1.5e-7\nmixed=6e-8\n"                                                      \
    "[cache]\nl1_bytes=65536\nl1_bandwidth=8e11\nl2_bytes=1048576\nl2_bandwidth=4e11\n"

static fp_device *load_text(const char *text)
{
    g_autofree char *path = tu_write_temp(text, strlen(text), ".ini");
    g_autoptr(GError) err = NULL;
    fp_device *d = fp_device_load(path, &err);
    if (!d)
        fprintf(stderr, "\n  %s", err->message);
    g_unlink(path);
    return d;
}

static void test_model_groups(void)
{
    g_autoptr(fp_device) d = load_text(MODEL_INI);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    /* grouped_conv takes conv's efficiency and launch; other classes the device's launch */
    CU_ASSERT_DOUBLE_EQUAL(d->efficiency[FP_CLASS_GROUPED_CONV], 0.5, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_CONV), 4e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_GROUPED_CONV), 4e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_EW), 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_POOL), 1e-5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(d->launch_group, 1e-7, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(d->launch_row, 2e-9, 1e-20);
    CU_ASSERT_DOUBLE_EQUAL(d->launch_output, 1.5e-7, 1e-20);
    /* a kernel's outputs past its first, each at [launch] output */
    fp_kernel one = {.flops = 1000, .bytes = 4000, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_NORM}, three = one;
    three.outputs = 2;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &three).launch_s - fp_roofline_kernel(d, &one).launch_s, 3e-7, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &three).time_s - fp_roofline_kernel(d, &one).time_s, 3e-7, 1e-15);
    /* a kernel of a graph of several classes, at [launch] mixed more */
    CU_ASSERT_DOUBLE_EQUAL(d->launch_mixed, 6e-8, 1e-20);
    fp_kernel mixed = one;
    mixed.mixed = true;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &mixed).time_s - fp_roofline_kernel(d, &one).time_s, 6e-8, 1e-15);
    /* the Reshapes dispatched around it (an N-D Gemm's), each at [launch] view */
    fp_kernel reshaped = one;
    reshaped.views = 2;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &reshaped).launch_s, fp_roofline_kernel(d, &one).launch_s, 1e-15);
    d->launch[FP_CLASS_VIEW] = 2.5e-7;
    d->launch_own[FP_CLASS_VIEW] = true;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &reshaped).launch_s - fp_roofline_kernel(d, &one).launch_s, 5e-7,
                           1e-15);
    d->launch[FP_CLASS_VIEW] = 0, d->launch_own[FP_CLASS_VIEW] = false;
    /* half works: only where given (grouped_conv does not inherit conv's) */
    CU_ASSERT_DOUBLE_EQUAL(d->half_work[FP_CLASS_CONV], 16e6, 1e-3);
    CU_ASSERT_DOUBLE_EQUAL(d->half_work[FP_CLASS_GROUPED_CONV], 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(d->half_work[FP_CLASS_EW], 0, 0);
    /* the memory roof by traffic: L1 up to 64 KiB, L2 up to 1 MiB, then memory */
    int level = -1;
    CU_ASSERT_DOUBLE_EQUAL(fp_device_bandwidth_for(d, 65536, &level), 8e11, 1);
    CU_ASSERT_EQUAL(level, 1);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_bandwidth_for(d, 65537, &level), 4e11, 1);
    CU_ASSERT_EQUAL(level, 2);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_bandwidth_for(d, 1048577, &level), 1e11, 1);
    CU_ASSERT_EQUAL(level, 0);
    CU_ASSERT_STRING_EQUAL(fp_roofline_level_name(2), "L2");
    CU_ASSERT_STRING_EQUAL(fp_roofline_level_name(0), "memory");
    /* a profile without the groups: one launch, no levels, no saturation */
    g_autoptr(fp_device) round = load_round();
    CU_ASSERT_PTR_NOT_NULL_FATAL(round);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_bandwidth_for(round, 1, &level), 1e11, 1);
    CU_ASSERT_EQUAL(level, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(round, FP_CLASS_MATMUL), 1e-5, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(round->efficiency[FP_CLASS_GROUPED_CONV], round->efficiency[FP_CLASS_CONV], 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(round->efficiency[FP_CLASS_DILATED_POOL], round->efficiency[FP_CLASS_POOL], 1e-12);
    /* views cost nothing unless the profile says the runtime dispatches them */
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(round, FP_CLASS_VIEW), 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_VIEW), 0, 0);
}

/* dilated_pool falls back to pool's efficiency and launch; [launch] view gives views a cost. */
static void test_model_pool_view(void)
{
    g_autoptr(fp_device) p = load_text(
        "[device]\ndescription=t\ntarget=ort-cpu\nbandwidth=1e11\nmemory_bytes=1e9\nlaunch_overhead=1e-5\n"
        "align_bytes=64\n[peak]\nfp32=1e12\n[efficiency]\npool=0.2\n[launch]\npool=3e-6\nview=2e-6\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_DOUBLE_EQUAL(p->efficiency[FP_CLASS_DILATED_POOL], 0.2, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(p, FP_CLASS_DILATED_POOL), 3e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(p, FP_CLASS_VIEW), 2e-6, 1e-15);
    /* a dilated pool of 2e6 window elements at 0.2 x 1e12: 10 us + the pool's 3 us launch */
    fp_roofline r = fp_roofline_eval(p, 2000000, 1000, FP_DT_FLOAT, FP_CLASS_DILATED_POOL);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 13e-6, 1e-12);
    /* a view: no work, its launch */
    r = fp_roofline_eval(p, 0, 0, FP_DT_FLOAT, FP_CLASS_VIEW);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 2e-6, 1e-15);
}

static void test_roofline_model(void)
{
    g_autoptr(fp_device) d = load_text(MODEL_INI);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    /* an elementwise kernel of 512 KiB streams from L2: 524288 B / (4e11 * 0.5) = 2.62144 us, + 1 us */
    fp_roofline r = fp_roofline_eval(d, 1000, 524288, FP_DT_FLOAT, FP_CLASS_EW);
    CU_ASSERT_EQUAL(r.level, 2);
    CU_ASSERT_DOUBLE_EQUAL(r.memory_s, 524288 / 2e11, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.launch_s, 1e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.time_s, 524288 / 2e11 + 1e-6, 1e-15);
    /* 2 MiB does not fit: memory, 1e11 * 0.5 */
    r = fp_roofline_eval(d, 1000, 2097152, FP_DT_FLOAT, FP_CLASS_EW);
    CU_ASSERT_EQUAL(r.level, 0);
    CU_ASSERT_DOUBLE_EQUAL(r.memory_s, 2097152 / 5e10, 1e-15);
    /* saturation without operands, the cubic law: conv of 2e6 FLOP, half work 16e6:
     * (16e6 / 2e6)^(1/3) = 2, so efficiency 0.5 / 3 */
    fp_kernel k = {.flops = 2000000, .bytes = 1000, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_CONV};
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_efficiency(d, &k), 0.5 / 3, 1e-12);
    r = fp_roofline_kernel(d, &k);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, 2e6 / (1e12 * 0.5 / 3), 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.launch_s, 4e-6, 1e-15);
    /* at the half work itself the efficiency is half */
    k.flops = 16000000;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_efficiency(d, &k), 0.25, 1e-12);
    /* with the GEMM's operands: a cube of n = 200 (W = 2 n^3 = 16e6, D = 3 n^2 = 120000) agrees
     * with the cubic law; a skinny GEMM of the same work (M = 8) saturates much later */
    k.operands = 120000;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_efficiency(d, &k), 0.25, 1e-12);
    k.operands = 8 * 1000 + 1000 * 1000 + 8 * 1000; /* M 8, N 1000, K 1000: 2 M N K = 16e6 */
    double skinny = 0.5 / (1 + cbrt(8e6) / 1.5 * 1016000.0 / 16e6);
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_efficiency(d, &k), skinny, 1e-12);
    CU_ASSERT(skinny < 0.25 / 4);
    /* a class without a half work keeps its efficiency whatever the work */
    fp_kernel e = {.flops = 10, .bytes = 10, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_EW};
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_efficiency(d, &e), d->efficiency[FP_CLASS_EW], 1e-12);
    /* a depthwise convolution of 32 groups: per-group and per-im2col-row launch, saturation with one
     * group's work (grouped_conv has no half work here: efficiency 0.5, its launch conv's 4 us) */
    fp_kernel g = {.flops = 3200000, .bytes = 1000, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_GROUPED_CONV, .parts = 32};
    r = fp_roofline_kernel(d, &g);
    CU_ASSERT_DOUBLE_EQUAL(r.launch_s, 4e-6 + 32 * 1e-7, 1e-15);
    g.rows = 32 * 9 * 14;
    r = fp_roofline_kernel(d, &g);
    CU_ASSERT_DOUBLE_EQUAL(r.launch_s, 4e-6 + 32 * 1e-7 + 32 * 9 * 14 * 2e-9, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r.compute_s, 3.2e6 / 5e11, 1e-15);
    /* a phased class (attention: the KV cache copied, then the heads' GEMMs) adds its memory time
     * to its compute time; matmul, with the same rates here (a refinement without values of its
     * own), takes the larger */
    CU_ASSERT_TRUE(fp_op_class_phased(FP_CLASS_ATTENTION));
    CU_ASSERT_FALSE(fp_op_class_phased(FP_CLASS_MATMUL));
    fp_kernel a = {.flops = 4000000, .bytes = 524288, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_ATTENTION};
    fp_roofline ra = fp_roofline_kernel(d, &a);
    a.cls = FP_CLASS_MATMUL;
    fp_roofline rm = fp_roofline_kernel(d, &a);
    CU_ASSERT_TRUE(ra.memory_s > 0 && ra.compute_s > 0);
    CU_ASSERT_DOUBLE_EQUAL(ra.time_s, ra.compute_s + ra.memory_s + ra.launch_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(rm.time_s, fmax(rm.compute_s, rm.memory_s) + rm.launch_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(ra.time_s - rm.time_s, fmin(rm.compute_s, rm.memory_s), 1e-15);
    /* a dense or pointwise convolution runs in phases on a blocked (MLAS) profile alone (its GEMM on
     * NCHW data moves what outgrows the L2 besides its compute); the NCHWc one never does */
    fp_kernel cv = {.flops = 4000000, .bytes = 524288, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_CONV};
    uint64_t block = d->nchwc_block;
    d->nchwc_block = 0;
    CU_ASSERT_FALSE(fp_device_phased(d, FP_CLASS_CONV) || fp_device_phased(d, FP_CLASS_POINTWISE_CONV));
    CU_ASSERT_TRUE(fp_device_phased(d, FP_CLASS_ATTENTION));
    fp_roofline flat = fp_roofline_kernel(d, &cv);
    CU_ASSERT_DOUBLE_EQUAL(flat.time_s, fmax(flat.compute_s, flat.memory_s) + flat.launch_s, 1e-15);
    d->nchwc_block = 16;
    CU_ASSERT_TRUE(fp_device_phased(d, FP_CLASS_CONV) && fp_device_phased(d, FP_CLASS_POINTWISE_CONV));
    CU_ASSERT_FALSE(fp_device_phased(d, FP_CLASS_NCHWC_CONV) || fp_device_phased(d, FP_CLASS_MATMUL));
    fp_roofline phased = fp_roofline_kernel(d, &cv);
    CU_ASSERT_TRUE(phased.memory_s > 0 && phased.compute_s > 0);
    CU_ASSERT_DOUBLE_EQUAL(phased.time_s, phased.compute_s + phased.memory_s + phased.launch_s, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(phased.time_s - flat.time_s, fmin(flat.compute_s, flat.memory_s), 1e-15);
    /* with cache levels, a convolution adds the share of its bytes past the levels before the last:
     * none within the L2, half at 1.5 times it, all from twice it; attention all of it always */
    fp_cache_level saved[FP_CACHE_LEVELS];
    memcpy(saved, d->cache, sizeof saved);
    d->cache[0] = (fp_cache_level){32768, 4e11};
    d->cache[1] = (fp_cache_level){1 << 20, 2e11};
    d->cache[2] = (fp_cache_level){1 << 25, 1e11};
    const double shares[][2] = {{1 << 19, 0}, {3 << 19, 0.5}, {1 << 21, 1}, {1 << 22, 1}};
    for (size_t i = 0; i < G_N_ELEMENTS(shares); i++) {
        cv.bytes = (uint64_t)shares[i][0];
        cv.cls = FP_CLASS_POINTWISE_CONV;
        fp_roofline p = fp_roofline_kernel(d, &cv);
        double body = fmax(p.compute_s, p.memory_s) + shares[i][1] * fmin(p.compute_s, p.memory_s);
        CU_ASSERT_DOUBLE_EQUAL(p.time_s, body + p.launch_s, 1e-15);
        cv.cls = FP_CLASS_ATTENTION;
        p = fp_roofline_kernel(d, &cv);
        CU_ASSERT_DOUBLE_EQUAL(p.time_s, p.compute_s + p.memory_s + p.launch_s, 1e-15);
    }
    /* a profile without cache levels cannot tell what passes the L2: the max, as elsewhere */
    memset(d->cache, 0, sizeof d->cache);
    cv.cls = FP_CLASS_CONV;
    fp_roofline none = fp_roofline_kernel(d, &cv);
    CU_ASSERT_DOUBLE_EQUAL(none.time_s, fmax(none.compute_s, none.memory_s) + none.launch_s, 1e-15);
    memcpy(d->cache, saved, sizeof saved);
    d->nchwc_block = block;
    /* the ridge of a kernel: its saturated efficiency against its level's roof */
    k.operands = 0;
    k.flops = 2000000;
    k.bytes = 1000;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_ridge_at(d, &k), 1e12 * (0.5 / 3) / (8e11 * 0.5), 1e-9);
}

static void test_model_roundtrip(void)
{
    g_autoptr(fp_device) a = load_text(MODEL_INI);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(a);
    CU_ASSERT_FALSE(g_key_file_has_key(kf, "launch", "matmul", NULL)); /* not the profile's own */
    CU_ASSERT_FALSE(g_key_file_has_key(kf, "saturation", "grouped_conv", NULL));
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) b = fp_device_from_keyfile(kf, "copy.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(b, c), fp_device_launch(a, c), 1e-15);
        CU_ASSERT_DOUBLE_EQUAL(b->half_work[c], a->half_work[c], 1e-3);
        CU_ASSERT_EQUAL(b->launch_own[c], a->launch_own[c]);
    }
    CU_ASSERT_DOUBLE_EQUAL(b->launch_group, a->launch_group, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(b->launch_row, a->launch_row, 1e-20);
    CU_ASSERT(b->launch_row > 0);
    CU_ASSERT_DOUBLE_EQUAL(b->launch_output, a->launch_output, 1e-20);
    CU_ASSERT_DOUBLE_EQUAL(b->launch_mixed, a->launch_mixed, 1e-20);
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        CU_ASSERT_EQUAL(b->cache[i].bytes, a->cache[i].bytes);
        CU_ASSERT_DOUBLE_EQUAL(b->cache[i].bandwidth, a->cache[i].bandwidth, 1);
    }
    /* a profile without them writes none */
    g_autoptr(fp_device) round = load_round();
    CU_ASSERT_PTR_NOT_NULL_FATAL(round);
    g_autoptr(GKeyFile) kr = fp_device_to_keyfile(round);
    CU_ASSERT_FALSE(g_key_file_has_group(kr, "launch"));
    CU_ASSERT_FALSE(g_key_file_has_group(kr, "cache"));
    CU_ASSERT_FALSE(g_key_file_has_group(kr, "saturation"));
}

/* A profile written before the refinement classes (MODEL_INI) estimates them as their parents:
 * efficiency, half work and launch; one that gives a refinement [saturation] 0 has none, and a
 * round trip keeps that none (written as 0) where the parent has one. */
static void test_model_refinements(void)
{
    g_autoptr(fp_device) d = load_text(MODEL_INI);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        if (!fp_op_class_refines((fp_op_class)c))
            continue;
        fp_op_class p = fp_op_class_parent((fp_op_class)c);
        CU_ASSERT_NOT_EQUAL(p, (fp_op_class)c);
        CU_ASSERT_DOUBLE_EQUAL(d->efficiency[c], d->efficiency[p], 0);
        CU_ASSERT_DOUBLE_EQUAL(d->half_work[c], d->half_work[p], 0);
        CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, (fp_op_class)c), fp_device_launch(d, p), 0);
    }
    CU_ASSERT_DOUBLE_EQUAL(d->half_work[FP_CLASS_POINTWISE_CONV], 16e6, 0);
    CU_ASSERT_DOUBLE_EQUAL(d->half_work[FP_CLASS_GEMV], 2e6, 0);
    CU_ASSERT_DOUBLE_EQUAL(fp_device_launch(d, FP_CLASS_TRANSCENDENTAL), 1e-6, 0);
    /* the same kernel costs the same as a pointwise convolution and as a convolution */
    fp_kernel k = {.flops = 2000000, .bytes = 1000, .dtype = FP_DT_FLOAT, .cls = FP_CLASS_CONV, .operands = 50000};
    double conv = fp_roofline_kernel(d, &k).time_s;
    k.cls = FP_CLASS_POINTWISE_CONV;
    CU_ASSERT_DOUBLE_EQUAL(fp_roofline_kernel(d, &k).time_s, conv, 1e-18);

    const char *zero = "[device]\ndescription=t\ntarget=ort-cpu\nbandwidth=1e11\nmemory_bytes=1e9\n"
                       "launch_overhead=1e-5\nalign_bytes=64\n[peak]\nfp32=1e12\n[saturation]\nconv=16e6\n"
                       "pointwise_conv=0\n";
    g_autoptr(fp_device) none = load_text(zero);
    CU_ASSERT_PTR_NOT_NULL_FATAL(none);
    CU_ASSERT_DOUBLE_EQUAL(none->half_work[FP_CLASS_POINTWISE_CONV], 0, 0);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(none);
    CU_ASSERT_DOUBLE_EQUAL(g_key_file_get_double(kf, "saturation", "pointwise_conv", NULL), 0, 0);
    CU_ASSERT_TRUE(g_key_file_has_key(kf, "saturation", "pointwise_conv", NULL));
    CU_ASSERT_FALSE(g_key_file_has_key(kf, "saturation", "gemv", NULL)); /* neither it nor matmul has one */
    g_autoptr(fp_device) back = fp_device_from_keyfile(kf, "copy.ini", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_DOUBLE_EQUAL(back->half_work[FP_CLASS_POINTWISE_CONV], 0, 0);
    CU_ASSERT_DOUBLE_EQUAL(back->half_work[FP_CLASS_CONV], 16e6, 1);
}

/* sweep[i]: a working set of 16 KiB << i at gbs[i] GB/s, for i < n. */
static void doubling_sweep(const double *gbs, size_t n, fp_calibrate_point *sweep)
{
    for (size_t i = 0; i < n; i++)
        sweep[i] = (fp_calibrate_point){(uint64_t)16384 << i, gbs[i] * 1e9};
}

/* fp_calibrate_cache_levels on sweeps shaped like this project's VM (a 48 KiB L1, a 1 MiB L2 and
 * an L3 reported as 508 MiB that streams like memory beyond 32 MiB). */
static void test_cache_levels(void)
{
    static const double gbs[] = {165, 170, 150, 155, 154, 156, 128, 100, 92, 87, 90, 55, 49, 39, 31, 25};
    fp_calibrate_point sweep[G_N_ELEMENTS(gbs)];
    doubling_sweep(gbs, G_N_ELEMENTS(gbs), sweep);
    uint64_t reported[FP_CALIBRATE_LEVELS] = {49152, 1048576, 532676608};
    fp_calibrate_point out[FP_CALIBRATE_LEVELS];
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), reported, 25e9, out);
    /* L1: the reported size, the one point inside (16 KiB); 165 is 6% above the L2's 155: dropped */
    CU_ASSERT_EQUAL(out[0].bytes, 0);
    /* L2: reported size; median of 128, 256, 512 KiB (155, 154, 156) */
    CU_ASSERT_EQUAL(out[1].bytes, 1048576);
    CU_ASSERT_DOUBLE_EQUAL(out[1].bandwidth, 155e9, 1);
    /* L3: half of 508 MiB streams at 31 GB/s, not on the level's plateau: the capacity is where
     * the sweep falls through sqrt(100 x 25) = 50 GB/s, between 32 MiB at 55 and 64 MiB at 49
     * (5/6 of the way, geometric in size); bandwidth: median of 4, 8, 16 MiB */
    CU_ASSERT_EQUAL(out[2].bytes, (uint64_t)(33554432.0 * pow(2, 5.0 / 6)));
    CU_ASSERT_DOUBLE_EQUAL(out[2].bandwidth, 90e9, 1);
    /* a distinct L1 is kept */
    sweep[0].bandwidth = sweep[1].bandwidth = 400e9;
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), reported, 25e9, out);
    CU_ASSERT_EQUAL(out[0].bytes, 49152);
    CU_ASSERT_DOUBLE_EQUAL(out[0].bandwidth, 400e9, 1);
    /* nothing reported: no levels */
    uint64_t none[FP_CALIBRATE_LEVELS] = {0, 0, 0};
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), none, 25e9, out);
    for (int i = 0; i < FP_CALIBRATE_LEVELS; i++)
        CU_ASSERT_EQUAL(out[i].bytes, 0);
}

/* fp_calibrate_cache_levels and fp_calibrate_last_from on this project's VM of 2026-12-07 (an L3
 * reported as 480 MiB, memory 15.7 GB/s): its 128 MiB point, a quarter of the size, streams at
 * 22.1 GB/s, above half the level's best of 30.3 but 0.42 of the way in time per byte to memory's
 * rate: no plateau. The capacity is where the sweep falls through sqrt(30.3 x 15.74) GB/s, just
 * past 128 MiB (132 MiB); the loss starts at 0.82 of it (ONNX Runtime's one-row products of 4 MB
 * weights on the same VM: none lost to 64 MB of them, a sixth at 100 MB, all at 270 MB;
 * docs/devices.md, "The last level of a VM"). */
static void test_cache_levels_vm(void)
{
    static const double gbs[] = {192.8, 195.1, 134.1, 135.2, 135.8, 139.2, 136.4, 77.0,
                                 30.3,  29.6,  29.7,  30.0,  29.2,  22.1,  16.8};
    fp_calibrate_point sweep[G_N_ELEMENTS(gbs)], out[FP_CALIBRATE_LEVELS];
    doubling_sweep(gbs, G_N_ELEMENTS(gbs), sweep);
    uint64_t reported[FP_CALIBRATE_LEVELS] = {49152, 2097152, 503316480};
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), reported, 15.74e9, out);
    double edge = sqrt(30.3 * 15.74), t = (22.1 - edge) / (22.1 - 16.8);
    CU_ASSERT_EQUAL(out[2].bytes, (uint64_t)(134217728.0 * pow(2, t)));
    CU_ASSERT_DOUBLE_EQUAL(out[2].bandwidth, 29.65e9, 1e3);
    double from = fp_calibrate_last_from(sweep, G_N_ELEMENTS(gbs), out, 15.74e9);
    CU_ASSERT(from > 0.8 && from < 0.85);
    sweep[13].bandwidth = 28e9; /* a quarter of the size nearly at the level's rate: its plateau */
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), reported, 15.74e9, out);
    CU_ASSERT_EQUAL(out[2].bytes, 503316480);
}

/* The triad is raised to the sweep's fastest point at its working set or beyond, not to one inside
 * the caches, and only the one-thread value of a one-thread calibration. */
static void test_raise_triad(void)
{
    fp_calibrate_result r = {.triad = 22.6e9, .triad_1t = 30e9, .triad_bytes = (uint64_t)512 << 20, .n_sweep = 3};
    r.sweep[0] = (fp_calibrate_point){(uint64_t)32 << 20, 70e9};
    r.sweep[1] = (fp_calibrate_point){(uint64_t)256 << 20, 39.5e9};
    r.sweep[2] = (fp_calibrate_point){(uint64_t)512 << 20, 35.6e9};
    fp_calibrate_raise_triad(&r, 4);
    CU_ASSERT_DOUBLE_EQUAL(r.triad, 35.6e9, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.triad_1t, 30e9, 1);
    fp_calibrate_raise_triad(&r, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.triad_1t, 35.6e9, 1);
    r.sweep[2].bandwidth = 20e9; /* a slower repeat lowers nothing */
    fp_calibrate_raise_triad(&r, 1);
    CU_ASSERT_DOUBLE_EQUAL(r.triad, 35.6e9, 1);
}

/* fp_calibrate_last_from on the triad sweep of this project's VM (2026-12-06: an L3 of 300 MiB at
 * 34.0 GB/s, memory 19.4): its 256 MiB point, 0.853 of the L3, ran at 30.2 GB/s, 0.167 of the
 * way in time per byte to memory's: the loss starts at 0.686 of the L3. A point settled at the
 * level's rate or memory's says nothing (0); the least it gives is 0.25; no level, 0. */
static void test_last_from(void)
{
    static const double gbs[] = {179.4, 177.5, 129.4, 127.9, 128.0, 127.6, 128.1, 123.4,
                                 34.0,  34.0,  34.0,  34.0,  33.9,  33.5,  30.2,  19.4};
    fp_calibrate_point sweep[G_N_ELEMENTS(gbs)];
    doubling_sweep(gbs, G_N_ELEMENTS(gbs), sweep);
    uint64_t reported[FP_CALIBRATE_LEVELS] = {49152, 2097152, 314572800};
    fp_calibrate_point levels[FP_CALIBRATE_LEVELS];
    fp_calibrate_cache_levels(sweep, G_N_ELEMENTS(gbs), reported, 19.4e9, levels);
    CU_ASSERT_EQUAL_FATAL(levels[2].bytes, 314572800);
    CU_ASSERT_DOUBLE_EQUAL(levels[2].bandwidth, 34e9, 1);
    const double x = 268435456.0 / 314572800, f = (1 / 30.2 - 1 / 34.0) / (1 / 19.4 - 1 / 34.0);
    CU_ASSERT_DOUBLE_EQUAL(fp_calibrate_last_from(sweep, G_N_ELEMENTS(gbs), levels, 19.4e9), x - f, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(x - f, 0.686, 1e-3);
    sweep[14].bandwidth = 33.9e9; /* the L3 holds 256 MiB: no point on the ramp */
    CU_ASSERT_EQUAL(fp_calibrate_last_from(sweep, G_N_ELEMENTS(gbs), levels, 19.4e9), 0);
    sweep[14].bandwidth = 20e9; /* nearly memory's rate at 0.85 of the level: at least 0.25 */
    CU_ASSERT_DOUBLE_EQUAL(fp_calibrate_last_from(sweep, G_N_ELEMENTS(gbs), levels, 19.4e9), 0.25, 1e-12);
    fp_calibrate_point none[FP_CALIBRATE_LEVELS] = {{0, 0}};
    CU_ASSERT_EQUAL(fp_calibrate_last_from(sweep, G_N_ELEMENTS(gbs), none, 19.4e9), 0);
}

/* `devices` shows a profile's [cache] levels and where a run's footprint starts to lose the last
 * (text and JSON; "not measured" and null without last_from, which a round trip keeps); a profile
 * without [cache] shows none. The launch line adds [launch] output where the profile has it, and a
 * line below it [launch] mixed. */
static void test_cli_device_cache(void)
{
    const char *with = MODEL_INI "last_from=0.7\nlast_life=0.016\n";
    g_autofree char *path = tu_write_temp(with, strlen(with), ".ini");
    tu_run_result r = tu_run((const char *[]){"devices", path, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "cache        L1 64.0 KiB at 800 GB/s, L2 1.0 MiB at 400 GB/s; a run's "
                                         "footprint loses the last from 0.7 of its capacity, which keeps a "
                                         "run's weights 16 ms (a mean life)\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "launch       10 us per kernel, 0.15 us per output of one past its first\n"
                                         "             0.06 us more per kernel of a graph of 4 classes or more\n"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"devices", "-f", "json", path, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(o, "cache_last_from"), 0.7, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(o, "cache_last_life_s"), 0.016, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(o, "launch_output"), 1.5e-7, 1e-20);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(o, "launch_mixed"), 6e-8, 1e-20);
    JsonArray *levels = json_object_get_array_member(o, "cache");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(levels), 2);
    CU_ASSERT_EQUAL(json_object_get_int_member(json_array_get_object_element(levels, 1), "bytes"), 1048576);
    tu_run_clear(&r);
    g_unlink(path);
    g_autoptr(fp_device) d = load_text(with);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    g_autoptr(GKeyFile) kf = fp_device_to_keyfile(d);
    CU_ASSERT_DOUBLE_EQUAL(g_key_file_get_double(kf, "cache", "last_from", NULL), 0.7, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(g_key_file_get_double(kf, "cache", "last_life", NULL), 0.016, 1e-12);

    g_autofree char *bare = tu_write_temp(MODEL_INI, strlen(MODEL_INI), ".ini");
    r = tu_run((const char *[]){"devices", bare, NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "loses the last from 1 of its capacity (not measured)\n"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"devices", "-f", "json", bare, NULL});
    g_autoptr(JsonParser) p2 = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p2, r.out, -1, NULL));
    CU_ASSERT(json_object_get_null_member(json_node_get_object(json_parser_get_root(p2)), "cache_last_from"));
    CU_ASSERT(json_object_get_null_member(json_node_get_object(json_parser_get_root(p2)), "cache_last_life_s"));
    tu_run_clear(&r);
    g_unlink(bare);
    r = tu_run((const char *[]){"devices", ROUND_INI, NULL});
    CU_ASSERT_PTR_NULL(strstr(r.out, "cache  "));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "launch       10 us per kernel\n")); /* no [launch] output */
    tu_run_clear(&r);
}

/* The saturation fit of a convolution class's big and small layers, on hand-made rates: a pair on
 * a line of e <= 1 gives that line; a small layer no slower per FLOP, no saturation; a pair no e <= 1
 * explains (the development VM's conv rates; a big layer above the peak), e = 1 and both estimates
 * off by one factor, opposite ways. */
static void test_saturation_fit(void)
{
    double e, h;
    /* e 0.8, cbrt(h / 2) = 50: y = (1 + 50 s) / 0.8 at s 0.006 and 0.013 */
    fp_calibrate_saturation_fit(100, 100 / 1.625, 0.006, 100 / 2.0625, 0.013, &e, &h);
    CU_ASSERT_DOUBLE_EQUAL(e, 0.8, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(h, 2 * 50.0 * 50 * 50, 1e-6);
    fp_calibrate_saturation_fit(100, 60, 0.006, 70, 0.013, &e, &h);
    CU_ASSERT_DOUBLE_EQUAL(e, 0.6, 1e-12);
    CU_ASSERT_EQUAL(h, 0);
    const double pairs[][4] = {{142.9e9, 0.00589, 58.27e9, 0.0133}, {198.6e9, 0.00589, 106.3e9, 0.0133}};
    for (size_t i = 0; i < G_N_ELEMENTS(pairs); i++) {
        const double peak = 192.16e9, *p = pairs[i];
        fp_calibrate_saturation_fit(peak, p[0], p[1], p[2], p[3], &e, &h);
        CU_ASSERT_EQUAL(e, 1);
        CU_ASSERT_FATAL(h > 0);
        double c = cbrt(h / 2), big = peak / (1 + c * p[1]), small = peak / (1 + c * p[3]);
        CU_ASSERT(big < p[0] && small > p[2]);
        CU_ASSERT_DOUBLE_EQUAL(p[0] / big, small / p[2], 1e-9);
    }
}

/* fp_calibrate_sgemm against a naive product, for every kernel this CPU runs, on odd shapes. */
static void test_sgemm(void)
{
    static const size_t shapes[][3] = {{1, 1, 1},     {7, 13, 5},    {6, 16, 256},
                                       {37, 50, 300}, {100, 33, 17}, {13, 70, 600}};
    GRand *rnd = g_rand_new_with_seed(11);
    int kernels_run = 0;
    for (int k = FP_CALIBRATE_KERNEL_AUTO; k < FP_CALIBRATE_KERNEL_COUNT; k++) {
        if (!fp_calibrate_kernel_supported(k))
            continue;
        kernels_run++;
        for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
            size_t m = shapes[s][0], n = shapes[s][1], kk = shapes[s][2];
            size_t lda = kk + 3, ldb = n + 1, ldc = n + 2; /* leading dimensions wider than the matrices */
            float *a = g_new(float, m *lda), *b = g_new(float, kk *ldb), *c = g_new(float, m *ldc);
            double *ref = g_new0(double, m *n);
            for (size_t i = 0; i < m * lda; i++)
                a[i] = (float)g_rand_double_range(rnd, -1, 1);
            for (size_t i = 0; i < kk * ldb; i++)
                b[i] = (float)g_rand_double_range(rnd, -1, 1);
            for (size_t i = 0; i < m * ldc; i++)
                c[i] = 0.5f; /* C is accumulated into */
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++) {
                    double acc = 0.5;
                    for (size_t p = 0; p < kk; p++)
                        acc += (double)a[i * lda + p] * b[p * ldb + j];
                    ref[i * n + j] = acc;
                }
            fp_calibrate_sgemm(k, m, n, kk, a, lda, b, ldb, c, ldc);
            double worst = 0;
            for (size_t i = 0; i < m; i++)
                for (size_t j = 0; j < n; j++)
                    worst = fmax(worst, fabs(c[i * ldc + j] - ref[i * n + j]));
            if (worst > 1e-3)
                fprintf(stderr, "\n  kernel %s %zux%zux%zu: error %g", fp_calibrate_kernel_name(k), m, n, kk, worst);
            CU_ASSERT(worst <= 1e-3);
            /* the padding columns of C are untouched */
            for (size_t i = 0; i < m; i++)
                CU_ASSERT_EQUAL(c[i * ldc + n], 0.5f);
            g_free(a);
            g_free(b);
            g_free(c);
            g_free(ref);
        }
    }
    CU_ASSERT(kernels_run >= 2); /* auto and portable always */
    g_rand_free(rnd);
}

/* ---- through the CLI ---- */

static void expect_cli_bad(const char *const *args, const char *needle)
{
    tu_run_result r = tu_run(args);
    CU_ASSERT_EQUAL(r.status, 2);
    CU_ASSERT_EQUAL(tu_lines(r.err), 1);
    if (!strstr(r.err, needle))
        fprintf(stderr, "\n  expected '%s' in: %s", needle, r.err);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, needle));
    tu_run_clear(&r);
}

static void check_cli_devices(void *unused)
{
    (void)unused;
    tu_run_result r = tu_run((const char *[]){"devices", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_STRING_EQUAL(r.err, "");
    CU_ASSERT(g_str_has_prefix(r.out, "NAME"));
    for (size_t i = 0; shipped[i]; i++) {
        g_autofree char *line = g_strdup_printf("\n%s ", shipped[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(r.out, line));
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "19.5 TFLOP/s")); /* a100 fp32 */
    tu_run_clear(&r);

    r = tu_run((const char *[]){"devices", "--format", "json", NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "schema"), 1);
    JsonArray *devs = json_object_get_array_member(o, "devices");
    CU_ASSERT_FATAL(devs != NULL);
    guint found = 0;
    for (guint i = 0; i < json_array_get_length(devs); i++) {
        JsonObject *d = json_array_get_object_element(devs, i);
        const char *name = json_object_get_string_member(d, "name");
        found += g_strv_contains(shipped, name);
        JsonObject *peak = json_object_get_object_member(d, "peak_flops");
        CU_ASSERT(json_object_get_double_member(peak, "float32") > 0);
        CU_ASSERT(json_object_get_double_member(d, "bandwidth") > 0);
        CU_ASSERT(json_object_get_int_member(d, "memory_bytes") > 0);
        CU_ASSERT(json_object_has_member(d, "efficiency"));
        if (g_strcmp0(name, "h100") == 0) {
            CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(peak, "float16"), 989.5e12, 1);
            CU_ASSERT_STRING_EQUAL(json_object_get_string_member(d, "target"), "cuda");
        }
    }
    CU_ASSERT_EQUAL(found, g_strv_length((char **)shipped));
    tu_run_clear(&r);
}

static void test_cli_devices(void) { with_devices_env(NULL, check_cli_devices, NULL); }

static void test_cli_device_show(void)
{
    tu_run_result r = tu_run((const char *[]){"devices", "a100", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "target       cuda"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "312 TFLOP/s"));
    CU_ASSERT_PTR_NULL(strstr(r.out, "run          ")); /* shown only when the profile has a run overhead */
    tu_run_clear(&r);

    r = tu_run((const char *[]){"devices", "-f", "json", ROUND_INI, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p, r.out, -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    CU_ASSERT_EQUAL(json_object_get_int_member(o, "schema"), 1);
    CU_ASSERT_STRING_EQUAL(json_object_get_string_member(o, "name"), "round");
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_object_get_object_member(o, "ridge_point"), "float32"),
                           10.0, 1e-9);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_object_get_object_member(o, "efficiency"), "norm"), 1.0,
                           1e-12);
    JsonArray *rules = json_object_get_array_member(o, "rule_groups");
    CU_ASSERT_STRING_EQUAL(json_array_get_string_element(rules, 0), "rule.test");
    tu_run_clear(&r);
    CU_ASSERT_EQUAL(json_object_get_double_member(o, "run_overhead"), 0);

    /* a fitted profile's run overhead shows in both */
    g_autofree char *text = NULL;
    CU_ASSERT_FATAL(g_file_get_contents(ROUND_INI, &text, NULL, NULL));
    g_autofree char *fitted = g_build_filename(g_get_tmp_dir(), "fp_test_run_overhead.ini", NULL);
    char *at = strstr(text, "[device]\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(at);
    g_autofree char *edited =
        g_strdup_printf("%.*s[device]\nrun_overhead=2.5e-6\ninput_overhead=7e-8\noutput_overhead=1.3e-7\n"
                        "weight_bandwidth=2.2e10\n"
                        "weight_l3_bandwidth=5.1e10\ndenormal_mac_s=2.1e-9\ndenormal_exp_s=2.5e-8\n%s",
                        (int)(at - text), text, at + strlen("[device]\n"));
    CU_ASSERT_FATAL(g_file_set_contents(fitted, edited, -1, NULL));
    r = tu_run((const char *[]){"devices", fitted, NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "run          2.5 us per inference"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "run I/O      0.07 us per graph input and 0.13 us per output past the first"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "weights      22 GB/s where no cache holds them"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "weights L3   51 GB/s where a GEMM reads its packed weights from past the L2"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(r.out, "denormals    2.1 ns more per multiply-add on one, 25 ns per Softmax result that is one"));
    tu_run_clear(&r);
    r = tu_run((const char *[]){"devices", "-f", "json", fitted, NULL});
    CU_ASSERT_EQUAL_FATAL(r.status, 0);
    g_autoptr(JsonParser) p2 = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(p2, r.out, -1, NULL));
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "run_overhead"),
                           2.5e-6, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "output_overhead"),
                           1.3e-7, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "weight_bandwidth"),
                           2.2e10, 1);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "weight_l3_bandwidth"),
                           5.1e10, 1);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "denormal_mac_s"),
                           2.1e-9, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(json_node_get_object(json_parser_get_root(p2)),
                                                         "denormal_exp_s"),
                           2.5e-8, 1e-18);
    tu_run_clear(&r);
    g_unlink(fitted);

    expect_cli_bad((const char *[]){"devices", "no-such-device", NULL}, "no device profile 'no-such-device'");
    expect_cli_bad((const char *[]){"devices", "-f", "xml", NULL}, "unknown format 'xml'");
    expect_cli_bad((const char *[]){"devices", "a100", "h100", NULL}, "at most one");
    const char *bad = DEV "[peak]\nfp32=1e12\nfp33=1\n";
    g_autofree char *path = tu_write_temp(bad, strlen(bad), ".ini");
    g_autofree char *needle = g_strdup_printf("%s: [peak] fp33: unknown key (valid keys: ", path);
    expect_cli_bad((const char *[]){"devices", path, NULL}, needle);
    g_unlink(path);
}

static void test_cli_calibrate(void)
{
    g_autofree char *out = tu_write_temp("old", 3, ".ini");
    tu_run_result r = tu_run(
        (const char *[]){"calibrate", "-o", out, "--seconds", "0.01", "--threads", "2", "--triad-mib", "8", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "wrote"));
    /* stderr is a pipe here: one line per phase (two SGEMM, two triad, the cache sweep, the
     * convolution classes), no carriage returns, and the note on the accuracy to expect */
    CU_ASSERT_EQUAL(tu_lines(r.err), 7);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.err, "--runtime onnxruntime"));
    CU_ASSERT_PTR_NULL(strchr(r.err, '\r'));
    tu_run_clear(&r);
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load(out, &err);
    if (!d)
        fprintf(stderr, "\n  %s", err->message);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(d->target, "ort-cpu");
    CU_ASSERT(d->peak_flops[FP_DT_FLOAT] > 0);
    CU_ASSERT(d->bandwidth > 0);
    CU_ASSERT(d->memory_bytes > 0);
    CU_ASSERT(g_key_file_get_double(d->keyfile, "calibration", "fp32_flops_1t", NULL) > 0);
    CU_ASSERT(g_key_file_get_double(d->keyfile, "calibration", "triad_bandwidth_1t", NULL) > 0);
    CU_ASSERT_EQUAL(g_key_file_get_integer(d->keyfile, "calibration", "threads", NULL), 2);
#if defined(__x86_64__)
    /* the ISA MLAS dispatches on, and the NCHWc block it gives (16 with AVX-512F, else 8) */
    g_autofree char *isa = g_key_file_get_string(d->keyfile, "calibration", "isa", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(isa);
    CU_ASSERT_EQUAL(d->nchwc_block, strcmp(isa, "AVX-512F") == 0 ? 16 : 8);
    CU_ASSERT_EQUAL(strcmp(isa, "AVX-512F") == 0, __builtin_cpu_supports("avx512f") != 0);
    g_autofree char *why = fp_device_nchwc_reason(d);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, isa));
#endif

    /* cache levels, when the sweep found any, load (grow outward: checked by the loader) with a
     * bandwidth; how they and the convolution classes rank is timing, checked on a longer
     * calibration in `make bench` (bench/runtime_calibration.py), not here */
    for (int i = 0; i < FP_CACHE_LEVELS; i++)
        CU_ASSERT(d->cache[i].bytes == 0 || d->cache[i].bandwidth > 0);
    CU_ASSERT(g_key_file_has_key(d->keyfile, "calibration", "triad_sweep", NULL));
    /* every convolution class measured, its efficiency a fraction; the refinements their parents' */
    static const char *const rates[] = {"conv_flops_1t",       "conv_small_flops_1t",       "grouped_conv_flops_1t",
                                        "nchwc_conv_flops_1t", "nchwc_conv_small_flops_1t", "nchwc_depthwise_flops_1t"};
    for (size_t i = 0; i < G_N_ELEMENTS(rates); i++)
        CU_ASSERT(g_key_file_get_double(d->keyfile, "calibration", rates[i], NULL) > 0);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        CU_ASSERT(d->efficiency[c] > 0 && d->efficiency[c] <= 1);
        if (fp_op_class_refines((fp_op_class)c))
            CU_ASSERT_DOUBLE_EQUAL(d->efficiency[c], d->efficiency[fp_op_class_parent((fp_op_class)c)], 1e-6);
    }
    /* the threads the rates are for: in the profile, and in what report prints */
    CU_ASSERT_EQUAL(d->threads, 2);
    r = tu_run((const char *[]){"report", "--device", out, FP_SOURCE_DIR "/models/resnet_tiny.onnx", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "(rates for 2 threads)"));
    tu_run_clear(&r);
    r = tu_run(
        (const char *[]){"report", "--device", out, "-f", "json", FP_SOURCE_DIR "/models/resnet_tiny.onnx", NULL});
    CU_ASSERT_PTR_NOT_NULL(strstr(r.out, "\"device_threads\" : 2"));
    tu_run_clear(&r);

    /* the portable kernel and one thread: two phases, the sweep and the convolution classes, the
     * note; --no-cache: one line fewer */
    r = tu_run((const char *[]){"calibrate", "-o", out, "--seconds", "0.01", "--threads", "1", "--kernel", "portable",
                                "--triad-mib", "8", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 5);
    tu_run_clear(&r);
    r = tu_run((const char *[]){"calibrate", "-o", out, "--seconds", "0.01", "--threads", "1", "--kernel", "portable",
                                "--triad-mib", "8", "--no-cache", NULL});
    CU_ASSERT_EQUAL(r.status, 0);
    CU_ASSERT_EQUAL(tu_lines(r.err), 4);
    tu_run_clear(&r);
    g_autoptr(fp_device) d2 = fp_device_load(out, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d2);
    g_autofree char *kernel = g_key_file_get_string(d2->keyfile, "calibration", "kernel", NULL);
    CU_ASSERT_STRING_EQUAL(kernel, "portable");
    /* --threads all and 0: all cores (the physical ones), recorded */
    const char *const all[] = {"all", "0"};
    for (size_t i = 0; i < G_N_ELEMENTS(all); i++) {
        r = tu_run((const char *[]){"calibrate", "-o", out, "--seconds", "0.01", "--threads", all[i], "--kernel",
                                    "portable", "--triad-mib", "8", "--no-cache", NULL});
        CU_ASSERT_EQUAL(r.status, 0);
        tu_run_clear(&r);
        g_autoptr(fp_device) d3 = fp_device_load(out, &err);
        CU_ASSERT_PTR_NOT_NULL_FATAL(d3);
        CU_ASSERT_EQUAL(d3->threads, (uint64_t)fp_calibrate_runtime_threads());
    }

    expect_cli_bad((const char *[]){"calibrate", "--seconds", "0", NULL}, "--seconds must be in (0, 600]");
    const char *const bad_threads[] = {"-1", "5000", "many", "2x", ""};
    for (size_t i = 0; i < G_N_ELEMENTS(bad_threads); i++) {
        g_autofree char *needle = g_strdup_printf("--threads '%s': a count in [1, 4096], or 0 or 'all'",
                                                  bad_threads[i]);
        expect_cli_bad((const char *[]){"calibrate", "--threads", bad_threads[i], NULL}, needle);
    }
    expect_cli_bad((const char *[]){"calibrate", "--kernel", "sse9", NULL}, "unknown kernel 'sse9'");
    expect_cli_bad((const char *[]){"calibrate", "-o", "/nonexistent/dir/host.ini", NULL},
                   "directory '/nonexistent/dir' does not exist");
    expect_cli_bad((const char *[]){"calibrate", "extra", NULL}, "unexpected argument 'extra'");
    g_unlink(out);
}

FP_TEST_SUITE(register_device)
{
    CU_pSuite s = CU_add_suite("device", NULL, NULL);
    CU_add_test(s, "shipped", test_shipped);
    CU_add_test(s, "invalid", test_invalid);
    CU_add_test(s, "not_found", test_not_found);
    CU_add_test(s, "env_lookup", test_env_lookup);
    CU_add_test(s, "round_values", test_round_values);
    CU_add_test(s, "roofline", test_roofline);
    CU_add_test(s, "keyfile_roundtrip", test_keyfile_roundtrip);
    CU_add_test(s, "model_groups", test_model_groups);
    CU_add_test(s, "model_pool_view", test_model_pool_view);
    CU_add_test(s, "roofline_model", test_roofline_model);
    CU_add_test(s, "model_roundtrip", test_model_roundtrip);
    CU_add_test(s, "model_refinements", test_model_refinements);
    CU_add_test(s, "cache_levels", test_cache_levels);
    CU_add_test(s, "cache_levels_vm", test_cache_levels_vm);
    CU_add_test(s, "raise_triad", test_raise_triad);
    CU_add_test(s, "last_from", test_last_from);
    CU_add_test(s, "saturation_fit", test_saturation_fit);
    CU_add_test(s, "sgemm", test_sgemm);
    CU_add_test(s, "cli_devices", test_cli_devices);
    CU_add_test(s, "cli_device_show", test_cli_device_show);
    CU_add_test(s, "cli_device_cache", test_cli_device_cache);
    CU_add_test(s, "cli_calibrate", test_cli_calibrate);
}

/* fuzz_run.c - the input surfaces of fuseplan as functions of a byte buffer (see fuzz_run.h).
 *
 * Device profiles and fusion targets are loaded once and kept for the process (libFuzzer runs
 * millions of inputs); everything an input creates is freed before the function returns, so
 * LeakSanitizer sees a leak as soon as one input causes it. */
#define _GNU_SOURCE /* memfd_create */
#include "fuzz_run.h"

#include <glib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calibration/timings.h"
#include "devices/device.h"
#include "frontends/ge/ge.h"
#include "frontends/onnx/onnx.h"
#include "frontends/onnx/onnx_text.h"
#include "frontends/pbtxt/pbtxt.h"
#include "passes/memory/headroom.h"
#include "analysis/pipeline.h"
#include "reports/dot.h"
#include "reports/gate.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/report.h"

/* Headroom re-infers the model at up to ~2 log2(max) batches: only on small graphs, bounded. */
#define FZ_HEADROOM_MAX_NODES 64
#define FZ_HEADROOM_MAX_BATCH 4096
/* The decoder a fuzzed genai_config.json describes. */
#define FZ_GENAI_MODEL FP_SOURCE_DIR "/models/decoder_int4.onnx"
/* The model analyzed with a fuzzed device profile or target. */
#define FZ_INI_MODEL FP_SOURCE_DIR "/models/eps_story.onnx"

typedef struct {
    GPtrArray *devices; /* fp_device*, every shipped profile */
    GPtrArray *targets; /* fp_target*, every shipped target */
    uint8_t *ini_model;
    size_t ini_model_len;
} fz_state;

static char last_error[2048];

const char *fz_last_error(void) { return last_error; }

uint8_t *fz_read_file(const char *path, size_t *len)
{
    gchar *data = NULL;
    gsize n = 0;
    if (!g_file_get_contents(path, &data, &n, NULL))
        return NULL;
    *len = n;
    return (uint8_t *)data;
}

/* Loaded on first use and kept until exit (reachable: not a leak). */
static const fz_state *state(void)
{
    static fz_state s;
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        s.devices = g_ptr_array_new();
        s.targets = g_ptr_array_new();
        g_auto(GStrv) dnames = fp_device_list();
        for (char **n = dnames; *n; n++) {
            fp_device *d = fp_device_load(*n, NULL);
            if (d)
                g_ptr_array_add(s.devices, d);
        }
        g_auto(GStrv) tnames = fp_target_list();
        for (char **n = tnames; *n; n++) {
            fp_target *t = fp_target_load(*n, NULL);
            if (t)
                g_ptr_array_add(s.targets, t);
        }
        g_assert(s.devices->len > 0 && s.targets->len > 0);
        s.ini_model = fz_read_file(FZ_INI_MODEL, &s.ini_model_len);
        g_assert(s.ini_model);
        g_once_init_leave(&once, 1);
    }
    return &s;
}

/* Classifies a refusal: a message is the contract (fp_cli_error flattens the control characters
 * that names taken from the file may carry into it); no message, or a pass bug, is a bug. */
static fz_outcome refused(GError *err)
{
    const char *msg = err ? err->message : "";
    g_strlcpy(last_error, msg, sizeof last_error);
    if (!*msg)
        return FZ_BAD_ERROR;
    if (g_str_has_prefix(msg, "IR invalid after pass")) /* debug builds verify between passes */
        return FZ_BAD_ERROR;
    return FZ_REJECTED;
}

static unsigned checksum(const uint8_t *data, size_t len)
{
    unsigned h = (unsigned)len;
    for (size_t i = 0; i < len && i < 64; i++)
        h = h * 31u + data[i];
    return h;
}

/* Every report emitter into a memory stream, then discarded; the gate summary when a policy is given. */
static void emit_reports(const fp_report *rep, unsigned salt, const fp_gate_policy *policy)
{
    char *buf = NULL;
    size_t blen = 0;
    FILE *out = open_memstream(&buf, &blen);
    g_assert(out);
    fp_report_text(rep, out);
    if (policy) {
        fp_gate_result *g = fp_gate_evaluate(policy, rep);
        fp_gate_text(g, out, salt & 1);
        fp_gate_result_free(g);
    }
    switch (salt % 4) {
    case 0:
        fp_report_markdown(rep, out);
        break;
    case 1:
        fp_report_html(rep, out);
        break;
    case 2:
        fp_report_dot(rep, out);
        break;
    default:
        break;
    }
    fclose(out);
    free(buf);
    fp_jsonw *w = fp_jsonw_new();
    fp_report_json(rep, w);
    g_free(fp_jsonw_finish(w, NULL));
}

/* The `fuseplan report` sequence on m (which it modifies): pipeline, reports, headroom. */
static fz_outcome analyze(fp_model *m, const fp_device *dev, const fp_target *t, unsigned salt,
                          const fp_gate_policy *policy)
{
    g_autoptr(GError) err = NULL;
    if (!fp_model_verify(m, &err))
        return refused(err);
    fp_pipeline_opts po = {
        .shapes = {.batch = salt & 1 ? 1 : 0},
        .target = t,
        .device = dev,
        .memory = {.strategy = FP_MEMPLAN_BEST,
                   .schedule = salt & 2 ? FP_SCHEDULE_GIVEN : FP_SCHEDULE_COMPARE,
                   .align = dev->align_bytes,
                   .every_strategy = !(salt & 2)},
        .what_if = salt & 4 ? FP_DT_FLOAT16 : FP_DT_UNDEFINED,
    };
    g_autoptr(fp_diag) diag = fp_diag_new();
    fp_pipeline_result res;
    if (!fp_pipeline_run(m, &po, &res, diag, &err)) {
        fp_pipeline_result_clear(&res);
        return refused(err);
    }
    fp_model_stats st;
    fp_model_get_stats(m, &st);
    fp_headroom_result hr = {0};
    bool have = false;
    if (st.nodes <= FZ_HEADROOM_MAX_NODES) {
        fp_headroom_opts ho = {.capacity = dev->memory_bytes,
                               .reserve = dev->memory_bytes / 10,
                               .mem = po.memory,
                               .max_batch = FZ_HEADROOM_MAX_BATCH,
                               .shapes = po.shapes};
        g_autoptr(GError) herr = NULL;
        have = fp_pass_headroom(m, &ho, &hr, NULL, &herr);
        fz_outcome o = have || !herr ? FZ_OK : refused(herr);
        if (o == FZ_BAD_ERROR) {
            fp_pipeline_result_clear(&res);
            return o;
        }
    }
    fp_report rep = {.model = m,
                     .target = t,
                     .device = dev,
                     .res = &res,
                     .diag = diag,
                     .what_if = po.what_if,
                     .headroom = have ? &hr : NULL,
                     .headroom_note = "not computed",
                     .top = 10};
    /* after headroom, as `fuseplan report` emits them: the model is inferred as the plan saw it */
    emit_reports(&rep, salt, policy);
    fp_pipeline_result_clear(&res);
    return FZ_OK;
}

static fz_outcome load_and_analyze(fp_model *m, GError *err, unsigned salt)
{
    if (!m)
        return refused(err);
    const fz_state *s = state();
    const fp_device *dev = s->devices->pdata[salt % s->devices->len];
    const fp_target *t = s->targets->pdata[(salt / 8) % s->targets->len];
    fz_outcome o = analyze(m, dev, t, salt, NULL);
    fp_model_free(m);
    return o;
}

fz_outcome fz_run_onnx(const uint8_t *data, size_t len)
{
    GError *err = NULL;
    fp_model *m = fp_onnx_load_buffer("fuzz.onnx", data, len, &err);
    fz_outcome o = load_and_analyze(m, err, checksum(data, len));
    g_clear_error(&err);
    return o;
}

static bool peek_field(unsigned depth, const char *name, bool message, void *user)
{
    (void)depth;
    (void)message;
    (*(unsigned *)user) += (unsigned)strlen(name);
    return true;
}

fz_outcome fz_run_onnx_text(const uint8_t *data, size_t len)
{
    unsigned chars = 0;
    fp_pbtxt_peek((const char *)data, len, peek_field, &chars);
    (void)fp_onnx_text_sniff(data, MIN(len, 4096));
    GError *err = NULL;
    fp_model *m = fp_onnx_text_load_buffer("fuzz.pbtxt", (const char *)data, len, &err);
    fz_outcome o = load_and_analyze(m, err, checksum(data, len));
    g_clear_error(&err);
    return o;
}

fz_outcome fz_run_ge(const uint8_t *data, size_t len)
{
    fp_ge_kind kind = fp_ge_sniff(data, MIN(len, 4096));
    if (kind == FP_GE_NONE)
        kind = FP_GE_BINARY;
    GError *err = NULL;
    fp_model *m = fp_ge_load_buffer("fuzz.ge", kind, data, len, &err);
    fz_outcome o = load_and_analyze(m, err, checksum(data, len));
    g_clear_error(&err);
    return o;
}

/* A memfd holding data, readable through the returned /proc path (caller closes fd, frees). */
static char *memfd_path(const uint8_t *data, size_t len, int *fd)
{
    *fd = memfd_create("fuzz.ini", MFD_CLOEXEC);
    g_assert(*fd >= 0);
    for (size_t done = 0; done < len;) {
        ssize_t w = write(*fd, data + done, len - done);
        g_assert(w > 0);
        done += (size_t)w;
    }
    return g_strdup_printf("/proc/self/fd/%d", *fd);
}

fz_outcome fz_run_genai_config(const uint8_t *data, size_t len)
{
    int fd = -1;
    g_autofree char *path = memfd_path(data, len, &fd);
    fp_analysis_opts o = {.genai_config = path, .stop = FP_PIPELINE_SHAPES, .what_if = FP_DT_UNDEFINED};
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_analysis) a = fp_analysis_run(FZ_GENAI_MODEL, &o, &err);
    close(fd);
    return a ? FZ_OK : refused(err);
}

/* The micro-model points, costed on the first shipped profile, that timings files are read into:
 * made on the first .ini input, not at every target's start. */
static fp_rt_set *timings_set(void)
{
    static fp_rt_set *set;
    static gsize once = 0;
    if (g_once_init_enter(&once)) {
        set = fp_rt_set_new(state()->devices->pdata[0], NULL);
        g_assert(set);
        g_once_init_leave(&once, 1);
    }
    return set;
}

/* Whether kf, read as a timings file (calibrate --from-timings) into the points of s, is refused
 * without a proper message. */
static bool timings_refused_badly(GKeyFile *kf, fp_rt_set *s)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GKeyFile) native = fp_rt_timings_native(kf, "fuzz.ini", &err);
    fp_rt_extras x = {0};
    bool ok = native && fp_rt_timings_read(kf, "fuzz.ini", s, &x, &err);
    fp_rt_extras_clear(&x);
    return !ok && refused(err) == FZ_BAD_ERROR;
}

fz_outcome fz_run_ini(const uint8_t *data, size_t len)
{
    const fz_state *s = state();
    unsigned salt = checksum(data, len);
    fz_outcome worst = FZ_REJECTED;
    g_autoptr(GError) err = NULL;

    g_autoptr(GKeyFile) kf = g_key_file_new();
    fp_device *dev = NULL;
    bool loaded = g_key_file_load_from_data(kf, (const char *)data, len, G_KEY_FILE_NONE, &err);
    if (loaded)
        dev = fp_device_from_keyfile(kf, "fuzz.ini", &err);
    if (!dev && refused(err) == FZ_BAD_ERROR)
        return FZ_BAD_ERROR;
    g_clear_error(&err);
    if (loaded && timings_refused_badly(kf, timings_set())) {
        fp_device_free(dev);
        return FZ_BAD_ERROR;
    }

    g_autofree char *text = g_strndup((const char *)data, len); /* as fp_gate_policy_load reads a file */
    g_autoptr(fp_gate_policy) policy = fp_gate_policy_from_data(text, "fuzz.ini", &err);
    if (!policy && refused(err) == FZ_BAD_ERROR) {
        fp_device_free(dev);
        return FZ_BAD_ERROR;
    }
    g_clear_error(&err);

    int fd = -1;
    g_autofree char *path = memfd_path(data, len, &fd);
    /* fp_target_load takes a name with '/' as a path */
    fp_target *t = fp_target_load(path, &err);
    close(fd);
    if (!t && refused(err) == FZ_BAD_ERROR) {
        fp_device_free(dev);
        return FZ_BAD_ERROR;
    }
    g_clear_error(&err);

    if (dev || t || policy) {
        fp_model *m = fp_onnx_load_buffer("eps_story.onnx", s->ini_model, s->ini_model_len, &err);
        g_assert(m);
        const fp_device *d = dev ? dev : s->devices->pdata[salt % s->devices->len];
        const fp_target *tt = t ? t : s->targets->pdata[salt % s->targets->len];
        worst = analyze(m, d, tt, salt, policy);
        fp_model_free(m);
    }
    fp_device_free(dev);
    fp_target_free(t);
    return worst;
}

/* devices_json.c - the `devices` JSON document (docs/json.md, section devices). */
#include "reports/json.h"

#include "passes/roofline.h"

/* The members of one device, into the object being written. */
static void json_device(fp_jsonw *w, const fp_device *d)
{
    size_t n = 0;
    const fp_dtype *dts = fp_device_peak_dtypes(&n);
    fp_jsonw_str(w, "name", d->name);
    fp_jsonw_str(w, "description", d->description);
    fp_jsonw_str(w, "path", d->path);
    fp_jsonw_str(w, "target", d->target);
    fp_jsonw_begin_object(w, "peak_flops");
    for (size_t i = 0; i < n; i++)
        if (d->peak_flops[dts[i]] > 0)
            fp_jsonw_num(w, fp_dtype_name(dts[i]), d->peak_flops[dts[i]]);
    fp_jsonw_end_object(w);
    fp_jsonw_begin_object(w, "ridge_point");
    for (size_t i = 0; i < n; i++)
        if (d->peak_flops[dts[i]] > 0)
            fp_jsonw_num(w, fp_dtype_name(dts[i]), fp_roofline_ridge(d, dts[i]));
    fp_jsonw_end_object(w);
    fp_jsonw_num(w, "bandwidth", d->bandwidth);
    fp_jsonw_uint(w, "memory_bytes", d->memory_bytes);
    fp_jsonw_num(w, "launch_overhead", d->launch_overhead);
    fp_jsonw_num(w, "launch_output", d->launch_output);
    fp_jsonw_num(w, "launch_mixed", d->launch_mixed);
    fp_jsonw_num(w, "run_overhead", d->run_overhead);
    fp_jsonw_num(w, "input_overhead", d->input_overhead);
    fp_jsonw_num(w, "output_overhead", d->output_overhead);
    fp_jsonw_num(w, "weight_bandwidth", d->weight_bandwidth);
    fp_jsonw_num(w, "weight_l3_bandwidth", d->weight_l3_bandwidth);
    fp_jsonw_num(w, "denormal_mac_s", d->denormal_mac_s);
    fp_jsonw_num(w, "denormal_exp_s", d->denormal_exp_s);
    fp_jsonw_int(w, "align_bytes", (gint64)d->align_bytes);
    fp_jsonw_begin_array(w, "cache");
    for (int i = 0; i < FP_CACHE_LEVELS; i++) {
        if (!d->cache[i].bytes)
            continue;
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_int(w, "level", i + 1);
        fp_jsonw_uint(w, "bytes", d->cache[i].bytes);
        fp_jsonw_num(w, "bandwidth", d->cache[i].bandwidth);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    if (d->last_from > 0)
        fp_jsonw_num(w, "cache_last_from", d->last_from);
    else
        fp_jsonw_null(w, "cache_last_from");
    if (d->last_life > 0)
        fp_jsonw_num(w, "cache_last_life_s", d->last_life);
    else
        fp_jsonw_null(w, "cache_last_life_s");
    fp_jsonw_begin_object(w, "efficiency");
    for (int c = 0; c < FP_CLASS_COUNT; c++)
        fp_jsonw_num(w, fp_op_class_name(c), d->efficiency[c]);
    fp_jsonw_end_object(w);
    fp_jsonw_num(w, "bandwidth_efficiency", d->bw_efficiency);
    fp_jsonw_begin_array(w, "rule_groups");
    g_auto(GStrv) rules = fp_report_device_rule_groups(d);
    for (size_t i = 0; rules[i]; i++)
        fp_jsonw_str(w, NULL, rules[i]);
    fp_jsonw_end_array(w);
}

void fp_report_devices_json(GPtrArray *devs, bool one, fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_int(w, "schema", FP_JSON_SCHEMA);
    if (one) {
        json_device(w, devs->pdata[0]);
    } else {
        fp_jsonw_begin_array(w, "devices");
        for (guint i = 0; i < devs->len; i++) {
            fp_jsonw_begin_object(w, NULL);
            json_device(w, devs->pdata[i]);
            fp_jsonw_end_object(w);
        }
        fp_jsonw_end_array(w);
    }
    fp_jsonw_end_object(w);
}

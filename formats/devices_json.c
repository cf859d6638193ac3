/* devices_json.c - the `devices` JSON document (docs/json.md, section devices). */
#include "formats/json.h"

#include "passes/roofline.h"

static void json_device(JsonBuilder *b, const fp_device *d)
{
    size_t n = 0;
    const fp_dtype *dts = fp_device_peak_dtypes(&n);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, d->name);
    json_builder_set_member_name(b, "description");
    json_builder_add_string_value(b, d->description);
    json_builder_set_member_name(b, "path");
    json_builder_add_string_value(b, d->path);
    json_builder_set_member_name(b, "target");
    json_builder_add_string_value(b, d->target);
    json_builder_set_member_name(b, "peak_flops");
    json_builder_begin_object(b);
    for (size_t i = 0; i < n; i++) {
        if (d->peak_flops[dts[i]] <= 0)
            continue;
        json_builder_set_member_name(b, fp_dtype_name(dts[i]));
        json_builder_add_double_value(b, d->peak_flops[dts[i]]);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "ridge_point");
    json_builder_begin_object(b);
    for (size_t i = 0; i < n; i++) {
        if (d->peak_flops[dts[i]] <= 0)
            continue;
        json_builder_set_member_name(b, fp_dtype_name(dts[i]));
        json_builder_add_double_value(b, fp_roofline_ridge(d, dts[i]));
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "bandwidth");
    json_builder_add_double_value(b, d->bandwidth);
    json_builder_set_member_name(b, "memory_bytes");
    json_builder_add_int_value(b, (gint64)MIN(d->memory_bytes, (uint64_t)G_MAXINT64));
    json_builder_set_member_name(b, "launch_overhead");
    json_builder_add_double_value(b, d->launch_overhead);
    json_builder_set_member_name(b, "run_overhead");
    json_builder_add_double_value(b, d->run_overhead);
    json_builder_set_member_name(b, "align_bytes");
    json_builder_add_int_value(b, (gint64)d->align_bytes);
    json_builder_set_member_name(b, "efficiency");
    json_builder_begin_object(b);
    for (int c = 0; c < FP_CLASS_COUNT; c++) {
        json_builder_set_member_name(b, fp_op_class_name(c));
        json_builder_add_double_value(b, d->efficiency[c]);
    }
    json_builder_end_object(b);
    json_builder_set_member_name(b, "bandwidth_efficiency");
    json_builder_add_double_value(b, d->bw_efficiency);
    json_builder_set_member_name(b, "rule_groups");
    json_builder_begin_array(b);
    g_auto(GStrv) rules = fp_report_device_rule_groups(d);
    for (size_t i = 0; rules[i]; i++)
        json_builder_add_string_value(b, rules[i]);
    json_builder_end_array(b);
}

/* {"schema": 1, "devices": [...]} for a list, {"schema": 1, <device members>} for one. */
JsonNode *fp_report_devices_json(GPtrArray *devs, bool one)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "schema");
    json_builder_add_int_value(b, FP_JSON_SCHEMA);
    if (one) {
        json_device(b, devs->pdata[0]);
    } else {
        json_builder_set_member_name(b, "devices");
        json_builder_begin_array(b);
        for (guint i = 0; i < devs->len; i++) {
            json_builder_begin_object(b);
            json_device(b, devs->pdata[i]);
            json_builder_end_object(b);
        }
        json_builder_end_array(b);
    }
    json_builder_end_object(b);
    return json_builder_get_root(b);
}

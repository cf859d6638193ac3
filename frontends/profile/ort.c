/* ort.c - ONNX Runtime profiles (SessionOptions enableProfiling): a JSON array of trace events.
 * Node events "<node>_kernel_time" (args.op_name, args.provider, input/output_type_shape) are
 * kernels; Session events "model_run" delimit runs. The first run of a session is warm-up
 * (allocations, arena growth) and is skipped when later runs exist; each node's time is then the
 * mean over the measured runs. A kernel running inside another (If/Loop/Scan bodies) is nested:
 * its parent's time already includes it. */
#include "prof_internal.h"

#include <math.h>
#include <string.h>

#define KERNEL_SUFFIX "_kernel_time"

typedef struct {
    double ts, dur;
} span;

typedef struct {
    JsonObject *o;
    guint index; /* in the event array */
    const char *name;
    double ts, dur;
    int64_t tid;
    int run; /* index into runs; -1 = before every run */
    bool nested;
} node_ev;

static bool ev_number(JsonObject *o, guint i, const char *member, double *out, GError **error)
{
    if (fp_prof_json_number(o, member, false, out))
        return true;
    g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "$[%u].%s: %s", i, member,
                json_object_has_member(o, member) ? "expected a number" : "missing");
    return false;
}

/* args.input_type_shape: [{"float": [1, 3, 32, 32]}, ...] */
static bool read_tensors(fp_profile *p, JsonObject *args, const char *member, guint ev, fp_prof_tensor **out,
                         uint32_t *n, GError **error)
{
    *out = NULL;
    *n = 0;
    JsonNode *node = args ? json_object_get_member(args, member) : NULL;
    if (!node)
        return true;
    if (!JSON_NODE_HOLDS_ARRAY(node)) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "$[%u].args.%s: expected an array", ev, member);
        return false;
    }
    JsonArray *a = json_node_get_array(node);
    guint cnt = json_array_get_length(a);
    if (cnt == 0)
        return true;
    fp_prof_tensor *t = fp_arena_calloc(p->arena, cnt, sizeof *t);
    for (guint i = 0; i < cnt; i++) {
        JsonNode *e = json_array_get_element(a, i);
        JsonObject *eo = JSON_NODE_HOLDS_OBJECT(e) ? json_node_get_object(e) : NULL;
        g_autoptr(GList) keys = eo ? json_object_get_members(eo) : NULL;
        JsonNode *dims = keys ? json_object_get_member(eo, keys->data) : NULL;
        if (!dims || !JSON_NODE_HOLDS_ARRAY(dims) || keys->next) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE,
                        "$[%u].args.%s[%u]: expected {\"<dtype>\": [dims]}", ev, member, i);
            return false;
        }
        JsonArray *da = json_node_get_array(dims);
        guint rank = json_array_get_length(da);
        t[i].dtype = fp_prof_intern(p, keys->data, -1);
        t[i].dt = fp_prof_dtype(keys->data);
        t[i].rank = (int32_t)MIN(rank, 64);
        t[i].dims = fp_arena_calloc(p->arena, t[i].rank, sizeof(int64_t));
        for (guint d = 0; d < rank && d < 64; d++) {
            JsonNode *dn = json_array_get_element(da, d);
            if (!JSON_NODE_HOLDS_VALUE(dn) || json_node_get_value_type(dn) != G_TYPE_INT64) {
                g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE,
                            "$[%u].args.%s[%u].%s[%u]: expected an integer", ev, member, i, (const char *)keys->data,
                            d);
                return false;
            }
            t[i].dims[d] = json_node_get_int(dn);
        }
    }
    *out = t;
    *n = cnt;
    return true;
}

static int span_cmp(gconstpointer a, gconstpointer b)
{
    const span *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Execution order within a thread: by start, the longer (enclosing) first. */
static int ev_cmp(gconstpointer a, gconstpointer b)
{
    const node_ev *x = a, *y = b;
    if (x->run != y->run)
        return x->run < y->run ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return fp_prof_event_order(x->ts, x->dur, x->index, y->ts, y->dur, y->index);
}

/* Marks events contained in an earlier, enclosing event of the same run and thread. */
static void mark_nested(GArray *evs)
{
    g_autoptr(GArray) stack = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint i = 0; i < evs->len; i++) {
        node_ev *e = &g_array_index(evs, node_ev, i);
        while (stack->len) {
            node_ev *top = &g_array_index(evs, node_ev, g_array_index(stack, guint, stack->len - 1));
            if (top->run == e->run && top->tid == e->tid && e->ts >= top->ts && e->ts + e->dur <= top->ts + top->dur)
                break;
            g_array_set_size(stack, stack->len - 1);
        }
        e->nested = stack->len > 0;
        g_array_append_val(stack, i);
    }
}

/* Collects the kernel events and the runs; checks types on the way. */
static bool collect(fp_profile *p, JsonArray *events, GArray *evs, GArray *runs, GError **error)
{
    guint n = json_array_get_length(events);
    for (guint i = 0; i < n; i++) {
        JsonNode *en = json_array_get_element(events, i);
        if (!JSON_NODE_HOLDS_OBJECT(en)) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "$[%u]: expected an event object", i);
            return false;
        }
        JsonObject *o = json_node_get_object(en);
        const char *cat = fp_prof_json_string(o, "cat");
        const char *name = fp_prof_json_string(o, "name");
        bool is_run = g_strcmp0(cat, "Session") == 0 && g_strcmp0(name, "model_run") == 0;
        bool is_kernel = g_strcmp0(cat, "Node") == 0 && name && g_str_has_suffix(name, KERNEL_SUFFIX);
        if (!is_run && !is_kernel)
            continue;
        double ts, dur, tid = 0;
        if (!ev_number(o, i, "ts", &ts, error) || !ev_number(o, i, "dur", &dur, error))
            return false;
        if (dur < 0) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "$[%u].dur: negative duration", i);
            return false;
        }
        if (is_run) {
            span s = {ts, dur};
            g_array_append_val(runs, s);
            continue;
        }
        fp_prof_json_number(o, "tid", false, &tid);
        node_ev e = {.o = o, .index = i, .ts = ts, .dur = dur, .tid = (int64_t)tid};
        e.name = fp_prof_intern(p, name, (gssize)(strlen(name) - strlen(KERNEL_SUFFIX)));
        g_array_append_val(evs, e);
        p->records++;
    }
    return true;
}

/* Run index of an event at ts: the last run starting at or before it; -1 before every run. */
static int run_of(GArray *runs, double ts)
{
    int r = -1;
    for (guint i = 0; i < runs->len && g_array_index(runs, span, i).ts <= ts; i++)
        r = (int)i;
    return r;
}

typedef struct {
    guint kernel;     /* index in p->kernels */
    double total_dur; /* over measured runs */
} node_acc;

bool fp_prof_read_ort(fp_profile *p, JsonArray *events, GError **error)
{
    g_autoptr(GArray) evs = g_array_new(FALSE, FALSE, sizeof(node_ev));
    g_autoptr(GArray) runs = g_array_new(FALSE, FALSE, sizeof(span));
    if (!collect(p, events, evs, runs, error))
        return false;
    g_array_sort(runs, span_cmp);
    p->runs = runs->len;
    p->warmup_runs = runs->len >= 2 ? 1 : 0;
    for (guint i = 0; i < evs->len; i++) {
        node_ev *e = &g_array_index(evs, node_ev, i);
        e->run = run_of(runs, e->ts);
    }
    g_array_sort(evs, ev_cmp);
    mark_nested(evs);
    /* events before the first run belong to no run: measured only when no run is recorded */
    int first_measured = runs->len == 0 ? -1 : (int)p->warmup_runs;
    guint measured = MAX(1u, runs->len - p->warmup_runs);
    g_autoptr(GHashTable) acc = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    for (guint i = 0; i < evs->len; i++) {
        node_ev *e = &g_array_index(evs, node_ev, i);
        if (e->run < first_measured)
            continue;
        node_acc *a = g_hash_table_lookup(acc, e->name);
        if (!a) {
            JsonNode *argn = json_object_get_member(e->o, "args");
            JsonObject *args = argn && JSON_NODE_HOLDS_OBJECT(argn) ? json_node_get_object(argn) : NULL;
            fp_prof_tensor *in, *out;
            uint32_t n_in, n_out;
            if (!read_tensors(p, args, "input_type_shape", e->index, &in, &n_in, error) ||
                !read_tensors(p, args, "output_type_shape", e->index, &out, &n_out, error))
                return false;
            a = g_new0(node_acc, 1);
            a->kernel = p->kernels->len;
            g_hash_table_insert(acc, (gpointer)e->name, a);
            fp_prof_kernel *k = fp_prof_add_kernel(p);
            k->name = e->name;
            k->op_type = args ? fp_prof_intern(p, fp_prof_json_string(args, "op_name"), -1) : NULL;
            k->core = args ? fp_prof_intern(p, fp_prof_json_string(args, "provider"), -1) : NULL;
            k->start_us = e->ts;
            k->line = e->index + 1;
            k->samples = 0;
            k->inputs = in;
            k->n_inputs = n_in;
            k->outputs = out;
            k->n_outputs = n_out;
        }
        fp_prof_kernel *k = fp_profile_kernel(p, a->kernel);
        a->total_dur += e->dur;
        k->samples++;
        if (e->nested)
            k->flags |= FP_PROF_K_NESTED;
    }
    for (guint i = 0; i < p->kernels->len; i++) {
        fp_prof_kernel *k = fp_profile_kernel(p, i);
        node_acc *a = g_hash_table_lookup(acc, k->name);
        k->dur_us = a->total_dur / measured;
        k->count = MAX(1u, (k->samples + measured / 2) / measured);
    }
    return true;
}

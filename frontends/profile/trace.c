/* trace.c - Chrome trace JSON as the PyTorch profiler writes it (export_chrome_trace / Kineto):
 * {"traceEvents": [...]} or a bare event array. Complete events ("ph": "X") with "cat" "kernel",
 * "gpu_memcpy", "gpu_memset" are device kernels; "cpu_op" events are operators carrying
 * "Input Dims" / "Input type" and an "External id" that the kernels they launched share.
 * A trace without device kernels (CPU only) yields its outermost cpu_op events instead.
 * "ProfilerStep#N" spans give the step of the operators inside them. */
#include "prof_internal.h"

#include <math.h>
#include <string.h>

typedef struct {
    JsonObject *o;
    guint index;
    const char *name;
    double ts, dur;
    double tid, pid;
    int64_t ext; /* External id, -1 if none */
    bool device;
    int64_t step;
} trace_ev;

static bool cat_is(const char *cat, const char *a, const char *b)
{
    return cat && (g_ascii_strcasecmp(cat, a) == 0 || (b && g_ascii_strcasecmp(cat, b) == 0));
}

static JsonObject *args_of(JsonObject *o)
{
    JsonNode *n = json_object_get_member(o, "args");
    return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

/* cpu_op args "Input Dims" [[1,3,224,224],[64,3,7,7],[],...] and "Input type" ["float", ...]:
 * tensor inputs only (an entry of dims with a known element type). */
static bool read_inputs(fp_profile *p, const char *base, const trace_ev *op, fp_prof_tensor **out, uint32_t *n,
                        GError **error)
{
    *out = NULL;
    *n = 0;
    JsonObject *args = args_of(op->o);
    JsonNode *dn = args ? json_object_get_member(args, "Input Dims") : NULL;
    JsonNode *tn = args ? json_object_get_member(args, "Input type") : NULL;
    if (!dn)
        return true;
    if (!JSON_NODE_HOLDS_ARRAY(dn) || (tn && !JSON_NODE_HOLDS_ARRAY(tn))) {
        g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "%s[%u].args.%s: expected an array", base,
                    op->index, JSON_NODE_HOLDS_ARRAY(dn) ? "Input type" : "Input Dims");
        return false;
    }
    JsonArray *dims = json_node_get_array(dn);
    JsonArray *types = tn ? json_node_get_array(tn) : NULL;
    guint cnt = json_array_get_length(dims);
    fp_prof_tensor *t = fp_arena_calloc(p->arena, MAX(cnt, 1u), sizeof *t);
    uint32_t k = 0;
    for (guint i = 0; i < cnt; i++) {
        JsonNode *d = json_array_get_element(dims, i);
        JsonNode *ty = types && i < json_array_get_length(types) ? json_array_get_element(types, i) : NULL;
        const char *tname = ty && JSON_NODE_HOLDS_VALUE(ty) && json_node_get_value_type(ty) == G_TYPE_STRING
                                ? json_node_get_string(ty)
                                : NULL;
        fp_dtype dt = fp_prof_dtype(tname);
        if (!JSON_NODE_HOLDS_ARRAY(d) || dt == FP_DT_UNDEFINED)
            continue; /* scalars, lists, None */
        JsonArray *da = json_node_get_array(d);
        guint rank = MIN(json_array_get_length(da), 64u);
        fp_prof_tensor *x = &t[k++];
        x->rank = (int32_t)rank;
        x->dims = fp_arena_calloc(p->arena, rank, sizeof(int64_t));
        x->dtype = fp_prof_intern(p, tname, -1);
        x->dt = dt;
        for (guint j = 0; j < rank; j++) {
            JsonNode *v = json_array_get_element(da, j);
            if (!JSON_NODE_HOLDS_VALUE(v) || json_node_get_value_type(v) != G_TYPE_INT64) {
                g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE,
                            "%s[%u].args.Input Dims[%u][%u]: expected an integer", base, op->index, i, j);
                return false;
            }
            x->dims[j] = json_node_get_int(v);
        }
    }
    *out = k ? t : NULL;
    *n = k;
    return true;
}

static bool collect(fp_profile *p, const char *base, JsonArray *events, GArray *evs, GArray *steps, GError **error)
{
    guint n = json_array_get_length(events);
    for (guint i = 0; i < n; i++) {
        JsonNode *en = json_array_get_element(events, i);
        if (!JSON_NODE_HOLDS_OBJECT(en)) {
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "%s[%u]: expected an event object", base, i);
            return false;
        }
        JsonObject *o = json_node_get_object(en);
        const char *cat = fp_prof_json_string(o, "cat");
        const char *name = fp_prof_json_string(o, "name");
        if (g_strcmp0(fp_prof_json_string(o, "ph"), "X") != 0 || !name)
            continue;
        bool device = cat_is(cat, "kernel", NULL) || cat_is(cat, "gpu_memcpy", "memcpy") ||
                      cat_is(cat, "gpu_memset", "memset");
        bool op = cat_is(cat, "cpu_op", "operator");
        /* the host-side span; the device copy ("gpu_user_annotation") repeats it */
        bool step = g_str_has_prefix(name, "ProfilerStep#") && !(cat && g_str_has_prefix(cat, "gpu_"));
        if (!device && !op && !step)
            continue;
        trace_ev e = {.o = o, .index = i, .name = fp_prof_intern(p, name, -1), .device = device, .ext = -1, .step = -1};
        if (!fp_prof_json_number(o, "ts", false, &e.ts) || !fp_prof_json_number(o, "dur", false, &e.dur) || e.dur < 0) {
            const char *m = fp_prof_json_number(o, "ts", false, &e.ts) ? "dur" : "ts";
            g_set_error(error, FP_PROFILE_ERROR, FP_PROFILE_ERROR_VALUE, "%s[%u].%s: %s", base, i, m,
                        json_object_has_member(o, m) ? "expected a non-negative number" : "missing");
            return false;
        }
        fp_prof_json_number(o, "tid", false, &e.tid);
        fp_prof_json_number(o, "pid", false, &e.pid);
        JsonObject *args = args_of(o);
        double ext;
        if (args && fp_prof_json_number(args, "External id", false, &ext))
            e.ext = (int64_t)ext;
        if (step) {
            gint64 s = g_ascii_strtoll(name + strlen("ProfilerStep#"), NULL, 10);
            e.step = s;
            g_array_append_val(steps, e);
        } else {
            g_array_append_val(evs, e);
        }
    }
    return true;
}

/* Execution order within a process's thread: by start, the longer (enclosing) first. */
static int ev_cmp(gconstpointer a, gconstpointer b)
{
    const trace_ev *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return fp_prof_event_order(x->ts, x->dur, x->index, y->ts, y->dur, y->index);
}

static int index_cmp(gconstpointer a, gconstpointer b)
{
    const trace_ev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Operators: step of each (the ProfilerStep span holding its start), and whether it is the
 * outermost on its thread (for CPU-only traces). Returns External id -> trace_ev* of ops. */
static GHashTable *index_ops(GArray *evs, GArray *steps, GHashTable *outer)
{
    GHashTable *by_ext = g_hash_table_new(g_int64_hash, g_int64_equal);
    g_array_sort(evs, ev_cmp);
    const trace_ev *open = NULL; /* outermost op still open on this thread */
    for (guint i = 0; i < evs->len; i++) {
        trace_ev *e = &g_array_index(evs, trace_ev, i);
        if (e->device)
            continue;
        for (guint s = 0; s < steps->len; s++) {
            const trace_ev *st = &g_array_index(steps, trace_ev, s);
            if (e->ts >= st->ts && e->ts < st->ts + st->dur)
                e->step = st->step;
        }
        if (e->ext >= 0)
            g_hash_table_insert(by_ext, &e->ext, e);
        bool inside = open && open->pid == e->pid && open->tid == e->tid && e->ts >= open->ts &&
                      e->ts + e->dur <= open->ts + open->dur;
        if (!inside) {
            open = e;
            g_hash_table_add(outer, e);
        }
    }
    return by_ext;
}

static bool add_kernel(fp_profile *p, const char *base, const trace_ev *e, const trace_ev *op, GError **error)
{
    fp_prof_tensor *in = NULL;
    uint32_t n_in = 0;
    if (op && !read_inputs(p, base, op, &in, &n_in, error))
        return false;
    const char *cat = fp_prof_json_string(e->o, "cat");
    fp_prof_kernel *k = fp_prof_add_kernel(p);
    k->name = e->name;
    k->op_type = op ? op->name : NULL;
    k->core = fp_prof_intern(p, cat, -1);
    k->start_us = e->ts;
    k->dur_us = e->dur;
    k->step = op ? op->step : -1;
    k->line = e->index + 1;
    k->inputs = in;
    k->n_inputs = n_in;
    p->records++;
    return true;
}

bool fp_prof_read_trace(fp_profile *p, const char *base, JsonArray *events, GError **error)
{
    g_autoptr(GArray) evs = g_array_new(FALSE, FALSE, sizeof(trace_ev));
    g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(trace_ev));
    if (!collect(p, base, events, evs, steps, error))
        return false;
    p->runs = steps->len;
    g_autoptr(GHashTable) outer = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autoptr(GHashTable) by_ext = index_ops(evs, steps, outer);
    bool any_device = false;
    for (guint i = 0; i < evs->len && !any_device; i++)
        any_device = g_array_index(evs, trace_ev, i).device;
    /* kernels in time order (file order for ties) */
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    for (guint i = 0; i < evs->len; i++) {
        trace_ev *e = &g_array_index(evs, trace_ev, i);
        if (any_device ? e->device : g_hash_table_contains(outer, e))
            g_ptr_array_add(order, e);
    }
    g_autoptr(GArray) sorted = g_array_sized_new(FALSE, FALSE, sizeof(trace_ev), order->len);
    for (guint i = 0; i < order->len; i++)
        g_array_append_val(sorted, *(trace_ev *)order->pdata[i]);
    g_array_sort(sorted, index_cmp);
    for (guint i = 0; i < sorted->len; i++) {
        const trace_ev *e = &g_array_index(sorted, trace_ev, i);
        const trace_ev *op = e->device ? (e->ext >= 0 ? g_hash_table_lookup(by_ext, &e->ext) : NULL) : e;
        if (!add_kernel(p, base, e, op, error))
            return false;
    }
    return true;
}

/* gate.c - deployment policies (GKeyFile [gate] group) and their evaluation against one report;
 * the text summary of `fuseplan gate`. */
#include "gate.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(fp-gate-error-quark, fp_gate_error);

static const char *const key_names[] = {
#define X(id, name) name,
    FP_GATE_KEYS(X)
#undef X
        NULL, /* a GStrv for g_strv_contains and g_strjoinv */
};

const char *fp_gate_key_name(fp_gate_key k) { return k < FP_GATE_KEY_COUNT ? key_names[k] : "?"; }

void fp_gate_policy_free(fp_gate_policy *p)
{
    if (!p)
        return;
    g_free(p->path);
    g_strfreev(p->forbid_unfused);
    g_free(p->device);
    g_free(p->target);
    g_free(p);
}

bool fp_gate_policy_needs_headroom(const fp_gate_policy *p) { return p->set[FP_GATE_KEY_MIN_HEADROOM_BATCH]; }

static bool known_rule(const char *id)
{
    for (size_t i = 0; i < fp_n_rules; i++)
        if (strcmp(fp_rules[i].id, id) == 0)
            return true;
    return false;
}

/* Distinct rule ids of the shipped rule table, comma-separated (for error messages). */
static char *rule_ids(void)
{
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < fp_n_rules; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(fp_rules[j].id, fp_rules[i].id) == 0;
        if (!seen)
            g_string_append_printf(s, "%s%s", s->len ? ", " : "", fp_rules[i].id);
    }
    return g_string_free(s, FALSE);
}

/* Only [gate], and only known keys in it. */
static bool check_layout(GKeyFile *kf, const char *path, GError **error)
{
    g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
    for (char **g = groups; *g; g++)
        if (strcmp(*g, "gate") != 0) {
            g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY,
                        "policy %s: unknown group [%s] (a policy has one group, [gate])", path, *g);
            return false;
        }
    if (!g_key_file_has_group(kf, "gate")) {
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: no [gate] group", path);
        return false;
    }
    if (!fp_keyfile_check_escapes(kf, path, error))
        return false;
    g_auto(GStrv) keys = g_key_file_get_keys(kf, "gate", NULL, NULL);
    GString *bad = g_string_new(NULL);
    for (char **k = keys; k && *k; k++)
        if (!g_strv_contains(key_names, *k))
            g_string_append_printf(bad, "%s'%s'", bad->len ? ", " : "", *k);
    if (bad->len) {
        g_autofree char *valid = g_strjoinv(", ", (char **)key_names);
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: [gate] unknown key %s (valid keys: %s)",
                    path, bad->str, valid);
    }
    bool ok = bad->len == 0;
    g_string_free(bad, TRUE);
    return ok;
}

/* A finite number >= 0 (integer when `integer`). */
static bool get_number(GKeyFile *kf, const char *path, const char *key, bool integer, double *out, GError **error)
{
    g_autofree char *raw = g_key_file_get_value(kf, "gate", key, NULL);
    g_autofree char *v = g_strstrip(g_strdup(raw ? raw : ""));
    char *end = NULL;
    double d = g_ascii_strtod(v, &end);
    bool whole = !integer || (d == floor(d) && !strpbrk(v, ".eE"));
    if (!*v || *end || !isfinite(d) || d < 0 || !whole || (integer && d >= 9e15)) {
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: [gate] %s = '%s': expected %s", path, key,
                    v, integer ? "an integer in [0, 9e15)" : "a number >= 0");
        return false;
    }
    *out = d;
    return true;
}

/* forbid_unfused: rule ids separated by ',' (or ';'), each a rule of the shipped table. */
static bool get_rules(GKeyFile *kf, const char *path, fp_gate_policy *p, GError **error)
{
    g_autofree char *raw = g_key_file_get_value(kf, "gate", "forbid_unfused", NULL);
    g_auto(GStrv) parts = g_strsplit_set(raw ? raw : "", ",;", -1);
    GPtrArray *ids = g_ptr_array_new_with_free_func(g_free);
    for (char **s = parts; *s; s++) {
        char *id = g_strstrip(*s);
        if (!*id || g_ptr_array_find_with_equal_func(ids, id, g_str_equal, NULL))
            continue;
        if (!known_rule(id)) {
            g_autofree char *all = rule_ids();
            g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY,
                        "policy %s: [gate] forbid_unfused: unknown fusion rule '%s' (rules: %s)", path, id, all);
            g_ptr_array_unref(ids);
            return false;
        }
        g_ptr_array_add(ids, g_strdup(id));
    }
    g_ptr_array_add(ids, NULL);
    p->forbid_unfused = (char **)g_ptr_array_free(ids, FALSE);
    return true;
}

static bool get_string(GKeyFile *kf, const char *path, const char *key, char **out, GError **error)
{
    g_autoptr(GError) why = NULL;
    g_autofree char *raw = g_key_file_get_string(kf, "gate", key, &why);
    if (!raw) { /* present (the caller checked), so the value itself is bad: e.g. not UTF-8 */
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: [gate] %s: %s", path, key,
                    why ? why->message : "unreadable value");
        return false;
    }
    g_strstrip(raw);
    if (!*raw) {
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: [gate] %s is empty", path, key);
        return false;
    }
    *out = g_steal_pointer(&raw);
    return true;
}

static fp_gate_policy *from_keyfile(GKeyFile *kf, const char *path, GError **error)
{
    if (!check_layout(kf, path, error))
        return NULL;
    g_autoptr(fp_gate_policy) p = g_new0(fp_gate_policy, 1);
    p->path = g_strdup(path);
    for (int k = 0; k < FP_GATE_KEY_COUNT; k++) {
        p->set[k] = g_key_file_has_key(kf, "gate", key_names[k], NULL);
        double d = 0;
        bool ok = true;
        if (!p->set[k])
            continue;
        switch ((fp_gate_key)k) {
        case FP_GATE_KEY_MAX_ACTIVATION_MB:
            ok = get_number(kf, path, key_names[k], false, &p->max_activation_mb, error);
            break;
        case FP_GATE_KEY_MAX_TOTAL_MB:
            ok = get_number(kf, path, key_names[k], false, &p->max_total_mb, error);
            break;
        case FP_GATE_KEY_MIN_EST_SPEEDUP:
            ok = get_number(kf, path, key_names[k], false, &p->min_est_speedup, error);
            break;
        case FP_GATE_KEY_MIN_HEADROOM_BATCH:
            ok = get_number(kf, path, key_names[k], true, &d, error);
            if (ok)
                p->min_headroom_batch = (gint64)d;
            break;
        case FP_GATE_KEY_MAX_LAYOUT_CONVERSIONS:
            ok = get_number(kf, path, key_names[k], true, &d, error);
            if (ok)
                p->max_layout_conversions = (gint64)d;
            break;
        case FP_GATE_KEY_FORBID_UNFUSED:
            ok = get_rules(kf, path, p, error);
            break;
        case FP_GATE_KEY_DEVICE:
            ok = get_string(kf, path, key_names[k], &p->device, error);
            break;
        case FP_GATE_KEY_TARGET:
            ok = get_string(kf, path, key_names[k], &p->target, error);
            break;
        case FP_GATE_KEY_COUNT:
            break;
        }
        if (!ok) {
            if (error && !*error)
                g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: [gate] %s is too large", path,
                            key_names[k]);
            return NULL;
        }
    }
    return g_steal_pointer(&p);
}

fp_gate_policy *fp_gate_policy_from_data(const char *data, const char *path, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autoptr(GError) err = NULL;
    if (!g_key_file_load_from_data(kf, data, (gsize)-1, G_KEY_FILE_NONE, &err)) {
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy %s: %s", path, err->message);
        return NULL;
    }
    return from_keyfile(kf, path, error);
}

fp_gate_policy *fp_gate_policy_load(const char *path, GError **error)
{
    g_autofree char *data = NULL;
    g_autoptr(GError) err = NULL;
    if (!g_file_get_contents(path, &data, NULL, &err)) {
        g_set_error(error, FP_GATE_ERROR, FP_GATE_ERROR_POLICY, "policy: %s", err->message);
        return NULL;
    }
    return fp_gate_policy_from_data(data, path, error);
}

/* ---------------------------------------------------------------- evaluation */

static void check_free(gpointer p)
{
    fp_gate_check *c = p;
    g_free(c->name);
    g_free(c->summary);
    g_free(c->detail);
    if (c->unfused)
        g_ptr_array_unref(c->unfused);
    g_free(c);
}

void fp_gate_result_free(fp_gate_result *g)
{
    if (!g)
        return;
    g_ptr_array_unref(g->checks);
    g_ptr_array_unref(g->notes);
    g_free(g);
}

static fp_gate_check *add_check(fp_gate_result *g, fp_gate_key k, bool pass, double actual, double limit)
{
    fp_gate_check *c = g_new0(fp_gate_check, 1);
    c->key = k;
    c->name = g_strdup(key_names[k]);
    c->status = pass ? FP_GATE_PASS : FP_GATE_FAIL;
    c->actual = actual;
    c->limit = limit;
    g->failed += !pass;
    g_ptr_array_add(g->checks, c);
    return c;
}

/* A "max N MB" check on `bytes`. */
static void check_mb(fp_gate_result *g, fp_gate_key k, const char *what, uint64_t bytes, double limit_mb,
                     const char *how)
{
    double limit = limit_mb * 1e6;
    fp_gate_check *c = add_check(g, k, (double)bytes <= limit, (double)bytes / 1e6, limit_mb);
    c->summary = g_strdup_printf("%s %.2f MB %s %.2f MB", what, c->actual, c->status == FP_GATE_PASS ? "<=" : ">",
                                 limit_mb);
    c->detail = g_strdup_printf("%" G_GUINT64_FORMAT " bytes (%s); limit %.0f bytes", bytes, how, limit);
    const fp_memory_result *mem = g->report->res->memory;
    c->node = mem->peak_node ? mem->peak_node->name : NULL;
}

static void check_memory(fp_gate_result *g)
{
    const fp_gate_policy *p = g->policy;
    const fp_stage *fin = &g->report->res->stages[2];
    const fp_memory_result *mem = g->report->res->memory;
    if (p->set[FP_GATE_KEY_MAX_ACTIVATION_MB]) {
        g_autofree char *how = g_strdup_printf("planned arena, %s; LOAD %" G_GUINT64_FORMAT " bytes; peak at step %u",
                                               mem->method ? mem->method : "best", mem->lower_bound, mem->peak_step);
        check_mb(g, FP_GATE_KEY_MAX_ACTIVATION_MB, "planned activation memory", fin->activation_bytes,
                 p->max_activation_mb, how);
    }
    if (p->set[FP_GATE_KEY_MAX_TOTAL_MB]) {
        uint64_t total;
        if (!g_uint64_checked_add(&total, fin->weight_bytes, fin->activation_bytes))
            total = UINT64_MAX;
        g_autofree char *how = g_strdup_printf("weights %" G_GUINT64_FORMAT " + activations %" G_GUINT64_FORMAT,
                                               fin->weight_bytes, fin->activation_bytes);
        check_mb(g, FP_GATE_KEY_MAX_TOTAL_MB, "weights + activations", total, p->max_total_mb, how);
    }
}

static void check_headroom(fp_gate_result *g)
{
    const fp_report *r = g->report;
    gint64 want = g->policy->min_headroom_batch;
    if (!r->headroom) {
        fp_gate_check *c = add_check(g, FP_GATE_KEY_MIN_HEADROOM_BATCH, true, 0, (double)want);
        c->status = FP_GATE_NOT_EVALUATED;
        g->not_evaluated++;
        c->summary = g_strdup_printf("max batch unknown (headroom %s)",
                                     r->headroom_note ? r->headroom_note : "not computed");
        return;
    }
    const fp_headroom_result *h = r->headroom;
    fp_gate_check *c = add_check(g, FP_GATE_KEY_MIN_HEADROOM_BATCH, h->max_batch >= want, (double)h->max_batch,
                                 (double)want);
    c->summary = g_strdup_printf("max batch %" G_GINT64_FORMAT "%s on %s %s %" G_GINT64_FORMAT, h->max_batch,
                                 h->at_limit ? " or more" : "", r->device->name, c->status == FP_GATE_PASS ? ">=" : "<",
                                 want);
    c->detail = g_strdup_printf("%" G_GUINT64_FORMAT " bytes usable (capacity %" G_GUINT64_FORMAT
                                " minus a 10%% reserve); %" G_GUINT64_FORMAT " bytes at that batch",
                                h->usable, r->device->memory_bytes, h->bytes_at_max);
}

static void check_speedup(fp_gate_result *g)
{
    const fp_gate_policy *p = g->policy;
    const fp_stage *st = g->report->res->stages;
    fp_gate_check *c = add_check(g, FP_GATE_KEY_MIN_EST_SPEEDUP, st[2].speedup >= p->min_est_speedup, st[2].speedup,
                                 p->min_est_speedup);
    c->summary = g_strdup_printf("est. speedup %.2fx %s %.2fx", st[2].speedup, c->status == FP_GATE_PASS ? ">=" : "<",
                                 p->min_est_speedup);
    c->detail = g_strdup_printf("est. latency %.1f us original, %.1f us final, on %s", st[0].latency_s * 1e6,
                                st[2].latency_s * 1e6, g->report->device->name);
}

static void check_conversions(fp_gate_result *g)
{
    const fp_gate_policy *p = g->policy;
    const fp_stage *st = g->report->res->stages;
    const fp_layout_result *l = &g->report->res->layout;
    fp_gate_check *c = add_check(g, FP_GATE_KEY_MAX_LAYOUT_CONVERSIONS, st[2].conversions <= p->max_layout_conversions,
                                 st[2].conversions, (double)p->max_layout_conversions);
    c->summary = g_strdup_printf("%u layout conversions left %s %" G_GINT64_FORMAT, st[2].conversions,
                                 c->status == FP_GATE_PASS ? "<=" : ">", p->max_layout_conversions);
    c->detail = g_strdup_printf("%u before the layout pass, %u removed, %u merged, %u kept with a reason",
                                l->conversions_before, l->removed, l->merged, l->refused);
}

/* One candidate not applied and why, for a check's detail. */
static void describe_unfused(GString *s, const fp_fusion *f)
{
    for (guint k = 0; k < f->nodes->len; k++)
        g_string_append_printf(s, "%s%s", k ? " + " : "", (const char *)f->nodes->pdata[k]);
    g_string_append_c(s, '\n');
    for (guint k = 0; k < f->reasons->len; k++) {
        const fp_reason *why = f->reasons->pdata[k];
        g_string_append_printf(s, "  %s: %s (actual %s; required %s)\n  fix: %s\n", why->constraint, why->message,
                               why->actual, why->required, why->hint);
    }
}

static void check_unfused(fp_gate_result *g, const char *rule)
{
    const fp_report *r = g->report;
    const GPtrArray *fl = r->res->fusions->fusions;
    GPtrArray *missed = g_ptr_array_new();
    guint matched = 0;
    for (guint i = 0; i < fl->len; i++) {
        const fp_fusion *f = fl->pdata[i];
        if (strcmp(f->rule, rule) != 0)
            continue;
        matched++;
        if (!f->applied)
            g_ptr_array_add(missed, (gpointer)f);
    }
    fp_gate_check *c = add_check(g, FP_GATE_KEY_FORBID_UNFUSED, missed->len == 0, missed->len, 0);
    g_free(c->name);
    c->name = g_strdup_printf("forbid_unfused.%s", rule);
    c->rule = rule;
    c->unfused = missed;
    if (!g_strv_contains((const char *const *)r->target->rules, rule)) {
        c->summary = g_strdup_printf("%s: not a rule of target %s, nothing to check", rule, r->target->name);
        g_ptr_array_add(g->notes, g_strdup_printf("forbid_unfused lists %s, which target %s does not have", rule,
                                                  r->target->name));
        return;
    }
    if (!missed->len) {
        c->summary = g_strdup_printf("%s: all %u candidates applied", rule, matched);
        return;
    }
    c->summary = g_strdup_printf("%s: %u of %u candidates not applied", rule, missed->len, matched);
    c->node = ((const fp_fusion *)missed->pdata[0])->anchor;
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < missed->len; i++)
        describe_unfused(s, missed->pdata[i]);
    g_string_truncate(s, s->len ? s->len - 1 : 0);
    c->detail = g_string_free(s, FALSE);
}

fp_gate_result *fp_gate_evaluate(const fp_gate_policy *p, const fp_report *r)
{
    fp_gate_result *g = g_new0(fp_gate_result, 1);
    g->policy = p;
    g->report = r;
    g->checks = g_ptr_array_new_with_free_func(check_free);
    g->notes = g_ptr_array_new_with_free_func(g_free);
    check_memory(g);
    if (p->set[FP_GATE_KEY_MIN_HEADROOM_BATCH])
        check_headroom(g);
    if (p->set[FP_GATE_KEY_MIN_EST_SPEEDUP])
        check_speedup(g);
    for (char **id = p->forbid_unfused; id && *id; id++)
        check_unfused(g, *id);
    if (p->set[FP_GATE_KEY_MAX_LAYOUT_CONVERSIONS])
        check_conversions(g);
    return g;
}

/* ---------------------------------------------------------------- text */

void fp_gate_text(const fp_gate_result *g, FILE *out, bool color)
{
    const fp_report *r = g->report;
    const char *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
    const char *red = color ? "\033[1;31m" : "", *green = color ? "\033[1;32m" : "",
               *yellow = color ? "\033[1;33m" : "";
    fprintf(out, "%sgate%s    %s against %s\n", bold, off, r->model->path, g->policy->path);
    fprintf(out, "%sdevice%s  %s, target %s\n", bold, off, r->device->name, r->target->name);
    if (r->batch_note)
        fprintf(out, "        %s\n", r->batch_note);
    fputc('\n', out);
    for (guint i = 0; i < g->checks->len; i++) {
        const fp_gate_check *c = g->checks->pdata[i];
        const char *tag = c->status == FP_GATE_PASS ? "PASS" : c->status == FP_GATE_FAIL ? "FAIL" : "ERROR";
        const char *col = c->status == FP_GATE_PASS ? green : c->status == FP_GATE_FAIL ? red : yellow;
        fprintf(out, "  %s%-5s%s %-32s %s\n", col, tag, off, c->name, c->summary);
        if (c->status == FP_GATE_PASS || !c->detail)
            continue;
        g_auto(GStrv) lines = g_strsplit(c->detail, "\n", -1);
        for (char **l = lines; *l; l++)
            fprintf(out, "        %s\n", *l);
    }
    for (guint i = 0; i < g->notes->len; i++)
        fprintf(out, "  note: %s\n", (const char *)g->notes->pdata[i]);
    guint n = g->checks->len;
    if (!n)
        fprintf(out, "\n%sPASSED%s: the policy sets no check\n", green, off);
    else if (g->not_evaluated)
        fprintf(out, "\n%sERROR%s: %u of %u checks could not be evaluated, %u failed\n", yellow, off, g->not_evaluated,
                n, g->failed);
    else if (g->failed)
        fprintf(out, "\n%sFAILED%s: %u of %u checks failed\n", red, off, g->failed, n);
    else
        fprintf(out, "\n%sPASSED%s: all %u checks passed\n", green, off, n);
}

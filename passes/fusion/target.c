/* target.c - fusion targets: which rules a compiler applies, in which order, with which
 * parameters. A target is a GKeyFile (passes/fusion/targets/NAME.ini):
 *   [target] name, description, rules = id, id, ..., before_partition = id, ... (of rules),
 *            again_after_partition = id, ... (of before_partition)
 *   [stages] original, fusion, final: what the report's three stages mean on this compiler
 *   [rule.ID] parameter overrides (keys named by the rule's constraints, e.g. max_epsilon)
 */
#include <string.h>

#include "passes/expand.h"
#include "passes/float16.h"
#include "passes/fusion/fuse.h"

G_DEFINE_QUARK(fp-fuse-error-quark, fp_fuse_error);

/* A parameter as read for (rule, constraint): the number and the list, each read on first use. */
typedef struct {
    char *rule;
    double num;
    char **list;
    bool have_num;
} param;

static void param_free(gpointer p)
{
    g_strfreev(((param *)p)->list);
    g_free(((param *)p)->rule);
    g_free(p);
}

static const fp_rule *find_rule(const char *id)
{
    for (size_t i = 0; i < fp_n_rules; i++)
        if (strcmp(fp_rules[i].id, id) == 0)
            return &fp_rules[i];
    return NULL;
}

/* Directories searched for NAME.ini, in order. Caller g_strfreev()s. */
static char **target_dirs(void)
{
    GPtrArray *dirs = g_ptr_array_new();
    const char *env = g_getenv("FUSEPLAN_DEVICES");
    if (env && *env)
        g_ptr_array_add(dirs, g_build_filename(env, "targets", NULL));
    g_ptr_array_add(dirs, g_build_filename(FP_SOURCE_DIR, "passes", "fusion", "targets", NULL));
    g_ptr_array_add(dirs, NULL);
    return (char **)g_ptr_array_free(dirs, FALSE);
}

/* Valid parameter keys of rule `id` (every variant's constraints). */
static GPtrArray *rule_params(const char *id)
{
    GPtrArray *keys = g_ptr_array_new();
    for (size_t i = 0; i < fp_n_rules; i++) {
        if (strcmp(fp_rules[i].id, id) != 0)
            continue;
        for (int k = 0; k < fp_rules[i].n_constraints; k++) {
            const char *p = fp_rules[i].constraints[k].param;
            bool dup = false;
            for (guint j = 0; p && j < keys->len && !dup; j++)
                dup = strcmp(keys->pdata[j], p) == 0;
            if (p && !dup)
                g_ptr_array_add(keys, (gpointer)p);
        }
    }
    return keys;
}

/* GLib 2.74 sets its GError twice (a GLib warning) when a value holds an invalid escape and ends
 * in a lone backslash: refuse such values before g_key_file_get_string parses them. */
bool fp_keyfile_check_escapes(GKeyFile *kf, const char *path, GError **error)
{
    g_auto(GStrv) groups = g_key_file_get_groups(kf, NULL);
    for (char **g = groups; *g; g++) {
        g_auto(GStrv) keys = g_key_file_get_keys(kf, *g, NULL, NULL);
        for (char **k = keys; k && *k; k++) {
            g_autofree char *v = g_key_file_get_value(kf, *g, *k, NULL);
            size_t n = v ? strlen(v) : 0, lone = 0;
            while (lone < n && v[n - 1 - lone] == '\\')
                lone++;
            if (lone & 1) {
                g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s] %s: the value ends in a lone '\\'",
                            path, *g, *k);
                return false;
            }
        }
    }
    return true;
}

/* Whether parameter `key` of rule `id` is a list (activations, dtypes) rather than a number. */
static bool param_is_list(const char *id, const char *key)
{
    for (size_t i = 0; i < fp_n_rules; i++)
        for (int k = 0; strcmp(fp_rules[i].id, id) == 0 && k < fp_rules[i].n_constraints; k++)
            if (fp_rules[i].constraints[k].param && strcmp(fp_rules[i].constraints[k].param, key) == 0)
                return fp_rules[i].constraints[k].list != NULL;
    return false;
}

/* The [layout] keys, each true or false; the [stages] keys, each a sentence. */
static const char *const layout_keys[] = {"drop_narrowing_casts",
                                          "nchwc",
                                          "ge_formats",
                                          "enable_small_channel",
                                          "matmul_weight_nz",
                                          "transpose_optimizer",
                                          "cse",
                                          "nhwc",
                                          "qdq_units",
                                          "conv_add_activation",
                                          "contiguous_reshapes",
                                          NULL};
static const char *const stage_keys[] = {"original", "fusion", "final", NULL};

/* Whether every key of group is one of valid and, when booleans, reads as true or false. */
static bool check_keys(const fp_target *t, const char *group, const char *const *valid, bool booleans, GError **error)
{
    g_auto(GStrv) keys = g_key_file_get_keys(t->keyfile, group, NULL, NULL);
    for (char **k = keys; k && *k; k++) {
        g_autoptr(GError) err = NULL;
        if (!g_strv_contains(valid, *k)) {
            g_autofree char *list = g_strjoinv(", ", (char **)valid);
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s]: unknown key '%s' (valid: %s)", t->path,
                        group, *k, list);
            return false;
        }
        if (booleans)
            g_key_file_get_boolean(t->keyfile, group, *k, &err);
        if (err) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s] %s: expected true or false", t->path,
                        group, *k);
            return false;
        }
    }
    return true;
}

/* Whether every rule id of `list` ([target] `key`; stripped here, NULL: none) is one of `of`
 * (`of_what` in the error that names the first that is not). */
static bool subset(const fp_target *t, const char *key, char **list, char **of, const char *of_what, GError **error)
{
    for (char **r = list; r && *r; r++) {
        g_strstrip(*r);
        if (!fp_target_listed(of, *r)) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [target] %s: '%s' is none of %s", t->path, key,
                        *r, of_what);
            return false;
        }
    }
    return true;
}

static bool validate(fp_target *t, GError **error)
{
    g_auto(GStrv) groups = g_key_file_get_groups(t->keyfile, NULL);
    for (char **g = groups; *g; g++) {
        if (strcmp(*g, "target") == 0)
            continue;
        if (strcmp(*g, "layout") == 0 || strcmp(*g, "stages") == 0) {
            bool layout = strcmp(*g, "layout") == 0;
            if (!check_keys(t, *g, layout ? layout_keys : stage_keys, layout, error))
                return false;
            continue;
        }
        if (strncmp(*g, "rule.", 5) != 0) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                        "%s: unknown group [%s] (valid: [target], [stages], [layout], [rule.ID])", t->path, *g);
            return false;
        }
        const char *id = *g + 5;
        if (!find_rule(id)) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s]: no rule named '%s'", t->path, *g, id);
            return false;
        }
        g_autoptr(GPtrArray) valid = rule_params(id);
        g_auto(GStrv) keys = g_key_file_get_keys(t->keyfile, *g, NULL, NULL);
        for (char **k = keys; k && *k; k++) {
            bool ok = false;
            for (guint j = 0; j < valid->len && !ok; j++)
                ok = strcmp(valid->pdata[j], *k) == 0;
            if (ok && !param_is_list(id, *k)) {
                g_autoptr(GError) err = NULL;
                g_key_file_get_double(t->keyfile, *g, *k, &err);
                if (err) {
                    g_autofree char *raw = g_key_file_get_value(t->keyfile, *g, *k, NULL);
                    g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s] %s = '%s': expected a number",
                                t->path, *g, *k, raw ? raw : "");
                    return false;
                }
            }
            if (!ok) {
                g_ptr_array_add(valid, NULL);
                g_autofree char *list = g_strjoinv(", ", (char **)valid->pdata);
                g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [%s]: unknown key '%s' (valid: %s)",
                            t->path, *g, *k, *list ? list : "none");
                return false;
            }
        }
    }
    for (char **r = t->rules; *r; r++) {
        g_strstrip(*r);
        if (!find_rule(*r)) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [target] rules: no rule named '%s'", t->path,
                        *r);
            return false;
        }
    }
    return subset(t, "before_partition", t->before_partition, t->rules, "the target's rules", error) &&
           subset(t, "again_after_partition", t->again_after_partition, t->before_partition, "before_partition's rules",
                  error);
}

static fp_target *load_path(const char *path, GKeyFile *kf, GError **error);

/* The file of target name_or_path: the path itself, or NAME.ini in the target folders. NULL with
 * the error naming the known targets. */
static char *target_path(const char *name_or_path, GError **error)
{
    if (strchr(name_or_path, '/') || g_str_has_suffix(name_or_path, ".ini"))
        return g_strdup(name_or_path);
    g_auto(GStrv) dirs = target_dirs();
    g_autofree char *file = g_strconcat(name_or_path, ".ini", NULL);
    for (char **d = dirs; *d; d++) {
        char *p = g_build_filename(*d, file, NULL);
        if (g_file_test(p, G_FILE_TEST_IS_REGULAR))
            return p;
        g_free(p);
    }
    g_auto(GStrv) names = fp_target_list();
    g_autofree char *list = g_strjoinv(", ", names);
    g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "no target named '%s' (known: %s)", name_or_path, list);
    return NULL;
}

/* The key file at path (',' separates list items), escapes checked; NULL with the error naming
 * the file. */
static GKeyFile *read_keyfile(const char *path, GError **error)
{
    GKeyFile *kf = g_key_file_new();
    g_key_file_set_list_separator(kf, ',');
    g_autoptr(GError) err = NULL;
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &err)) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: %s", path, err->message);
        g_key_file_free(kf);
        return NULL;
    }
    if (!fp_keyfile_check_escapes(kf, path, error)) {
        g_key_file_free(kf);
        return NULL;
    }
    return kf;
}

/* For a file whose [target] alias names another target (one level only): that target's file and
 * key file, in place of *path and *kf; false with the error. */
static bool follow_alias(char **path, GKeyFile **kf, GError **error)
{
    g_autofree char *alias = g_key_file_get_string(*kf, "target", "alias", NULL);
    if (!alias)
        return true;
    g_strstrip(alias);
    g_autofree char *real = target_path(alias, error);
    if (!real) {
        g_prefix_error(error, "%s: [target] alias: ", *path);
        return false;
    }
    GKeyFile *other = read_keyfile(real, error);
    if (!other)
        return false;
    if (g_key_file_has_key(other, "target", "alias", NULL)) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [target] alias: '%s' is an alias itself", *path,
                    alias);
        g_key_file_free(other);
        return false;
    }
    g_key_file_free(*kf);
    *kf = other;
    g_free(*path);
    *path = g_steal_pointer(&real);
    return true;
}

fp_target *fp_target_load(const char *name_or_path, GError **error)
{
    g_autofree char *path = target_path(name_or_path, error);
    GKeyFile *kf = path ? read_keyfile(path, error) : NULL;
    if (!kf)
        return NULL;
    if (!follow_alias(&path, &kf, error)) {
        g_key_file_free(kf);
        return NULL;
    }
    return load_path(path, kf, error);
}

/* t's [stages] meanings, each the generic one when the key file has none. */
static void load_stages(fp_target *t)
{
    static const char *const keys[3] = {"original", "fusion", "final"};
    static const char *const generic[3] = {
        "the graph as exported, each op its own kernel",
        "the target's fusion rules applied",
        "fusion, then the target's layout conversions and the planned memory reuse",
    };
    for (int i = 0; i < 3; i++) {
        t->stage_meaning[i] = g_key_file_get_string(t->keyfile, "stages", keys[i], NULL);
        if (!t->stage_meaning[i])
            t->stage_meaning[i] = g_strdup(generic[i]);
    }
}

/* The target in the key file kf read from path (kf now the target's). */
static fp_target *load_path(const char *path, GKeyFile *kf, GError **error)
{
    fp_target *t = g_new0(fp_target, 1);
    t->path = g_strdup(path);
    t->keyfile = kf;
    t->params = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, param_free);
    g_autoptr(GError) err = NULL;
    t->name = g_key_file_get_string(t->keyfile, "target", "name", NULL);
    t->description = g_key_file_get_string(t->keyfile, "target", "description", NULL);
    t->rules = g_key_file_get_string_list(t->keyfile, "target", "rules", NULL, &err);
    if (!t->name || !t->rules) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET, "%s: [target] needs keys 'name' and 'rules'", path);
        fp_target_free(t);
        return NULL;
    }
    if (!t->description)
        t->description = g_strdup("");
    load_stages(t);
    t->precision_mode = g_key_file_get_string(t->keyfile, "target", "precision_mode", NULL);
    if (t->precision_mode && !fp_target_precision_mode_ok(g_strstrip(t->precision_mode))) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                    "%s: [target] precision_mode: '%s' is not modelled (force_fp16, must_keep_origin_dtype)", path,
                    t->precision_mode);
        fp_target_free(t);
        return NULL;
    }
    g_autofree char *f16 = g_key_file_get_string(t->keyfile, "target", "float16", NULL);
    if (f16 && !fp_float16_value_ok(g_strstrip(f16))) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                    "%s: [target] float16: '%s' (expected cast_after_fusion or cast_before_fusion)", path, f16);
        fp_target_free(t);
        return NULL;
    }
    g_autofree char *folding = g_key_file_get_string(t->keyfile, "target", "shape_folding", NULL);
    if (folding && strcmp(g_strstrip(folding), "declared") != 0 && strcmp(folding, "bound") != 0) {
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                    "%s: [target] shape_folding: '%s' (expected declared or bound)", path, folding);
        fp_target_free(t);
        return NULL;
    }
    t->fold_declared = folding && strcmp(folding, "declared") == 0;
    g_autoptr(GError) bad = NULL;
    t->original_runs_folded = g_key_file_get_boolean(t->keyfile, "target", "original_runs_shape_ops", &bad);
    if (bad && !g_error_matches(bad, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_KEY_NOT_FOUND)) {
        g_autofree char *v = g_key_file_get_string(t->keyfile, "target", "original_runs_shape_ops", NULL);
        g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                    "%s: [target] original_runs_shape_ops: '%s' (expected true or false)", path, v ? v : "");
        fp_target_free(t);
        return NULL;
    }
    t->expand = g_key_file_get_string_list(t->keyfile, "target", "expand", NULL, NULL);
    t->before_partition = g_key_file_get_string_list(t->keyfile, "target", "before_partition", NULL, NULL);
    t->again_after_partition = g_key_file_get_string_list(t->keyfile, "target", "again_after_partition", NULL, NULL);
    for (char **e = t->expand; e && *e; e++) {
        g_strstrip(*e);
        if (!fp_expand_supported(*e)) {
            g_set_error(error, FP_FUSE_ERROR, FP_FUSE_ERROR_TARGET,
                        "%s: [target] expand: '%s' is no op fuseplan expands (%s)", path, *e,
                        fp_expand_supported_list());
            fp_target_free(t);
            return NULL;
        }
    }
    if (!validate(t, error)) {
        fp_target_free(t);
        return NULL;
    }
    return t;
}

bool fp_target_precision_mode_ok(const char *mode)
{
    return strcmp(mode, "force_fp16") == 0 || strcmp(mode, "must_keep_origin_dtype") == 0;
}

bool fp_target_listed(char *const *list, const char *id)
{
    return list && g_strv_contains((const char *const *)list, id);
}

void fp_target_free(fp_target *t)
{
    if (!t)
        return;
    g_free(t->name);
    g_free(t->description);
    for (int i = 0; i < 3; i++)
        g_free(t->stage_meaning[i]);
    g_free(t->path);
    g_strfreev(t->rules);
    g_strfreev(t->expand);
    g_strfreev(t->before_partition);
    g_strfreev(t->again_after_partition);
    g_free(t->precision_mode);
    if (t->keyfile)
        g_key_file_free(t->keyfile);
    if (t->params)
        g_hash_table_destroy(t->params);
    g_free(t);
}

/* g_ptr_array_sort comparator over char* elements. */
static gint cmp_strp(gconstpointer a, gconstpointer b) { return g_strcmp0(*(char *const *)a, *(char *const *)b); }

char **fp_target_list(void)
{
    g_auto(GStrv) dirs = target_dirs();
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (char **d = dirs; *d; d++) {
        GDir *dir = g_dir_open(*d, 0, NULL);
        const char *f;
        while (dir && (f = g_dir_read_name(dir))) {
            if (!g_str_has_suffix(f, ".ini"))
                continue;
            char *n = g_strndup(f, strlen(f) - 4);
            bool dup = false;
            for (guint i = 0; i < names->len && !dup; i++)
                dup = strcmp(names->pdata[i], n) == 0;
            if (dup)
                g_free(n);
            else
                g_ptr_array_add(names, n);
        }
        if (dir)
            g_dir_close(dir);
    }
    g_ptr_array_sort(names, cmp_strp);
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_steal(names, NULL);
}

/* The cache entry of c for rule, or NULL when it cannot be cached (no table, another rule). */
static param *cached(const fp_target *t, const char *rule, const fp_constraint *c)
{
    if (!t || !t->params)
        return NULL;
    param *p = g_hash_table_lookup(t->params, c);
    if (!p) {
        p = g_new0(param, 1);
        p->rule = g_strdup(rule);
        g_hash_table_insert(t->params, (gpointer)c, p);
    }
    return strcmp(p->rule, rule) == 0 ? p : NULL;
}

static double read_num(const fp_target *t, const char *rule, const fp_constraint *c);
static char **read_list(const fp_target *t, const char *rule, const fp_constraint *c);

double fp_target_num(const fp_target *t, const char *rule, const fp_constraint *c)
{
    param *p = cached(t, rule, c);
    if (!p)
        return read_num(t, rule, c);
    if (!p->have_num) {
        p->num = read_num(t, rule, c);
        p->have_num = true;
    }
    return p->num;
}

char **fp_target_list_param(const fp_target *t, const char *rule, const fp_constraint *c)
{
    param *p = cached(t, rule, c);
    if (!p)
        return read_list(t, rule, c);
    if (!p->list)
        p->list = read_list(t, rule, c);
    return g_strdupv(p->list);
}

bool fp_target_list_has(const fp_target *t, const char *rule, const fp_constraint *c, const char *s)
{
    param *p = cached(t, rule, c);
    g_auto(GStrv) own = p ? NULL : read_list(t, rule, c);
    if (p && !p->list)
        p->list = read_list(t, rule, c);
    for (char **e = p ? p->list : own; *e; e++)
        if (g_ascii_strcasecmp(*e, s) == 0)
            return true;
    return false;
}

static double read_num(const fp_target *t, const char *rule, const fp_constraint *c)
{
    if (t && c->param) {
        g_autofree char *group = g_strconcat("rule.", rule, NULL);
        if (g_key_file_has_key(t->keyfile, group, c->param, NULL)) {
            g_autoptr(GError) err = NULL;
            double v = g_key_file_get_double(t->keyfile, group, c->param, &err);
            if (!err)
                return v;
        }
    }
    return c->num;
}

/* Strips the blanks around every element in place; returns v. */
static char **strip_all(char **v)
{
    for (char **e = v; *e; e++)
        g_strstrip(*e);
    return v;
}

/* The list parameter as the target file (or the constraint's default) gives it, each element
 * stripped of surrounding blanks. */
static char **read_list(const fp_target *t, const char *rule, const fp_constraint *c)
{
    if (t && c->param) {
        g_autofree char *group = g_strconcat("rule.", rule, NULL);
        char **v = g_key_file_get_string_list(t->keyfile, group, c->param, NULL, NULL);
        if (v)
            return strip_all(v);
    }
    return strip_all(g_strsplit(c->list ? c->list : "", ",", -1));
}

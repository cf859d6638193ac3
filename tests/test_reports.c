/* test_reports.c - the report emitters for people and pipelines: golden HTML, DOT, gate text,
 * JUnit, SARIF and diff outputs of the sample models on the round-number profile; the memory plan's
 * live bytes against a count of their own, before and after headroom; DOT quoting (and rendering, when Graphviz is installed);
 * JUnit against tests/data/policies/junit.xsd with xmllint; SARIF's required 2.1.0 members; the
 * exit codes of `gate` and `diff --fail-on-regression`; the HTML page rendered in headless
 * Chromium. */
#include <glib/gstdio.h>
#include <libxml/HTMLparser.h>
#include <libxml/HTMLtree.h>
#include <libxml/xpath.h>
#include <json-glib/json-glib.h>
#include <libxml/xpathInternals.h>
#include <math.h>
#include <string.h>

#include "analysis/analysis.h"
#include "frontends/load.h"
#include "passes/memory/headroom.h"
#include "passes/memory/liveness.h"
#include "passes/roofline.h"
#include "passes/shape/shapes.h"
#include "reports/diff.h"
#include "reports/dot.h"
#include "reports/gate.h"
#include "reports/html.h"
#include "reports/json.h"
#include "reports/junit.h"
#include "reports/sarif.h"
#include "tutil.h"

#define ROUND "tests/data/devices/round.ini"

/* ---------------------------------------------------------------- helpers */

/* One model through the pipeline on the round profile, as `fuseplan report` runs it. */
typedef struct {
    fp_device *dev;
    fp_target *t;
    fp_model *m;
    fp_diag *diag;
    fp_pipeline_result res;
    fp_report rep;
} analysis;

static void analyze(analysis *a, const char *model, const char *target)
{
    memset(a, 0, sizeof *a);
    g_autoptr(GError) err = NULL;
    a->dev = fp_device_load(FP_SOURCE_DIR "/" ROUND, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->dev);
    a->t = fp_target_load(target ? target : a->dev->target, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->t);
    g_autofree char *path = g_path_is_absolute(model) ? g_strdup(model)
                                                      : g_build_filename(FP_SOURCE_DIR, "models", model, NULL);
    a->m = fp_load_model(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->m);
    fp_pipeline_opts po = {
        .shapes = {.batch = 1},
        .target = a->t,
        .device = a->dev,
        .memory = {.strategy = FP_MEMPLAN_BEST, .schedule = FP_SCHEDULE_GIVEN, .align = a->dev->align_bytes},
        .what_if = FP_DT_UNDEFINED,
    };
    a->diag = fp_diag_new();
    CU_ASSERT_FATAL(fp_pipeline_run(a->m, &po, &a->res, a->diag, &err));
    a->rep = (fp_report){.model = a->m,
                         .target = a->t,
                         .device = a->dev,
                         .res = &a->res,
                         .diag = a->diag,
                         .what_if = FP_DT_UNDEFINED,
                         .top = 10,
                         .headroom_note = "not computed"};
}

static void analysis_clear(analysis *a)
{
    fp_pipeline_result_clear(&a->res);
    fp_diag_free(a->diag);
    fp_model_free(a->m);
    fp_target_free(a->t);
    fp_device_free(a->dev);
}

/* Runs fuseplan from the source tree; returns its exit status, stdout in *out (caller frees). */
static int fuseplan(const char *const *args, char **out, char **err)
{
    g_assert(g_chdir(FP_SOURCE_DIR) == 0);
    tu_run_result r = tu_run(args);
    int status = r.status;
    if (out)
        *out = g_steal_pointer(&r.out);
    if (err)
        *err = g_steal_pointer(&r.err);
    tu_run_clear(&r);
    return status;
}

static char *read_file(const char *path)
{
    char *data = NULL;
    CU_ASSERT(g_file_get_contents(path, &data, NULL, NULL));
    return data ? data : g_strdup("");
}

/* Number of nodes matching xpath in an HTML document. */
static int html_count(htmlDocPtr doc, const char *xpath)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xpath, ctx);
    int n = o && o->nodesetval ? o->nodesetval->nodeNr : -1;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

static htmlDocPtr parse_html(const char *text)
{
    return htmlReadMemory(text, (int)strlen(text), "report.html", "UTF-8",
                          HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET);
}

static uint64_t round_up_to(uint64_t x, uint64_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

/* The HTML page of r. Caller frees. */
static char *html_of(const fp_report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fp_report_html(r, f);
    fclose(f);
    char *page = g_strdup(buf);
    free(buf);
    return page;
}

/* ---------------------------------------------------------------- live bytes */

/* The memgraph order behind m->order (free nodes dropped), from the IR nodes. */
static bool memgraph_order(const fp_liveness *lv, const fp_memory_result *m, uint32_t *order)
{
    const fp_memgraph *mg = &lv->mg;
    if (mg->n_nodes + lv->n_free != m->n_order)
        return false;
    g_autoptr(GHashTable) idx = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (uint32_t v = 0; v < mg->n_nodes; v++)
        g_hash_table_insert(idx, lv->nodes[v], GUINT_TO_POINTER(v + 1));
    uint32_t k = 0;
    for (uint32_t s = 0; s < m->n_order; s++) {
        guint v = GPOINTER_TO_UINT(g_hash_table_lookup(idx, m->order[s]));
        if (v && k < mg->n_nodes)
            order[k++] = v - 1;
    }
    return k == mg->n_nodes && fp_memgraph_order_valid(mg, order);
}

/* m's live bytes per step counted from the model as it is now: the liveness built again, every
 * lifetime (buffers and workspaces, the subgraphs' arenas) rounded to m->align and summed step by
 * step; a free node shows the bytes of the step before (of the first step when it comes first).
 * NULL when m->order no longer matches the graph. */
static uint64_t *count_live(const fp_memory_result *m)
{
    const fp_graph *g = m->graph;
    fp_memory_opts so = m->opts;
    so.reuse = NULL;
    g_autofree uint64_t *ws = g_new0(uint64_t, g->nodes->len + 1);
    for (guint i = 0; i < g->nodes->len; i++) {
        const fp_node *n = g_ptr_array_index(g->nodes, i);
        for (uint32_t k = 0; k < n->n_subgraphs && !(n->flags & FP_NODE_REMOVED); k++) {
            g_autoptr(fp_memory_result) sub = fp_pass_memory(n->subgraphs[k], &so, NULL, NULL);
            g_assert(sub);
            ws[n->id] = MAX(ws[n->id], sub->arena);
        }
    }
    g_autoptr(fp_liveness) lv = fp_liveness_build(g, ws, NULL, NULL, NULL);
    const fp_memgraph *mg = &lv->mg;
    uint32_t n = MAX(mg->n_nodes, 1u), ne = mg->n_bufs + mg->n_nodes;
    g_autofree uint32_t *order = g_new(uint32_t, mg->n_nodes + 1), *step_of = g_new(uint32_t, mg->n_nodes + 1);
    if (!memgraph_order(lv, m, order))
        return NULL;
    g_autofree fp_membuf *out = g_new(fp_membuf, ne + 1);
    fp_memgraph_lifetimes(mg, order, out, NULL);
    g_autofree uint64_t *live = g_new0(uint64_t, n + 1);
    for (uint32_t t = 0; t < n; t++)
        for (uint32_t e = 0; e < ne; e++)
            if (out[e].size && out[e].first <= t && t <= out[e].last)
                live[t] += round_up_to(out[e].size, m->align);
    g_autofree fp_node **full = g_new(fp_node *, m->n_order + 1);
    fp_liveness_full_order(lv, order, full, step_of);
    if (memcmp(full, m->order, m->n_order * sizeof *full) != 0)
        return NULL;
    uint64_t *res = g_new0(uint64_t, m->n_order + 1);
    g_autofree bool *set = g_new0(bool, m->n_order + 1);
    for (uint32_t t = 0; t < mg->n_nodes; t++) {
        res[step_of[t]] = live[t];
        set[step_of[t]] = true;
    }
    for (uint32_t s = 0; s < m->n_order; s++)
        if (!set[s])
            res[s] = s ? res[s - 1] : live[0];
    return res;
}

/* The plan's live bytes: counted the same from the model, their peak LOAD; and after the headroom
 * search, the same counted again (the model is inferred as the plan saw it) and the same page. */
static void check_live(const char *model)
{
    analysis a;
    analyze(&a, model, NULL);
    const fp_memory_result *mem = a.res.memory;
    g_autofree uint64_t *want = count_live(mem);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    uint64_t peak = 0;
    for (uint32_t s = 0; s < mem->n_order; s++) {
        CU_ASSERT_EQUAL(mem->live_bytes[s], want[s]);
        peak = MAX(peak, mem->live_bytes[s]);
    }
    CU_ASSERT_EQUAL(peak, mem->lower_bound);
    if (mem->peak_node)
        CU_ASSERT_EQUAL(mem->live_bytes[mem->peak_step], mem->lower_bound);
    CU_ASSERT(peak <= mem->arena);
    g_autofree char *page = html_of(&a.rep);
    fp_headroom_opts ho = {.capacity = a.dev->memory_bytes, .mem = mem->opts, .plan_at_1 = mem, .shapes = {.batch = 1}};
    fp_headroom_result hr;
    fp_pass_headroom(a.m, &ho, &hr, NULL, NULL); /* transformer_block keeps its sequence symbolic: refused */
    g_autofree uint64_t *again = count_live(mem);
    CU_ASSERT_PTR_NOT_NULL_FATAL(again);
    CU_ASSERT(memcmp(again, want, mem->n_order * sizeof *want) == 0);
    g_autofree char *page_after = html_of(&a.rep);
    CU_ASSERT_STRING_EQUAL(page_after, page);
    analysis_clear(&a);
}

static void test_live_bytes(void)
{
    check_live("resnet_tiny.onnx");
    check_live("branchy.onnx");
    check_live("eps_story.onnx");
    check_live("transformer_block.onnx");
}

static void test_live_bytes_subgraph(void)
{
    /* an If: its branches' arenas count as workspace at its step, as the memory pass counts them */
    check_live("if_subgraph.onnx");
    analysis a;
    analyze(&a, "if_subgraph.onnx", NULL);
    CU_ASSERT(a.res.memory->workspace_bytes > 0);
    analysis_clear(&a);
}

static void test_live_bytes_all_folded(void)
{
    /* only a folded Shape: no node in the memgraph, yet the input and output buffers are live at
     * the plan's one step */
    tb *b = tb_new(13);
    tb_input(b, "x", 1, 2, (int64_t[]){4, 16});
    tb_node(b, "Shape", "shape", "x", "s");
    tb_output(b, "s", 7, 1, (int64_t[]){2});
    g_autofree char *path = tb_write_temp(b, ".onnx");
    tb_free(b);
    analysis a;
    analyze(&a, path, NULL);
    const fp_memory_result *mem = a.res.memory;
    CU_ASSERT(mem->lower_bound > 0);
    CU_ASSERT(mem->n_order > 0);
    for (uint32_t s = 0; s < mem->n_order; s++)
        CU_ASSERT_EQUAL(mem->live_bytes[s], mem->lower_bound);
    analysis_clear(&a);
    g_unlink(path);
}

/* ---------------------------------------------------------------- HTML */

static void test_html_golden(void)
{
    g_autofree char *out = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"report", "models/eps_story.onnx", "--device", ROUND, "-f", "html", NULL},
                             &out, NULL),
                    0);
    tu_golden_text(out, "report_eps_story_round.html");
}

static void test_html_structure(void)
{
    analysis a;
    analyze(&a, "resnet_tiny.onnx", NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fp_report_html(&a.rep, f);
    fclose(f);
    htmlDocPtr doc = parse_html(buf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    guint points = 0, skipped = 0;
    fp_report_html_roofline_counts(&a.rep, &points, &skipped);
    CU_ASSERT_EQUAL(points + skipped, a.res.cost->kernels);
    CU_ASSERT(points >= 10);
    CU_ASSERT_EQUAL(html_count(doc, "//table[@id='stage-table']/tbody/tr"), 3);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='roofline-chart']//circle"), (int)points);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='roofline-chart']//polyline[@class='roof']"), 1);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='timeline-chart']//rect"), (int)a.res.memory->n_order);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='timeline-chart']//rect[@class='bar peak']"), 1);
    CU_ASSERT_EQUAL(html_count(doc, "//table[@id='hotspot-table']/tbody/tr"), 10);
    /* one table per rule with candidates, one row per candidate */
    CU_ASSERT_EQUAL(html_count(doc, "//table[@class='fusion-rule']"), 2);
    CU_ASSERT_EQUAL(html_count(doc, "//table[@class='fusion-rule']/tbody/tr"), (int)a.res.fusions->fusions->len);
    /* ids are unique (the nav links to sections, the charts are found by id) */
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr ids = xmlXPathEvalExpression(BAD_CAST "//@id", ctx);
    g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (int i = 0; ids && ids->nodesetval && i < ids->nodesetval->nodeNr; i++) {
        char *v = (char *)xmlNodeGetContent(ids->nodesetval->nodeTab[i]);
        if (!g_hash_table_add(seen, g_strdup(v)))
            fprintf(stderr, "\n  duplicate id '%s'", v);
        CU_ASSERT_EQUAL(g_hash_table_size(seen), (guint)i + 1);
        xmlFree(v);
    }
    CU_ASSERT(g_hash_table_size(seen) >= 8);
    xmlXPathFreeObject(ids);
    xmlXPathFreeContext(ctx);
    /* self-contained: no scripts, no external resources */
    CU_ASSERT_EQUAL(html_count(doc, "//script | //link | //img | //*[@src]"), 0);
    xmlFreeDoc(doc);
    free(buf);
    analysis_clear(&a);
}

static void test_html_escaping(void)
{
    /* a node name with markup in it stays text */
    analysis a;
    analyze(&a, "eps_story.onnx", NULL);
    fp_node *n = fp_node_lookup(a.m, "block1.conv");
    CU_ASSERT_PTR_NOT_NULL_FATAL(n);
    n->name = fp_intern(a.m, "<script>alert(1)</script>&amp;\"", -1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fp_report_html(&a.rep, f);
    fclose(f);
    CU_ASSERT_PTR_NULL(strstr(buf, "<script>alert"));
    htmlDocPtr doc = parse_html(buf);
    CU_ASSERT_EQUAL(html_count(doc, "//script"), 0);
    CU_ASSERT(html_count(doc, "//code[text()='<script>alert(1)</script>&amp;\"']") >= 1);
    xmlFreeDoc(doc);
    free(buf);
    analysis_clear(&a);
}

/* ---------------------------------------------------------------- DOT */

static void test_dot_quote(void)
{
    static const char *const cases[][2] = {
        {"plain", "\"plain\""},
        {"a\"b", "\"a\\\"b\""},
        {"back\\slash", "\"back\\\\slash\""},
        {"\\N\\G", "\"\\\\N\\\\G\""},
        {"two\nlines", "\"two\\nlines\""},
        {"tab\there\x01", "\"tab here \""},
        {"", "\"\""},
        {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
        {"bad\xff", "\"bad\xef\xbf\xbd\""},
        {"end\\", "\"end\\\\\""},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *q = fp_dot_quote(cases[i][0]);
        if (strcmp(q, cases[i][1]) != 0)
            fprintf(stderr, "\n  fp_dot_quote case %u: got %s", i, q);
        CU_ASSERT_STRING_EQUAL(q, cases[i][1]);
    }
}

/* Renders DOT with Graphviz when it is installed; the SVG, or NULL when dot is absent. */
static char *render_dot(const char *dot_text)
{
    g_autofree char *dot = g_find_program_in_path("dot");
    if (!dot) {
        fprintf(stderr, "\n  Graphviz 'dot' not installed: rendering not checked (it is an optional viewer)");
        return NULL;
    }
    g_autofree char *in = tu_write_temp(dot_text, strlen(dot_text), ".dot");
    char *out = NULL, *err = NULL;
    int status = -1;
    const char *argv[] = {dot, "-Tsvg", in, NULL};
    CU_ASSERT(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status, NULL));
    CU_ASSERT(g_spawn_check_wait_status(status, NULL));
    if (err && *err)
        fprintf(stderr, "\n  dot: %s", err);
    CU_ASSERT(!err || !*err); /* no syntax errors, no warnings */
    g_free(err);
    g_unlink(in);
    return out;
}

static void test_dot_render_names(void)
{
    /* names that would break a naive emitter render as themselves */
    const char *names[] = {"q\"uote", "back\\slash", "\\N", "<html>"};
    GString *g = g_string_new("digraph t {\n");
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *q = fp_dot_quote(names[i]);
        g_string_append_printf(g, "  n%u [label=%s];\n", i, q);
    }
    g_string_append(g, "}\n");
    g_autofree char *svg = render_dot(g->str);
    g_string_free(g, TRUE);
    if (!svg)
        return;
    xmlDocPtr doc = xmlReadMemory(svg, (int)strlen(svg), "t.svg", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autofree char *xp = g_strdup_printf("string(//s:g[@class='node'][s:title='n%u']/s:text)", i);
        xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST xp, ctx);
        CU_ASSERT_STRING_EQUAL(o->stringval, names[i]);
        xmlXPathFreeObject(o);
    }
    xmlXPathFreeContext(ctx);
    xmlFreeDoc(doc);
}

static void test_dot_golden(void)
{
    g_autofree char *out = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"report", "models/eps_story.onnx", "--device", ROUND, "--target",
                                              "ascend910b", "-f", "dot", NULL},
                             &out, NULL),
                    0);
    tu_golden_text(out, "report_eps_story_ascend910b_round.dot");
    /* one fused group (block1), the refused Conv+BN of block2 outlined and joined in red */
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "subgraph cluster_0"));
    CU_ASSERT_PTR_NULL(strstr(out, "subgraph cluster_1"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "not fused: ge_conv_bn"));
    g_autofree char *svg = render_dot(out);
    if (svg) {
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, "class=\"cluster\""));
        CU_ASSERT_PTR_NOT_NULL(strstr(svg, "block2.bn"));
    }
}

static void test_dot_resnet(void)
{
    analysis a;
    analyze(&a, "resnet_tiny.onnx", NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fp_report_dot(&a.rep, f);
    fclose(f);
    /* a cluster per Conv that absorbed a BN (and maybe a Relu): 9 */
    int clusters = 0;
    for (const char *p = buf; (p = strstr(p, "subgraph cluster_")); p++)
        clusters++;
    CU_ASSERT_EQUAL(clusters, 9);
    g_autofree char *svg = render_dot(buf);
    if (svg) {
        int drawn = 0;
        for (const char *p = svg; (p = strstr(p, "class=\"cluster\"")); p++)
            drawn++;
        CU_ASSERT_EQUAL(drawn, 9);
    }
    free(buf);
    analysis_clear(&a);
}

/* ---------------------------------------------------------------- gate */

static void test_policy_parse(void)
{
    static const struct {
        const char *text, *error; /* error: a part of the message, or NULL for a valid policy */
    } cases[] = {
        {"[gate]\nmax_activation_mb = 1.5\nforbid_unfused = conv_bn; conv_bn ,conv_activation\n", NULL},
        {"[gate]\nmax_actvation_mb = 1\n", "valid keys: max_activation_mb, max_total_mb"},
        {"[gate]\nmax_total_mb = -1\n", "max_total_mb = '-1'"},
        {"[gate]\nmax_total_mb = lots\n", "expected a number"},
        {"[gate]\nmin_headroom_batch = 1.5\n", "expected an integer"},
        {"[gate]\nforbid_unfused = conv_bnn\n", "unknown fusion rule 'conv_bnn'"},
        {"[gates]\nmax_total_mb = 1\n", "unknown group [gates]"},
        {"[gate]\ndevice =\n", "device is empty"},
        {"[gate]\ndevice = a\xff\n", "[gate] device: "},
        {"max_total_mb = 1\n", "policy p.ini:"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(fp_gate_policy) p = fp_gate_policy_from_data(cases[i].text, "p.ini", &err);
        if (!cases[i].error) {
            CU_ASSERT_PTR_NOT_NULL_FATAL(p);
            CU_ASSERT_DOUBLE_EQUAL(p->max_activation_mb, 1.5, 1e-12);
            CU_ASSERT_EQUAL(g_strv_length(p->forbid_unfused), 2); /* duplicates dropped */
            CU_ASSERT_FALSE(p->set[FP_GATE_KEY_MAX_TOTAL_MB]);
            continue;
        }
        CU_ASSERT_PTR_NULL(p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(err);
        if (!strstr(err->message, cases[i].error))
            fprintf(stderr, "\n  policy case %u: %s", i, err->message);
        CU_ASSERT_PTR_NOT_NULL(strstr(err->message, cases[i].error));
    }
}

static void test_gate_evaluate(void)
{
    analysis a;
    analyze(&a, "eps_story.onnx", "ascend910b");
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_gate_policy) p = fp_gate_policy_from_data(
        "[gate]\nmax_activation_mb = 0.1\nmax_total_mb = 10\nmin_headroom_batch = 4\nforbid_unfused = ge_conv_bn, "
        "conv_bn\nmax_layout_conversions = 0\n",
        "p.ini", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    g_autoptr(fp_gate_result) g = fp_gate_evaluate(p, &a.rep);
    CU_ASSERT_EQUAL(g->checks->len, 6);
    const fp_gate_check *act = g->checks->pdata[0], *hr = g->checks->pdata[2], *fz = g->checks->pdata[3];
    CU_ASSERT_EQUAL(act->status, FP_GATE_FAIL);
    CU_ASSERT_DOUBLE_EQUAL(act->actual, a.res.stages[2].activation_bytes / 1e6, 1e-12);
    CU_ASSERT_STRING_EQUAL(act->node, a.res.memory->peak_node->name);
    CU_ASSERT_EQUAL(hr->status, FP_GATE_NOT_EVALUATED); /* the report has no headroom */
    CU_ASSERT_STRING_EQUAL(fz->name, "forbid_unfused.ge_conv_bn");
    CU_ASSERT_EQUAL(fz->status, FP_GATE_FAIL);
    CU_ASSERT_EQUAL(fz->unfused->len, 1);
    CU_ASSERT_STRING_EQUAL(fz->node, "block2.conv");
    /* conv_bn is not an ascend910b rule: nothing to check, and a note says so */
    CU_ASSERT_EQUAL(((fp_gate_check *)g->checks->pdata[4])->status, FP_GATE_PASS);
    CU_ASSERT_EQUAL(g->notes->len, 1);
    /* GE's formats: the input's Cast and TransData, the output's TransData back and Cast */
    const fp_gate_check *lay = g->checks->pdata[5];
    CU_ASSERT_EQUAL(lay->status, FP_GATE_FAIL);
    CU_ASSERT_DOUBLE_EQUAL(lay->actual, a.res.layout.conversions_after, 1e-12);
    CU_ASSERT_EQUAL(g->failed, 3);
    CU_ASSERT_EQUAL(g->not_evaluated, 1);
    analysis_clear(&a);
}

static void test_gate_exit_codes(void)
{
    static const struct {
        const char *policy, *extra;
        int status;
        const char *err; /* on stderr */
    } cases[] = {
        {"tests/data/policies/pass.ini", NULL, 0, NULL},
        {"tests/data/policies/strict.ini", NULL, 1, NULL},
        {"tests/data/policies/typo.ini", NULL, 2, "valid keys: max_activation_mb"},
        {"tests/data/policies/missing.ini", NULL, 2, "missing.ini"},
        /* headroom cannot be searched with --input: the check is not evaluated, an error */
        {"tests/data/policies/pass.ini", "--input=input:1x3x32x32", 2, NULL},
        /* the command line's target wins over the policy's: ort-cpu's fusions all apply */
        {"tests/data/policies/strict.ini", "--target=ort-cpu", 1, NULL},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *out = NULL, *err = NULL;
        int st = fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy", cases[i].policy, cases[i].extra,
                                           NULL},
                          &out, &err);
        if (st != cases[i].status)
            fprintf(stderr, "\n  gate case %u: exit %d: %s%s", i, st, out, err);
        CU_ASSERT_EQUAL(st, cases[i].status);
        if (cases[i].err)
            CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].err));
    }
    g_autofree char *err = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"gate", "models/eps_story.onnx", NULL}, NULL, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "--policy FILE is required"));
}

/* xmllint (Debian libxml2-utils) validates f against the schema; its stderr in *msg. */
static bool xmllint_valid(const char *f, char **msg)
{
    g_autofree char *xmllint = g_find_program_in_path("xmllint");
    CU_ASSERT_PTR_NOT_NULL_FATAL(xmllint); /* scripts/install-deps.sh installs libxml2-utils */
    const char *argv[] = {xmllint, "--noout", "--schema", FP_SOURCE_DIR "/tests/data/policies/junit.xsd", f, NULL};
    int status = -1;
    GSpawnFlags quiet = G_SPAWN_STDOUT_TO_DEV_NULL | (msg ? 0 : G_SPAWN_STDERR_TO_DEV_NULL);
    CU_ASSERT(g_spawn_sync(NULL, (char **)argv, NULL, quiet, NULL, NULL, NULL, msg, &status, NULL));
    return g_spawn_check_wait_status(status, NULL);
}

static void test_gate_reports(void)
{
    g_autofree char *junit = tu_write_temp("", 0, ".xml"), *sarif = tu_write_temp("", 0, ".sarif");
    g_autofree char *out = NULL;
    /* in float32, where the planned activations exceed the policy's limit too */
    int st = fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy", "tests/data/policies/strict.ini",
                                       "--junit", junit, "--sarif", sarif, "--no-color", "--precision-mode",
                                       "must_keep_origin_dtype", NULL},
                      &out, NULL);
    CU_ASSERT_EQUAL(st, 1);
    tu_golden_text(out, "gate_eps_story_strict.txt");
    g_autofree char *xml = read_file(junit), *json = read_file(sarif);
    tu_golden_text(xml, "gate_eps_story_strict.junit.xml");
    tu_golden_text(json, "gate_eps_story_strict.sarif");
    g_autofree char *msg = NULL;
    if (!xmllint_valid(junit, &msg))
        fprintf(stderr, "\n  xmllint: %s", msg);
    CU_ASSERT(xmllint_valid(junit, NULL));
    /* the passing policy's report is valid too */
    g_autofree char *out2 = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy",
                                              "tests/data/policies/pass.ini", "--junit", junit, NULL},
                             &out2, NULL),
                    0);
    CU_ASSERT(xmllint_valid(junit, NULL));
    g_autofree char *pass = read_file(junit);
    CU_ASSERT_PTR_NULL(strstr(pass, "<failure"));
    CU_ASSERT_PTR_NOT_NULL(strstr(pass, "tests=\"7\""));
    g_unlink(junit);
    g_unlink(sarif);
}

static void test_junit_counts(void)
{
    /* the counts in the attributes are those of the elements */
    analysis a;
    analyze(&a, "eps_story.onnx", "ascend910b");
    g_autoptr(fp_gate_policy) p = fp_gate_policy_from_data(
        "[gate]\nmax_activation_mb = 0.1\nmin_headroom_batch = 2\nforbid_unfused = ge_conv_bn, ge_conv_ub\n", "p.ini",
        NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    g_autoptr(fp_gate_result) g = fp_gate_evaluate(p, &a.rep);
    gsize len = 0;
    g_autofree char *xml = fp_report_junit(g, &len);
    CU_ASSERT_EQUAL(len, strlen(xml));
    xmlDocPtr doc = xmlReadMemory(xml, (int)len, "j.xml", NULL, XML_PARSE_NONET);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(html_count(doc, "//testcase"), 4);
    CU_ASSERT_EQUAL(html_count(doc, "//testcase/failure"), 2);
    CU_ASSERT_EQUAL(html_count(doc, "//testcase/error"), 1);
    CU_ASSERT_EQUAL(html_count(doc, "/testsuites[@tests='4' and @failures='2' and @errors='1']"), 1);
    CU_ASSERT_EQUAL(html_count(doc, "//failure[@type='forbid_unfused' and contains(., 'max_epsilon')]"), 1);
    xmlFreeDoc(doc);
    g_autofree char *f = tu_write_temp(xml, len, ".xml");
    CU_ASSERT(xmllint_valid(f, NULL));
    g_unlink(f);
    analysis_clear(&a);
}

static JsonObject *obj(JsonObject *o, const char *k)
{
    JsonNode *n = json_object_get_member(o, k);
    CU_ASSERT_FATAL(n && JSON_NODE_HOLDS_OBJECT(n));
    return json_node_get_object(n);
}

static JsonArray *arr(JsonObject *o, const char *k)
{
    JsonNode *n = json_object_get_member(o, k);
    CU_ASSERT_FATAL(n && JSON_NODE_HOLDS_ARRAY(n));
    return json_node_get_array(n);
}

static const char *str(JsonObject *o, const char *k)
{
    JsonNode *n = json_object_get_member(o, k);
    CU_ASSERT_FATAL(n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING);
    return json_node_get_string(n);
}

static void test_sarif_fields(void)
{
    analysis a;
    analyze(&a, "eps_story.onnx", "ascend910b");
    g_autoptr(fp_gate_policy)
        p = fp_gate_policy_from_data("[gate]\nmax_activation_mb = 0.1\nforbid_unfused = ge_conv_bn\n", "p.ini", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    g_autoptr(fp_gate_result) g = fp_gate_evaluate(p, &a.rep);
    fp_jsonw *w = fp_jsonw_new();
    fp_report_sarif(g, 1, w);
    g_autofree char *text = fp_jsonw_finish(w, NULL);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, text, -1, NULL));
    JsonObject *log = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_PTR_NOT_NULL(strstr(str(log, "$schema"), "sarif-2.1.0"));
    CU_ASSERT_STRING_EQUAL(str(log, "version"), "2.1.0");
    JsonArray *runs = arr(log, "runs");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(runs), 1);
    JsonObject *run = json_array_get_object_element(runs, 0);
    JsonObject *drv = obj(obj(run, "tool"), "driver");
    CU_ASSERT_STRING_EQUAL(str(drv, "name"), "fuseplan");
    JsonArray *rules = arr(drv, "rules");
    /* six policy keys that are rules, and ascend910b's eleven fusion rules */
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(rules), 17);
    JsonArray *results = arr(run, "results");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(results), 2);
    for (guint i = 0; i < json_array_get_length(results); i++) {
        JsonObject *r = json_array_get_object_element(results, i);
        const char *id = str(r, "ruleId");
        gint64 idx = json_object_get_int_member(r, "ruleIndex");
        CU_ASSERT_FATAL(idx >= 0 && idx < (gint64)json_array_get_length(rules));
        CU_ASSERT_STRING_EQUAL(str(json_array_get_object_element(rules, (guint)idx), "id"), id);
        CU_ASSERT(strlen(str(obj(r, "message"), "text")) > 10);
        CU_ASSERT_STRING_EQUAL(str(r, "level"), "error");
        JsonArray *locs = arr(r, "locations");
        CU_ASSERT_EQUAL_FATAL(json_array_get_length(locs), 1);
        JsonObject *loc = json_array_get_object_element(locs, 0);
        g_autofree char *uri = g_filename_to_uri(a.m->path, NULL, NULL); /* an absolute path: a file URI */
        CU_ASSERT_STRING_EQUAL(str(obj(obj(loc, "physicalLocation"), "artifactLocation"), "uri"), uri);
        JsonArray *logical = arr(loc, "logicalLocations");
        CU_ASSERT(json_array_get_length(logical) >= 1);
        for (guint k = 0; k < json_array_get_length(logical); k++) /* node names of the model */
            CU_ASSERT_PTR_NOT_NULL(fp_node_lookup(a.m, str(json_array_get_object_element(logical, k), "name")));
    }
    JsonObject *fusion = json_array_get_object_element(results, 1);
    CU_ASSERT_STRING_EQUAL(str(fusion, "ruleId"), "fusion/ge_conv_bn");
    JsonArray *logical = arr(json_array_get_object_element(arr(fusion, "locations"), 0), "logicalLocations");
    CU_ASSERT_STRING_EQUAL(str(json_array_get_object_element(logical, 0), "name"), "block2.conv");
    CU_ASSERT_STRING_EQUAL(str(json_array_get_object_element(logical, 1), "name"), "block2.bn");
    analysis_clear(&a);
}

/* ---------------------------------------------------------------- diff */

static void test_diff_exit_codes(void)
{
    static const struct {
        const char *old_m, *new_m, *flag;
        int status;
    } cases[] = {
        {"models/eps_story.onnx", "models/eps_story_tap.onnx", NULL, 0},
        {"models/eps_story.onnx", "models/eps_story_tap.onnx", "--fail-on-regression", 1},
        {"models/eps_story.onnx", "models/eps_story.onnx", "--fail-on-regression", 0},
        {"models/eps_story_tap.onnx", "models/eps_story.onnx", "--fail-on-regression", 0}, /* better */
        {"models/eps_story.onnx", "models/no_such.onnx", NULL, 2},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        int st = fuseplan((const char *[]){"diff", cases[i].old_m, cases[i].new_m, "--device", ROUND, cases[i].flag,
                                           NULL},
                          NULL, NULL);
        if (st != cases[i].status)
            fprintf(stderr, "\n  diff case %u: exit %d", i, st);
        CU_ASSERT_EQUAL(st, cases[i].status);
    }
}

static void test_diff_golden(void)
{
    g_autofree char *text = NULL, *json = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"diff", "models/eps_story.onnx", "models/eps_story_tap.onnx", "--device",
                                              ROUND, "--no-color", NULL},
                             &text, NULL),
                    0);
    tu_golden_text(text, "diff_eps_story_tap.txt");
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"diff", "models/eps_story.onnx", "models/eps_story_tap.onnx", "--device",
                                              ROUND, "-f", "json", NULL},
                             &json, NULL),
                    0);
    tu_golden_text(json, "diff_eps_story_tap.json");
    /* parsed back: Conv+BN and then Conv+Relu lost at block2, the first refused by single_consumer */
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "schema"), 1);
    JsonObject *fz = obj(root, "fusions");
    JsonArray *lost = arr(fz, "lost");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(lost), 2);
    JsonObject *l0 = json_array_get_object_element(lost, 0), *l1 = json_array_get_object_element(lost, 1);
    CU_ASSERT_STRING_EQUAL(str(l0, "rule"), "conv_bn");
    CU_ASSERT_STRING_EQUAL(str(l0, "anchor"), "block2.conv");
    CU_ASSERT_STRING_EQUAL(str(json_array_get_object_element(arr(l0, "reasons"), 0), "constraint"), "single_consumer");
    CU_ASSERT_STRING_EQUAL(str(l1, "rule"), "conv_activation");
    CU_ASSERT_FALSE(json_object_get_boolean_member(l1, "candidate"));
    CU_ASSERT_EQUAL(json_array_get_length(arr(fz, "gained")), 0);
    JsonObject *reg = obj(root, "regression");
    CU_ASSERT(json_object_get_boolean_member(reg, "regressed"));
    CU_ASSERT_EQUAL(json_array_get_length(arr(reg, "reasons")), 3);
    JsonObject *lat = obj(root, "latency_s");
    CU_ASSERT(json_object_get_double_member(lat, "new") > json_object_get_double_member(lat, "old"));
    CU_ASSERT_EQUAL(json_array_get_length(arr(root, "stages")), 3);
}

static void test_diff_tolerance(void)
{
    analysis a, b;
    analyze(&a, "eps_story.onnx", NULL);
    analyze(&b, "eps_story_tap.onnx", NULL);
    /* a tolerance larger than every increase leaves only the lost fusions */
    g_autoptr(fp_diff) d = fp_diff_compute(&a.rep, &b.rep, 10.0);
    CU_ASSERT_EQUAL_FATAL(d->regressions->len, 1);
    CU_ASSERT_EQUAL(((fp_diff_regression *)d->regressions->pdata[0])->kind, FP_DIFF_FUSION_LOST);
    g_autoptr(fp_diff) back = fp_diff_compute(&b.rep, &a.rep, FP_DIFF_TOLERANCE);
    CU_ASSERT_EQUAL(back->regressions->len, 0);
    CU_ASSERT_EQUAL(back->gained->len, 2);
    CU_ASSERT_EQUAL(back->lost->len, 0);
    CU_ASSERT(isnan(fp_diff_change(0, 5)));
    CU_ASSERT_DOUBLE_EQUAL(fp_diff_change(2, 3), 0.5, 1e-12);
    analysis_clear(&b);
    analysis_clear(&a);
}

/* ---------------------------------------------------------------- report JSON */

static void test_report_json(void)
{
    g_autofree char *json = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"report", "models/resnet_tiny.onnx", "--device", ROUND, "-f", "json",
                                              "--no-headroom", NULL},
                             &json, NULL),
                    0);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, json, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    analysis a;
    analyze(&a, "resnet_tiny.onnx", NULL);
    JsonArray *stages = arr(root, "stages");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(stages), 3);
    for (guint i = 0; i < 3; i++) {
        JsonObject *s = json_array_get_object_element(stages, i);
        CU_ASSERT_EQUAL(json_object_get_int_member(s, "ops"), a.res.stages[i].ops);
        CU_ASSERT_EQUAL(json_object_get_int_member(s, "activation_bytes"), (gint64)a.res.stages[i].activation_bytes);
        CU_ASSERT_DOUBLE_EQUAL(json_object_get_double_member(s, "est_latency_s"), a.res.stages[i].latency_s, 1e-15);
        CU_ASSERT_STRING_EQUAL(str(s, "meaning"), a.t->stage_meaning[i]);
    }
    CU_ASSERT_PTR_NOT_NULL(strstr(str(json_array_get_object_element(stages, 0), "meaning"), "ORT_DISABLE_ALL"));
    CU_ASSERT_EQUAL(json_array_get_length(arr(root, "ops")), a.res.cost->n_ops);
    CU_ASSERT_EQUAL(json_array_get_length(arr(root, "fusions")), a.res.fusions->fusions->len);
    CU_ASSERT(JSON_NODE_HOLDS_NULL(json_object_get_member(root, "headroom")));
    analysis_clear(&a);
}

/* Strings of array member k of o joined by ", " (null: "-"), appended to out in brackets. */
static void names_line(GString *out, JsonObject *o, const char *k)
{
    JsonArray *a = arr(o, k);
    g_string_append_c(out, '[');
    for (guint i = 0; i < json_array_get_length(a); i++) {
        JsonNode *n = json_array_get_element(a, i);
        g_string_append_printf(out, "%s%s", i ? ", " : "", JSON_NODE_HOLDS_NULL(n) ? "-" : json_node_get_string(n));
    }
    g_string_append_c(out, ']');
}

/* The runtime graph `report -f json` gives of model (a path from the source tree's root) on target
 * (device dev), as golden text: one line per op, "name op domain [inputs] -> [outputs] from
 * [original nodes]". Every original node named comes from the model as loaded. */
static void check_runtime_graph(const char *model, const char *target, const char *dev, const char *golden)
{
    g_autofree char *json = NULL;
    CU_ASSERT_EQUAL_FATAL(fuseplan((const char *[]){"report", model, "--target", target, "--device", dev, "-f", "json",
                                                    "--no-headroom", NULL},
                                   &json, NULL),
                          0);
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, json, -1, NULL));
    JsonArray *ops = arr(json_node_get_object(json_parser_get_root(parser)), "ops");
    g_autoptr(GError) err = NULL;
    g_autofree char *full = g_build_filename(FP_SOURCE_DIR, model, NULL);
    g_autoptr(fp_model) m = fp_load_model(full, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    g_autoptr(GString) out = g_string_new(NULL);
    for (guint i = 0; i < json_array_get_length(ops); i++) {
        JsonObject *o = json_array_get_object_element(ops, i);
        g_string_append_printf(out, "%s %s %s ", str(o, "name"), str(o, "op"),
                               *str(o, "domain") ? str(o, "domain") : "-");
        names_line(out, o, "inputs");
        g_string_append(out, " -> ");
        names_line(out, o, "outputs");
        g_string_append(out, " from ");
        names_line(out, o, "from");
        g_string_append_c(out, '\n');
        JsonArray *from = arr(o, "from");
        for (guint k = 0; k < json_array_get_length(from); k++)
            CU_ASSERT_PTR_NOT_NULL(fp_node_lookup(m, json_array_get_string_element(from, k)));
    }
    tu_golden_text(out->str, golden);
}

/* The ridge an op's advice quotes is the one its bound was decided by: its class's efficiency
 * lowered by the saturation at its work, against the roof its traffic streams from. With MatMul
 * far from saturating (a half work of 1 GFLOP) the transformer block's MatMuls are compute-bound
 * below the class's unsaturated ridge; the advice must not say "0.18 FLOP/B > ridge 0.5". */
static void test_advice_ridge(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    d->half_work[FP_CLASS_MATMUL] = 1e9;
    char *dims[] = {"seq=128", NULL};
    fp_analysis_opts o = {.device_profile = d,
                          .dims = dims,
                          .what_if = FP_DT_UNDEFINED,
                          .stop = FP_PIPELINE_SHAPES,
                          .cost = true};
    g_autoptr(fp_analysis) a = fp_analysis_run("models/transformer_block.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a->res.cost);
    guint under = 0, quoted = 0;
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *oc = &a->res.cost->ops[i];
        if (!oc->kernel)
            continue;
        g_autofree char *advice = fp_report_advice(oc, d);
        double x, ridge; /* printed %.2f and %.1f: compared within their rounding */
        if (sscanf(advice, "compute-bound (%lf FLOP/B > ridge %lf)", &x, &ridge) == 2) {
            CU_ASSERT_TRUE(x >= ridge - 0.06);
            quoted++;
            under += oc->cls == FP_CLASS_MATMUL &&
                     oc->rl.intensity < fp_roofline_ridge_effective(d, oc->dtype, oc->cls);
        } else if (sscanf(advice, "memory-bound (%lf FLOP/B < ridge %lf)", &x, &ridge) == 2) {
            CU_ASSERT_TRUE(x <= ridge + 0.06);
            quoted++;
        }
    }
    CU_ASSERT_TRUE(quoted > 0);
    CU_ASSERT_TRUE(under > 0); /* the case the class's own ridge gets wrong is there */
}

/* A kernel bound by weights read past the caches (a profile with weight_bandwidth, a model whose
 * footprint overflows its last cache level) says so, not a ridge its own traffic would meet; with
 * no cold weights, the ridge advice as before. */
static void test_advice_cold(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(fp_device) d = fp_device_load("cpu-avx512", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    d->cache[0] = (fp_cache_level){4096, 1e12};
    d->weight_bandwidth = 1e7; /* slow enough that the cold weights outweigh every launch */
    fp_analysis_opts o = {.device_profile = d, .what_if = FP_DT_UNDEFINED, .stop = FP_PIPELINE_SHAPES, .cost = true};
    g_autoptr(fp_analysis) a = fp_analysis_run("models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    guint cold = 0;
    for (uint32_t i = 0; i < a->res.cost->n_ops; i++) {
        const fp_op_cost *oc = &a->res.cost->ops[i];
        if (!oc->kernel || oc->rl.cold_s <= 0 || oc->rl.bound != FP_BOUND_MEMORY ||
            oc->rl.launch_s > oc->rl.memory_s + oc->rl.cold_s)
            continue;
        g_autofree char *advice = fp_report_advice(oc, d);
        CU_ASSERT_PTR_NOT_NULL(strstr(advice, "reading weights no cache holds between runs"));
        CU_ASSERT_PTR_NULL(strstr(advice, "ridge"));
        cold++;
    }
    CU_ASSERT_TRUE(cold > 0);
    d->weight_bandwidth = 0;
    g_autoptr(fp_analysis) warm = fp_analysis_run("models/resnet_tiny.onnx", &o, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(warm);
    for (uint32_t i = 0; i < warm->res.cost->n_ops; i++)
        if (warm->res.cost->ops[i].kernel) {
            g_autofree char *advice = fp_report_advice(&warm->res.cost->ops[i], d);
            CU_ASSERT_PTR_NULL(strstr(advice, "no cache holds"));
        }
}

/* `report -f json`'s ops with their tensors and provenance: fusions chained (Gelu then BiasGelu),
 * a scale fused after a MatMul and one the MatMul after it absorbs (each from names the Mul or Div), and on ort-cpu-all Conv+BN folds, the Adds and
 * Relus the NCHWc conversion folds into blocked Convs, and the reorders, which come from no
 * original node. */
static void test_report_provenance(void)
{
    check_runtime_graph("models/transformer_block.onnx", "ort-cpu-extended", ROUND,
                        "runtime_transformer_block_ort-cpu-extended.txt");
    check_runtime_graph("models/resnet_tiny.onnx", "ort-cpu-all", "cpu-avx512", "runtime_resnet_tiny_ort-cpu-all.txt");
    /* a scalar Mul before the MatMul (matmul_scale's leading form: the MatMul absorbs the anchor) */
    check_runtime_graph("tests/data/fuse/matmul_leading_scale.onnx", "ort-cpu-extended", ROUND,
                        "runtime_matmul_leading_scale_ort-cpu-extended.txt");
}

/* The writer (reports/json_writer.c) against json-glib's generator on one document with every
 * layout case: empty and non-empty containers at several levels, strings that need escaping,
 * numbers at the edges of their formats, nulls, clamps, containers nested four deep. */
static void add_both(JsonBuilder *b, fp_jsonw *w, int level);

/* The tree's members as the writer's contract has them: a NULL string and a non-finite number
 * are null, an unsigned value above INT64_MAX is clamped. */
static void tree_str(JsonBuilder *b, const char *member, const char *v)
{
    json_builder_set_member_name(b, member);
    if (v)
        json_builder_add_string_value(b, v);
    else
        json_builder_add_null_value(b);
}

static void tree_num(JsonBuilder *b, const char *member, double v)
{
    json_builder_set_member_name(b, member);
    if (isfinite(v))
        json_builder_add_double_value(b, v);
    else
        json_builder_add_null_value(b);
}

static void tree_int(JsonBuilder *b, const char *member, gint64 v)
{
    json_builder_set_member_name(b, member);
    json_builder_add_int_value(b, v);
}

static const double tricky[] = {0.0,    -0.0,      1.0,     -2.0,    0.1,
                                1e22,   1e-7,      123.456, 5e-324,  1.7976931348623157e308,
                                3.0e15, 1.0 / 3.0, NAN,     INFINITY};

static void add_both(JsonBuilder *b, fp_jsonw *w, int level)
{
    static const char *const strs[] = {
        "", "plain", "q\"uote", "back\\slash", "tab\tnl\ncr\r", "\x01\x1f\x7f", "utf-8 \xc3\xa9\xe2\x82\xac", "/slash"};
    for (guint i = 0; i < G_N_ELEMENTS(strs); i++) {
        g_autofree char *k = g_strdup_printf("s%u", i);
        tree_str(b, g_intern_string(k), strs[i]);
        fp_jsonw_str(w, g_intern_string(k), strs[i]);
    }
    tree_str(b, "null_str", NULL);
    fp_jsonw_name(w, "null_str", NULL);
    tree_str(b, "named", "Conv");
    fp_jsonw_name(w, "named", "Conv");
    tree_str(b, "named_again", "Conv");
    fp_jsonw_name(w, "named_again", "Conv");
    for (guint i = 0; i < G_N_ELEMENTS(tricky); i++) {
        g_autofree char *k = g_strdup_printf("d%u", i);
        tree_num(b, g_intern_string(k), tricky[i]);
        fp_jsonw_num(w, g_intern_string(k), tricky[i]);
    }
    tree_int(b, "imin", G_MININT64);
    fp_jsonw_int(w, "imin", G_MININT64);
    tree_int(b, "uclamp", G_MAXINT64);
    fp_jsonw_uint(w, "uclamp", UINT64_MAX);
    json_builder_set_member_name(b, "t");
    json_builder_add_boolean_value(b, TRUE);
    fp_jsonw_bool(w, "t", true);
    json_builder_set_member_name(b, "empty_o");
    json_builder_begin_object(b);
    json_builder_end_object(b);
    fp_jsonw_begin_object(w, "empty_o");
    fp_jsonw_end_object(w);
    json_builder_set_member_name(b, "empty_a");
    json_builder_begin_array(b);
    json_builder_end_array(b);
    fp_jsonw_begin_array(w, "empty_a");
    fp_jsonw_end_array(w);
    json_builder_set_member_name(b, "list");
    json_builder_begin_array(b);
    fp_jsonw_begin_array(w, "list");
    json_builder_add_int_value(b, 7);
    fp_jsonw_int(w, NULL, 7);
    json_builder_add_null_value(b);
    fp_jsonw_null(w, NULL);
    json_builder_begin_object(b);
    json_builder_end_object(b);
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_end_object(w);
    json_builder_begin_array(b);
    json_builder_end_array(b);
    fp_jsonw_begin_array(w, NULL);
    fp_jsonw_end_array(w);
    if (level < 3) {
        json_builder_begin_object(b);
        fp_jsonw_begin_object(w, NULL);
        add_both(b, w, level + 1);
        json_builder_end_object(b);
        fp_jsonw_end_object(w);
    }
    json_builder_end_array(b);
    fp_jsonw_end_array(w);
}

static void test_json_writer(void)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    fp_jsonw *w = fp_jsonw_new();
    json_builder_begin_object(b);
    fp_jsonw_begin_object(w, NULL);
    add_both(b, w, 0);
    json_builder_end_object(b);
    fp_jsonw_end_object(w);
    gsize len;
    g_autofree char *got = fp_jsonw_finish(w, &len);
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json_generator_set_pretty(gen, TRUE);
    json_generator_set_indent(gen, 2);
    g_autofree char *tree_text = json_generator_to_data(gen, NULL);
    g_autofree char *want = g_strconcat(tree_text, "\n", NULL);
    CU_ASSERT_EQUAL(len, strlen(got));
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_PTR_NOT_NULL(strstr(want, "{    }")); /* the cases are there: an empty object at level 2 */
    CU_ASSERT_PTR_NOT_NULL(strstr(want, "\\u0001"));

    /* a scalar document */
    fp_jsonw *w3 = fp_jsonw_new();
    fp_jsonw_num(w3, NULL, 0.5);
    g_autofree char *got3 = fp_jsonw_finish(w3, NULL);
    CU_ASSERT_STRING_EQUAL(got3, "0.5\n");
}

/* Entries in dir. */
static guint dir_entries(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    guint n = 0;
    while (d && g_dir_read_name(d))
        n++;
    return n;
}

/* A document of a few mebibytes (the writer hands its text on about a mebibyte at a time). */
static void big_doc(fp_jsonw *w)
{
    fp_jsonw_begin_object(w, NULL);
    fp_jsonw_begin_array(w, "items");
    for (int i = 0; i < 100000; i++) {
        char name[32];
        g_snprintf(name, sizeof name, "node_\"%d\"", i);
        fp_jsonw_begin_object(w, NULL);
        fp_jsonw_str(w, "name", name);
        fp_jsonw_num(w, "x", i / 7.0);
        fp_jsonw_end_object(w);
    }
    fp_jsonw_end_array(w);
    fp_jsonw_end_object(w);
}

/* A streamed writer replaces its file only when closed: abandoned, it leaves the old file and no
 * other; closed, the file holds what the in-memory writer returns for the same document. */
static void test_json_writer_file(void)
{
    g_autofree char *dir = g_dir_make_tmp("fp-jsonw-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    g_autofree char *path = g_build_filename(dir, "out.json", NULL);
    CU_ASSERT_FATAL(g_file_set_contents(path, "old", -1, NULL));
    fp_jsonw *mem = fp_jsonw_new();
    big_doc(mem);
    gsize len;
    g_autofree char *want = fp_jsonw_finish(mem, &len);
    CU_ASSERT(len > (2u << 20));

    g_autoptr(GError) err = NULL;
    fp_jsonw *w = fp_jsonw_open(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    big_doc(w);
    g_autofree char *during = NULL;
    CU_ASSERT(g_file_get_contents(path, &during, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(during, "old"); /* the text so far went to a file beside it */
    CU_ASSERT_EQUAL(dir_entries(dir), 2);
    fp_jsonw_free(w); /* abandoned */
    g_autofree char *kept = NULL;
    CU_ASSERT(g_file_get_contents(path, &kept, NULL, NULL));
    CU_ASSERT_STRING_EQUAL(kept, "old");
    CU_ASSERT_EQUAL(dir_entries(dir), 1);

    w = fp_jsonw_open(path, &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    big_doc(w);
    CU_ASSERT(fp_jsonw_close(w, &err));
    CU_ASSERT_PTR_NULL(err);
    g_autofree char *got = NULL;
    gsize got_len = 0;
    CU_ASSERT(g_file_get_contents(path, &got, &got_len, NULL));
    CU_ASSERT_EQUAL(got_len, len);
    CU_ASSERT(got && memcmp(got, want, len) == 0);
    CU_ASSERT_EQUAL(dir_entries(dir), 1);
    g_unlink(path);
    g_rmdir(dir);

    g_autofree char *nowhere = g_build_filename(dir, "missing", "out.json", NULL);
    CU_ASSERT_PTR_NULL(fp_jsonw_open(nowhere, &err));
    CU_ASSERT(g_error_matches(err, G_FILE_ERROR, G_FILE_ERROR_NOENT));
}

/* ---------------------------------------------------------------- a real browser */

/* Measures what the browser laid out: appended to a copy of the page, never to reports. */
static const char render_check_js[] =
    "(function(){\n"
    "  function inside(e, box) { var r = e.getBoundingClientRect();\n"
    "    return r.width > 0 && r.left >= box.left - 1 && r.right <= box.right + 1 &&\n"
    "           r.top >= box.top - 1 && r.bottom <= box.bottom + 1; }\n"
    "  function count(svg, sel) { var box = svg.getBoundingClientRect(), n = 0;\n"
    "    svg.querySelectorAll(sel).forEach(function (e) { if (inside(e, box)) n++; }); return n; }\n"
    "  var rl = document.getElementById('roofline-chart'), tl = document.getElementById('timeline-chart');\n"
    "  var rows = 0; document.querySelectorAll('#stage-table tbody tr').forEach(function (r) {\n"
    "    if (r.getBoundingClientRect().height > 10) rows++; });\n"
    "  var pre = document.createElement('pre'); pre.id = 'fp-render-check';\n"
    "  pre.textContent = 'rows ' + rows + ' roofline_width ' + Math.round(rl.getBoundingClientRect().width) +\n"
    "    ' points ' + count(rl, 'circle.pt') + ' roof ' + count(rl, 'polyline.roof') +\n"
    "    ' timeline_width ' + Math.round(tl.getBoundingClientRect().width) + ' bars ' + count(tl, 'rect.bar');\n"
    "  document.body.appendChild(pre);\n"
    "})();\n";

/* The page with the measuring script appended (through libxml2, like the page itself). */
static char *with_check(const char *html)
{
    htmlDocPtr doc = parse_html(html);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST "//body", ctx);
    CU_ASSERT_FATAL(o && o->nodesetval && o->nodesetval->nodeNr == 1);
    xmlNewTextChild(o->nodesetval->nodeTab[0], NULL, BAD_CAST "script", BAD_CAST render_check_js);
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    xmlChar *mem = NULL;
    int len = 0;
    htmlDocDumpMemoryFormat(doc, &mem, &len, 0);
    char *out = g_strndup((const char *)mem, (gsize)len);
    xmlFree(mem);
    xmlFreeDoc(doc);
    return out;
}

/* chromium --headless --dump-dom of file; the DOM after scripts ran, or NULL. */
static char *chromium_dom(const char *chromium, const char *file)
{
    g_autofree char *profile = g_dir_make_tmp("fp-chromium-XXXXXX", NULL);
    g_autofree char *udd = g_strdup_printf("--user-data-dir=%s", profile);
    g_autofree char *uri = g_filename_to_uri(file, NULL, NULL);
    const char *argv[] = {"timeout",
                          "120",
                          chromium,
                          "--headless",
                          "--no-sandbox",
                          "--disable-gpu",
                          "--disable-dev-shm-usage",
                          "--disable-background-networking",
                          "--disable-component-update",
                          "--disable-sync",
                          "--no-first-run",
                          "--window-size=1400,2000",
                          udd,
                          "--dump-dom",
                          uri,
                          NULL};
    char *out = NULL, *err = NULL;
    int status = -1;
    gboolean ran = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err, &status, NULL);
    if (!ran || !g_spawn_check_wait_status(status, NULL)) {
        fprintf(stderr, "\n  chromium failed (status %d): %s", status, err ? err : "");
        g_clear_pointer(&out, g_free);
    }
    g_free(err);
    g_autofree char *rm = g_strdup_printf("rm -rf '%s'", profile); /* chromium fills the profile dir */
    CU_ASSERT(g_spawn_command_line_sync(rm, NULL, NULL, NULL, NULL));
    return out;
}

static void test_browser(void)
{
    g_autofree char *chromium = g_find_program_in_path("chromium");
    if (!chromium) {
        if (g_strcmp0(g_getenv("FP_NO_BROWSER"), "1") == 0) {
            fprintf(stderr, "\n  SKIPPED: chromium is not installed and FP_NO_BROWSER=1: the HTML report was not "
                            "rendered in a browser");
            CU_PASS("browser test skipped (FP_NO_BROWSER=1, no chromium)");
            return;
        }
        CU_FAIL("chromium not found: run scripts/install-deps.sh (Debian package chromium), or set FP_NO_BROWSER=1 "
                "to skip this test where no browser can be installed");
        return;
    }
    g_autofree char *html = NULL;
    CU_ASSERT_EQUAL_FATAL(fuseplan((const char *[]){"report", "models/resnet_tiny.onnx", "--device", ROUND, "-f",
                                                    "html", NULL},
                                   &html, NULL),
                          0);
    g_autofree char *page = with_check(html);
    g_autofree char *file = tu_write_temp(page, strlen(page), ".html");
    g_autofree char *dom = chromium_dom(chromium, file);
    g_unlink(file);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dom);
    analysis a;
    analyze(&a, "resnet_tiny.onnx", NULL);
    guint points = 0, skipped = 0;
    fp_report_html_roofline_counts(&a.rep, &points, &skipped);
    /* the DOM after rendering: both charts and the table, with every point and row laid out */
    htmlDocPtr doc = parse_html(dom);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='roofline-chart']//circle"), (int)points);
    CU_ASSERT_EQUAL(html_count(doc, "//svg[@id='timeline-chart']//rect"), (int)a.res.memory->n_order);
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression(BAD_CAST "string(//pre[@id='fp-render-check'])", ctx);
    unsigned rows = 0, rw = 0, drawn = 0, roof = 0, tw = 0, bars = 0;
    int got = sscanf((const char *)o->stringval,
                     "rows %u roofline_width %u points %u roof %u timeline_width %u bars %u", &rows, &rw, &drawn, &roof,
                     &tw, &bars);
    if (got != 6)
        fprintf(stderr, "\n  render check: '%s'", o->stringval);
    CU_ASSERT_EQUAL(got, 6);
    CU_ASSERT_EQUAL(rows, 3);
    CU_ASSERT_EQUAL(drawn, points);
    CU_ASSERT_EQUAL(roof, 1);
    CU_ASSERT_EQUAL(bars, a.res.memory->n_order);
    CU_ASSERT(rw >= 600 && tw >= 600); /* laid out at the page's width, not collapsed */
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    xmlFreeDoc(doc);
    analysis_clear(&a);
}

/* gate -f json: the verdict and the checks as the text gives them; a failing gate's document is
 * complete (exit 1), a check that cannot be evaluated makes the verdict "error" (exit 2). */
static void test_gate_json(void)
{
    g_autofree char *out = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy",
                                              "tests/data/policies/strict.ini", "-f", "json", NULL},
                             &out, NULL),
                    1);
    tu_golden_text(out, "gate_eps_story_strict.json");
    g_autoptr(JsonParser) parser = json_parser_new();
    CU_ASSERT_FATAL(json_parser_load_from_data(parser, out, -1, NULL));
    JsonObject *root = json_node_get_object(json_parser_get_root(parser));
    CU_ASSERT_STRING_EQUAL(str(root, "verdict"), "fail");
    CU_ASSERT_EQUAL(json_object_get_int_member(root, "failed"), 1);
    JsonArray *checks = arr(root, "checks");
    CU_ASSERT_EQUAL_FATAL(json_array_get_length(checks), 3);
    JsonObject *fu = json_array_get_object_element(checks, 2);
    CU_ASSERT_STRING_EQUAL(str(fu, "name"), "forbid_unfused.ge_conv_bn");
    CU_ASSERT_STRING_EQUAL(str(fu, "status"), "fail");
    JsonObject *u = json_array_get_object_element(arr(fu, "unfused"), 0);
    CU_ASSERT_STRING_EQUAL(str(json_array_get_object_element(arr(u, "reasons"), 0), "constraint"), "max_epsilon");
    g_autofree char *path = tu_write_temp("[gate]\nmin_headroom_batch = 2\n", 30, ".ini");
    g_autofree char *err_out = NULL;
    CU_ASSERT_EQUAL(fuseplan((const char *[]){"gate", "models/eps_story.onnx", "--policy", path, "--input",
                                              "input:2x3x32x32", "-f", "json", NULL},
                             &err_out, NULL),
                    2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err_out, "\"verdict\" : \"error\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(err_out, "\"status\" : \"not_evaluated\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(err_out, "\"actual\" : null"));
    g_unlink(path);
}

FP_TEST_SUITE(register_reports)
{
    CU_pSuite s = CU_add_suite("reports", NULL, NULL);
    CU_add_test(s, "live_bytes", test_live_bytes);
    CU_add_test(s, "live_bytes_subgraph", test_live_bytes_subgraph);
    CU_add_test(s, "live_bytes_all_folded", test_live_bytes_all_folded);
    CU_add_test(s, "html_golden", test_html_golden);
    CU_add_test(s, "html_structure", test_html_structure);
    CU_add_test(s, "html_escaping", test_html_escaping);
    CU_add_test(s, "dot_quote", test_dot_quote);
    CU_add_test(s, "dot_render_names", test_dot_render_names);
    CU_add_test(s, "dot_golden", test_dot_golden);
    CU_add_test(s, "dot_resnet", test_dot_resnet);
    CU_add_test(s, "policy_parse", test_policy_parse);
    CU_add_test(s, "gate_evaluate", test_gate_evaluate);
    CU_add_test(s, "gate_exit_codes", test_gate_exit_codes);
    CU_add_test(s, "gate_reports", test_gate_reports);
    CU_add_test(s, "gate_json", test_gate_json);
    CU_add_test(s, "junit_counts", test_junit_counts);
    CU_add_test(s, "sarif_fields", test_sarif_fields);
    CU_add_test(s, "diff_exit_codes", test_diff_exit_codes);
    CU_add_test(s, "diff_golden", test_diff_golden);
    CU_add_test(s, "diff_tolerance", test_diff_tolerance);
    CU_add_test(s, "report_json", test_report_json);
    CU_add_test(s, "report_provenance", test_report_provenance);
    CU_add_test(s, "advice_ridge", test_advice_ridge);
    CU_add_test(s, "advice_cold", test_advice_cold);
    CU_add_test(s, "json_writer", test_json_writer);
    CU_add_test(s, "json_writer_file", test_json_writer_file);
    CU_add_test(s, "browser", test_browser);
}

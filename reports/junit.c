/* junit.c - gate results as JUnit XML, built as a libxml2 tree (libxml2 escapes; see junit.h). */
#include "junit.h"

#include <libxml/tree.h>

static void prop(xmlNodePtr props, const char *name, const char *value)
{
    xmlNodePtr p = xmlNewChild(props, NULL, BAD_CAST "property", NULL);
    xmlSetProp(p, BAD_CAST "name", BAD_CAST name);
    xmlSetProp(p, BAD_CAST "value", BAD_CAST(value ? value : ""));
}

static void counts(xmlNodePtr n, const fp_gate_result *g)
{
    g_autofree char *tests = g_strdup_printf("%u", g->checks->len), *failures = g_strdup_printf("%u", g->failed);
    g_autofree char *errors = g_strdup_printf("%u", g->not_evaluated);
    xmlSetProp(n, BAD_CAST "tests", BAD_CAST tests);
    xmlSetProp(n, BAD_CAST "failures", BAD_CAST failures);
    xmlSetProp(n, BAD_CAST "errors", BAD_CAST errors);
    xmlSetProp(n, BAD_CAST "time", BAD_CAST "0");
}

/* The summary, then the detail lines: what a CI page shows under the test's name. */
static char *body(const fp_gate_check *c)
{
    return c->detail ? g_strdup_printf("%s\n%s", c->summary, c->detail) : g_strdup(c->summary);
}

static void testcase(xmlNodePtr suite, const fp_gate_check *c)
{
    xmlNodePtr tc = xmlNewChild(suite, NULL, BAD_CAST "testcase", NULL);
    xmlSetProp(tc, BAD_CAST "name", BAD_CAST c->name);
    xmlSetProp(tc, BAD_CAST "classname", BAD_CAST "fuseplan.gate");
    xmlSetProp(tc, BAD_CAST "time", BAD_CAST "0");
    g_autofree char *text = body(c);
    if (c->status == FP_GATE_PASS) {
        xmlNewTextChild(tc, NULL, BAD_CAST "system-out", BAD_CAST text);
        return;
    }
    bool fail = c->status == FP_GATE_FAIL;
    xmlNodePtr f = xmlNewTextChild(tc, NULL, BAD_CAST(fail ? "failure" : "error"), BAD_CAST text);
    xmlSetProp(f, BAD_CAST "message", BAD_CAST c->summary);
    xmlSetProp(f, BAD_CAST "type", BAD_CAST(fail ? fp_gate_key_name(c->key) : "not_evaluated"));
}

char *fp_report_junit(const fp_gate_result *g, gsize *len)
{
    const fp_report *r = g->report;
    xmlDocPtr doc = xmlNewDoc(BAD_CAST "1.0");
    xmlNodePtr root = xmlNewNode(NULL, BAD_CAST "testsuites");
    xmlDocSetRootElement(doc, root);
    xmlSetProp(root, BAD_CAST "name", BAD_CAST "fuseplan gate");
    counts(root, g);
    xmlNodePtr suite = xmlNewChild(root, NULL, BAD_CAST "testsuite", NULL);
    g_autofree char *name = g_strdup_printf("fuseplan gate: %s", r->model->path);
    xmlSetProp(suite, BAD_CAST "name", BAD_CAST name);
    counts(suite, g);
    xmlSetProp(suite, BAD_CAST "skipped", BAD_CAST "0");
    xmlNodePtr props = xmlNewChild(suite, NULL, BAD_CAST "properties", NULL);
    prop(props, "model", r->model->path);
    prop(props, "policy", g->policy->path);
    prop(props, "device", r->device->name);
    prop(props, "target", r->target->name);
    prop(props, "batch", r->batch_note ? r->batch_note : "as given");
    for (guint i = 0; i < g->checks->len; i++)
        testcase(suite, g->checks->pdata[i]);
    if (g->notes->len) {
        GString *s = g_string_new(NULL);
        for (guint i = 0; i < g->notes->len; i++)
            g_string_append_printf(s, "note: %s\n", (const char *)g->notes->pdata[i]);
        xmlNewTextChild(suite, NULL, BAD_CAST "system-out", BAD_CAST s->str);
        g_string_free(s, TRUE);
    }
    xmlChar *mem = NULL;
    int size = 0;
    xmlDocDumpFormatMemoryEnc(doc, &mem, &size, "UTF-8", 1);
    char *out = g_strndup((const char *)mem, (gsize)size);
    *len = (gsize)size;
    xmlFree(mem);
    xmlFreeDoc(doc);
    return out;
}

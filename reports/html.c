/* html.c - `fuseplan report -f html`: one self-contained page built as a libxml2 HTML tree (libxml2
 * escapes every text and attribute; nothing here writes markup by hand). Charts are inline SVG
 * drawn from the same fp_report the text emitter prints: a log-log roofline of every kernel and the
 * live activation bytes per step of the planned order. No scripts, no external resources. */
#include "html.h"
#include "html_tree.h"

#include <libxml/HTMLtree.h>
#include <math.h>
#include <string.h>

#include "reports/memory.h"
#include "reports/format.h"

/* ---------------------------------------------------------------- header, cards, stages */

static void header(xmlNodePtr main, const fp_report *r)
{
    xmlNodePtr h = el(main, "header", NULL);
    el(h, "h1", "fuseplan report");
    xmlNodePtr p = elc(h, "p", "meta", NULL);
    el(p, "code", r->model->path);
    g_autofree char *fmt = g_strdup_printf(" (%s)", r->model->format);
    text(p, fmt);
    p = elc(h, "p", "meta", "device ");
    el(p, "b", r->device->name);
    g_autofree char *dd = g_strdup_printf(": %s \u00b7 target ", r->device->description ? r->device->description : "");
    text(p, dd);
    el(p, "b", r->target->name);
    g_autofree char *td_ = g_strdup_printf(": %s", r->target->description);
    text(p, td_);
    if (r->batch_note)
        elc(h, "p", "meta", r->batch_note);
    if (r->what_if != FP_DT_UNDEFINED)
        elcf(h, "p", "meta", "what-if: computing in %s (float32 tensors scaled, %s peak)", fp_dtype_name(r->what_if),
             fp_dtype_name(r->what_if));
    xmlNodePtr nav = el(h, "nav", NULL);
    static const char *const links[][2] = {{"#stages", "Stages"},
                                           {"#roofline", "Roofline"},
                                           {"#memory", "Memory"},
                                           {"#fusion", "Fusion"},
                                           {"#hotspots", "Hotspots"}};
    for (guint i = 0; i < G_N_ELEMENTS(links); i++)
        attr(el(nav, "a", links[i][1]), "href", links[i][0]);
}

/* A decoder's KV cache: what it holds now, its bytes per token, and the device's memory at the
 * analysed point (weights, KV cache, activations, reserve) in shares, as the text report gives
 * them. */
static void kv_card(xmlNodePtr cs, const fp_report *r)
{
    const fp_kv_cache *kv = r->kv;
    uint64_t cap = r->device->memory_bytes;
    fp_dtype dt = fp_report_kv_dtype(r);
    g_autofree char *now = r->kv_bytes ? fp_format_mb(r->kv_bytes) : g_strdup("\u2013");
    double pct = cap ? 100.0 / (double)cap : 0;
    g_autofree char *sub = g_strdup_printf("%u layers, %" G_GUINT64_FORMAT
                                           " B/token (%s); of %s: weights %.1f%%, KV cache %.1f%%, "
                                           "activations %.1f%%, reserve 10%%",
                                           kv->layers, fp_kv_cache_token_bytes(kv, r->precision.kv),
                                           dt != FP_DT_UNDEFINED ? fp_dtype_name(dt) : "mixed dtypes", r->device->name,
                                           pct * (double)r->weight_bytes, pct * (double)r->kv_bytes,
                                           pct * (double)r->res->memory->arena);
    card(cs, "KV cache", now, sub);
}

static void cards(xmlNodePtr main, const fp_report *r)
{
    const fp_pipeline_result *res = r->res;
    const fp_stage *fin = &res->stages[2];
    xmlNodePtr cs = elc(main, "div", "cards", NULL);
    g_autofree char *lat = fp_format_time(fin->latency_s), *orig = fp_format_time(res->stages[0].latency_s);
    g_autofree char *sub = g_strdup_printf("%.2fx faster than the original %s", fin->speedup, orig);
    card(cs, "est. latency", lat, sub);
    g_autofree char *arena = fp_format_mb(fin->activation_bytes), *load = fp_format_mb(res->memory->lower_bound);
    g_autofree char *naive = fp_format_mb(res->stages[0].activation_bytes);
    g_autofree char *msub = g_strdup_printf("LOAD %s; %s without fusion and reuse", load, naive);
    card(cs, "activation arena", arena, msub);
    guint matched = res->fusions->fusions->len, applied = 0;
    for (guint i = 0; i < matched; i++)
        applied += ((const fp_fusion *)res->fusions->fusions->pdata[i])->applied;
    g_autofree char *fz = g_strdup_printf("%u / %u", applied, matched);
    g_autofree char *fsub = g_strdup_printf("candidates applied; %u ops -> %u", res->stages[0].ops, fin->ops);
    card(cs, "fusions", fz, fsub);
    if (r->headroom) {
        g_autofree char *mb = g_strdup_printf("%" G_GINT64_FORMAT "%s", r->headroom->max_batch,
                                              r->headroom->at_limit ? "+" : "");
        g_autofree char *usable = fp_format_mb(r->headroom->usable);
        g_autofree char *hsub = g_strdup_printf("max batch on %s (%s usable)", r->device->name, usable);
        card(cs, "headroom", mb, hsub);
    } else {
        card(cs, "headroom", "\u2013", r->headroom_note ? r->headroom_note : "not computed");
    }
    if (r->kv)
        kv_card(cs, r);
}

static void stages(xmlNodePtr main, const fp_report *r)
{
    const fp_pipeline_result *res = r->res;
    xmlNodePtr s = section(main, "stages", "Stages");
    xmlNodePtr t = el(s, "table", NULL);
    attr(t, "id", "stage-table");
    static const char *const cols[] = {"stage",   "ops",          "kernels", "activation memory",
                                       "weights", "est. latency", "speedup", "layout conversions",
                                       NULL};
    header_row(t, cols, "-nnnnnnn");
    xmlNodePtr tb = el(t, "tbody", NULL);
    for (int i = 0; i < 3; i++) {
        const fp_stage *st = &res->stages[i];
        xmlNodePtr tr = el(tb, "tr", NULL);
        if (i == 2)
            attr(tr, "class", "final");
        g_autofree char *ops = g_strdup_printf("%u", st->ops), *k = g_strdup_printf("%u", st->kernels);
        g_autofree char *act = fp_format_mb(st->activation_bytes), *w = fp_format_mb(st->weight_bytes);
        g_autofree char *actl = g_strdup_printf("%s%s", act, st->planned ? " planned" : "");
        g_autofree char *lat = fp_format_time(st->latency_s), *sp = g_strdup_printf("%.2fx", st->speedup);
        g_autofree char *cv = g_strdup_printf("%u", st->conversions);
        td(tr, st->name, false);
        td(tr, ops, true);
        td(tr, k, true);
        td(tr, actl, true);
        td(tr, w, true);
        td(tr, lat, true);
        td(tr, sp, true);
        td(tr, cv, true);
    }
    elf(s, "p", "Stages on %s: original = %s; after fusion = %s; final = %s.", r->target->name,
        r->target->stage_meaning[0], r->target->stage_meaning[1], r->target->stage_meaning[2]);
    const fp_layout_result *lay = &res->layout;
    elf(s, "p", "Layout: %u conversions before, %u after (%u removed, %u merged, %u kept with a reason).",
        lay->conversions_before, lay->conversions_after, lay->removed, lay->merged, lay->refused);
    elcf(s, "p", "note",
         "ops counts runtime ops (%u shape computations folded at analysis time are not counted%s); kernels leave "
         "out views, which launch nothing. Activation memory is without reuse, then the planned arena (%s, %s "
         "order). Latency is the sum of per-kernel roofline estimates on %s.",
         res->stages[0].folded,
         r->target->original_runs_folded && res->stages[0].folded
             ? "; the stage original runs them, its latency has their launches"
             : "",
         res->memory->method ? res->memory->method : "best", res->memory->schedule, r->device->name);
}

/* ---------------------------------------------------------------- charts */

typedef struct {
    double L, T, W, H;     /* plot area in SVG units */
    double x0, x1, y0, y1; /* axis ranges (log10 of the value for log axes) */
    bool logx, logy;
} frame;

static double fx(const frame *f, double v)
{
    return f->L + ((f->logx ? log10(v) : v) - f->x0) / (f->x1 - f->x0) * f->W;
}

static double fy(const frame *f, double v)
{
    return f->T + f->H - ((f->logy ? log10(v) : v) - f->y0) / (f->y1 - f->y0) * f->H;
}

static xmlNodePtr line(xmlNodePtr parent, const char *cls, double x1, double y1, double x2, double y2)
{
    xmlNodePtr l = el(parent, "line", NULL);
    if (cls)
        attr(l, "class", cls);
    attr_num(l, "x1", x1);
    attr_num(l, "y1", y1);
    attr_num(l, "x2", x2);
    attr_num(l, "y2", y2);
    return l;
}

static xmlNodePtr svg_text(xmlNodePtr parent, double x, double y, const char *anchor, const char *s)
{
    xmlNodePtr t = el(parent, "text", s);
    attr_num(t, "x", x);
    attr_num(t, "y", y);
    if (anchor)
        attr(t, "text-anchor", anchor);
    return t;
}

static xmlNodePtr svg_root(xmlNodePtr fig, const char *id, double w, double h, const char *label)
{
    xmlNodePtr svg = el(fig, "svg", NULL);
    attr(svg, "id", id);
    attr(svg, "xmlns", "http://www.w3.org/2000/svg");
    g_autofree char *vb = g_strdup_printf("0 0 %d %d", (int)w, (int)h);
    attr(svg, "viewBox", vb);
    attr(svg, "role", "img");
    attr(svg, "aria-label", label);
    return svg;
}

/* "1 T", "10 G", "100 k": a power of ten with an SI prefix, followed by unit. */
static char *si_pow10(int k, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    if (k < 0 || k >= 3 * (int)G_N_ELEMENTS(pre)) {
        return g_strdup_printf("1e%d %s", k, unit);
    }
    static const char *const mant[] = {"1", "10", "100"};
    return g_strdup_printf("%s %s%s", mant[k % 3], pre[k / 3], unit);
}

static char *pow10_label(int k)
{
    if (k >= 0 && k <= 5)
        return g_strdup_printf("%.0f", pow(10, k));
    if (k < 0 && k >= -3) {
        char buf[G_ASCII_DTOSTR_BUF_SIZE];
        return g_strdup(g_ascii_formatd(buf, sizeof buf, "%g", pow(10, k)));
    }
    return g_strdup_printf("1e%d", k);
}

/* "2.04 TB/s", "19.5 TFLOP/s": 3 significant digits with an SI prefix. */
static char *si_rate(double v, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T", "P", "E"};
    guint k = 0;
    while (v >= 1000 && k + 1 < G_N_ELEMENTS(pre))
        v /= 1000, k++;
    return g_strdup_printf("%.3g %s%s", v, pre[k], unit);
}

/* Log-log grid with a tick and a label per decade, and both axis titles. */
static void log_axes(xmlNodePtr svg, const frame *f, const char *xtitle, const char *ytitle)
{
    xmlNodePtr grid = elc(svg, "g", "grid", NULL);
    xmlNodePtr ax = elc(svg, "g", "axes", NULL);
    for (int k = (int)f->x0; k <= (int)f->x1; k++) {
        double x = fx(f, pow(10, k));
        line(grid, NULL, x, f->T, x, f->T + f->H);
        g_autofree char *lab = pow10_label(k);
        svg_text(ax, x, f->T + f->H + 18, "middle", lab);
    }
    for (int k = (int)f->y0; k <= (int)floor(f->y1); k++) {
        double y = fy(f, pow(10, k));
        line(grid, NULL, f->L, y, f->L + f->W, y);
        g_autofree char *lab = si_pow10(k, "FLOP/s");
        svg_text(ax, f->L - 8, y + 4, "end", lab);
    }
    line(ax, "axis", f->L, f->T + f->H, f->L + f->W, f->T + f->H);
    line(ax, "axis", f->L, f->T, f->L, f->T + f->H);
    attr(svg_text(ax, f->L + f->W / 2, f->T + f->H + 40, "middle", xtitle), "class", "axis-title");
    xmlNodePtr yt = svg_text(ax, 0, 0, "middle", ytitle);
    attr(yt, "class", "axis-title");
    g_autofree char *tr = g_strdup_printf("translate(16 %d) rotate(-90)", (int)(f->T + f->H / 2));
    attr(yt, "transform", tr);
}

typedef struct {
    const fp_op_cost *oc;
    double x, y; /* intensity, attained FLOP/s */
} rpoint;

static GArray *roofline_points(const fp_report *r, guint *skipped)
{
    GArray *pts = g_array_new(FALSE, FALSE, sizeof(rpoint));
    *skipped = 0;
    for (uint32_t i = 0; i < r->res->cost->n_ops; i++) {
        const fp_op_cost *oc = &r->res->cost->ops[i];
        if (!oc->kernel)
            continue;
        if (!oc->flops || !oc->bytes || !(oc->rl.time_s > 0)) {
            (*skipped)++;
            continue;
        }
        rpoint p = {oc, (double)oc->flops / (double)oc->bytes, (double)oc->flops / oc->rl.time_s};
        g_array_append_val(pts, p);
    }
    return pts;
}

void fp_report_html_roofline_counts(const fp_report *r, guint *points, guint *skipped)
{
    g_autoptr(GArray) pts = roofline_points(r, skipped);
    *points = pts->len;
}

static const char *point_class(const fp_op_cost *oc)
{
    if (oc->rl.launch_s > MAX(oc->rl.compute_s, oc->rl.memory_s))
        return "pt launch";
    return oc->rl.bound == FP_BOUND_COMPUTE ? "pt compute" : "pt memory";
}

/* Axis ranges: every point, and the ridge a decade either side, in whole decades. */
static void roofline_frame(frame *f, const GArray *pts, double peak, double bw)
{
    double ridge = peak / bw, xmin = ridge / 10, xmax = ridge * 10, ymin = peak / 1e3;
    for (guint i = 0; i < pts->len; i++) {
        const rpoint *p = &g_array_index(pts, rpoint, i);
        xmin = MIN(xmin, p->x);
        xmax = MAX(xmax, p->x);
        ymin = MIN(ymin, p->y);
    }
    f->logx = f->logy = true;
    f->x0 = floor(log10(xmin));
    f->x1 = MAX(ceil(log10(xmax)), f->x0 + 1);
    f->y1 = log10(peak) + 0.3; /* the ceiling just below the top edge */
    f->y0 = MAX(MIN(floor(log10(ymin)), floor(f->y1) - 2), floor(f->y1) - 14);
    f->x0 = MAX(f->x0, f->x1 - 14);
}

/* The roof min(peak, bw * I) clipped to the frame. */
static void roof(xmlNodePtr svg, const frame *f, double peak, double bw)
{
    double xs = MAX(pow(10, f->x0), pow(10, f->y0) / bw), xr = peak / bw, xe = pow(10, f->x1);
    GString *pts = g_string_new(NULL);
    char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
    if (xs < xr)
        g_string_append_printf(pts, "%s,%s ", g_ascii_formatd(a, sizeof a, "%.1f", fx(f, xs)),
                               g_ascii_formatd(b, sizeof b, "%.1f", fy(f, bw * xs)));
    double xk = MAX(xs, xr);
    g_string_append_printf(pts, "%s,%s ", g_ascii_formatd(a, sizeof a, "%.1f", fx(f, xk)),
                           g_ascii_formatd(b, sizeof b, "%.1f", fy(f, MIN(peak, bw * xk))));
    g_string_append_printf(pts, "%s,%s", g_ascii_formatd(a, sizeof a, "%.1f", fx(f, xe)),
                           g_ascii_formatd(b, sizeof b, "%.1f", fy(f, peak)));
    xmlNodePtr pl = elc(svg, "polyline", "roof", NULL);
    attr(pl, "points", pts->str);
    g_string_free(pts, TRUE);
    if (xr > pow(10, f->x0) && xr < xe) {
        line(svg, "ridge", fx(f, xr), fy(f, peak), fx(f, xr), f->T + f->H);
        g_autofree char *lab = g_strdup_printf("ridge %.3g FLOP/B", xr);
        svg_text(svg, fx(f, xr) + 6, f->T + f->H - 8, NULL, lab);
    }
    g_autofree char *pk = si_rate(peak, "FLOP/s"), *pl_ = g_strdup_printf("peak %s", pk);
    svg_text(svg, f->L + f->W - 4, fy(f, peak) - 7, "end", pl_);
    if (xs < xr) {
        g_autofree char *bl = si_rate(bw, "B/s");
        double xm = sqrt(xs * xr);
        svg_text(svg, fx(f, xm) - 6, fy(f, bw * xm) - 8, "end", bl);
    }
}

static void roofline_points_svg(xmlNodePtr svg, const frame *f, const GArray *pts, const fp_report *r)
{
    xmlNodePtr g = elc(svg, "g", "points", NULL);
    for (guint i = 0; i < pts->len; i++) {
        const rpoint *p = &g_array_index(pts, rpoint, i);
        const fp_op_cost *oc = p->oc;
        xmlNodePtr c = elc(g, "circle", point_class(oc), NULL);
        attr_num(c, "cx", fx(f, p->x));
        attr_num(c, "cy", fy(f, p->y));
        attr(c, "r", "6");
        attr(c, "data-op", oc->node->name);
        g_autofree char *t = fp_format_time(oc->rl.time_s);
        elf(c, "title", "%s (%s)\n%.2f FLOP/B, %.3g GFLOP/s attained, %s, %s-bound", oc->node->name, oc->node->op_type,
            p->x, p->y / 1e9, t, fp_bound_name(oc->rl.bound));
    }
    /* the three costliest plotted ops get their names; ops drawn on the same spot share a label */
    g_autoptr(GArray) hot = fp_report_hotspots(r->res->cost, 3);
    GString *lab[3] = {NULL};
    double lx[3], ly[3];
    guint nl = 0;
    for (guint h = 0; h < hot->len; h++)
        for (guint i = 0; i < pts->len; i++) {
            const rpoint *p = &g_array_index(pts, rpoint, i);
            if (p->oc != &r->res->cost->ops[g_array_index(hot, guint, h)])
                continue;
            double x = fx(f, p->x), y = fy(f, p->y);
            guint k = 0;
            while (k < nl && hypot(lx[k] - x, ly[k] - y) > 10)
                k++;
            if (k == nl) {
                lab[nl] = g_string_new(NULL);
                lx[nl] = x, ly[nl++] = y;
            }
            g_string_append_printf(lab[k], "%s%s", lab[k]->len ? ", " : "", p->oc->node->name);
        }
    double ty[3];
    for (guint k = 0; k < nl; k++) {
        bool right = lx[k] > f->L + f->W * 0.6;
        ty[k] = ly[k] - 9;
        for (guint j = 0; j < k; j++) /* a label close to an earlier one moves up a line */
            if (fabs(lx[j] - lx[k]) < 140 && fabs(ty[j] - ty[k]) < 14)
                ty[k] = ty[j] - 14;
        attr(svg_text(g, lx[k] + (right ? -9 : 9), ty[k], right ? "end" : NULL, lab[k]->str), "class", "pt-label");
        g_string_free(lab[k], TRUE);
    }
}

static void roofline(xmlNodePtr main, const fp_report *r)
{
    xmlNodePtr s = section(main, "roofline", "Roofline");
    fp_dtype dt = r->what_if != FP_DT_UNDEFINED ? r->what_if : FP_DT_FLOAT;
    double peak = fp_device_peak(r->device, dt), bw = r->device->bandwidth;
    guint skipped = 0;
    g_autoptr(GArray) pts = roofline_points(r, &skipped);
    frame f = {.L = 112, .T = 24, .W = 740, .H = 380};
    roofline_frame(&f, pts, peak, bw);
    xmlNodePtr fig = elc(s, "figure", "chart", NULL);
    xmlNodePtr svg = svg_root(fig, "roofline-chart", 880, 460, "roofline chart of every kernel");
    log_axes(svg, &f, "arithmetic intensity (FLOP/byte, log)", "attained FLOP/s (log)");
    roof(svg, &f, peak, bw);
    roofline_points_svg(svg, &f, pts, r);
    xmlNodePtr lg = elc(fig, "div", "legend", NULL);
    static const char *const kinds[][2] = {{"compute", "compute-bound"},
                                           {"memory", "memory-bound"},
                                           {"launch", "launch-bound (overhead dominates)"}};
    for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
        xmlNodePtr sp = el(lg, "span", NULL);
        g_autofree char *cls = g_strdup_printf("sw %s", kinds[i][0]);
        elc(sp, "i", cls, NULL);
        text(sp, kinds[i][1]);
    }
    xmlNodePtr sp = el(lg, "span", NULL);
    elc(sp, "i", "sw roof", NULL);
    g_autofree char *pk = si_rate(peak, "FLOP/s"), *bws = si_rate(bw, "B/s");
    g_autofree char *rl = g_strdup_printf("%s roofs: %s %s peak, %s", r->device->name, fp_dtype_name(dt), pk, bws);
    text(sp, rl);
    elf(fig, "figcaption",
        "%u kernels of the final graph: x = FLOPs / bytes moved, y = FLOPs / estimated time (launch overhead "
        "included), against the datasheet roofs. Points sit below the roof by the device's efficiency factors "
        "and the launch overhead.%s",
        pts->len, skipped ? " Kernels without FLOPs (data movement) are not plotted." : "");
}

/* Nice linear tick step for a range [0, max] split in about n parts. */
static double nice_step(double max, int n)
{
    double raw = max / n, mag = pow(10, floor(log10(raw))), norm = raw / mag;
    return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
}

static char *bytes_tick(double v, double step)
{
    const char *u = step >= 1e8 ? "GB" : step >= 1e5 ? "MB" : "kB";
    double d = step >= 1e8 ? 1e9 : step >= 1e5 ? 1e6 : 1e3;
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup_printf("%s %s", g_ascii_formatd(buf, sizeof buf, "%.4g", v / d), u);
}

static void timeline_axes(xmlNodePtr svg, const frame *f, double ystep, uint32_t n)
{
    xmlNodePtr grid = elc(svg, "g", "grid", NULL), ax = elc(svg, "g", "axes", NULL);
    for (double v = 0; v <= f->y1 * (1 + 1e-9); v += ystep) {
        line(grid, NULL, f->L, fy(f, v), f->L + f->W, fy(f, v));
        g_autofree char *lab = bytes_tick(v, ystep);
        svg_text(ax, f->L - 8, fy(f, v) + 4, "end", lab);
    }
    uint32_t xstep = n > 1 ? (uint32_t)MAX(1.0, nice_step(n, 10)) : 1;
    for (uint32_t s = 0; s < n; s += xstep) {
        g_autofree char *lab = g_strdup_printf("%u", s);
        svg_text(ax, fx(f, s + 0.5), f->T + f->H + 18, "middle", lab);
    }
    line(ax, "axis", f->L, f->T + f->H, f->L + f->W, f->T + f->H);
    line(ax, "axis", f->L, f->T, f->L, f->T + f->H);
    attr(svg_text(ax, f->L + f->W / 2, f->T + f->H + 40, "middle", "step of the planned order"), "class", "axis-title");
    xmlNodePtr yt = svg_text(ax, 0, 0, "middle", "live activation bytes");
    attr(yt, "class", "axis-title");
    g_autofree char *tr = g_strdup_printf("translate(16 %d) rotate(-90)", (int)(f->T + f->H / 2));
    attr(yt, "transform", tr);
}

/* A dashed horizontal level with its label at the right end. */
static void level(xmlNodePtr svg, const frame *f, const char *cls, double v, const char *label, double dy)
{
    line(svg, cls, f->L, fy(f, v), f->L + f->W, fy(f, v));
    xmlNodePtr t = svg_text(svg, f->L + f->W - 4, fy(f, v) + dy, "end", label);
    attr(t, "class", "mark");
}

static void timeline_bars(xmlNodePtr svg, const frame *f, const fp_memory_result *mem, const uint64_t *live)
{
    xmlNodePtr g = elc(svg, "g", "bars", NULL);
    double slot = f->W / MAX(mem->n_order, 1u);
    double bw = MAX(MIN(slot - (slot > 4 ? 2 : 0), 56), 0.5); /* a gap between wide bars, none too wide */
    for (uint32_t s = 0; s < mem->n_order; s++) {
        xmlNodePtr b = elc(g, "rect", s == mem->peak_step && mem->peak_node ? "bar peak" : "bar", NULL);
        attr_num(b, "x", fx(f, s + 0.5) - bw / 2);
        attr_num(b, "y", fy(f, (double)live[s]));
        attr_num(b, "width", bw);
        attr_num(b, "height", f->T + f->H - fy(f, (double)live[s]));
        g_autofree char *mb = fp_format_mb(live[s]);
        elf(b, "title", "step %u: %s %s\n%s live", s, mem->order[s]->op_type, mem->order[s]->name, mb);
    }
}

/* The live bytes of the memory plan at each step of its order, with LOAD, the arena and the peak. */
static void timeline(xmlNodePtr s, const fp_report *r)
{
    const fp_memory_result *mem = r->res->memory;
    const uint64_t *live = mem->live_bytes;
    frame f = {.L = 112, .T = 24, .W = 740, .H = 300, .x0 = 0, .x1 = MAX(mem->n_order, 1u), .y0 = 0};
    double top = (double)MAX(MAX(mem->arena, mem->lower_bound), 1);
    double ystep = nice_step(top * 1.08, 5);
    f.y1 = ceil(top * 1.08 / ystep) * ystep;
    xmlNodePtr fig = elc(s, "figure", "chart", NULL);
    xmlNodePtr svg = svg_root(fig, "timeline-chart", 880, 380, "live activation bytes per step");
    timeline_axes(svg, &f, ystep, mem->n_order);
    timeline_bars(svg, &f, mem, live);
    g_autofree char *load = fp_format_mb(mem->lower_bound), *arena = fp_format_mb(mem->arena);
    g_autofree char *ll = g_strdup_printf("LOAD %s", load);
    level(svg, &f, "load", (double)mem->lower_bound, ll, -6);
    if (mem->arena != mem->lower_bound) {
        g_autofree char *al = g_strdup_printf("arena %s", arena);
        level(svg, &f, "arena", (double)mem->arena, al, -6);
    }
    if (mem->peak_node) {
        double x = fx(&f, mem->peak_step + 0.5);
        g_autofree char *pl = g_strdup_printf("peak: step %u, %s", mem->peak_step, mem->peak_node->name);
        xmlNodePtr t = svg_text(svg, x, fy(&f, (double)mem->lower_bound) - 22,
                                x > f.L + f.W * 0.7   ? "end"
                                : x < f.L + f.W * 0.3 ? "start"
                                                      : "middle",
                                pl);
        attr(t, "class", "mark");
    }
    xmlNodePtr lg = elc(fig, "div", "legend", NULL);
    xmlNodePtr sp = el(lg, "span", NULL);
    elc(sp, "i", "sw bar", NULL);
    text(sp, "live bytes at the step (buffers rounded to the alignment, as planned)");
    sp = el(lg, "span", NULL);
    elc(sp, "i", "sw peak", NULL);
    text(sp, "the peak: LOAD, the floor of any plan for this order");
}

/* ---------------------------------------------------------------- memory, fusion, hotspots */

static void memory(xmlNodePtr main, const fp_report *r)
{
    const fp_memory_result *mem = r->res->memory;
    xmlNodePtr s = section(main, "memory", "Memory timeline");
    g_autofree char *load = fp_format_mb(mem->lower_bound), *arena = fp_format_mb(mem->arena),
                    *naive = fp_format_mb(mem->naive_bytes);
    elf(s, "p",
        "LOAD %s (the floor for this order), arena %s (%s), without reuse %s; %u buffers, %u steps (%s "
        "order).",
        load, arena, mem->method ? mem->method : "best", naive, mem->n_buffers, mem->n_order, mem->schedule);
    timeline(s, r);
    if (mem->peak_node) {
        el(s, "h3", "Live at the peak");
        xmlNodePtr t = el(s, "table", NULL);
        attr(t, "id", "peak-table");
        static const char *const cols[] = {"buffer", "size", "from", "live steps", NULL};
        header_row(t, cols, "-n-n");
        xmlNodePtr tb = el(t, "tbody", NULL);
        for (uint32_t i = 0; i < mem->n_peak && i < 8; i++) {
            const fp_memory_tensor *pt = &mem->peak[i];
            xmlNodePtr tr = el(tb, "tr", NULL);
            el(el(tr, "td", NULL), "code", pt->value ? pt->value->name : "(workspace)");
            g_autofree char *b = fp_format_mb(pt->bytes), *steps = g_strdup_printf("%u \u2013 %u", pt->first, pt->last);
            td(tr, b, true);
            td(tr, pt->producer ? pt->producer->name : "graph input", false);
            td(tr, steps, true);
        }
    }
    g_autoptr(GPtrArray) hints = fp_report_memory_hints(mem);
    if (hints->len) {
        xmlNodePtr ul = elc(s, "ul", "hints", NULL);
        for (guint i = 0; i < hints->len && i < 5; i++)
            el(ul, "li", hints->pdata[i]);
    }
}

static const char *rule_title(const char *id)
{
    for (size_t i = 0; i < fp_n_rules; i++)
        if (strcmp(fp_rules[i].id, id) == 0)
            return fp_rules[i].title;
    return "";
}

static void candidate_row(xmlNodePtr tb, const fp_fusion *fu)
{
    xmlNodePtr tr = el(tb, "tr", NULL);
    xmlNodePtr c = el(tr, "td", NULL);
    for (guint k = 0; k < fu->nodes->len; k++) {
        if (k)
            text(c, " + ");
        el(c, "code", fu->nodes->pdata[k]);
    }
    xmlNodePtr res = el(tr, "td", NULL);
    if (fu->applied) {
        g_autofree char *to = g_strdup_printf("\u2192 %s", fu->fused_op ? fu->fused_op : "removed");
        elc(res, "span", "badge ok", to);
        el(tr, "td", NULL);
        return;
    }
    elc(res, "span", "badge no", "not applied");
    xmlNodePtr ul = elc(el(tr, "td", NULL), "ul", "reasons", NULL);
    for (guint k = 0; k < fu->reasons->len; k++) {
        const fp_reason *why = fu->reasons->pdata[k];
        xmlNodePtr li = el(ul, "li", NULL);
        el(li, "b", why->constraint);
        g_autofree char *m = g_strdup_printf(": %s ", why->message);
        text(li, m);
        elcf(li, "span", "dim", "(actual %s; required %s)", why->actual, why->required);
        xmlNodePtr fix = elc(li, "div", "fix", NULL);
        g_autofree char *h = g_strdup_printf("fix: %s", why->hint);
        text(fix, h);
    }
}

static void fusion(xmlNodePtr main, const fp_report *r)
{
    xmlNodePtr s = section(main, "fusion", "Fusion by rule");
    const GPtrArray *fl = r->res->fusions->fusions;
    guint shown = 0;
    for (char **id = r->target->rules; *id; id++) {
        guint matched = 0, applied = 0;
        for (guint i = 0; i < fl->len; i++) {
            const fp_fusion *fu = fl->pdata[i];
            if (strcmp(fu->rule, *id) == 0)
                matched++, applied += fu->applied;
        }
        if (!matched)
            continue;
        shown++;
        xmlNodePtr h = el(s, "h3", NULL);
        el(h, "code", *id);
        elc(h, "span", "title", rule_title(*id));
        g_autofree char *badge = g_strdup_printf("%u of %u applied", applied, matched);
        elc(h, "span", applied == matched ? "badge ok" : "badge no", badge);
        xmlNodePtr t = el(s, "table", NULL);
        attr(t, "class", "fusion-rule");
        attr(t, "data-rule", *id);
        static const char *const cols[] = {"candidate", "result", "why not, and the fix", NULL};
        header_row(t, cols, "---");
        xmlNodePtr tb = el(t, "tbody", NULL);
        for (guint i = 0; i < fl->len; i++) {
            const fp_fusion *fu = fl->pdata[i];
            if (strcmp(fu->rule, *id) == 0)
                candidate_row(tb, fu);
        }
    }
    if (!shown)
        elf(s, "p", "No fusion candidates for target %s.", r->target->name);
}

static void hotspots(xmlNodePtr main, const fp_report *r)
{
    const fp_cost_result *c = r->res->cost;
    xmlNodePtr s = section(main, "hotspots", "Hotspots");
    g_autoptr(GArray) hot = fp_report_hotspots(c, r->top);
    xmlNodePtr t = el(s, "table", NULL);
    attr(t, "id", "hotspot-table");
    static const char *const cols[] = {"op", "type", "est. time", "share", "bound", "advice", NULL};
    header_row(t, cols, "--nn--");
    xmlNodePtr tb = el(t, "tbody", NULL);
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    for (guint i = 0; i < hot->len; i++) {
        const fp_op_cost *oc = &c->ops[g_array_index(hot, guint, i)];
        xmlNodePtr tr = el(tb, "tr", NULL);
        el(el(tr, "td", NULL), "code", oc->node->name);
        td(tr, oc->node->op_type, false);
        g_autofree char *tm = fp_format_time(oc->rl.time_s), *adv = fp_report_advice(oc, r->device);
        td(tr, tm, true);
        double share = c->total_s > 0 ? 100.0 * oc->rl.time_s / c->total_s : 0;
        xmlNodePtr sh = td(tr, NULL, true);
        xmlNodePtr bar = elc(sh, "span", "share", NULL);
        g_autofree char *w = g_strdup_printf("width:%s%%", g_ascii_formatd(buf, sizeof buf, "%.1f", share));
        attr(el(bar, "i", NULL), "style", w);
        g_autofree char *pct = g_strdup_printf("%.1f%%", share);
        text(sh, pct);
        /* as the roofline colours it: launch when the overhead outweighs both roofs */
        const char *bound = strcmp(point_class(oc), "pt launch") == 0 ? "launch" : fp_bound_name(oc->rl.bound);
        g_autofree char *bcls = g_strdup_printf("bound-%s", bound);
        elc(el(tr, "td", NULL), "span", bcls, bound);
        td(tr, adv, false);
    }
    g_autofree char *total = fp_format_time(c->total_s);
    elcf(s, "p", "note", "The %u costliest of %u kernels, estimated on %s; all kernels together %s.", hot->len,
         c->kernels, r->device->name, total);
}

/* ---------------------------------------------------------------- the page */

static xmlDocPtr build(const fp_report *r)
{
    g_autofree char *title = g_strdup_printf("fuseplan report: %s", r->model->path);
    xmlNodePtr main;
    xmlDocPtr doc = fp_html_page(title, &main);
    header(main, r);
    cards(main, r);
    stages(main, r);
    roofline(main, r);
    memory(main, r);
    fusion(main, r);
    hotspots(main, r);
    elf(el(main, "footer", NULL), "span",
        "fuseplan %s \u00b7 estimates from the exported graph alone; no weights "
        "were loaded and nothing was run.",
        FP_VERSION);
    return doc;
}

void fp_report_html(const fp_report *r, FILE *out) { fp_html_write(build(r), out); }

/* html_tree.c - the style sheet and the page writer of the HTML pages (html_tree.h). */
#include "html_tree.h"

#include <libxml/HTMLtree.h>

const char fp_html_css[] =
    ":root{--fg:#1a202c;--muted:#5a6473;--line:#e2e8f0;--bg:#f5f7fa;--card:#fff;--accent:#2b6cb0;"
    "--compute:#2b6cb0;--memory:#dd6b20;--launch:#8a94a6;--bad:#c53030;--good:#2f855a}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:14px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif}\n"
    "main{max-width:1180px;margin:0 auto;padding:28px 32px 48px}\n"
    "h1{font-size:24px;margin:0 0 6px;letter-spacing:-.01em}\n"
    "h2{font-size:18px;margin:36px 0 12px;padding-bottom:6px;border-bottom:2px solid var(--line)}\n"
    "h3{font-size:15px;margin:20px 0 8px;display:flex;gap:10px;align-items:baseline}\n"
    "h3 .title{font-weight:400;color:var(--muted)}\n"
    "p{margin:6px 0}\n"
    ".meta{color:var(--muted);margin:2px 0}\n"
    ".meta b{color:var(--fg);font-weight:600}\n"
    "nav{margin:14px 0 0;display:flex;gap:16px;flex-wrap:wrap}\n"
    "nav a{color:var(--accent);text-decoration:none;font-weight:500}\n"
    ".cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:12px;margin:20px 0 0}\n"
    ".card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 16px;"
    "box-shadow:0 1px 2px rgba(0,0,0,.04)}\n"
    ".card .k{color:var(--muted);font-size:11px;text-transform:uppercase;letter-spacing:.06em}\n"
    ".card .v{font-size:24px;font-weight:650;font-variant-numeric:tabular-nums;margin:2px 0}\n"
    ".card .s{color:var(--muted);font-size:12px}\n"
    "table{border-collapse:separate;border-spacing:0;width:100%;background:var(--card);"
    "border:1px solid var(--line);border-radius:10px;overflow:hidden}\n"
    "th,td{padding:7px 12px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}\n"
    "th{background:#eef2f7;font-weight:600;font-size:12px;color:#2d3748;white-space:nowrap}\n"
    "tbody tr:last-child td{border-bottom:none}\n"
    "tbody tr:nth-child(even) td{background:#fafbfc}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "tr.final td{font-weight:600}\n"
    ".note{color:var(--muted);font-size:12.5px;margin:8px 2px}\n"
    ".chart{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:10px 12px;margin:0}\n"
    ".chart svg{display:block;width:100%;height:auto;max-width:980px;margin:0 auto}\n"
    ".chart figcaption{color:var(--muted);font-size:12.5px;margin:4px 6px}\n"
    ".legend{display:flex;gap:18px;flex-wrap:wrap;font-size:12.5px;margin:4px 6px 0}\n"
    ".sw{display:inline-block;width:11px;height:11px;border-radius:50%;margin-right:5px;vertical-align:-1px}\n"
    ".sw.compute{background:var(--compute)}.sw.memory{background:var(--memory)}.sw.launch{background:var(--launch)}\n"
    ".sw.roof{border-radius:0;height:3px;background:var(--fg);vertical-align:3px}\n"
    ".sw.bar{border-radius:2px;background:#90cdf4}.sw.peak{border-radius:2px;background:var(--bad)}\n"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;font-size:12px;"
    "fill:#4a5568}\n"
    "svg .grid line{stroke:#edf2f7;stroke-width:1}\n"
    "svg .axis{stroke:#a0aec0;stroke-width:1}\n"
    "svg .axis-title{font-size:12.5px;fill:#2d3748;font-weight:600}\n"
    "svg .roof{stroke:#1a202c;stroke-width:2.5;fill:none}\n"
    "svg .ridge{stroke:#718096;stroke-dasharray:4 4}\n"
    "svg .pt{stroke:#fff;stroke-width:1.5;fill-opacity:.9}\n"
    "svg .pt.compute{fill:var(--compute)}svg .pt.memory{fill:var(--memory)}svg .pt.launch{fill:var(--launch)}\n"
    "svg .pt-label{font-size:11px;fill:#2d3748}\n"
    "svg .bar{fill:#90cdf4}svg .bar.peak{fill:var(--bad)}\n"
    "svg .load{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}\n"
    "svg .arena{stroke:#2d3748;stroke-width:1.2;stroke-dasharray:2 3}\n"
    "svg .mark{fill:var(--bad);font-weight:600}\n"
    ".badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:600;white-space:nowrap}\n"
    ".ok{background:#c6f6d5;color:#22543d}.no{background:#fed7d7;color:#822727}\n"
    ".bound-compute{color:var(--compute);font-weight:600}.bound-memory{color:var(--memory);font-weight:600}\n"
    ".share{display:inline-block;width:90px;height:8px;background:#edf2f7;border-radius:4px;margin-right:8px;"
    "vertical-align:middle;overflow:hidden}\n"
    ".share i{display:block;height:8px;background:var(--accent)}\n"
    "ul.reasons{margin:0;padding-left:18px}ul.reasons li{margin:2px 0}\n"
    ".fix{color:var(--good)}\n"
    ".dim{color:var(--muted)}\n"
    "ul.hints{margin:8px 0;padding-left:20px;color:#2d3748}\n"
    "code{font:12.5px ui-monospace,'DejaVu Sans Mono',Menlo,monospace;background:#edf2f7;padding:1px 5px;"
    "border-radius:4px;overflow-wrap:anywhere}\n"
    "#hotspot-table code,#peak-table code{white-space:nowrap}\n"
    "table.fusion-rule{table-layout:fixed}table.fusion-rule th:nth-child(1){width:36%}"
    "table.fusion-rule th:nth-child(2){width:16%}\n"
    ".bound-launch{color:var(--launch);font-weight:600}\n"
    "footer{margin-top:44px;color:var(--muted);font-size:12px;border-top:1px solid var(--line);padding-top:10px}\n";

xmlDocPtr fp_html_page(const char *title, xmlNodePtr *main)
{
    xmlDocPtr doc = htmlNewDocNoDtD(NULL, NULL);
    xmlCreateIntSubset(doc, BAD_CAST "html", NULL, NULL);
    xmlNodePtr html = xmlNewNode(NULL, BAD_CAST "html");
    xmlDocSetRootElement(doc, html);
    attr(html, "lang", "en");
    xmlNodePtr head = el(html, "head", NULL);
    attr(el(head, "meta", NULL), "charset", "utf-8");
    xmlNodePtr vp = el(head, "meta", NULL);
    attr(vp, "name", "viewport");
    attr(vp, "content", "width=device-width, initial-scale=1");
    el(head, "title", title);
    el(head, "style", fp_html_css);
    *main = el(el(html, "body", NULL), "main", NULL);
    return doc;
}

void fp_html_write(xmlDocPtr doc, FILE *out)
{
    /* no encoder: the tree's UTF-8 goes out as is (htmlDocDumpMemory would turn it into entities
     * for want of a http-equiv meta) */
    xmlOutputBufferPtr buf = xmlAllocOutputBuffer(NULL);
    htmlDocContentDumpFormatOutput(buf, doc, "UTF-8", 1);
    xmlOutputBufferFlush(buf);
    const xmlChar *data = xmlOutputBufferGetContent(buf);
    fwrite(data, 1, xmlOutputBufferGetSize(buf), out);
    xmlOutputBufferClose(buf);
    xmlFreeDoc(doc);
}

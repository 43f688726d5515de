/* report_flame.c - the --flamegraph writer: a self-contained interactive SVG flame graph, as flamegraph.pl draws one. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report.h"
#include "report_common.h"
#include "report_fold.h"
#include "util.h"

/* flamegraph.pl's geometry: frames 16 px high in a 1200 px image, 10 px margins. */
#define FLAME_WIDTH	1200
#define FLAME_XPAD	10
#define FLAME_FULL	(FLAME_WIDTH - 2 * FLAME_XPAD)
#define FLAME_FRAME_H	16
#define FLAME_FONT	12
#define FLAME_TOP	54	/* title, subtitle and the controls above the frames */
#define FLAME_BOTTOM	34	/* the details and matched lines below them */
/* Frames narrower than this are left out, with everything they call (thinner still). */
#define FLAME_MIN_W	0.1
/* The average width of a character as a share of the font size, to fit labels. */
#define FLAME_CHAR_W	0.59

/* How the graph names the figure of each cost. */
static const struct {
	const char *what, *one, *many;
} flame_units[] = {
	[COST_LIVE] = { "live bytes", "byte", "bytes" },
	[COST_PEAK] = { "live bytes at the peak", "byte", "bytes" },
	[COST_CALLS] = { "allocation calls", "call", "calls" },
	[COST_BYTES] = { "bytes allocated", "byte", "bytes" },
	[COST_TEMPORARY] = { "temporary allocations", "temporary allocation", "temporary allocations" },
	[COST_DEFINITELY_LOST] = { "bytes definitely lost", "byte", "bytes" },
};

/* Writes at most len bytes of s as XML character data: markup escaped, broken UTF-8 as '?'. */
static void
flame_xml(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end && *p) {
		int n;

		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = util_utf8_len(p)) && p + n <= end) {
				fwrite(p, 1, (size_t)n, f);
				p += n - 1;
			} else {
				fputc('?', f);
			}
		}
		p++;
	}
}

/* A green (flamegraph.pl's memory palette) that depends on the name only, so colors stay put between graphs. */
static void
flame_color(const char *name, char buf[32])
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	snprintf(buf, 32, "rgb(%u,%u,%u)", (unsigned)(h % 110),
		 175 + (unsigned)((h >> 16) % 75), (unsigned)((h >> 32) % 110));
}

/* The label that fits a frame w px wide: the name, cut with ".." (at a character), or nothing. */
static void
flame_label(FILE *f, const char *name, double w)
{
	int fit = (int)((w - 6) / (FLAME_FONT * FLAME_CHAR_W));
	size_t len = strlen(name), cut;

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		flame_xml(f, name, len);
		return;
	}
	cut = (size_t)fit - 2;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	flame_xml(f, name, cut);
	fputs("..", f);
}

/* "NAME (10,000 bytes, 12.34%)": a frame's title, and its details line on hover. */
static void
flame_title(FILE *f, const struct jt_snapshot *s, const char *name, uint64_t v, uint64_t total)
{
	char num[32];

	flame_xml(f, name, strlen(name));
	fprintf(f, " (%s %s, %.2f%%)", util_num(num, v), v == 1 ? flame_units[s->cost].one :
		flame_units[s->cost].many, total ? 100.0 * (double)v / (double)total : 0.0);
}

static void
flame_frame(FILE *f, const struct jt_snapshot *s, const struct jt_fold *fold, size_t i, int height)
{
	const struct fold_node *n = &fold->nodes[i];
	double x = FLAME_XPAD + (double)n->offset / (double)fold->total * FLAME_FULL;
	double w = (double)n->value / (double)fold->total * FLAME_FULL;
	int y = height - FLAME_BOTTOM - (int)(n->depth + 1) * FLAME_FRAME_H;
	char color[32];

	if (w < FLAME_MIN_W)
		return;
	flame_color(n->name, color);
	fprintf(f, "<g class=\"frame\" id=\"f%zu\" data-d=\"%u\"", i, n->depth);
	if (i)
		fprintf(f, " data-p=\"f%u\"", n->parent);
	fprintf(f, " data-o=\"%" PRIu64 "\" data-v=\"%" PRIu64 "\"><title>", n->offset, n->value);
	flame_title(f, s, n->name, n->value, fold->total);
	fprintf(f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
		x, y + 1, w, FLAME_FRAME_H - 1, color);
	fprintf(f, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FLAME_FRAME_H - 4);
	flame_label(f, n->name, w);
	fputs("</text></g>\n", f);
}

static const char flame_style[] =
	"<style type=\"text/css\">\n"
	"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	"#title { text-anchor: middle; font-size: 17px; }\n"
	"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
	"#search, #matched { text-anchor: end; }\n"
	"#search, #unzoom, g.frame { cursor: pointer; }\n"
	"#search:hover, #unzoom:hover { fill: rgb(0,0,200); }\n"
	"g.frame text { pointer-events: none; }\n"
	"g.frame:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }\n"
	"g.parent { opacity: 0.5; }\n"
	".hide { display: none; }\n"
	"</style>\n";

/* The root element, the background, the titles and the controls. */
static void
flame_head(FILE *f, const struct jt_snapshot *s, const struct jt_fold *fold, int height)
{
	char num[32];

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" class=\"jt-flame\""
		" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" data-total=\"%" PRIu64 "\""
		" data-xpad=\"%d\" data-full=\"%d\" data-font=\"%d\">\n",
		FLAME_WIDTH, height, FLAME_WIDTH, height, fold->total, FLAME_XPAD, FLAME_FULL, FLAME_FONT);
	fputs(flame_style, f);
	fprintf(f, "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		"<stop stop-color=\"#eeeeee\" offset=\"5%%\"/><stop stop-color=\"#e0f0e0\" offset=\"95%%\"/>"
		"</linearGradient></defs>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		FLAME_WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">Heap flame graph: %s</text>\n",
		FLAME_WIDTH / 2, flame_units[s->cost].what);
	fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"42\">", FLAME_WIDTH / 2);
	flame_xml(f, s->command ? s->command : "?", s->command ? strlen(s->command) : 1);
	fprintf(f, " (pid %d), snapshot %u (%s): %s %s in all</text>\n", s->pid, s->seq,
		s->reason ? s->reason : "?", util_num(num, fold->total),
		fold->total == 1 ? flame_units[s->cost].one : flame_units[s->cost].many);
	fprintf(f, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n",
		FLAME_XPAD, FLAME_WIDTH - FLAME_XPAD, FLAME_XPAD, height - 12,
		FLAME_WIDTH - FLAME_XPAD, height - 12);
}

/*
 * The interaction, written from scratch after flamegraph.pl's: hover fills
 * the details line, a click zooms (the frame takes the full width, its
 * callers stay as faded full-width bars, the rest hides; the root or "Reset
 * Zoom" undoes it), "Search" or Ctrl-F highlights the frames whose name
 * matches a regular expression and shows their share. It finds its own <svg>
 * (not document.documentElement), so it also works inlined in an HTML page,
 * and it runs last, when every frame exists. Positions are recomputed from
 * each frame's data-o/data-v figures, so a zoomed frame is exactly full width.
 * svg.jtFlame holds zoom, unzoom, search and resetSearch for a page to call.
 */
static const char flame_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"'use strict';\n"
	"var me = document.currentScript, all = document.querySelectorAll('svg.jt-flame');\n"
	"var svg = me && me.closest('svg') || all[all.length - 1];\n"
	"var XPAD = +svg.getAttribute('data-xpad'), FULL = +svg.getAttribute('data-full');\n"
	"var FONT = +svg.getAttribute('data-font'), TOTAL = +svg.getAttribute('data-total');\n"
	"var frames = [].slice.call(svg.querySelectorAll('g.frame')), byId = {}, searching = null;\n"
	"function $(id) { return svg.querySelector('#' + id); }\n"
	"var details = $('details'), unzoomBtn = $('unzoom'), searchBtn = $('search'), matched = $('matched');\n"
	"frames.forEach(function (g) { byId[g.id] = g; });\n"
	"function num(g, a) { return +g.getAttribute(a); }\n"
	"function parentOf(g) { var p = g.getAttribute('data-p'); return p ? byId[p] : null; }\n"
	"function title(g) { return g.querySelector('title').textContent; }\n"
	"function nameOf(g) { var t = title(g), i = t.lastIndexOf(' ('); return i < 0 ? t : t.slice(0, i); }\n"
	"function within(g, z) {\n"
	"  var d = num(z, 'data-d');\n"
	"  while (g && num(g, 'data-d') > d) g = parentOf(g);\n"
	"  return g === z;\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text'), name = nameOf(g);\n"
	"  var fit = Math.floor((w - 6) / (FONT * 0.59));\n"
	"  r.setAttribute('x', x.toFixed(2));\n"
	"  r.setAttribute('width', w.toFixed(2));\n"
	"  t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  t.textContent = fit < 3 ? '' : name.length <= fit ? name : name.slice(0, fit - 2) + '..';\n"
	"}\n"
	"function unzoom() {\n"
	"  frames.forEach(function (g) {\n"
	"    g.classList.remove('hide', 'parent');\n"
	"    place(g, XPAD + num(g, 'data-o') / TOTAL * FULL, num(g, 'data-v') / TOTAL * FULL);\n"
	"  });\n"
	"  unzoomBtn.classList.add('hide');\n"
	"}\n"
	"function zoom(z) {\n"
	"  var o0 = num(z, 'data-o'), v0 = num(z, 'data-v'), up = {}, p;\n"
	"  if (!parentOf(z)) return unzoom();\n"
	"  for (p = parentOf(z); p; p = parentOf(p)) up[p.id] = true;\n"
	"  frames.forEach(function (g) {\n"
	"    var caller = !!up[g.id], inside = !caller && within(g, z);\n"
	"    g.classList.toggle('hide', !caller && !inside);\n"
	"    g.classList.toggle('parent', caller);\n"
	"    if (caller) place(g, XPAD, FULL);\n"
	"    else if (inside) place(g, XPAD + (num(g, 'data-o') - o0) / v0 * FULL, num(g, 'data-v') / v0 * FULL);\n"
	"  });\n"
	"  unzoomBtn.classList.remove('hide');\n"
	"}\n"
	"function resetSearch() {\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill'));\n"
	"  });\n"
	"  searching = null;\n"
	"  searchBtn.textContent = 'Search';\n"
	"  matched.textContent = ' ';\n"
	"}\n"
	"function search(term) {\n"
	"  var re, hits = {}, sum = 0, pct;\n"
	"  try { re = new RegExp(term); } catch (e) { re = null; }\n"
	"  frames.forEach(function (g) {\n"
	"    var r = g.querySelector('rect'), name = nameOf(g);\n"
	"    var hit = term !== '' && (re ? re.test(name) : name.indexOf(term) >= 0);\n"
	"    if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    r.setAttribute('fill', hit ? 'rgb(230,0,230)' : r.getAttribute('data-fill'));\n"
	"    if (hit) hits[g.id] = true;\n"
	"  });\n"
	"  frames.forEach(function (g) {\n"
	"    var p;\n"
	"    if (!hits[g.id]) return;\n"
	"    for (p = parentOf(g); p; p = parentOf(p)) if (hits[p.id]) return;\n"
	"    sum += num(g, 'data-v');\n"
	"  });\n"
	"  pct = TOTAL ? 100 * sum / TOTAL : 0;\n"
	"  searching = term;\n"
	"  searchBtn.textContent = 'Reset Search';\n"
	"  matched.textContent = 'Matched: ' + pct.toFixed(2) + '%';\n"
	"  return pct;\n"
	"}\n"
	"function ask() {\n"
	"  var term;\n"
	"  if (searching !== null) return resetSearch();\n"
	"  term = window.prompt('Search for (a regular expression):', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	"svg.addEventListener('click', function (e) {\n"
	"  var t = e.target, g = t.closest('g.frame');\n"
	"  if (t.closest('#unzoom')) unzoom();\n"
	"  else if (t.closest('#search')) ask();\n"
	"  else if (g) zoom(g);\n"
	"});\n"
	"svg.addEventListener('mouseover', function (e) {\n"
	"  var g = e.target.closest('g.frame');\n"
	"  if (g) details.textContent = 'Function: ' + title(g);\n"
	"});\n"
	"svg.addEventListener('mouseout', function (e) {\n"
	"  if (e.target.closest('g.frame')) details.textContent = ' ';\n"
	"});\n"
	"if (svg === document.documentElement) document.addEventListener('keydown', function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'f') { e.preventDefault(); ask(); }\n"
	"  else if (e.key === 'Escape') resetSearch();\n"
	"});\n"
	"svg.jtFlame = { zoom: zoom, unzoom: unzoom, search: search, resetSearch: resetSearch };\n"
	"})();\n"
	"]]></script>\n";

int
report_flamegraph(FILE *f, const struct jt_snapshot *s)
{
	struct jt_fold fold;
	int height;

	fold_build(s, &fold);
	height = FLAME_TOP + (int)(fold.max_depth + 1) * FLAME_FRAME_H + FLAME_BOTTOM;
	flame_head(f, s, &fold, height);
	fputs("<g id=\"frames\">\n", f);
	if (fold.total == 0)
		fprintf(f, "<text x=\"%d\" y=\"%d\">No stack has any %s.</text>\n", FLAME_XPAD,
			height - FLAME_BOTTOM - 4, flame_units[s->cost].what);
	for (size_t i = 0; fold.total && i < fold.nnodes; i++)
		flame_frame(f, s, &fold, i, height);
	fputs("</g>\n", f);
	fputs(flame_script, f);
	fputs("</svg>\n", f);
	fold_free(&fold);
	return ferror(f) ? -1 : 0;
}

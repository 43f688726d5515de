/* report_html.c - --html: one self-contained page that shows every snapshot of the run, rewritten at each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "report.h"
#include "util.h"

/* The page (src/report_html_page.html, linked in by report_html_page.S); the data goes at the marker. */
extern const char report_html_page[];
#define HTML_DATA_MARK "@@JT_DATA@@"

struct jt_html_out {
	struct jt_outfile *out;
	char **snaps;		/* each snapshot's JSON, as report_json_snapshot wrote it */
	size_t n;
};

struct jt_html_out *
report_html_open(const char *path)
{
	struct jt_html_out *h = xcalloc(1, sizeof(*h));

	if (!(h->out = outfile_open(path))) {
		free(h);
		return NULL;
	}
	return h;
}

/*
 * The JSON inside the page's <script>: a '<' (only ever inside a string)
 * becomes \u003c, so that no "</script>" or "<!--" in a path or name can
 * end the script early.
 */
static void
html_json(FILE *f, const char *json)
{
	for (const char *p = json; *p; p++)
		if (*p == '<')
			fputs("\\u003c", f);
		else
			fputc(*p, f);
}

/* The whole page: the template with {"snapshots": [...]} at its marker. */
static void
html_page(FILE *f, const struct jt_html_out *h)
{
	const char *mark = strstr(report_html_page, HTML_DATA_MARK);

	fwrite(report_html_page, 1, (size_t)(mark - report_html_page), f);
	fputs("{\"snapshots\": [", f);
	for (size_t i = 0; i < h->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		html_json(f, h->snaps[i]);
	}
	fputs("\n]}", f);
	fputs(mark + strlen(HTML_DATA_MARK), f);
}

/* s's JSON, malloc'ed, or NULL with errno set. */
static char *
html_snapshot_json(const struct jt_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int r;

	if (!m)
		return NULL;
	r = report_json_snapshot(m, s);
	if (fclose(m) != 0 || r < 0) {
		free(buf);
		errno = errno ? errno : EIO;
		return NULL;
	}
	return buf;
}

int
report_html_add(struct jt_html_out *h, const struct jt_snapshot *s)
{
	char *json = html_snapshot_json(s);
	FILE *f;

	if (!json)
		return -1;
	h->snaps = xrealloc(h->snaps, (h->n + 1) * sizeof(*h->snaps));
	h->snaps[h->n++] = json;
	/* A stream cannot take a page back: it gets the last one, at the close. */
	if (outfile_is_stream(h->out))
		return 0;
	if (!(f = outfile_begin(h->out, NULL)))
		return -1;
	html_page(f, h);
	return outfile_commit(h->out);
}

int
report_html_close(struct jt_html_out *h)
{
	int r = 0, err = 0;
	FILE *f;

	if (!h)
		return 0;
	if (outfile_is_stream(h->out)) {
		if ((f = outfile_begin(h->out, NULL))) {
			html_page(f, h);
			r = outfile_commit(h->out);
		} else
			r = -1;
		err = errno;
	}
	if (outfile_close(h->out) < 0 && !r) {
		r = -1;
		err = errno;
	}
	for (size_t i = 0; i < h->n; i++)
		free(h->snaps[i]);
	free(h->snaps);
	free(h);
	errno = err;
	return r;
}

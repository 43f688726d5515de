/* report_html.c - --html: one self-contained page that shows every snapshot of the run, rewritten now and then. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "outfile.h"
#include "report.h"
#include "util.h"

/*
 * The page (src/report/report_html_page.html) and its script
 * (report_html_page.js), linked in by report_html_page.S: the data goes
 * at the one marker, the script at the other, after it.
 */
extern const char report_html_page[];
extern const char report_html_script[];
#define HTML_DATA_MARK "@@JT_DATA@@"
#define HTML_SCRIPT_MARK "@@JT_SCRIPT@@"

/*
 * A periodic snapshot rewrites the page only when this many times the last
 * write's cost has passed since it: the page holds every snapshot, so a
 * write at each would cost the square of the run; this way writing takes at
 * most about 1/HTML_SPACING of the run, whatever its length.
 */
#define HTML_SPACING 20

struct jt_html_out {
	struct jt_outfile *out;
	struct jt_seen *seen;	/* what snaps already hold of each process's stacks */
	char **snaps;		/* each snapshot's JSON, as report_json_snapshot wrote it */
	size_t n;
	size_t in_page;		/* how many of snaps the page on disk holds */
	uint64_t next_ns;	/* a periodic snapshot writes the page from then on (CLOCK_MONOTONIC) */
};

static uint64_t
html_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct jt_html_out *
report_html_open(const char *path)
{
	struct jt_html_out *h = xcalloc(1, sizeof(*h));

	if (!(h->out = outfile_open(path))) {
		free(h);
		return NULL;
	}
	h->seen = report_json_seen_new();
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

/*
 * The whole page: the template with {"format", "written", "snapshots": [...]}
 * at its marker; "written" is the wall-clock time of this write, which the
 * page shows, since a periodic snapshot does not always rewrite it.
 */
static void
html_page(FILE *f, const struct jt_html_out *h)
{
	const char *mark = strstr(report_html_page, HTML_DATA_MARK);
	const char *smark = strstr(mark, HTML_SCRIPT_MARK);
	time_t now = time(NULL);
	char when[64];
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(when, sizeof(when), "%lld s after 1970 UTC", (long long)now);
	fwrite(report_html_page, 1, (size_t)(mark - report_html_page), f);
	fprintf(f, "{\"format\": %d, \"written\": \"%s\", \"snapshots\": [", JSON_FORMAT, when);
	for (size_t i = 0; i < h->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		html_json(f, h->snaps[i]);
	}
	fputs("\n]}", f);
	mark += strlen(HTML_DATA_MARK);
	fwrite(mark, 1, (size_t)(smark - mark), f);
	fputs(report_html_script, f);
	fputs(smark + strlen(HTML_SCRIPT_MARK), f);
}

/* s's JSON, malloc'ed, or NULL with errno set. */
static char *
html_snapshot_json(struct jt_html_out *h, const struct jt_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int r;

	if (!m)
		return NULL;
	r = report_json_snapshot(m, s, h->seen);
	if (fclose(m) != 0 || r < 0) {
		free(buf);
		errno = errno ? errno : EIO;
		return NULL;
	}
	return buf;
}

/* Writes the page with every snapshot so far, and when the next periodic one may write it again. */
static int
html_write(struct jt_html_out *h)
{
	uint64_t start = html_now_ns(), end;
	FILE *f;
	int r;

	if (!(f = outfile_begin(h->out, NULL)))
		return -1;
	html_page(f, h);
	r = outfile_commit(h->out);
	/* Making it is the cost here; the writer thread puts it on disk meanwhile, faster. */
	end = html_now_ns();
	h->next_ns = end + HTML_SPACING * (end - start);
	h->in_page = h->n;
	return r;
}

int
report_html_add(struct jt_html_out *h, const struct jt_snapshot *s)
{
	char *json = html_snapshot_json(h, s);

	if (!json)
		return -1;
	h->snaps = xrealloc(h->snaps, (h->n + 1) * sizeof(*h->snaps));
	h->snaps[h->n++] = json;
	/* A stream cannot take a page back: it gets the last one, at the close. */
	if (outfile_is_stream(h->out))
		return 0;
	/*
	 * The first snapshot, and any the user asked for (exit, SIGUSR1, a
	 * signal, the detach, --duration...), write the page; a periodic one
	 * only when writing has had its share of the time.
	 */
	if (h->in_page && strcmp(s->reason, "interval") == 0 && html_now_ns() < h->next_ns)
		return 0;
	return html_write(h);
}

int
report_html_close(struct jt_html_out *h)
{
	int r = 0, err = 0;

	if (!h)
		return 0;
	/* A stream's only page, or a file's last snapshots that a periodic one left out. */
	if (outfile_is_stream(h->out) || h->in_page < h->n) {
		r = html_write(h);
		err = errno;
	}
	if (outfile_close(h->out) < 0 && !r) {
		r = -1;
		err = errno;
	}
	for (size_t i = 0; i < h->n; i++)
		free(h->snaps[i]);
	free(h->snaps);
	report_json_seen_free(h->seen);
	free(h);
	errno = err;
	return r;
}

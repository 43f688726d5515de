/* report_jsonval.c - how the JSON writers spell a string (valid UTF-8 always) and a stack's frames. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "heap.h"
#include "report.h"
#include "report_common.h"
#include "report_jsonval.h"
#include "report_seen.h"
#include "sym.h"
#include "util.h"

void
jsonval_str(FILE *f, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;
	int len;

	if (!str) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, f);
		else if ((len = util_utf8_len(p)) > 0) {
			fwrite(p, 1, len, f);
			p += len - 1;
		} else
			fputs("\\ufffd", f);
	}
	fputc('"', f);
}

static void
jsonval_frame(FILE *f, const struct jt_frame *fr)
{
	fprintf(f, "{\"address\": \"0x%" PRIx64 "\", \"module\": ", fr->address);
	jsonval_str(f, fr->module);
	/* For "module+0xOFFSET" (report_frame_label), which stays from run to run: jmptrace diff. */
	if (fr->module)
		fprintf(f, ", \"offset\": \"0x%" PRIx64 "\"", fr->offset);
	else
		fputs(", \"offset\": null", f);
	fputs(", \"function\": ", f);
	jsonval_str(f, fr->function);
	fputs(", \"file\": ", f);
	jsonval_str(f, fr->file);
	fprintf(f, ", \"line\": %d, \"inlined\": %s}", fr->file ? fr->line : 0,
		fr->inlined ? "true" : "false");
}

void
jsonval_frames(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st)
{
	struct jt_sym *sym = s->sym;
	struct jt_frame fr[REPORT_MAX_FRAMES];
	const char *sep = "\n    ";
	uint32_t i;
	int n, k;

	fprintf(f, "\"site\": %d, \"frames\": [", report_site(sym, s->wrap, st));
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(sym, st, i, fr);
		for (k = 0; k < n; k++, sep = ",\n    ") {
			fputs(sep, f);
			jsonval_frame(f, &fr[k]);
		}
	}
	/* Only on a cut stack, so that every other stack reads as before. */
	fputs(!st->truncated ? "]" : st->truncated == HEAP_CUT_DEPTH ? "], \"truncated\": true"
								 : "], \"truncated\": true, \"cut_by\": \"stack-copy\"", f);
}

void
jsonval_frame_ids(FILE *f, const struct jt_snapshot *s, const struct jt_stack *st, struct jt_seen *seen)
{
	struct jt_frame fr[REPORT_MAX_FRAMES];
	const char *sep = "";
	char *text;
	size_t len;
	uint32_t i;
	int n, k;

	fprintf(f, "\"site\": %d, \"frames\": [", report_site(s->sym, s->wrap, st));
	for (i = 0; i < st->depth; i++) {
		n = report_resolve(s->sym, st, i, fr);
		for (k = 0; k < n; k++, sep = ", ") {
			FILE *m = open_memstream(&text, &len);

			if (!m)
				continue;
			jsonval_frame(m, &fr[k]);
			if (fclose(m) == 0)
				fprintf(f, "%s%" PRIu32, sep, seen_frame(seen, text, len));
			free(text);
		}
	}
	fputs(!st->truncated ? "]" : st->truncated == HEAP_CUT_DEPTH ? "], \"truncated\": true"
								 : "], \"truncated\": true, \"cut_by\": \"stack-copy\"", f);
}

/* report_write.h - for the unit tests of the file formats: one writer's content into a file. */
#ifndef JT_TEST_REPORT_WRITE_H
#define JT_TEST_REPORT_WRITE_H

#include <stdio.h>

#include "report.h"

/* Writes path with writer w, as outfile.h would hand it a stream. Returns w's answer, or -1. */
static int
report_write(int (*w)(FILE *, const struct jt_snapshot *), const char *path, const struct jt_snapshot *s)
{
	FILE *f = fopen(path, "w");
	int r;

	if (!f)
		return -1;
	r = w(f, s);
	return fclose(f) == 0 ? r : -1;
}

#endif

/* test_supp.c - unit tests for suppressions: LeakSanitizer's pattern match and the file's format. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "supp.h"
#include "tap.h"

static void
match(const char *pattern, const char *text, int want)
{
	ok(supp_pattern_match(pattern, text) == want, "'%s' %s '%s'", pattern,
	   want ? "matches" : "does not match", text ? text : "(null)");
}

static void
test_patterns(void)
{
	/* A substring anywhere, as LeakSanitizer matches. */
	match("small_phase", "small_phase", 1);
	match("phase", "small_phase", 1);
	match("small", "small_phase", 1);
	match("big", "small_phase", 0);
	match("eh_alloc.cc", "_GLOBAL__sub_I_eh_alloc.cc", 1);
	match("eh_alloc.cc", "../../../../src/libstdc++-v3/libsupc++/eh_alloc.cc", 1);
	/* '*' is any run, also an empty one; segments in order. */
	match("sm*se", "small_phase", 1);
	match("a*p*e", "small_phase", 1);
	match("p*sm", "small_phase", 0);
	match("*", "x", 1);
	match("small_**phase", "small_phase", 1);
	match("std::*::push_back", "std::vector<int>::push_back(int const&)", 1);
	/* Anchors. */
	match("^small", "small_phase", 1);
	match("^phase", "small_phase", 0);
	match("phase$", "small_phase", 1);
	match("small$", "small_phase", 0);
	match("^small_phase$", "small_phase", 1);
	match("^small_phase$", "small_phase2", 0);
	match("^small_phase$", "xsmall_phase", 0);
	match("^_dl_allocate_tls$", "_dl_allocate_tls_init", 0);
	match("^_dl_allocate_tls$", "_dl_allocate_tls", 1);
	match("^s*e$", "small_phase", 1);
	match("^s*l$", "small_phase", 0);
	/* The last segment anchored at the end is found there, not at its first occurrence. */
	match("a$", "aba", 1);
	match("^a*a$", "aba", 1);
	match("^ab*$", "ab", 1);
	match("^ab$", "a", 0);
	/* Nothing matches an empty or missing text (a frame with no function). */
	match("x", "", 0);
	match("*", "", 0);
	match("x", NULL, 0);
}

/* Writes text to a new temporary file; returns its path (static buffer). */
static const char *
write_file(const char *text)
{
	static char path[64];
	FILE *f;
	int fd;

	strcpy(path, "/tmp/jt_test_supp_XXXXXX");
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* supp_load of text: whether it loads, and how many lines it wrote on stderr. */
static void
load(const char *text, int want_ok, const char *what)
{
	const char *path = write_file(text);
	char err[] = "/tmp/jt_test_supp_err_XXXXXX", line[512];
	int efd = mkstemp(err), saved = dup(2), lines = 0;
	struct jt_supp *sp;
	FILE *f;

	fflush(stderr);
	dup2(efd, 2);
	sp = supp_load(path, 1);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(efd);
	f = fopen(err, "r");
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		printf("# stderr: %s", line);
	}
	if (f)
		fclose(f);
	ok((sp != NULL) == want_ok, "%s: %s", what, want_ok ? "loads" : "refused");
	ok(lines == (want_ok ? 0 : 1), "%s: %d stderr lines", what, lines);
	if (!want_ok && lines == 1) {
		char want[128];

		f = fopen(err, "r");
		snprintf(want, sizeof(want), "%s:", path);
		ok(f && fgets(line, sizeof(line), f) && strstr(line, want), "%s: the line names the file", what);
		if (f)
			fclose(f);
	}
	supp_free(sp);
	unlink(path);
	unlink(err);
}

static void
test_files(void)
{
	struct jt_supp *sp;
	struct jt_stack st;

	load("", 1, "an empty file");
	load("# comment\n\n   \nleak:small_phase\n  leak:^big$  \nleak:*\n", 1, "comments, blanks, patterns");
	load("leak:a\nrace:b\n", 0, "a race: line");
	load("leak:a\nsmall_phase\n", 0, "a line with no kind");
	load("leak:\n", 0, "an empty pattern");
	ok(supp_load("/nonexistent/jt.supp", 0) == NULL, "a missing file is refused");
	/* Which line: the second. */
	{
		const char *path = write_file("leak:a\nrace:b\n");
		char err[] = "/tmp/jt_test_supp_err_XXXXXX", line[512] = "", want[128];
		int efd = mkstemp(err), saved = dup(2);
		FILE *f;

		fflush(stderr);
		dup2(efd, 2);
		sp = supp_load(path, 0);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		close(efd);
		f = fopen(err, "r");
		if (f && !fgets(line, sizeof(line), f))
			line[0] = '\0';
		if (f)
			fclose(f);
		snprintf(want, sizeof(want), "%s:2: ", path);
		ok(!sp && strstr(line, want) && strstr(line, "race:b"), "the error names file:line and the line");
		unlink(path);
		unlink(err);
	}
	/* No symbolizer, no names: a bare frame matches no pattern; the filtered stack never. */
	sp = supp_load(NULL, 0);
	ok(sp != NULL, "the built-in suppressions load");
	memset(&st, 0, sizeof(st));
	ok(supp_match(sp, NULL, &st) == NULL, "an empty stack is not suppressed");
	ok(supp_match(NULL, NULL, &st) == NULL, "no suppressions, nothing suppressed");
	supp_free(sp);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	test_patterns();
	test_files();
	return tap_done();
}

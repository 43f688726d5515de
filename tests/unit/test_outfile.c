/* test_outfile.c - unit tests of outfile.c: which paths are replaced by a rename, which written in place, and the errors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "tap.h"

static char dir[] = "/tmp/test_outfile.XXXXXX";

static char *
at(const char *name)
{
	static char buf[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static char *
slurp(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Writes text as one content of path (name NULL: path itself). Returns 0 or -1. */
static int
write_one(const char *path, const char *text)
{
	struct jt_outfile *o = outfile_open(path);
	FILE *f = o ? outfile_begin(o, NULL) : NULL;
	int r = f ? (fputs(text, f), outfile_commit(o)) : -1;

	return outfile_close(o) < 0 ? -1 : r;
}

/* The entries of dir, but . and .. : what a write left behind. */
static int
entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static void
test_files(void)
{
	struct stat st;

	umask(022);
	ok(write_one(at("new"), "one\n") == 0 && strcmp(slurp(at("new")), "one\n") == 0, "a new name is written");
	ok(stat(at("new"), &st) == 0 && (st.st_mode & 07777) == 0644, "as 0666 less the umask");
	chmod(at("new"), 0600);
	ok(write_one(at("new"), "two\n") == 0 && strcmp(slurp(at("new")), "two\n") == 0, "a regular file is replaced");
	ok(stat(at("new"), &st) == 0 && (st.st_mode & 07777) == 0600, "and keeps its mode");
	if (geteuid() == 0 && chown(at("new"), 1234, 4321) == 0) {
		ok(write_one(at("new"), "two\n") == 0 && stat(at("new"), &st) == 0
		   && st.st_uid == 1234 && st.st_gid == 4321, "root gives a user's file back to its owner");
	} else {
		ok(1, "# skip: not root, cannot give a file away");
	}
	symlink("new", at("link"));
	ok(write_one(at("link"), "three\n") == 0 && strcmp(slurp(at("new")), "three\n") == 0, "a symlink is followed");
	ok(lstat(at("link"), &st) == 0 && S_ISLNK(st.st_mode), "and stays a symlink");
	symlink("gone", at("dangling"));
	ok(write_one(at("dangling"), "four\n") == 0 && strcmp(slurp(at("gone")), "four\n") == 0,
	   "a dangling symlink makes its target");
	symlink("loop", at("loop"));
	ok(write_one(at("loop"), "x") < 0 && errno == ELOOP, "a symlink loop: ELOOP");
	ok(outfile_open(at("no/such/file")) == NULL && errno == ENOENT, "a missing directory: ENOENT at the check");
	ok(entries() == 5, "nothing else is left in the directory");
	unlink(at("new"));
	unlink(at("link"));
	unlink(at("dangling"));
	unlink(at("gone"));
	unlink(at("loop"));
}

static void
test_numbered_and_abort(void)
{
	struct jt_outfile *o = outfile_open(at("heap.txt"));
	FILE *f;

	ok(o && !outfile_is_stream(o), "a file is not a stream");
	f = o ? outfile_begin(o, at("heap.1.txt")) : NULL;
	ok(f && fputs("n1", f) >= 0 && outfile_commit(o) == 0, "a numbered name is written");
	ok(strcmp(slurp(at("heap.1.txt")), "n1") == 0 && access(at("heap.txt"), F_OK) < 0, "to that name only");
	f = o ? outfile_begin(o, NULL) : NULL;
	ok(f && fputs("half", f) >= 0, "a content begun");
	ok(outfile_close(o) == 0 && access(at("heap.txt"), F_OK) < 0 && entries() == 1,
	   "and never committed leaves nothing");
	unlink(at("heap.1.txt"));
}

static void
test_streams(void)
{
	struct jt_outfile *o;
	struct stat st;
	char buf[64];
	int rd, n;

	mkfifo(at("fifo"), 0644);
	/* Held open for reading first, so that opening it for writing does not wait. */
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	o = outfile_open(at("fifo"));
	ok(o && outfile_is_stream(o), "a FIFO is a stream");
	for (int i = 0; o && i < 2; i++) {
		FILE *f = outfile_begin(o, at("fifo.1"));

		ok(f && fputs(i ? "b" : "a", f) >= 0 && outfile_commit(o) == 0, "snapshot %d to the FIFO", i + 1);
	}
	ok(outfile_close(o) == 0, "closed");
	n = rd >= 0 ? (int)read(rd, buf, sizeof(buf) - 1) : -1;
	ok(n == 2 && memcmp(buf, "ab", 2) == 0, "the reader got both, in order");
	ok(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode) && access(at("fifo.1"), F_OK) < 0,
	   "the FIFO is still one, and no numbered name was made");
	close(rd);
	unlink(at("fifo"));

	o = outfile_open("/dev/full");
	ok(o && outfile_is_stream(o), "/dev/full is a stream");
	ok(o && outfile_begin(o, NULL) && fputs("x", outfile_begin(o, NULL)) >= 0 && outfile_commit(o) < 0
	   && errno == ENOSPC, "its write error is ENOSPC, at the commit");
	outfile_close(o);
	o = outfile_open("/dev/fd/987");
	ok(!o && errno == EBADF, "/dev/fd/N of a closed descriptor: EBADF");
	ok(entries() == 0, "no file is left");
}

int
main(void)
{
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return tap_done();
	}
	test_files();
	test_numbered_and_abort();
	test_streams();
	rmdir(dir);
	return tap_done();
}

/* test_outfile.c - unit tests of outfile.c and its writer thread: which paths are replaced by a rename, which written in place, the errors, a full file, a reader that does not read. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
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
	ok(f && fputs("n1", f) >= 0 && outfile_commit(o) == 0 && outfile_wait(o) == 0, "a numbered name is written");
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
	ok(o && outfile_begin(o, NULL) && fputs("x", outfile_begin(o, NULL)) >= 0 && outfile_commit(o) == 0,
	   "a content for /dev/full is handed over");
	ok(o && outfile_wait(o) < 0 && errno == ENOSPC && strcmp(outfile_failed(o), "/dev/full") == 0,
	   "its write error is ENOSPC, once written");
	ok(o && outfile_close(o) == 0, "said once: the close has nothing more to say");
	o = outfile_open("/dev/fd/987");
	ok(!o && errno == EBADF, "/dev/fd/N of a closed descriptor: EBADF");
	ok(entries() == 0, "no file is left");
}

/* Commits text as one content of o. Returns outfile_commit's answer. */
static int
put(struct jt_outfile *o, const char *text)
{
	FILE *f = outfile_begin(o, NULL);

	if (!f)
		return -1;
	fputs(text, f);
	return outfile_commit(o);
}

/*
 * The file that grows (--json's rule): a content that does not fit (here
 * past RLIMIT_FSIZE, as a full disk would refuse it) is cut back, and the
 * file keeps the contents before it, whole, with its tail, and nothing after.
 */
static void
test_held(void)
{
	struct jt_outfile *o = outfile_open(at("r.json"));
	struct rlimit old, lim;
	char big[200];

	ok(o && outfile_publish(o, "[0]", "]") == 0 && strcmp(slurp(at("r.json")), "[0]") == 0,
	   "published at once, whole");
	ok(o && put(o, ",1") == 0 && put(o, ",2") == 0 && outfile_wait(o) == 0
	   && strcmp(slurp(at("r.json")), "[0,1,2]") == 0, "each content goes in before the tail");
	memset(big, 'x', sizeof(big) - 1);
	big[0] = ',';
	big[sizeof(big) - 1] = '\0';
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 100;
	setrlimit(RLIMIT_FSIZE, &lim);
	/* The writer thread blocks SIGXFSZ: the write says EFBIG. */
	ok(o && put(o, big) == 0 && outfile_wait(o) < 0 && errno == EFBIG, "a content past the limit fails");
	setrlimit(RLIMIT_FSIZE, &old);
	ok(strcmp(slurp(at("r.json")), "[0,1,2]") == 0, "and is cut back: the file holds what it held");
	/* A JSON snapshot lists what changed since the one before: after a gap it would read wrong. */
	ok(o && put(o, ",3") == 0, "a later content is taken");
	outfile_wait(o);
	ok(strcmp(slurp(at("r.json")), "[0,1,2]") == 0, "but does not go in after the one cut: the file holds what it held");
	ok(outfile_close(o) == 0 && entries() == 1, "closed (the failure was said once, at the wait), nothing else left");
	unlink(at("r.json"));
}

/* A reader that opened the FIFO and never reads: nothing waits for it, later contents are dropped. */
static void
test_behind(void)
{
	static char big[200000];
	struct jt_outfile *o;
	struct timespec t0, t1;
	int rd, all_quick = 1;
	double secs;

	mkfifo(at("slow"), 0644);
	rd = open(at("slow"), O_RDONLY | O_NONBLOCK);
	o = outfile_open(at("slow"));
	memset(big, 'y', sizeof(big) - 1);
	for (int i = 0; o && i < 10; i++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		put(o, big);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		all_quick &= (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6 < 50;
	}
	ok(o && all_quick, "10 contents of 200 KB, none waits for the reader");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(o && outfile_close(o) < 0 && errno == EAGAIN, "the close says they were not written (EAGAIN)");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(secs < 1.0, "and gives up within a second (%.3f s)", secs);
	close(rd);
	unlink(at("slow"));
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
	test_held();
	test_behind();
	rmdir(dir);
	return tap_done();
}

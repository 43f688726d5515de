/* outfile.c - where a report goes: standard output or another stream written in place, or a file replaced whole. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "outfile.h"
#include "util.h"

/* Symlinks followed before a name counts as a loop: the kernel's own limit. */
#define OUTFILE_MAX_LINKS 40

struct jt_outfile {
	char *path;		/* as the user named it */
	FILE *f;		/* the content being written, or NULL between contents */
	int fd;			/* under f: a stream, or the temporary file */
	int err;		/* the first write error on fd (errno), or 0 */
	int held;		/* f stays open from one content to the next (a stream, or -o's published file) */
	int stream;		/* fd is a stream: a descriptor or a special file, not ours to rename */
	char *tmp;		/* the temporary file's name, until it is renamed */
	char *dest;		/* what tmp is renamed to: the name's last target */
	mode_t new_mode;	/* a new file's mode: 0666 less the umask, as fopen would create it */
};

/*
 * The stdio stream writes through these, so that a signal of the tracer's
 * (installed without SA_RESTART) never cuts a write short, and the first
 * error keeps its errno for the message (stdio only keeps a flag).
 */
static ssize_t
outfile_cookie_write(void *cookie, const char *buf, size_t len)
{
	struct jt_outfile *o = cookie;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(o->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->err)
				o->err = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* report_json_add steps back over its closing text in a file. */
static int
outfile_cookie_seek(void *cookie, off64_t *off, int whence)
{
	struct jt_outfile *o = cookie;
	off64_t r = lseek(o->fd, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

/* f's close: the descriptor is closed by outfile_end, which reports its error. */
static int
outfile_cookie_close(void *cookie)
{
	return 0;
}

static int
outfile_fdopen(struct jt_outfile *o, int fd)
{
	cookie_io_functions_t io = {
		.write = outfile_cookie_write,
		.seek = outfile_cookie_seek,
		.close = outfile_cookie_close,
	};

	o->fd = fd;
	o->err = 0;
	if (!(o->f = fopencookie(o, "w", io))) {
		close(fd);
		return -1;
	}
	return 0;
}

/* The descriptor a name stands for: /dev/fd/N, /proc/self/fd/N (where /dev/stdout leads). -1 for none. */
static int
outfile_fd_of(const char *name)
{
	static const char *const dirs[] = { "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/" };
	const char *num;
	char *end;
	long n;

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
		if (strncmp(name, dirs[i], strlen(dirs[i])) != 0)
			continue;
		num = name + strlen(dirs[i]);
		errno = 0;
		n = strtol(num, &end, 10);
		if (*num >= '0' && *num <= '9' && !*end && !errno && n <= 1 << 30)
			return (int)n;
	}
	return -1;
}

/* Where symlink link points, relative to its directory. Returns a malloc'ed name, or NULL with errno set. */
static char *
outfile_link_next(const char *link)
{
	char buf[4096], *out;
	const char *slash = strrchr(link, '/');
	ssize_t n = readlink(link, buf, sizeof(buf) - 1);
	size_t len;

	if (n < 0)
		return NULL;
	buf[n] = '\0';
	if (buf[0] == '/' || !slash)
		return xstrdup(buf);
	len = (size_t)(slash - link) + 1 + (size_t)n + 1;
	out = xmalloc(len);
	snprintf(out, len, "%.*s/%s", (int)(slash - link), link, buf);
	return out;
}

/*
 * Follows name's symlinks to the name that is written: returns it
 * (malloc'ed) with *st its lstat (zeroed for a new name), or with *fdnum
 * the descriptor it stands for (else -1). NULL with errno set on failure.
 */
static char *
outfile_resolve(const char *name, struct stat *st, int *fdnum)
{
	char *cur = xstrdup(name), *next;

	memset(st, 0, sizeof(*st));
	*fdnum = strcmp(name, "-") == 0 ? STDOUT_FILENO : -1;
	for (int links = 0; *fdnum < 0; links++) {
		if ((*fdnum = outfile_fd_of(cur)) >= 0)
			break;
		if (lstat(cur, st) < 0) {
			memset(st, 0, sizeof(*st));
			if (errno == ENOENT)
				break;	/* a new name; a missing directory shows when it is created */
			goto fail;
		}
		if (!S_ISLNK(st->st_mode))
			break;
		if (links == OUTFILE_MAX_LINKS) {
			errno = ELOOP;
			goto fail;
		}
		if (!(next = outfile_link_next(cur)))
			goto fail;
		free(cur);
		cur = next;
	}
	return cur;
fail:
	free(cur);
	return NULL;
}

/* Opens a special file for writing in place: a socket is connected to, anything else opened. */
static int
outfile_open_special(const char *name, const struct stat *st)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (!S_ISSOCK(st->st_mode))
		return open(name, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (strlen(name) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, name);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/*
 * Finds where name leads: a stream, opened (o->f, o->stream), or a regular
 * file or new name to replace (o->dest, *st its lstat or zeroed). 0 or -1.
 */
static int
outfile_target(struct jt_outfile *o, const char *name, struct stat *st)
{
	int fdnum, fd;
	char *dest = outfile_resolve(name, st, &fdnum);

	if (!dest)
		return -1;
	if (fdnum < 0 && (!st->st_mode || S_ISREG(st->st_mode))) {
		o->dest = dest;
		return 0;
	}
	/* The descriptor is duplicated: it shares the file offset, as the shell's 2>&1 does. */
	fd = fdnum >= 0 ? fcntl(fdnum, F_DUPFD_CLOEXEC, 0) : outfile_open_special(dest, st);
	free(dest);
	if (fd < 0 || outfile_fdopen(o, fd) < 0)
		return -1;
	o->stream = 1;
	return 0;
}

/* The directory part of name, malloc'ed: "." when it has none. */
static char *
outfile_dir(const char *name)
{
	const char *slash = strrchr(name, '/');
	char *dir;

	if (!slash)
		return xstrdup(".");
	if (slash == name)
		return xstrdup("/");
	dir = xstrdup(name);
	dir[slash - name] = '\0';
	return dir;
}

/*
 * Could dest be replaced? An existing file must be writable, as fopen
 * would want it, and its directory must take a new file: an unnamed
 * O_TMPFILE tries that without leaving anything, else access(2) answers.
 */
static int
outfile_check(const char *dest, const struct stat *st)
{
	char *dir = outfile_dir(dest);
	int fd, r = 0;

	if (st->st_mode && access(dest, W_OK) < 0)
		r = -1;
	else if ((fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600)) >= 0)
		close(fd);
	else if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
		r = access(dir, W_OK | X_OK);	/* a file system or kernel without O_TMPFILE */
	else
		r = -1;
	free(dir);
	return r;
}

/* Creates the temporary file for o->dest beside it, with the mode (and owner) dest has, or a new file's. */
static int
outfile_temp(struct jt_outfile *o, const struct stat *st)
{
	const char *slash = strrchr(o->dest, '/');
	const char *base = slash ? slash + 1 : o->dest;
	size_t len = strlen(o->dest) + sizeof("/..XXXXXX");
	int fd;

	o->tmp = xmalloc(len);
	/* Hidden, and short enough for NAME_MAX whatever the name's length. */
	snprintf(o->tmp, len, "%.*s.%.200s.XXXXXX", slash ? (int)(slash - o->dest + 1) : 0, o->dest, base);
	if ((fd = mkostemp(o->tmp, O_CLOEXEC)) < 0)
		return -1;
	if (fchmod(fd, st->st_mode ? st->st_mode & 0777 : o->new_mode) < 0)
		debug_msg("cannot set the mode of '%s': %s", o->tmp, strerror(errno));
	/* Root replacing a user's file gives it back to its owner. */
	if (st->st_mode && (st->st_uid != geteuid() || st->st_gid != getegid())
	    && fchown(fd, st->st_uid, st->st_gid) < 0)
		debug_msg("cannot give '%s' its owner back: %s", o->tmp, strerror(errno));
	if (outfile_fdopen(o, fd) < 0) {
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

/* Forgets the content's names (the stream or file itself is closed by the caller). */
static void
outfile_forget(struct jt_outfile *o)
{
	free(o->tmp);
	free(o->dest);
	o->tmp = o->dest = NULL;
	o->f = NULL;
	o->stream = 0;
}

struct jt_outfile *
outfile_open(const char *path)
{
	struct jt_outfile *o = xcalloc(1, sizeof(*o));
	mode_t mask = umask(0);
	struct stat st;
	int err;

	umask(mask);
	o->new_mode = 0666 & ~mask;
	o->path = xstrdup(path);
	o->fd = -1;
	if (outfile_target(o, path, &st) == 0 && (o->stream || outfile_check(o->dest, &st) == 0)) {
		o->held = o->stream;
		if (!o->stream)
			outfile_forget(o);
		return o;
	}
	err = errno;
	free(o->dest);
	free(o->path);
	free(o);
	errno = err;
	return NULL;
}

int
outfile_is_stream(const struct jt_outfile *o)
{
	return o->stream;
}

FILE *
outfile_begin(struct jt_outfile *o, const char *name)
{
	struct stat st;

	if (o->held)
		return o->f;
	if (outfile_target(o, name ? name : o->path, &st) < 0)
		return NULL;
	if (!o->stream && outfile_temp(o, &st) < 0) {
		outfile_forget(o);
		return NULL;
	}
	return o->f;
}

/* Flushes and, unless held, closes the content's stream. Returns 0 or an errno. */
static int
outfile_end(struct jt_outfile *o, int close_it)
{
	int err = 0;

	if (fflush(o->f) != 0 || ferror(o->f))
		err = o->err ? o->err : EIO;
	o->err = 0;
	clearerr(o->f);
	if (!close_it)
		return err;
	fclose(o->f);
	if (close(o->fd) < 0 && !err)
		err = errno;
	o->fd = -1;
	return err;
}

int
outfile_commit(struct jt_outfile *o)
{
	int err = outfile_end(o, !o->held);

	if (!o->held) {
		if (o->tmp && !err && rename(o->tmp, o->dest) < 0)
			err = errno;
		if (o->tmp && err)
			unlink(o->tmp);
		outfile_forget(o);
	}
	errno = err;
	return err ? -1 : 0;
}

int
outfile_publish(struct jt_outfile *o)
{
	int err = 0;

	if (o->held)
		return 0;
	if (!o->stream && rename(o->tmp, o->dest) < 0) {
		err = errno;
		unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	if (err) {
		outfile_commit(o);	/* closes it */
		errno = err;
		return -1;
	}
	o->held = 1;
	return 0;
}

int
outfile_close(struct jt_outfile *o)
{
	int err = 0;

	if (!o)
		return 0;
	if (o->f) {
		/* A content begun and never committed is not put in place. */
		if (o->tmp)
			unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		o->held = 0;
		if (outfile_commit(o) < 0)
			err = errno;
	}
	free(o->path);
	free(o);
	errno = err;
	return err ? -1 : 0;
}

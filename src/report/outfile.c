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
#include "outwriter.h"
#include "testfault.h"
#include "util.h"

/* Symlinks followed before a name counts as a loop: the kernel's own limit. */
#define OUTFILE_MAX_LINKS 40

/*
 * The temporary files being written now, for the way out of a dying
 * jmptrace to remove (outfile_emerg_unlink): a slot is taken with an atomic
 * exchange, its name written, then marked whole.
 */
#define OUTFILE_TMP_SLOTS 4
static struct {
	int state;			/* 0 free, 1 taken, 2 its name is whole */
	char name[4096];
} outfile_tmps[OUTFILE_TMP_SLOTS];

struct jt_outfile {
	char *path;		/* as the user named it */
	struct jt_outq *q;	/* its contents, on their way (outwriter.h) */
	int fd;			/* a stream, or the file held open (published); else -1 */
	int stream;		/* fd is a stream: a descriptor or a special file, not ours to rename */
	int held;		/* fd is the file published: contents go in before its tail */
	char *tail;		/* the held file's closing text */
	size_t tail_len;
	off_t len;		/* the held file's length: its contents whole, and the tail (the writer's) */
	int held_err;		/* a content of the held file failed (the writer's): the errno, and no later one goes in */
	FILE *mf;		/* the content begun, in memory, or NULL */
	char *mbuf;		/* mf's buffer */
	size_t mlen;
	char *name;		/* the content begun's file name (NULL: the path) */
	mode_t new_mode;	/* a new file's mode: 0666 less the umask, as fopen would create it */
};

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
 * A descriptor of our own for descriptor fdnum: for a pipe or a device, a
 * new open of it, which may be made O_NONBLOCK without touching the
 * description the program (or the shell) shares; else, or when the kernel
 * refuses (a socket, no /proc), a duplicate, which shares the file offset
 * as the shell's 2>&1 does.
 */
static int
outfile_dup(int fdnum, int own)
{
	char proc[64];
	struct stat st;
	int fd;

	if (own && fstat(fdnum, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fdnum);
		if ((fd = open(proc, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)) >= 0)
			return fd;
	}
	return fcntl(fdnum, F_DUPFD_CLOEXEC, 0);
}

/*
 * Finds where name leads: returns a stream's descriptor, opened, with
 * *dest NULL; or -1 with *dest the regular file or new name to replace
 * (*st its lstat, or zeroed); or -1 with *dest NULL and errno set. With
 * nonblock, a stream of our own is made O_NONBLOCK: the writer thread then
 * never waits in a write for a reader that does not read.
 */
static int
outfile_target(const char *name, struct stat *st, char **dest, int nonblock)
{
	int fdnum, fd, fl;

	if (!(*dest = outfile_resolve(name, st, &fdnum)))
		return -1;
	if (fdnum < 0 && (!st->st_mode || S_ISREG(st->st_mode)))
		return -1;
	if (fdnum >= 0)
		fd = outfile_dup(fdnum, nonblock);
	else if ((fd = outfile_open_special(*dest, st)) >= 0 && nonblock && (fl = fcntl(fd, F_GETFL)) >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);	/* opened by us (a FIFO waited for its reader) */
	free(*dest);
	*dest = NULL;
	return fd;
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

/*
 * Creates the temporary file for dest beside it, with the mode (and owner)
 * dest has (st), or a new file's. Returns its descriptor with *tmp its
 * name (malloc'ed), or -1 with errno set.
 */
static int
outfile_temp(const struct jt_outfile *o, const char *dest, const struct stat *st, char **tmp)
{
	const char *slash = strrchr(dest, '/');
	const char *base = slash ? slash + 1 : dest;
	size_t len = strlen(dest) + sizeof("/..XXXXXX");
	int fd, err;

	*tmp = xmalloc(len);
	/* Hidden, and short enough for NAME_MAX whatever the name's length. */
	snprintf(*tmp, len, "%.*s.%.200s.XXXXXX", slash ? (int)(slash - dest + 1) : 0, dest, base);
	if ((fd = mkostemp(*tmp, O_CLOEXEC)) < 0) {
		err = errno;
		free(*tmp);
		*tmp = NULL;
		errno = err;
		return -1;
	}
	if (fchmod(fd, st->st_mode ? st->st_mode & 0777 : o->new_mode) < 0)
		debug_msg("cannot set the mode of '%s': %s", *tmp, strerror(errno));
	/* Root replacing a user's file gives it back to its owner. */
	if (st->st_mode && (st->st_uid != geteuid() || st->st_gid != getegid())
	    && fchown(fd, st->st_uid, st->st_gid) < 0)
		debug_msg("cannot give '%s' its owner back: %s", *tmp, strerror(errno));
	return fd;
}

/*
 * Writes one content to a new temporary file for dest and renames it over
 * dest: a failure leaves dest as it was. Keeps the file open in *keep when
 * keep is not NULL. Returns 0 or an errno (the temporary file is removed).
 */
/* Records tmp as being written: returns its slot, or -1 when every slot is taken (it is then not removed at a crash). */
static int
outfile_tmp_track(const char *tmp)
{
	size_t n = strlen(tmp);

	if (n >= sizeof(outfile_tmps[0].name))
		return -1;
	for (int i = 0; i < OUTFILE_TMP_SLOTS; i++) {
		int expected = 0;

		if (__atomic_compare_exchange_n(&outfile_tmps[i].state, &expected, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			memcpy(outfile_tmps[i].name, tmp, n + 1);
			__atomic_store_n(&outfile_tmps[i].state, 2, __ATOMIC_RELEASE);
			return i;
		}
	}
	return -1;
}

static void
outfile_tmp_untrack(int slot)
{
	if (slot >= 0)
		__atomic_store_n(&outfile_tmps[slot].state, 0, __ATOMIC_RELEASE);
}

void
outfile_emerg_unlink(void)
{
	for (int i = 0; i < OUTFILE_TMP_SLOTS; i++)
		if (__atomic_load_n(&outfile_tmps[i].state, __ATOMIC_ACQUIRE) == 2)
			unlink(outfile_tmps[i].name);
}

static int
outfile_replace(const struct jt_outfile *o, struct jt_outq *q, const char *dest, const struct stat *st,
		const char *data, size_t len, int *keep)
{
	char *tmp;
	int fd = outfile_temp(o, dest, st, &tmp), err, slot;

	if (fd < 0)
		return errno;
	slot = outfile_tmp_track(tmp);
	testfault_point("write");
	err = outq_write_all(q, fd, data, len, -1);
	if (!err && rename(tmp, dest) < 0)
		err = errno;
	if (err)
		unlink(tmp);
	outfile_tmp_untrack(slot);
	free(tmp);
	if (!err && keep) {
		*keep = fd;
		return 0;
	}
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* On the writer thread: one content for name, by name's rule now. Returns 0 or an errno. */
static int
outfile_put_file(struct jt_outfile *o, struct jt_outq *q, const char *name, const char *data, size_t len)
{
	struct stat st;
	char *dest;
	int fd = outfile_target(name, &st, &dest, 0), err;

	if (fd < 0 && !dest)
		return errno;
	if (fd >= 0) {
		/* A name that is not a regular file: the stream rule for this content alone. */
		err = outq_write_all(q, fd, data, len, -1);
		if (close(fd) < 0 && !err)
			err = errno;
		return err;
	}
	err = outfile_replace(o, q, dest, &st, data, len, NULL);
	free(dest);
	return err;
}

/*
 * On the writer thread: one content appended to the file held open, over
 * its tail and followed by it again. A content that cannot be written
 * whole is cut off: the file goes back to its length before, so that it
 * keeps every content written until then, whole; and no later content goes
 * in, since each may build on those before it (a JSON snapshot lists what
 * changed since the last). Returns 0 or an errno.
 */
static int
outfile_put_held(struct jt_outfile *o, struct jt_outq *q, const char *data, size_t len)
{
	off_t at = o->len - (off_t)o->tail_len;
	int err;

	if (o->held_err)
		return o->held_err;
	err = outq_write_all(q, o->fd, data, len, at);

	if (!err)
		err = outq_write_all(q, o->fd, o->tail, o->tail_len, at + (off_t)len);
	if (!err) {
		o->len = at + (off_t)(len + o->tail_len);
		return 0;
	}
	if (ftruncate(o->fd, at) < 0 || outq_write_all(q, o->fd, o->tail, o->tail_len, at) != 0)
		error_msg("cannot cut '%s' back to its last whole snapshot: %s", o->path, strerror(errno));
	o->held_err = err;
	return err;
}

static int
outfile_put(void *arg, struct jt_outq *q, const char *name, const char *data, size_t len)
{
	struct jt_outfile *o = arg;

	return name ? outfile_put_file(o, q, name, data, len) : outfile_put_held(o, q, data, len);
}

/* Given back by the writer once it is done with o. */
static void
outfile_release(void *arg)
{
	struct jt_outfile *o = arg;

	if (o->fd >= 0)
		close(o->fd);
	free(o->tail);
	free(o->path);
	free(o);
}

struct jt_outfile *
outfile_open(const char *path)
{
	struct jt_outfile *o = xcalloc(1, sizeof(*o));
	mode_t mask = umask(0);
	struct stat st;
	char *dest;
	int err;

	umask(mask);
	o->new_mode = 0666 & ~mask;
	o->path = xstrdup(path);
	if ((o->fd = outfile_target(path, &st, &dest, 1)) >= 0)
		o->stream = 1;
	else if (!dest || outfile_check(dest, &st) < 0) {
		err = errno;
		free(dest);
		free(o->path);
		free(o);
		errno = err;
		return NULL;
	}
	free(dest);
	o->q = outq_new(path, o->fd, outfile_put, o);
	return o;
}

int
outfile_is_stream(const struct jt_outfile *o)
{
	return o->stream;
}

/* Forgets the content begun and not committed: it is not written. */
static void
outfile_drop(struct jt_outfile *o)
{
	if (o->mf)
		fclose(o->mf);
	free(o->mbuf);
	free(o->name);
	o->mf = NULL;
	o->mbuf = o->name = NULL;
}

FILE *
outfile_begin(struct jt_outfile *o, const char *name)
{
	outfile_drop(o);
	o->mlen = 0;
	if (!(o->mf = open_memstream(&o->mbuf, &o->mlen)))
		return NULL;
	o->name = name && !o->stream && !o->held ? xstrdup(name) : NULL;
	return o->mf;
}

/* Hands the content begun to the writer: a snapshot when counted. */
static int
outfile_hand(struct jt_outfile *o, int counted)
{
	char *name = NULL;
	int err, r;

	if (!o->mf) {
		errno = EINVAL;
		return -1;
	}
	if (fclose(o->mf) != 0) {
		err = errno ? errno : ENOMEM;
		o->mf = NULL;
		outfile_drop(o);
		errno = err;
		return -1;
	}
	o->mf = NULL;
	if (!o->stream && !o->held)
		name = o->name ? o->name : xstrdup(o->path);
	else
		free(o->name);
	o->name = NULL;
	r = outq_push(o->q, o->mbuf, o->mlen, name, counted);
	o->mbuf = NULL;
	return r;
}

int
outfile_commit(struct jt_outfile *o)
{
	return outfile_hand(o, 1);
}

int
outfile_commit_more(struct jt_outfile *o)
{
	return outfile_hand(o, 0);
}

int
outfile_publish(struct jt_outfile *o, const char *content, const char *tail)
{
	struct stat st;
	char *dest;
	int fd, err;

	if (o->stream)
		return 0;
	if ((fd = outfile_target(o->path, &st, &dest, 0)) >= 0 || !dest) {
		/* It was a file at the open: a stream made since then is not ours to hold. */
		if (fd >= 0)
			close(fd);
		errno = fd >= 0 ? EEXIST : errno;
		return -1;
	}
	err = outfile_replace(o, o->q, dest, &st, content, strlen(content), &o->fd);
	free(dest);
	if (err) {
		errno = err;
		return -1;
	}
	o->held = 1;
	o->tail = xstrdup(tail);
	o->tail_len = strlen(tail);
	o->len = (off_t)strlen(content);
	return 0;
}

int
outfile_wait(struct jt_outfile *o)
{
	return outq_wait(o->q);
}

const char *
outfile_failed(const struct jt_outfile *o)
{
	const char *name = outq_failed(o->q);

	return name ? name : o->path;
}

int
outfile_close(struct jt_outfile *o)
{
	if (!o)
		return 0;
	outfile_drop(o);
	return outq_close(o->q, outfile_release);
}

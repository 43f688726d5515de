/* outwriter.c - the thread that writes the outputs' contents, so that a reader that stops reading or a slow disk never stalls a stop. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outwriter.h"
#include "util.h"

/* One write(2) at most: a big content is written in steps, each one progress the close can see. */
#define OUTQ_CHUNK (1u << 20)
/* What one queue writes before the writer turns to the others. */
#define OUTQ_TURN (4u << 20)
/* Streams polled at once: more than jmptrace ever opens (-o, --json, --html, six formats). */
#define OUTQ_POLL_MAX 32

/* How a stream's descriptor is written. */
enum outq_how {
	OUTQ_FILE,	/* not a stream: put does each content */
	OUTQ_NONBLOCK,	/* O_NONBLOCK (a description of our own): write until EAGAIN, then poll */
	OUTQ_SOCKET,	/* send with MSG_DONTWAIT: the description may be shared */
	OUTQ_POLLED,	/* a shared pipe or device: poll, then at most PIPE_BUF, which a pipe takes whole */
	OUTQ_BLOCKING,	/* a regular file or block device: a disk, however slow, finishes */
};

struct outq_job {
	struct outq_job *next;
	char *data;
	size_t len, done;	/* done: a stream content's bytes written */
	char *name;		/* a file content's name, or NULL */
	int counted;		/* a snapshot: counted in what was not written */
};

struct jt_outq {
	struct jt_outq *next;	/* in outq_all */
	char *path;
	int fd;
	enum outq_how how;
	outq_put_fn put;
	void *arg;
	struct outq_job *head, **tail;
	size_t nwaiting, bytes;	/* jobs queued, the one in hand included, and their bytes */
	int busy;		/* the writer works on head without the lock */
	int blocked;		/* a stream that took nothing: the writer polls it */
	int stopped;		/* a stream that failed: nothing more is written to it */
	int behind;		/* the bound was passed: every later content is dropped */
	int released;		/* closed: the writer frees it when not busy */
	int err;		/* the first failure (errno), or 0 */
	int said;		/* err was handed to a caller, who said it */
	char *err_name;		/* what err failed to write */
	unsigned ncounted, nlost;
	uint64_t bytes_lost;
	uint64_t progress_ms;	/* the last write that moved, or when the queue last stopped being empty (atomic: a put notes it without the lock) */
	void (*release)(void *arg);
	int *reaped;		/* set by the writer once q is freed */
};

static pthread_mutex_t outq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t outq_cond;	/* progress, a job done, a queue freed: on UTIL_CLOCK */
static pthread_once_t outq_once = PTHREAD_ONCE_INIT;
static struct jt_outq *outq_all;
static int outq_running;		/* the writer thread runs (it ends when outq_all is empty) */
static int outq_wake_fd = -1;		/* an eventfd the writer polls: a new content, a close */
static cpu_set_t outq_cpus;		/* the CPUs the user allows, as the first output was opened (before the run) */
static int outq_cpus_known;

static void
outq_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, UTIL_CLOCK);
	pthread_cond_init(&outq_cond, &ca);
	pthread_condattr_destroy(&ca);
	outq_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	outq_cpus_known = sched_getaffinity(0, sizeof(outq_cpus), &outq_cpus) == 0;
}

static void
outq_progress(struct jt_outq *q)
{
	__atomic_store_n(&q->progress_ms, util_now_ms(), __ATOMIC_RELAXED);
}

static enum outq_how
outq_how_of(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fstat(fd, &st) < 0)
		return OUTQ_BLOCKING;
	if (S_ISSOCK(st.st_mode))
		return OUTQ_SOCKET;
	if (fl >= 0 && (fl & O_NONBLOCK))
		return OUTQ_NONBLOCK;
	return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) ? OUTQ_BLOCKING : OUTQ_POLLED;
}

struct jt_outq *
outq_new(const char *path, int fd, outq_put_fn put, void *arg)
{
	struct jt_outq *q = xcalloc(1, sizeof(*q));

	pthread_once(&outq_once, outq_init);
	q->path = xstrdup(path);
	q->fd = fd;
	q->how = fd >= 0 ? outq_how_of(fd) : OUTQ_FILE;
	q->put = put;
	q->arg = arg;
	q->tail = &q->head;
	q->progress_ms = util_now_ms();
	pthread_mutex_lock(&outq_lock);
	q->next = outq_all;
	outq_all = q;
	pthread_mutex_unlock(&outq_lock);
	return q;
}

static void
outq_job_free(struct outq_job *j)
{
	free(j->data);
	free(j->name);
	free(j);
}

/* Takes j out of q (pp points at it) and frees it; counts it as lost unless written. */
static void
outq_unlink(struct jt_outq *q, struct outq_job **pp, int lost)
{
	struct outq_job *j = *pp;

	if (!(*pp = j->next))
		q->tail = pp;
	q->nwaiting--;
	q->bytes -= j->len;
	if (lost && j->counted)
		q->nlost++;
	if (lost)
		q->bytes_lost += j->len - j->done;
	outq_job_free(j);
}

/* Records a failure of what was being written to name: the first is kept to be said; a stream stops. */
static void
outq_fail(struct jt_outq *q, int err, const char *name)
{
	if (!q->err) {
		q->err = err;
		q->err_name = xstrdup(name ? name : q->path);
	}
	if (q->how == OUTQ_FILE)
		return;
	/* With whole contents queued, a stream that failed gets no half snapshot after the one it cut. */
	q->stopped = 1;
	while (q->head)
		outq_unlink(q, &q->head, 1);
}

/*
 * Writes what fd takes of j now, without blocking unless fd is a disk.
 * Sets *blocked when it took nothing. Returns 0 or an errno.
 */
static int
outq_stream_step(struct jt_outq *q, struct outq_job *j, int *blocked)
{
	size_t turn = 0;

	while (j->done < j->len && turn < OUTQ_TURN) {
		size_t n = j->len - j->done;
		struct pollfd pfd = { .fd = q->fd, .events = POLLOUT };
		ssize_t w;

		if (n > OUTQ_CHUNK)
			n = OUTQ_CHUNK;
		if (q->how == OUTQ_POLLED) {
			if (poll(&pfd, 1, 0) == 0) {
				*blocked = 1;
				return 0;
			}
			n = n > PIPE_BUF ? PIPE_BUF : n;
		}
		if (q->how == OUTQ_SOCKET)
			w = send(q->fd, j->data + j->done, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			w = write(q->fd, j->data + j->done, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*blocked = 1;
			return 0;
		}
		if (w <= 0)
			return w < 0 ? errno : EIO;
		j->done += (size_t)w;
		turn += (size_t)w;
		outq_progress(q);
	}
	return 0;
}

/* Works on q's first content without the lock (held on entry and return). */
static void
outq_step(struct jt_outq *q)
{
	struct outq_job *j = q->head;
	int err, blocked = 0;

	q->busy = 1;
	pthread_mutex_unlock(&outq_lock);
	if (q->how == OUTQ_FILE) {
		err = q->put(q->arg, q, j->name, j->data, j->len);
		j->done = err ? j->done : j->len;
	} else
		err = outq_stream_step(q, j, &blocked);
	pthread_mutex_lock(&outq_lock);
	q->busy = 0;
	q->blocked = blocked;
	if (err) {
		outq_fail(q, err, j->name);	/* a stream's fail drops its whole queue, j with it */
		if (q->how == OUTQ_FILE)
			outq_unlink(q, &q->head, 1);
	} else if (j->done == j->len) {
		outq_unlink(q, &q->head, 0);
		outq_progress(q);
	}
	pthread_cond_broadcast(&outq_cond);
}

/* Frees the queues closed that the writer is done with, giving their descriptor and argument back. */
static void
outq_reap(void)
{
	for (struct jt_outq **pp = &outq_all; *pp;) {
		struct jt_outq *q = *pp;

		if (!q->released || q->busy) {
			pp = &q->next;
			continue;
		}
		*pp = q->next;
		while (q->head)
			outq_unlink(q, &q->head, 0);
		q->release(q->arg);
		if (q->reaped)
			*q->reaped = 1;
		free(q->err_name);
		free(q->path);
		free(q);
		pthread_cond_broadcast(&outq_cond);
	}
}

/* The writer: every queue in turn, then a poll of the blocked streams and the wake-up. */
static void *
outq_main(void *unused)
{
	struct pollfd pfd[OUTQ_POLL_MAX + 1];
	struct jt_outq *pq[OUTQ_POLL_MAX];
	uint64_t v;

	pthread_mutex_lock(&outq_lock);
	for (;;) {
		int n = 0, worked = 0;

		outq_reap();
		if (!outq_all)
			break;
		for (struct jt_outq *q = outq_all; q; q = q->next) {
			if (!q->head || q->stopped || q->released)
				continue;
			if (!q->blocked) {
				outq_step(q);
				worked = 1;
			} else if (n < OUTQ_POLL_MAX) {
				pfd[n] = (struct pollfd){ .fd = q->fd, .events = POLLOUT };
				pq[n++] = q;
			}
		}
		if (worked)
			continue;
		pfd[n] = (struct pollfd){ .fd = outq_wake_fd, .events = POLLIN };
		pthread_mutex_unlock(&outq_lock);
		/* A stream that takes nothing never wakes us: the close's deadline is kept by its waiter. */
		poll(pfd, (nfds_t)n + 1, -1);
		if (read(outq_wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			debug_msg("the writer's wake-up: %s", strerror(errno));
		pthread_mutex_lock(&outq_lock);
		/* Only this thread frees a queue, so pq still holds live ones. */
		for (int i = 0; i < n; i++)
			if (pfd[i].revents)
				pq[i]->blocked = 0;
	}
	outq_running = 0;
	pthread_mutex_unlock(&outq_lock);
	return NULL;
}

/*
 * Wakes the writer, making it first (with the lock held). Every signal is
 * blocked in it: SIGINT, SIGTERM and the tick must reach the main tracer
 * thread's wait4, and a SIGPIPE stays pending on it (the write says EPIPE).
 * It is made by a tracer thread, which may be SCHED_IDLE and bound to the
 * CPU of its tracee: the writer gets neither, or a busy machine starves it
 * and every output falls behind.
 */
static int
outq_wake(void)
{
	static const uint64_t one = 1;
	pthread_t t;
	int err = 0;

	if (!outq_running) {
		/*
		 * Signals blocked, so that the main thread's wait4 is the one
		 * they interrupt; the faults not (emerg.h). On the CPUs the user
		 * allows: tracer thread 0 may be placed on one by now.
		 */
		err = util_thread_start(&t, outq_main, NULL, outq_cpus_known ? &outq_cpus : NULL, 1);
		if (err)
			return err;
		outq_running = 1;
	}
	if (write(outq_wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return errno;
	return 0;
}

/* The failure not said yet, handed to the caller: returns -1 with errno, or 0. */
static int
outq_hand_failure(struct jt_outq *q)
{
	if (!q->err || q->said)
		return 0;
	q->said = 1;
	errno = q->err;
	return -1;
}

/* Drops a content (the output is behind or stopped), counting it. */
static void
outq_drop(struct jt_outq *q, char *data, size_t len, char *name, int counted)
{
	q->nlost += counted ? 1 : 0;
	q->bytes_lost += len;
	free(data);
	free(name);
}

/* A file's queued content for name, not begun, that a newer one replaces: it would only be overwritten. */
static void
outq_skip_replaced(struct jt_outq *q, const char *name)
{
	if (!q->head)
		return;
	for (struct outq_job **pp = &q->head->next; *pp;)
		if ((*pp)->name && strcmp((*pp)->name, name) == 0)
			outq_unlink(q, pp, 0);
		else
			pp = &(*pp)->next;
}

/*
 * Whether q, given len bytes more, is behind: past OUTQ_MAX_BYTES, or past
 * OUTQ_MAX_WAITING contents with no progress for OUTQ_GIVE_UP_MS. A reader
 * or a disk that is slow but moves (a writer thread a loaded machine runs
 * late) only costs memory, up to the bound; one that took nothing costs
 * the snapshots after those waiting.
 */
static int
outq_is_behind(const struct jt_outq *q, size_t len)
{
	uint64_t moved = __atomic_load_n(&q->progress_ms, __ATOMIC_RELAXED);

	if (q->bytes + len > OUTQ_MAX_BYTES)
		return 1;
	return q->nwaiting > OUTQ_MAX_WAITING && util_now_ms() >= moved + OUTQ_GIVE_UP_MS;
}

int
outq_push(struct jt_outq *q, char *data, size_t len, char *name, int counted)
{
	struct outq_job *j;
	int r, err;

	pthread_mutex_lock(&outq_lock);
	q->ncounted += counted ? 1 : 0;
	if (name && q->how == OUTQ_FILE)
		outq_skip_replaced(q, name);
	if (!q->stopped && !q->behind && outq_is_behind(q, len)) {
		q->behind = 1;
		error_msg("the report '%s' %s: its later snapshots are dropped", q->path,
			  q->how == OUTQ_FILE || q->how == OUTQ_BLOCKING ? "is not being written in time" : "is not being read");
	}
	if (q->stopped || q->behind) {
		outq_drop(q, data, len, name, counted);
	} else {
		/* Nothing was waiting: the writer had nothing to move, which is no stall. */
		if (!q->head)
			outq_progress(q);
		j = xcalloc(1, sizeof(*j));
		*j = (struct outq_job){ .data = data, .len = len, .name = name, .counted = counted };
		*q->tail = j;
		q->tail = &j->next;
		q->nwaiting++;
		q->bytes += len;
		/* No writer thread: the content waits, and the close says it was not written. */
		if ((err = outq_wake()) != 0 && !q->err) {
			q->err = err;
			q->err_name = xstrdup(q->path);
		}
	}
	r = outq_hand_failure(q);
	err = errno;
	pthread_mutex_unlock(&outq_lock);
	errno = err;
	return r;
}

const char *
outq_failed(const struct jt_outq *q)
{
	return q->err_name;
}

/* Waits (the lock held) until q is written or the writer made no progress for OUTQ_GIVE_UP_MS. Returns 1 when it gave up. */
static int
outq_drain(struct jt_outq *q)
{
	struct timespec ts;
	uint64_t base, now, until;

	/*
	 * The time without progress counts from before the wait: a reader that
	 * stopped reading long ago costs the end nothing, and several such
	 * outputs cost one wait, not one each.
	 */
	while (q->head && !q->stopped) {
		base = __atomic_load_n(&q->progress_ms, __ATOMIC_RELAXED);
		if ((now = util_now_ms()) >= base + OUTQ_GIVE_UP_MS)
			return 1;
		/* A put notes progress without the lock: wake at least every 50 ms to see it. */
		until = base + OUTQ_GIVE_UP_MS < now + 50 ? base + OUTQ_GIVE_UP_MS : now + 50;
		ts.tv_sec = (time_t)(until / 1000);
		ts.tv_nsec = (long)(until % 1000) * 1000000;
		pthread_cond_timedwait(&outq_cond, &outq_lock, &ts);
	}
	return 0;
}

int
outq_wait(struct jt_outq *q)
{
	int r;

	pthread_mutex_lock(&outq_lock);
	outq_drain(q);
	r = outq_hand_failure(q);
	pthread_mutex_unlock(&outq_lock);
	return r;
}

/* Says what q did not write, at its close (the lock held). Returns 0, or -1 with errno for the caller to say. */
static int
outq_account(struct jt_outq *q, int gave_up)
{
	char num[32];
	int stream = q->how != OUTQ_FILE && q->how != OUTQ_BLOCKING;

	if (gave_up) {
		for (struct outq_job *j = q->head; j; j = j->next) {
			q->nlost += j->counted ? 1 : 0;
			q->bytes_lost += j->len - j->done;
		}
	}
	if (gave_up || q->behind) {
		error_msg("the report '%s' %s: %u of %u snapshots (%s bytes) were not written", q->path,
			  stream ? "was not read" : "was not written in time", q->nlost, q->ncounted,
			  util_num(num, q->bytes_lost));
		errno = EAGAIN;	/* what a write that would wait says */
		return -1;
	}
	/* One snapshot lost is the failure said (now, by the caller, or before): a count says more only past it. */
	if (q->nlost > 1)
		error_msg("the report '%s': %u of %u snapshots were not written", q->path, q->nlost, q->ncounted);
	return outq_hand_failure(q);
}

int
outq_close(struct jt_outq *q, void (*release)(void *arg))
{
	struct timespec ts;
	int r, err, gave_up, reaped = 0;
	uint64_t until;

	pthread_mutex_lock(&outq_lock);
	gave_up = outq_drain(q);
	r = outq_account(q, gave_up);
	err = errno;
	q->released = 1;
	q->release = release;
	q->reaped = &reaped;
	if (!outq_running) {
		outq_reap();
	} else if (outq_wake() == 0) {
		/* A writer stuck in a write frees q when it returns: that is not waited for. */
		until = util_now_ms() + 100;
		ts.tv_sec = (time_t)(until / 1000);
		ts.tv_nsec = (long)(until % 1000) * 1000000;
		while (!reaped && pthread_cond_timedwait(&outq_cond, &outq_lock, &ts) != ETIMEDOUT)
			;
	}
	if (!reaped)
		q->reaped = NULL;
	pthread_mutex_unlock(&outq_lock);
	errno = err;
	return r;
}

int
outq_write_all(struct jt_outq *q, int fd, const char *data, size_t len, long long off)
{
	size_t done = 0, n;
	ssize_t w;

	while (done < len) {
		n = len - done > OUTQ_CHUNK ? OUTQ_CHUNK : len - done;
		w = off >= 0 ? pwrite(fd, data + done, n, (off_t)(off + (long long)done)) : write(fd, data + done, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? errno : ENOSPC;	/* a regular file that takes nothing is full */
		done += (size_t)w;
		outq_progress(q);
	}
	return 0;
}

/* outwriter.h - the thread that writes the outputs' contents, so that a reader that stops reading or a slow disk never stalls a stop. */
#ifndef JT_OUTWRITER_H
#define JT_OUTWRITER_H

#include <stddef.h>

/*
 * One output's queue of contents, written in order by the session's one
 * writer thread (made at the first content, every signal blocked in it, so
 * that SIGINT and the tick still interrupt the main thread's wait4).
 */
struct jt_outq;

/*
 * How the writer puts one file content in place, on the writer thread:
 * name is the file it replaces, or NULL for an append to the file the
 * output holds open. Writes with outq_write_all. Returns 0 or an errno.
 */
typedef int (*outq_put_fn)(void *arg, struct jt_outq *q, const char *name, const char *data, size_t len);

/*
 * A queue for the output named path (for messages): a stream when fd >= 0
 * (written in place, without blocking when fd is O_NONBLOCK or a socket),
 * else a file whose contents put writes. fd and arg stay the caller's
 * until outq_close releases them.
 */
struct jt_outq *outq_new(const char *path, int fd, outq_put_fn put, void *arg);

/*
 * Queues len bytes of data (malloc'ed, taken) for name (malloc'ed or NULL,
 * taken); counted: it is a snapshot, said in the counts of what was lost.
 * A file's queued content that another content for the same name replaces
 * before it is begun is skipped. Past OUTQ_MAX_BYTES waiting, or past
 * OUTQ_MAX_WAITING contents while the writer moved nothing of q for
 * OUTQ_GIVE_UP_MS, the output is behind: this content and every later one
 * are dropped (said once). Returns 0, or -1 with errno when an
 * earlier content could not be written (outq_failed names it), which the
 * caller says: the failure is handed over once.
 */
int outq_push(struct jt_outq *q, char *data, size_t len, char *name, int counted);

/* The name of the first content that could not be written (the output's path for a stream), or NULL. */
const char *outq_failed(const struct jt_outq *q);

/*
 * Waits until every content queued is written, or until the writer made
 * no progress on q for OUTQ_GIVE_UP_MS. Returns as outq_push.
 */
int outq_wait(struct jt_outq *q);

/*
 * Waits as outq_wait, then ends q: says what was not written (contents
 * dropped, failed, or left when the writer gave up), and gives fd and arg
 * to release once the writer is done with them (now, or when a write it
 * is stuck in returns). Returns 0, or -1 with errno when a failure not
 * said yet, or contents dropped or left, make the output incomplete.
 */
int outq_close(struct jt_outq *q, void (*release)(void *arg));

/*
 * For a put: writes len bytes of data to fd at offset off (or at its
 * offset when off < 0), whole, noting the progress. Returns 0 or an errno.
 */
int outq_write_all(struct jt_outq *q, int fd, const char *data, size_t len, long long off);

/* What an output may have waiting before it is behind; how long a close waits for a writer that makes no progress. */
#define OUTQ_MAX_WAITING 4
#define OUTQ_MAX_BYTES (64u << 20)
#define OUTQ_GIVE_UP_MS 500

#endif

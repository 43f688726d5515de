/* outfile.h - where a report goes: standard output or another stream written in place, or a file replaced whole. */
#ifndef JT_OUTFILE_H
#define JT_OUTFILE_H

#include <stdio.h>

/*
 * One output the user named. Its rule, for every report:
 *   "-", and a descriptor's name (/dev/stdout, /dev/stderr, /dev/fd/N,
 *   /proc/self/fd/N, a shell's >(...)) are that descriptor (a pipe or a
 *   device opened anew, so that it can be written without blocking);
 *   a path that is, after its symlinks, anything but a regular file (a
 *   device, a FIFO, a socket) is opened once and written in place;
 * both are streams: kept open for the whole run, every content appended.
 *   A regular file or a new name (after its symlinks, so that a symlink
 *   stays one) gets each content in a new temporary file, made by mkstemp
 *   in its own directory, renamed over it when complete: a content that
 *   fails leaves the file before it in place.
 * A content is made in memory and written by a thread of its own
 * (outwriter.h): a reader that stops reading, or a slow disk, never makes
 * the caller wait; an output that falls behind drops its later contents.
 */
struct jt_outfile;

/*
 * Takes path before any report is written: opens a stream now (a FIFO
 * blocks until it has a reader, as the shell's > does); for a file, checks
 * that it could be replaced (its directory takes a new file, an existing
 * file is writable) without creating anything. Returns NULL with errno set.
 */
struct jt_outfile *outfile_open(const char *path);

/* 1 when o is a stream: never renamed, not seekable, contents follow each other. */
int outfile_is_stream(const struct jt_outfile *o);

/*
 * Starts one content, in memory: returns the stream to write it to, for
 * name (o's path when name is NULL; with --interval, a numbered name). A
 * name that is not a regular file gets the stream rule for this content
 * alone. A content begun before and not committed is dropped. Returns NULL
 * with errno set.
 */
FILE *outfile_begin(struct jt_outfile *o, const char *name);

/*
 * Ends the content begun, a snapshot, and hands it to the writer. Returns
 * 0, or -1 with errno set when an earlier content could not be written
 * (outfile_failed names it; each failure is returned once, for the caller
 * to say) or this one could not be made.
 */
int outfile_commit(struct jt_outfile *o);

/* As outfile_commit, for a content that is not a snapshot of its own (a stream's closing text). */
int outfile_commit_more(struct jt_outfile *o);

/*
 * For a report that grows with every snapshot (--json): puts content in a
 * file now, by the file rule, and keeps it open. content ends with tail,
 * and every later content goes in before it, over the tail and followed by
 * it again; a content that cannot be written whole is cut off, so that the
 * file keeps every content before it, whole, and no later content goes in
 * (each may build on those before it). Nothing to do for a stream.
 * Returns 0, or -1 with errno set.
 */
int outfile_publish(struct jt_outfile *o, const char *content, const char *tail);

/*
 * Waits until every content committed is written (or the writer made no
 * progress on o for half a second). Returns as outfile_commit.
 */
int outfile_wait(struct jt_outfile *o);

/* The name of the first content that could not be written: a numbered file, or o's path. */
const char *outfile_failed(const struct jt_outfile *o);

/*
 * Writes what is left (waiting at most half a second for a writer that
 * makes no progress), says what was not written, and frees o (NULL is
 * fine). Returns 0, or -1 with errno set, for the caller to say, when a
 * failure was not returned yet, or when contents were dropped or left
 * unwritten because the output fell behind (EAGAIN).
 */
int outfile_close(struct jt_outfile *o);

/*
 * The way out of a dying jmptrace (emerg.c): removes the temporary files
 * being written now, so that none outlives it. Async-signal-safe.
 */
void outfile_emerg_unlink(void);

#endif

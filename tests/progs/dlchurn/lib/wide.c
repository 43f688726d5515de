/*
 * wide.c - the libraries dlchurn loads in turns: libdcwide.so and, smaller, libdcnarrow1.so
 * and libdcnarrow2.so (-DDC_PAGES gives the pages of data in each). Each is too large for a
 * gap between the libraries a program starts with, so all are mapped below them, where the
 * wide one covers the places of both narrow ones (see dl_rounds in main.c).
 */
#include <stddef.h>

const char dc_wide_pad[DC_PAGES * 4096] = { 1 };

__attribute__((noinline, noipa)) size_t
dc_wide(size_t i)
{
	return (size_t)dc_wide_pad[i % sizeof(dc_wide_pad)];
}

/* js_grow.c - a block grown by je_realloc, kept. */
#include "js.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
js_grow(void)
{
	char *p = je_malloc(opaque_size(JS_GROW_FROM)); /* SITE:js_grow_malloc */

	sink(p, JS_GROW_FROM);
	js_kept[JS_KEEP_N + 1] = je_realloc(p, opaque_size(JS_GROW_TO)); /* SITE:js_grow_realloc */
	sink(js_kept[JS_KEEP_N + 1], 1);
}

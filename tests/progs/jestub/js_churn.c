/* js_churn.c - pairs made and freed at once, through each pair of functions. */
#include "js.h"
#include "../common/sink.h"

__attribute__((noinline, noipa)) void
js_churn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		void *p = je_malloc(opaque_size(16)); /* SITE:js_churn_malloc */
		sink(p, 16);
		je_free(p);
	}
	for (unsigned long i = 0; i < n / 2; i++) {
		void *p = je_mallocx(opaque_size(32), 0); /* SITE:js_churn_x */
		sink(p, 32);
		je_sdallocx(p, 32, 0);
	}
	for (unsigned long i = 0; i < n / 10; i++) {
		void *p = je_mallocx(opaque_size(48), 0);
		sink(p, 48);
		je_dallocx(p, 0);
	}
}

/* report_html_page.S - links the --html page template (report_html_page.html, its path in REPORT_HTML_PAGE) in as one NUL-terminated string. */
	.section .rodata
	.global report_html_page
	.type report_html_page, @object
report_html_page:
	.incbin REPORT_HTML_PAGE
	.byte 0
	.size report_html_page, . - report_html_page
	.section .note.GNU-stack, "", @progbits

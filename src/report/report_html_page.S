/* report_html_page.S - links the --html page template (report_html_page.html, its path in REPORT_HTML_PAGE) and its script (report_html_page.js, REPORT_HTML_SCRIPT) in, each as one NUL-terminated string. */
	.section .rodata
	.global report_html_page
	.type report_html_page, @object
report_html_page:
	.incbin REPORT_HTML_PAGE
	.byte 0
	.size report_html_page, . - report_html_page
	.global report_html_script
	.type report_html_script, @object
report_html_script:
	.incbin REPORT_HTML_SCRIPT
	.byte 0
	.size report_html_script, . - report_html_script
	.section .note.GNU-stack, "", @progbits

/* SPDX-License-Identifier: MIT */
/* The --dump printer: one line per record, text escaped, ids and stacks in hex. */
#include "trace-test-util.h"
#include "dump.h"
#include "trace-writer.h"

static char *dump_one(const struct gw_record *rec)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	assert_non_null(f);
	gw_dump_record(rec, f);
	fclose(f);
	return text;
}

static void test_lines(void **state)
{
	static const uint8_t id[] = {0xde, 0xad, 0x00, 0x01};
	static const uint64_t ips[] = {0x401000, 0x7f0000001234};
	struct gw_record rec = {.type = GW_REC_NOTE, .version = 1};
	char *s;

	(void)state;
	rec.note = (struct gw_rec_note){
		.time_ns = 5, .level = 1, .text = {(const uint8_t *)"a \"b\"\\\n\x01", 8}};
	s = dump_one(&rec);
	assert_string_equal(s, "NOTE time_ns=5 level=1 text=\"a \\\"b\\\"\\\\\\n\\x01\"");
	free(s);

	rec.type = GW_REC_MODULE;
	rec.module = (struct gw_rec_module){.time_ns = 1,
					    .event = 1,
					    .base = 4096,
					    .start = 4096,
					    .size = 10,
					    .build_id = {id, sizeof(id)},
					    .path = {(const uint8_t *)"/x", 2}};
	s = dump_one(&rec);
	assert_string_equal(s, "MODULE time_ns=1 event=1 base=4096 start=4096 size=10 "
			       "build_id=dead0001 path=\"/x\"");
	free(s);

	rec.type = GW_REC_STACK;
	rec.version = GW_REC_STACK_VERSION;
	rec.stack = (struct gw_rec_stack){.id = 2, .ips = {ips, 2}};
	s = dump_one(&rec);
	assert_string_equal(s, "STACK id=2 ips=[0x401000,0x7f0000001234] ips_kind=0");
	free(s);

	rec.type = GW_REC_DROPS;
	rec.version = 3;
	rec.drops = (struct gw_rec_drops){.time_ns = 9, .source = 1, .count = 4};
	s = dump_one(&rec);
	assert_string_equal(s, "DROPS version=3 time_ns=9 source=1 count=4");
	free(s);

	rec.type = 200;
	s = dump_one(&rec);
	assert_string_equal(s, "UNKNOWN type=200 version=3");
	free(s);
}

/* A whole trace: header line, records, END with the reader's verdict. */
static void test_trace(void **state)
{
	struct gw_writer_options opt = {0};
	struct gw_rec_header hdr;
	struct gw_rec_sync sy = {.correlation = 4, .start_ns = 100, .end_ns = 250, .type = 3};
	char path[4096], *text = NULL;
	size_t size = 0;
	FILE *f;

	(void)state;
	gw_test_header(&hdr);
	opt.fd = gw_test_tmpfile(path, sizeof(path));
	assert_int_equal(gw_writer_start(&opt, &hdr), 0);
	assert_true(gw_emit(GW_REC_SYNC, &sy));
	assert_int_equal(gw_writer_stop(false, 0), 0);
	f = open_memstream(&text, &size);
	assert_int_equal(gw_dump_trace(path, NULL, f), 0);
	fclose(f);
	assert_string_equal(
		text,
		"HEADER format_version=1 flags=0 pid=4242 ppid=1 rank=-1 clock_id=4 "
		"start_ns=1000000000 start_realtime_ns=0 capture_mode=1 cupti_version=0 "
		"host=\"node-7\" command=\"app\\x00--flag\" cupti_path=\"\"\n"
		"SYNC correlation=4 start_ns=100 end_ns=250 type=3 stream=0 event=0 queries=0 "
		"tid=0 device=0 name_id=0 stack_id=0\n"
		"END records=1 truncated=1 clean_exit=0\n");
	free(text);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_trace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* GPUSIM_CUPTI_BUSY=1 plays another tool owning CUPTI: even the first subscriber is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>
#include <cupti.h>

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
}

static void test_busy(void **state)
{
	CUpti_SubscriberHandle sub;

	(void)state;
	assert_int_equal(cuptiSubscribe(&sub, on_callback, NULL),
			 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
	assert_int_equal(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, 39);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy),
	};

	setenv("GPUSIM_CUPTI_BUSY", "1", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}

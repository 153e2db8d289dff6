// SPDX-License-Identifier: GPL-2.0
/*
 * ksize_test.ko - prove from outside the tree that ksize() is exported
 * and reports the kmalloc bucket that kmalloc_size_roundup() predicts.
 *
 * The 2009 patch "Export symbol ksize()" (seed 001) is not needed in
 * 6.1: this module links against ksize() and kmalloc_size_roundup()
 * (both EXPORT_SYMBOL in mm/slab_common.c), which is itself the proof
 * of the export.  On load it allocates kmalloc() objects of every size
 * from 1 to KMALLOC_MAX_CACHE_SIZE plus the bucket edges (1500 -> 2048
 * among them) and a few page-allocator sizes, prints KTAP to the kernel
 * log and returns 0 if ksize() == kmalloc_size_roundup() everywhere,
 * -EINVAL otherwise (the load fails).  There is nothing to do on unload.
 *
 * Load it only inside a test guest: insmod ksize_test.ko; dmesg.
 */
#define pr_fmt(fmt) fmt

#include <linux/kernel.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stdarg.h>

/* Bucket edges for KMALLOC_MIN_SIZE 8 (x86_64): size, expected bucket. */
static const size_t edges[][2] = {
	{ 1, 8 }, { 8, 8 }, { 9, 16 }, { 16, 16 }, { 17, 32 }, { 32, 32 },
	{ 33, 64 }, { 64, 64 }, { 65, 96 }, { 96, 96 }, { 97, 128 },
	{ 128, 128 }, { 129, 192 }, { 192, 192 }, { 193, 256 },
	{ 256, 256 }, { 257, 512 }, { 512, 512 }, { 513, 1024 },
	{ 1024, 1024 }, { 1025, 2048 }, { 1500, 2048 }, { 2048, 2048 },
	{ 2049, 4096 }, { 4096, 4096 }, { 4097, 8192 }, { 8192, 8192 },
};

static const size_t large[] = {
	KMALLOC_MAX_CACHE_SIZE + 1, 3 * PAGE_SIZE, 4 * PAGE_SIZE + 1,
};

static unsigned int test_nr;

static __printf(2, 3) void report(bool ok, const char *fmt, ...)
{
	char desc[128];
	va_list args;

	va_start(args, fmt);
	vsnprintf(desc, sizeof(desc), fmt, args);
	va_end(args);
	pr_info("    %sok %u %s\n", ok ? "" : "not ", ++test_nr, desc);
}

/* ksize() of a fresh kmalloc(size) object, or 0 if allocation failed. */
static size_t ksize_of_kmalloc(size_t size)
{
	size_t ks = 0;
	void *p;
	int tries;

	for (tries = 0; tries < 16; tries++) {
		p = kmalloc(size, GFP_KERNEL);
		if (!p)
			return 0;
		/* KFENCE objects report the requested size: try again. */
		if (!is_kfence_address(p)) {
			ks = ksize(p);
			kfree(p);
			return ks;
		}
		kfree(p);
	}
	return kmalloc_size_roundup(size);
}

static int __init ksize_test_init(void)
{
	bool edges_apply = KMALLOC_MIN_SIZE == 8 && KMALLOC_MAX_CACHE_SIZE >= 8192;
	unsigned int failed = 0, range_bad = 0;
	size_t size, ks, want, first_bad = 0;
	int i;

	/* KTAP as KUnit nests a suite: one test, its cases one level down */
	pr_info("KTAP version 1\n");
	pr_info("1..1\n");
	pr_info("    KTAP version 1\n");
	pr_info("    # Subtest: ksize_test\n");
	pr_info("    1..%zu\n", 1 + ARRAY_SIZE(edges) + ARRAY_SIZE(large));

	for (size = 1; size <= KMALLOC_MAX_CACHE_SIZE; size++) {
		ks = ksize_of_kmalloc(size);
		want = kmalloc_size_roundup(size);
		if (ks != want || ks < size) {
			if (!range_bad++)
				first_bad = size;
		}
	}
	report(!range_bad,
	       "ksize(kmalloc(n)) == kmalloc_size_roundup(n) for n=1..%lu (%u bad, first %zu)",
	       (unsigned long)KMALLOC_MAX_CACHE_SIZE, range_bad, first_bad);
	failed += !!range_bad;

	for (i = 0; i < ARRAY_SIZE(edges); i++) {
		ks = ksize_of_kmalloc(edges[i][0]);
		want = kmalloc_size_roundup(edges[i][0]);
		if (!edges_apply) {
			pr_info("    ok %u kmalloc(%zu) # SKIP edge table is for KMALLOC_MIN_SIZE 8\n",
				++test_nr, edges[i][0]);
			continue;
		}
		if (ks == want && ks == edges[i][1]) {
			report(true, "kmalloc(%zu): ksize %zu == bucket %zu",
			       edges[i][0], ks, edges[i][1]);
		} else {
			report(false, "kmalloc(%zu): ksize %zu, bucket %zu",
			       edges[i][0], ks, edges[i][1]);
			pr_info("    # roundup(%zu) = %zu\n", edges[i][0], want);
			failed++;
		}
	}

	for (i = 0; i < ARRAY_SIZE(large); i++) {
		ks = ksize_of_kmalloc(large[i]);
		want = kmalloc_size_roundup(large[i]);
		report(ks == want, "kmalloc(%zu): ksize %zu, roundup %zu",
		       large[i], ks, want);
		failed += ks != want;
	}

	pr_info("# ksize_test: pass:%u fail:%u\n", test_nr - failed, failed);
	pr_info("%sok 1 ksize_test\n", failed ? "not " : "");
	return failed ? -EINVAL : 0;
}

static void __exit ksize_test_exit(void)
{
}

module_init(ksize_test_init);
module_exit(ksize_test_exit);

MODULE_DESCRIPTION("Out-of-tree check: ksize() is exported and equals kmalloc_size_roundup()");
MODULE_LICENSE("GPL");

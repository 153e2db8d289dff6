// SPDX-License-Identifier: GPL-2.0
/*
 * skbt-walk: the known answer of the skbt-cache QEMU plugin.  Reads one
 * byte of every 64-byte line of a buffer of SIZE KiB, line after line,
 * PASSES times, between two executions of skbt-mark's marker
 * instruction; before the first mark the buffer is written (faulted
 * in) and walked once, so the cache starts as the walk leaves it.
 * With LRU, a buffer that fits a cache level misses it never, one
 * larger than the level misses it on every access.  Prints the
 * accesses it made.  Runs in the guests (static, busybox initramfs).
 *
 *   skbt-walk SIZE_KIB PASSES
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE 64

static void mark(void)
{
	/* nopl 0xdeadbeef(%rax) */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde" ::: "memory");
}

static unsigned long walk(const volatile unsigned char *buf, size_t size)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < size; i += LINE)
		sum += buf[i];
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long kib, passes, p, sum;
	unsigned char *buf;
	size_t size;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: skbt-walk SIZE_KIB PASSES\n");
		return 2;
	}
	kib = strtoul(argv[1], &end, 10);
	if (*end || !kib || kib > 1024 * 1024) {
		fprintf(stderr, "skbt-walk: bad size '%s' (KiB, 1-1048576)\n", argv[1]);
		return 2;
	}
	passes = strtoul(argv[2], &end, 10);
	if (*end || !passes) {
		fprintf(stderr, "skbt-walk: bad pass count '%s'\n", argv[2]);
		return 2;
	}
	size = kib * 1024;
	buf = aligned_alloc(4096, size);
	if (!buf) {
		perror("skbt-walk");
		return 1;
	}
	memset(buf, 1, size);
	sum = walk(buf, size);
	mark();
	for (p = 0; p < passes; p++)
		sum += walk(buf, size);
	mark();
	printf("accesses=%lu sum=%lu\n", passes * (size / LINE), sum);
	free(buf);
	return 0;
}

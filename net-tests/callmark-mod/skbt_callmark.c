// SPDX-License-Identifier: GPL-2.0
/*
 * skbt_callmark: executes the marker instruction of the rig's skbt-mark
 * (a nop no compiler emits) when a kernel function is entered and when
 * it returns, through a kretprobe, so that the rig's QEMU plugins write
 * their running counts around every call: skbt-insn the guest's
 * instructions, skbt-cache its simulated data-cache misses.  The
 * difference of each entry/return pair is one call with its callees,
 * plus the kretprobe's own work between the two marks (the same on
 * every kernel).  Load it only around the transfer to be measured, with
 * nothing else marking.  Only in the rig's guests.
 *
 *   insmod skbt_callmark.ko func=skb_cow_data
 */
#include <linux/kprobes.h>
#include <linux/module.h>

static char *func = "skb_cow_data";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "the function to mark around (default skb_cow_data)");

static void skbt_mark(void)
{
	/* nopl 0xdeadbeef(%rax) */
	asm volatile(".byte 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde" ::: "memory");
}

static int skbt_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	skbt_mark();
	return 0;
}

static int skbt_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	skbt_mark();
	return 0;
}

static struct kretprobe skbt_krp = {
	.entry_handler = skbt_entry,
	.handler = skbt_return,
	.maxactive = 1,
};

static int __init skbt_callmark_init(void)
{
	skbt_krp.kp.symbol_name = func;
	return register_kretprobe(&skbt_krp);
}

static void __exit skbt_callmark_exit(void)
{
	unregister_kretprobe(&skbt_krp);
	if (skbt_krp.nmissed)
		pr_warn("skbt_callmark: %d calls of %s missed\n", skbt_krp.nmissed, func);
}

module_init(skbt_callmark_init);
module_exit(skbt_callmark_exit);
MODULE_DESCRIPTION("skb-tailroom rig: plugin marks around each call of a function");
MODULE_LICENSE("GPL");

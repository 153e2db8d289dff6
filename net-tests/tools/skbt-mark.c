// SPDX-License-Identifier: GPL-2.0
/*
 * skbt-mark: executes the marker instruction the skbt-insn QEMU plugin
 * watches for (a nop with a displacement no compiler emits), so that
 * the plugin writes the guest's instruction count.  Anywhere else (no
 * plugin, KVM, real hardware) it is a nop.  Runs in the guests.
 */
int main(void)
{
	/* nopl 0xdeadbeef(%rax) */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde");
	return 0;
}

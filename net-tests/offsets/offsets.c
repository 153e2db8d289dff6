// SPDX-License-Identifier: GPL-2.0
/*
 * Structure offsets for the rig's kprobe events (net-tests/guest/acct.sh),
 * compiled to assembly only, like the kernel's asm-offsets.c: kprobe
 * fetch-args in 6.1 take numeric offsets, not BTF field names.
 */
#include <linux/kbuild.h>
#include <linux/skbuff.h>
#include <net/esp.h>
#include <net/tcp.h>

int main(void);
int main(void)
{
	DEFINE(ESP_INFO_TAILEN, offsetof(struct esp_info, tailen));
	DEFINE(ESP_INFO_INPLACE, offsetof(struct esp_info, inplace));
	DEFINE(SKB_LEN, offsetof(struct sk_buff, len));
	DEFINE(SKB_DATA_LEN, offsetof(struct sk_buff, data_len));
	DEFINE(SKB_TAIL, offsetof(struct sk_buff, tail));
	DEFINE(SKB_END, offsetof(struct sk_buff, end));
	DEFINE(SKB_CLONED_BYTE, offsetof(struct sk_buff, __cloned_offset));
	/* what SKB_HEAD_ALIGN() adds to a head for its skb_shared_info */
	DEFINE(SKB_SHINFO_ALIGNED, SKB_DATA_ALIGN(sizeof(struct skb_shared_info)));
	DEFINE(SKB_NETWORK_HEADER, offsetof(struct sk_buff, network_header));
	DEFINE(SKB_TRANSPORT_HEADER, offsetof(struct sk_buff, transport_header));
	/* the headroom TCP reserves in every skb it allocates (build group) */
	DEFINE(LL_MAX_HDR, LL_MAX_HEADER);
	DEFINE(MAX_TCP_HDR, MAX_TCP_HEADER);
	return 0;
}

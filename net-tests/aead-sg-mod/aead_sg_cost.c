// SPDX-License-Identifier: GPL-2.0
/*
 * aead_sg_cost.ko - what the shape of an ESP packet's scatterlists costs
 * the AEAD, one crypto_aead_encrypt() at a time.
 *
 * ESP output of a TCP clone can encrypt in place after copying the clone
 * into a linear head (skb_cow_data(), today), or out of place from the
 * clone's headers and page frags into a new head (series v2).  The second
 * saves the copy but hands the cipher a source list of several entries.
 * This module encrypts the same ESP-shaped packet (8-byte AD, IV, 32-byte
 * TCP header, a page frag of payload, trailer, 16-byte ICV) laid out each
 * way and times each call with interrupts off.  Under QEMU -icount
 * shift=0 a nanosecond of guest time is one instruction, so the figures
 * are instruction counts, the same in every boot.
 *
 * Layouts (src -> dst):
 *   linear       one linear entry, in place (after skb_cow_data())
 *   copy+linear  the same plus the memcpy() of header and payload into it
 *   v2           AD+IV | header | frag | trailer -> one entry
 *   v2-cross     v2 with the frag crossing a page boundary
 *   v3-aligned   AD+IV | header | frag cut at a 16-byte boundary |
 *                frag tail + trailer staged together -> one entry
 *   v3-2         AD+IV+header staged | frag | trailer -> one entry
 *
 * Algorithms: the ones ESP builds (seqiv/echainiv around the AEAD) and
 * the AEAD alone (what the IV generator hands its child).
 *
 * On load it prints one line per algorithm and layout to the kernel log:
 *   aead-sg-cost ALG PAYLOAD LAYOUT min=NS median=NS
 * and fails the load (-EINVAL) if any layout's ciphertext and ICV differ
 * from the linear one's, or a call fails.  Load it only in a test guest.
 */
#define pr_fmt(fmt) "aead-sg-cost " fmt

#include <crypto/aead.h>
#include <crypto/authenc.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/skbuff.h>
#include <linux/sort.h>
#include <linux/string.h>

#define AD_LEN		8	/* SPI + sequence number */
#define HDR_LEN		32	/* TCP header with timestamps */
#define ICV_LEN		16
#define HEADROOM	64
#define SAMPLES		101
#define MAX_SG		8

static unsigned int payload = 1368;
module_param(payload, uint, 0444);
MODULE_PARM_DESC(payload, "TCP payload bytes in the frag (default 1368)");

struct alg {
	const char *name;
	bool authenc;
	bool geniv;	/* IV generator: the IV slot is written, not read */
};

static const struct alg algs[] = {
	{ "seqiv(rfc4106(gcm(aes)))", false, true },
	{ "rfc4106(gcm(aes))", false, false },
	{ "echainiv(authenc(hmac(sha256),cbc(aes)))", true, true },
	{ "authenc(hmac(sha256),cbc(aes))", true, false },
};

enum layout { LINEAR, COPY_LINEAR, V2, V2_CROSS, V3_ALIGNED, V3_2, NR_LAYOUTS };

static const char * const layout_names[] = {
	"linear", "copy+linear", "v2", "v2-cross", "v3-aligned", "v3-2",
};

struct bufs {
	u8 *lin;	/* 4 KiB head of skb_cow_data() */
	u8 *head;	/* 2 KiB private head of v2 */
	u8 *hdr;	/* the clone's linear part */
	u8 *stage;	/* staging behind the packet in v2's head */
	struct page *pages;	/* order 1: a frag may cross the boundary */
	u8 *ref;	/* linear result to compare with */
};

static struct crypto_aead *alloc_tfm(const struct alg *alg)
{
	u8 key[RTA_SPACE(sizeof(struct crypto_authenc_key_param)) + 48];
	struct crypto_authenc_key_param *param;
	struct crypto_aead *tfm;
	struct rtattr *rta;
	unsigned int klen = 20;	/* rfc4106: 16 bytes of key, 4 of salt */
	int err;

	/* As ESP does: the SIMD (AES-NI) wrappers are "async" and run
	 * synchronously whenever the FPU is usable, as it is here.
	 */
	tfm = crypto_alloc_aead(alg->name, 0, 0);
	if (IS_ERR(tfm))
		return tfm;
	memset(key, 0x11, sizeof(key));
	if (alg->authenc) {
		rta = (struct rtattr *)key;
		rta->rta_type = CRYPTO_AUTHENC_KEYA_PARAM;
		rta->rta_len = RTA_LENGTH(sizeof(*param));
		param = RTA_DATA(rta);
		param->enckeylen = cpu_to_be32(16);
		klen = RTA_SPACE(sizeof(*param)) + 32 + 16;
	}
	err = crypto_aead_setkey(tfm, key, klen);
	if (!err)
		err = crypto_aead_setauthsize(tfm, ICV_LEN);
	if (err) {
		crypto_free_aead(tfm);
		return ERR_PTR(err);
	}
	return tfm;
}

/* Plaintext byte i of the ESP payload (header, then frag payload). */
static u8 pt_byte(unsigned int i)
{
	return (u8)(i * 7 + 3);
}

/* The kernel's memcpy(), as skb_copy_bits() calls it: gcc would inline a
 * variable-length copy here as rep movsb, which TCG counts per byte.
 */
static void *(*volatile kmemcpy)(void *, const void *, size_t) = memcpy;

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct geom {
	unsigned int ivlen, blk, clen, plen, assoc, crypt;
	unsigned int fragoff;	/* offset of the frag in the pages */
};

static void fill_trailer(u8 *p, unsigned int plen)
{
	unsigned int i;

	for (i = 0; i < plen - 2; i++)
		p[i] = i + 1;
	p[plen - 2] = plen - 2;
	p[plen - 1] = 6;	/* IPPROTO_TCP */
}

/* Build src/dst for one layout; returns the dst base (AD start). */
static u8 *build(enum layout l, const struct geom *g, struct bufs *b,
		 struct scatterlist *src, struct scatterlist *dst,
		 bool *inplace)
{
	u8 *frag = page_address(b->pages) + g->fragoff;
	unsigned int hl = AD_LEN + g->ivlen;
	unsigned int n = 0, r;
	u8 *d;

	*inplace = l == LINEAR || l == COPY_LINEAR;
	if (*inplace) {
		d = b->lin + HEADROOM;
		/* AD, IV slot and plaintext: encryption is in place */
		memset(d, 0x5a, hl);
		memcpy(d + hl, b->hdr, HDR_LEN);
		memcpy(d + hl + HDR_LEN, frag, payload);
		fill_trailer(d + hl + HDR_LEN + payload, g->plen);
		sg_init_table(src, 1);
		sg_set_buf(src, d, hl + g->clen + ICV_LEN);
		return d;
	}

	d = b->head + HEADROOM;
	memset(d, 0x5a, hl);
	sg_init_table(src, MAX_SG);
	switch (l) {
	case V2:
	case V2_CROSS:
		sg_set_buf(&src[n++], d, hl);
		sg_set_buf(&src[n++], b->hdr, HDR_LEN);
		sg_set_buf(&src[n++], frag, payload);
		fill_trailer(b->stage, g->plen);
		sg_set_buf(&src[n++], b->stage, g->plen);
		break;
	case V3_ALIGNED:
		/* cut the frag where the plaintext is a multiple of 16 */
		r = (HDR_LEN + payload) % 16;
		sg_set_buf(&src[n++], d, hl);
		sg_set_buf(&src[n++], b->hdr, HDR_LEN);
		sg_set_buf(&src[n++], frag, payload - r);
		memcpy(b->stage, frag + payload - r, r);
		fill_trailer(b->stage + r, g->plen);
		sg_set_buf(&src[n++], b->stage, r + g->plen);
		break;
	case V3_2:
		/* AD, IV slot and header staged together, disjoint from dst */
		memset(b->stage, 0x5a, hl);
		memcpy(b->stage + hl, b->hdr, HDR_LEN);
		sg_set_buf(&src[n++], b->stage, hl + HDR_LEN);
		sg_set_buf(&src[n++], frag, payload);
		fill_trailer(b->stage + 128, g->plen);
		sg_set_buf(&src[n++], b->stage + 128, g->plen);
		break;
	default:
		break;
	}
	sg_mark_end(&src[n - 1]);
	sg_init_one(dst, d, hl + g->clen + ICV_LEN);
	return d;
}

static int run_alg(const struct alg *alg, struct bufs *b, u64 *t)
{
	struct scatterlist src[MAX_SG], dst[1];
	struct aead_request *req;
	struct crypto_aead *tfm;
	struct geom g = {};
	DECLARE_CRYPTO_WAIT(wait);
	u8 iv[16], *d = NULL;
	unsigned long flags;
	bool inplace;
	int err = 0, i, l;
	u64 t0;

	tfm = alloc_tfm(alg);
	if (IS_ERR(tfm)) {
		pr_info("%s not available (%ld)\n", alg->name, PTR_ERR(tfm));
		return 0;
	}
	pr_info("%s is %s\n", alg->name,
		crypto_tfm_alg_driver_name(crypto_aead_tfm(tfm)));
	req = aead_request_alloc(tfm, GFP_KERNEL);
	if (!req) {
		crypto_free_aead(tfm);
		return -ENOMEM;
	}

	g.ivlen = crypto_aead_ivsize(tfm);
	if (!alg->geniv)	/* the child: the IV is part of the AD */
		g.ivlen = alg->authenc ? 16 : 8;
	g.blk = ALIGN(crypto_aead_blocksize(tfm), 4);
	g.clen = ALIGN(HDR_LEN + payload + 2, g.blk);
	g.plen = g.clen - HDR_LEN - payload;
	if (alg->geniv) {
		g.assoc = AD_LEN;
		g.crypt = g.ivlen + g.clen;
	} else {
		g.assoc = AD_LEN + g.ivlen;
		g.crypt = g.clen;
	}

	for (l = 0; l < NR_LAYOUTS && !err; l++) {
		g.fragoff = l == V2_CROSS ? PAGE_SIZE - payload / 2 : 200;
		for (i = 0; i < SAMPLES; i++) {
			memset(iv, 0x33, sizeof(iv));
			d = build(l, &g, b, src, dst, &inplace);
			aead_request_set_callback(req, 0, crypto_req_done, &wait);
			aead_request_set_ad(req, g.assoc);
			aead_request_set_crypt(req, src, inplace ? src : dst,
					       g.crypt, iv);
			local_irq_save(flags);
			t0 = ktime_get_ns();
			if (l == COPY_LINEAR) {
				/* the copy skb_cow_data() makes, as memcpy */
				kmemcpy(d + AD_LEN + g.ivlen, b->hdr, HDR_LEN);
				kmemcpy(d + AD_LEN + g.ivlen + HDR_LEN,
				       page_address(b->pages) + g.fragoff,
				       payload);
			}
			err = crypto_aead_encrypt(req);
			t[i] = ktime_get_ns() - t0;
			local_irq_restore(flags);
			if (err == -EINPROGRESS || err == -EBUSY) {
				/* went to cryptd: not a per-call figure */
				crypto_wait_req(err, &wait);
				err = -EAGAIN;
			}
			if (err)
				break;
		}
		if (err) {
			pr_err("%s %s: encrypt failed (%d)\n", alg->name,
			       layout_names[l], err);
			break;
		}
		/* IV, ciphertext and ICV equal to the linear layout's */
		if (l == LINEAR) {
			memcpy(b->ref, d, AD_LEN + g.ivlen + g.clen + ICV_LEN);
		} else if (memcmp(b->ref, d, AD_LEN + g.ivlen + g.clen + ICV_LEN)) {
			pr_err("%s %s: output differs from the linear layout\n",
			       alg->name, layout_names[l]);
			err = -EINVAL;
			break;
		}
		sort(t, SAMPLES, sizeof(*t), cmp_u64, NULL);
		pr_info("%s %u %s min=%llu median=%llu\n", alg->name, payload,
			layout_names[l], t[0], t[SAMPLES / 2]);
	}

	aead_request_free(req);
	crypto_free_aead(tfm);
	return err;
}

/* The private-head half: what making a TCP clone's ESP packet private
 * costs, per call.  A clone as ESP output sees it: MAX_TCP_HEADER of
 * headroom, IPv4 + ESP + IV (36 bytes) and the TCP header (32) in the
 * linear part with skb->data at the TCP header, the payload in one page
 * frag.  "cow" is today's skb_cow_data() for a 20-byte trailer (4 of
 * padding, 16 of ICV); "copy-head" copies the headers (capped headroom)
 * and the payload into a bucket-sized head from skb_head_alloc() and
 * switches heads with skb_head_replace() (a series kernel only);
 * "alloc+replace" is that without the copy (what an out-of-place
 * encryption into the new head pays besides the cipher);
 * "linearize-private" is the series v3 helper that does copy-head.
 */
#define CLONE_HEADROOM	320	/* MAX_TCP_HEADER, Debian amd64 */
#define NET_TO_DATA	36	/* IPv4 20 + ESP 8 + IV 8 */
#define TRAILER		20

/* Weak: NULL on a kernel without them (symbol_get() takes GPL-only
 * exports in 6.1.y, and these are plain EXPORT_SYMBOL).
 */
void *skb_head_alloc(unsigned int size, gfp_t gfp, unsigned int *bufsize) __weak;
void skb_head_replace(struct sk_buff *skb, void *data, unsigned int bufsize,
		      unsigned int headroom, unsigned int len) __weak;
int skb_linearize_private(struct sk_buff *skb, unsigned int headroom,
			  unsigned int tailroom, gfp_t gfp) __weak;

enum skb_way { COW, COPY_HEAD, ALLOC_REPLACE, LINEARIZE, NR_WAYS };
static const char * const way_names[] = {
	"cow", "copy-head", "alloc+replace", "linearize-private",
};

static struct sk_buff *esp_clone(struct page *page, struct sk_buff **origp)
{
	struct sk_buff *orig, *clone;

	orig = alloc_skb(CLONE_HEADROOM, GFP_KERNEL);
	if (!orig)
		return NULL;
	skb_reserve(orig, CLONE_HEADROOM);
	get_page(page);
	skb_add_rx_frag(orig, 0, page, 200, payload, PAGE_SIZE);
	__skb_header_release(orig);
	clone = skb_clone(orig, GFP_KERNEL);
	if (!clone) {
		kfree_skb(orig);
		return NULL;
	}
	skb_push(clone, NET_TO_DATA + HDR_LEN);
	skb_reset_network_header(clone);
	skb_set_transport_header(clone, 20);
	__skb_pull(clone, NET_TO_DATA);
	*origp = orig;
	return clone;
}

static int run_skb(struct page *page, u64 *t)
{
	struct sk_buff *orig, *clone, *trailer;
	unsigned int bufsize, room;
	unsigned long flags;
	int err = 0, i, w;
	void *data;
	u64 t0;

	for (w = 0; w < NR_WAYS && !err; w++) {
		if ((w == LINEARIZE && !skb_linearize_private) ||
		    (w != COW && (!skb_head_alloc || !skb_head_replace))) {
			pr_info("skb %u %s: not in this kernel\n", payload,
				way_names[w]);
			continue;
		}
		for (i = 0; i < SAMPLES && !err; i++) {
			clone = esp_clone(page, &orig);
			if (!clone) {
				err = -ENOMEM;
				break;
			}
			room = min_t(unsigned int, skb_headroom(clone) - NET_TO_DATA,
				     MAX_HEADER);
			local_irq_save(flags);
			t0 = ktime_get_ns();
			switch (w) {
			case COW:
				if (skb_cow_data(clone, TRAILER, &trailer) < 0)
					err = -ENOMEM;
				break;
			case COPY_HEAD:
			case ALLOC_REPLACE:
				data = skb_head_alloc(room + NET_TO_DATA + clone->len + TRAILER,
						      GFP_ATOMIC, &bufsize);
				if (!data) {
					err = -ENOMEM;
					break;
				}
				if (w == COPY_HEAD) {
					kmemcpy(data + room, skb_network_header(clone),
						NET_TO_DATA);
					if (skb_copy_bits(clone, 0, data + room + NET_TO_DATA,
							  clone->len))
						err = -EFAULT;
				}
				skb_head_replace(clone, data, bufsize, room + NET_TO_DATA,
						 clone->len);
				break;
			case LINEARIZE:
				/* as ESP calls it (headroom capped at MAX_HEADER) */
				if (skb_linearize_private(clone, room + NET_TO_DATA,
							  TRAILER, GFP_ATOMIC))
					err = -ENOMEM;
				break;
			}
			t[i] = ktime_get_ns() - t0;
			local_irq_restore(flags);
			if (!err && (skb_cloned(clone) || skb_is_nonlinear(clone) ||
				     skb_tailroom(clone) < TRAILER)) {
				pr_err("skb %s: not private and linear with room\n",
				       way_names[w]);
				err = -EINVAL;
			}
			kfree_skb(clone);
			kfree_skb(orig);
		}
		if (err)
			break;
		sort(t, SAMPLES, sizeof(*t), cmp_u64, NULL);
		pr_info("skb %u %s min=%llu median=%llu\n", payload,
			way_names[w], t[0], t[SAMPLES / 2]);
	}
	return err;
}

static int __init aead_sg_cost_init(void)
{
	struct bufs b = {};
	u64 *t;
	int err = -ENOMEM, i;

	if (payload < 64 || payload > 1500)
		return -EINVAL;
	b.lin = kmalloc(4096, GFP_KERNEL);
	b.head = kmalloc(2048, GFP_KERNEL);
	b.hdr = kmalloc(256, GFP_KERNEL);
	b.stage = kmalloc(256, GFP_KERNEL);
	b.ref = kmalloc(2048, GFP_KERNEL);
	b.pages = alloc_pages(GFP_KERNEL, 1);
	t = kcalloc(SAMPLES, sizeof(*t), GFP_KERNEL);
	if (!b.lin || !b.head || !b.hdr || !b.stage || !b.ref || !b.pages || !t)
		goto out;

	/* The same plaintext wherever the frag sits in the two pages. */
	for (i = 0; i < HDR_LEN; i++)
		b.hdr[i] = pt_byte(i);
	for (i = 0; i < (int)payload; i++) {
		u8 v = pt_byte(HDR_LEN + i);

		((u8 *)page_address(b.pages))[200 + i] = v;
		((u8 *)page_address(b.pages))[PAGE_SIZE - payload / 2 + i] = v;
	}
	err = 0;
	for (i = 0; i < ARRAY_SIZE(algs) && !err; i++)
		err = run_alg(&algs[i], &b, t);
	if (!err)
		err = run_skb(b.pages, t);
	pr_info("%s\n", err ? "FAIL" : "done");
out:
	kfree(t);
	if (b.pages)
		__free_pages(b.pages, 1);
	kfree(b.ref);
	kfree(b.stage);
	kfree(b.hdr);
	kfree(b.head);
	kfree(b.lin);
	return err ? -EINVAL : 0;
}

static void __exit aead_sg_cost_exit(void)
{
}

module_init(aead_sg_cost_init);
module_exit(aead_sg_cost_exit);
MODULE_DESCRIPTION("Cost of ESP-shaped scatterlists to the AEAD");
MODULE_LICENSE("GPL");

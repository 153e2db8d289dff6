// SPDX-License-Identifier: GPL-2.0
/*
 * skbt-payload - send a seeded pseudo-random byte stream through a network
 * path and verify every byte on the receiver (TCP or UDP, IPv4 or IPv6).
 *
 * Payload generator (both protocols): splitmix64 used as a counter-based
 * generator, so any byte can be computed from (key, offset) alone:
 *
 *	word(key, i)   = mix64(key + (i + 1) * 0x9e3779b97f4a7c15)
 *	byte(key, off) = (word(key, off / 8) >> (8 * (off % 8))) & 0xff
 *
 * With a marker (--marker S, 1..255 bytes) the bytes [k*512, k*512+len(S))
 * of the payload (k = 0, 1, ...) are replaced by S (cut at the end of the
 * payload), so a known plaintext appears at every 512-byte boundary.
 *
 * TCP wire format (all integers big-endian), 16-byte header:
 *
 *	0  3  magic "SKT"
 *	3  1  marker length M (0 = no marker)
 *	4  8  seed; the payload key is the seed itself
 *	12 4  payload length L (bytes after header and marker)
 *	16 M  marker bytes
 *	16+M  L payload bytes: byte(seed, 0 .. L-1) with the marker overlay
 *
 * After EOF the receiver answers one byte, 'Y' (all verified) or 'N',
 * and closes; the sender waits for it.
 *
 * UDP wire format, every datagram starts with a 20-byte header:
 *
 *	0  3  magic "SKD" (data) or "SKE" (end)
 *	3  1  marker length M
 *	4  8  seed
 *	12 4  data: sequence number (0, 1, ...); end: number of data datagrams
 *	16 4  total datagram length, header included
 *	20 M  marker bytes
 *	20+M  data only: payload, byte(key, 0 ..) with the marker overlay,
 *	      key = mix64(seed ^ mix64(seq)) so loss/reordering do not matter
 *
 * The end datagram (no payload) is sent 5 times, 20 ms apart.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TCP_HDR		16
#define UDP_HDR		20
#define MARK_MAX	255
#define MARK_EVERY	512
#define UDP_MAX4	65507		/* 65535 - IPv4 header - UDP header */
#define UDP_MAX6	65527		/* 65535 - UDP header (no jumbograms) */
#define MAX_DGRAMS	(1u << 24)
#define MAX_WRITE	(4u << 20)
#define END_COPIES	5
#define END_GAP_US	20000
#define UDP_GRACE_MS	1000		/* wait for stragglers after "end" */
#define RX_BUF		(256u << 10)
#define GOLDEN		0x9e3779b97f4a7c15ULL

static const char *prog = "skbt-payload";

struct range { uint32_t lo, hi; };
struct list {
	struct range *r;
	size_t n;
	uint64_t count;		/* number of values */
	uint32_t max;
};

struct opts {
	int recv, udp, v6;
	const char *host, *bind;
	long port;
	uint64_t seed, n;
	int have_seed, have_n;
	struct list wsizes, usizes;
	uint64_t repeat, interval_us;
	int timeout_ms;
	const char *marker;
	size_t mlen;
	int64_t corrupt_at, drop_at;
	int hopopts;
};

/* ---- generator ---------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t dgram_key(uint64_t seed, uint32_t seq)
{
	return mix64(seed ^ mix64(seq));
}

/* Payload bytes [off, off + len) of the stream for key, marker overlaid. */
static void fill(uint8_t *buf, uint64_t key, uint64_t off, size_t len,
		 const char *mk, size_t mlen)
{
	size_t i = 0;
	uint64_t k;

	while (i < len) {
		uint64_t o = off + i;
		uint64_t w = mix64(key + (o / 8 + 1) * GOLDEN);
		unsigned int b;

		for (b = o % 8; b < 8 && i < len; b++, i++)
			buf[i] = (uint8_t)(w >> (8 * b));
	}
	if (!mlen)
		return;
	for (k = off / MARK_EVERY * MARK_EVERY; k < off + len; k += MARK_EVERY) {
		uint64_t s = k > off ? k : off;
		uint64_t e = k + mlen < off + len ? k + mlen : off + len;

		if (s < e)
			memcpy(buf + (s - off), mk + (s - k), e - s);
	}
}

/* ---- small helpers ------------------------------------------------------ */

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* poll one fd: 1 ready, 0 timeout, -1 error (EINTR restarts the wait) */
static int wait_fd(int fd, short events, int timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = end - now_ms();
		int r = poll(&p, 1, left > 0 ? (int)left : 0);

		if (r > 0)
			return 1;
		if (r == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* Send all of buf (handles short writes, EINTR, EAGAIN); -1 + errno. */
static int send_all(int fd, const void *buf, size_t len, int timeout_ms)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int r = wait_fd(fd, POLLOUT, timeout_ms);

			if (r == 0)
				errno = ETIMEDOUT;
			if (r <= 0)
				return -1;
			continue;
		}
		if (n == 0)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* recv() with an inactivity timeout; returns bytes, 0 on EOF, -1 + errno */
static ssize_t recv_wait(int fd, void *buf, size_t cap, int flags, int timeout_ms)
{
	for (;;) {
		ssize_t n = recv(fd, buf, cap, flags | MSG_DONTWAIT);
		int r;

		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		r = wait_fd(fd, POLLIN, timeout_ms);
		if (r == 0)
			errno = ETIMEDOUT;
		if (r <= 0)
			return -1;
	}
}

static int parse_u64(const char *s, uint64_t max, int suffix, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (suffix && *end) {
		switch (*end++) {
		case 'k': case 'K': mult = 1ULL << 10; break;
		case 'm': case 'M': mult = 1ULL << 20; break;
		case 'g': case 'G': mult = 1ULL << 30; break;
		default: return -1;
		}
	}
	if (*end || (v && mult > max / v) || v * mult > max)
		return -1;
	*out = v * mult;
	return 0;
}

/* "1,7,100-200,4096": values or inclusive ranges, each in [min, max] */
static int parse_list(const char *s, uint32_t min, uint32_t max, struct list *l)
{
	char *dup = strdup(s), *next, *tok;
	size_t cap = 1;
	const char *c;

	if (!dup)
		return -1;
	for (c = s; *c; c++)
		cap += *c == ',';
	free(l->r);
	l->r = calloc(cap, sizeof(*l->r));
	l->n = 0;
	l->count = 0;
	l->max = 0;
	if (!l->r)
		goto bad;
	for (tok = dup; tok; tok = next) {
		char *dash;
		uint64_t lo, hi;

		next = strchr(tok, ',');
		if (next)
			*next++ = '\0';
		dash = strchr(tok, '-');

		if (dash)
			*dash = '\0';
		if (parse_u64(tok, max, 0, &lo) ||
		    parse_u64(dash ? dash + 1 : tok, max, 0, &hi) ||
		    lo < min || hi < lo) {
			errmsg("bad size or range '%s%s%s' (allowed %u..%u, LO-HI with LO <= HI)",
			       tok, dash ? "-" : "", dash ? dash + 1 : "", min, max);
			goto bad;
		}
		l->r[l->n].lo = (uint32_t)lo;
		l->r[l->n++].hi = (uint32_t)hi;
		l->count += hi - lo + 1;
		if (hi > l->max)
			l->max = (uint32_t)hi;
	}
	free(dup);
	return 0;
bad:
	free(dup);
	return -1;
}

struct list_it { const struct list *l; size_t i; uint32_t v; };

static void list_start(struct list_it *it, const struct list *l)
{
	it->l = l;
	it->i = 0;
	it->v = l->r[0].lo;
}

/* next value, cycling through the list forever */
static uint32_t list_next(struct list_it *it)
{
	uint32_t v = it->v;

	if (it->v < it->l->r[it->i].hi) {
		it->v++;
	} else {
		it->i = (it->i + 1) % it->l->n;
		it->v = it->l->r[it->i].lo;
	}
	return v;
}

/*
 * Numeric address (IPv6 may carry "%ifname" or "%index") -> sockaddr.
 * want6: 1 = must be IPv6, 0 = either.
 */
static int parse_addr(const char *s, int want6, uint16_t port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2];
	char *pct;

	memset(ss, 0, sizeof(*ss));
	if (!want6 && inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	pct = strchr(buf, '%');
	if (pct)
		*pct++ = '\0';
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) != 1)
		return -1;
	if (pct) {
		uint64_t idx;

		if (parse_u64(pct, UINT32_MAX, 0, &idx))
			idx = if_nametoindex(pct);
		if (!idx)
			return -1;
		sin6->sin6_scope_id = (uint32_t)idx;
	}
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	*len = sizeof(*sin6);
	return 0;
}

static const char *family_name(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? "ipv6" : "ipv4";
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* ---- receiver ----------------------------------------------------------- */

static int make_listener(const struct opts *o, struct sockaddr_storage *ss)
{
	socklen_t len;
	int one = 1, fd;

	if (o->bind) {
		if (parse_addr(o->bind, o->v6, (uint16_t)o->port, ss, &len)) {
			errmsg("-b: '%s' is not a numeric %saddress", o->bind,
			       o->v6 ? "IPv6 " : "");
			return -2;
		}
	} else if (o->v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		memset(ss, 0, sizeof(*ss));
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_any;
		s6->sin6_port = htons((uint16_t)o->port);
		len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		memset(ss, 0, sizeof(*ss));
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_ANY);
		s4->sin_port = htons((uint16_t)o->port);
		len = sizeof(*s4);
	}
	fd = socket(ss->ss_family, (o->udp ? SOCK_DGRAM : SOCK_STREAM) |
		    SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errmsg("socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (o->udp) {
		int sz = 8 << 20;

		/* big buffer so a slow reader does not drop; FORCE needs root */
		if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
			setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
	if (bind(fd, (struct sockaddr *)ss, len) ||
	    (!o->udp && listen(fd, 1))) {
		errmsg("bind/listen port %ld: %s", o->port, strerror(errno));
		close(fd);
		return -1;
	}
	len = sizeof(*ss);
	if (getsockname(fd, (struct sockaddr *)ss, &len)) {
		errmsg("getsockname: %s", strerror(errno));
		close(fd);
		return -1;
	}
	printf("port=%u\n", ntohs(ss->ss_family == AF_INET6 ?
				  ((struct sockaddr_in6 *)ss)->sin6_port :
				  ((struct sockaddr_in *)ss)->sin_port));
	fflush(stdout);
	return fd;
}

static int recv_tcp(const struct opts *o, int lfd, const char *fam)
{
	uint8_t hdr[TCP_HDR + MARK_MAX], got = 0, exp = 0, *buf, *ref;
	size_t hlen = 0, hneed = TCP_HDR, mlen = 0;
	uint64_t seed = 0, len = 0, off = 0, raw = 0, bad = 0;
	int64_t first = -1;
	const char *reason = NULL;
	int fd = -1, r, ok, bad_magic = 0;
	char verdict;

	buf = malloc(RX_BUF);
	ref = malloc(RX_BUF);
	if (!buf || !ref) {
		errmsg("out of memory");
		reason = "nomem";
		goto out;
	}
	r = wait_fd(lfd, POLLIN, o->timeout_ms);
	if (r > 0)
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		reason = r == 0 ? "timeout" : "accept";
		errmsg("%s", r == 0 ? "timed out waiting for a connection" :
		       strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t n = recv_wait(fd, buf, RX_BUF, 0, o->timeout_ms);
		size_t i = 0, k, cnt;

		if (n < 0) {
			reason = errno == ETIMEDOUT ? "timeout" : "recv";
			errmsg("recv after %" PRIu64 " bytes: %s", raw, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		raw += (uint64_t)n;
		/* header, then the marker it announces */
		while (!bad_magic && hlen < hneed && i < (size_t)n) {
			hdr[hlen++] = buf[i++];
			if (hlen != TCP_HDR)
				continue;
			if (memcmp(hdr, "SKT", 3)) {
				bad_magic = 1;		/* drain, verify nothing */
				break;
			}
			mlen = hdr[3];
			hneed += mlen;
			seed = get_be64(hdr + 4);
			len = get_be32(hdr + 12);
		}
		if (bad_magic || hlen < hneed)
			continue;
		cnt = (size_t)n - i;
		k = off < len ? (size_t)(len - off < cnt ? len - off : cnt) : 0;
		fill(ref, seed, off, k, (char *)hdr + TCP_HDR, mlen);
		if (memcmp(ref, buf + i, k)) {
			size_t j;

			for (j = 0; j < k; j++) {
				if (ref[j] == buf[i + j])
					continue;
				if (first < 0) {
					first = (int64_t)(off + j);
					exp = ref[j];
					got = buf[i + j];
				}
				bad++;
			}
		}
		off += cnt;
	}
	if (!reason && bad_magic)
		reason = "bad_magic";
	else if (!reason && hlen < hneed)
		reason = "short_header";
	else if (!reason && bad)
		reason = "mismatch";
	else if (!reason && off != len)
		reason = "length";
	else if (!reason && o->have_n && o->n != len)
		reason = "expect";
out:
	ok = !reason;
	if (fd >= 0) {
		verdict = ok ? 'Y' : 'N';
		if (send_all(fd, &verdict, 1, 1000))
			errmsg("could not send verdict: %s", strerror(errno));
		close(fd);
	}
	if (first >= 0)
		errmsg("first mismatch at payload offset %" PRId64
		       ": expected 0x%02x got 0x%02x (%" PRIu64 " bytes differ)",
		       first, exp, got, bad);
	if (reason && !strcmp(reason, "bad_magic"))
		errmsg("stream does not start with the \"SKT\" header");
	if (reason && !strcmp(reason, "length"))
		errmsg("header announced %" PRIu64 " payload bytes, got %" PRIu64,
		       len, off);
	if (reason && !strcmp(reason, "expect"))
		errmsg("-n %" PRIu64 " but the sender announced %" PRIu64, o->n, len);
	printf("result=%s proto=tcp family=%s seed=0x%016" PRIx64 " marker=%zu"
	       " expected=%" PRIu64 " bytes=%" PRIu64 " mismatches=%" PRIu64,
	       ok ? "ok" : "fail", fam, seed, mlen, len, off, bad);
	if (first >= 0)
		printf(" first_mismatch=%" PRId64 " expected_byte=0x%02x got_byte=0x%02x",
		       first, exp, got);
	if (reason)
		printf(" reason=%s", reason);
	printf("\n");
	free(buf);
	free(ref);
	return ok ? 0 : 1;
}

struct udp_rx {
	uint8_t *seen;			/* bitmap of data sequence numbers */
	uint64_t received, bytes, corrupt, dup, distinct, ends;
	uint32_t max_seq, total;
	int have_ref, end_seen;
	uint64_t seed;
	size_t mlen;
	char marker[MARK_MAX];
	int64_t first_bad;		/* seq of the first bad payload */
	unsigned int notes;		/* stderr messages printed */
};

#define MAX_NOTES	10

/* limit per-datagram complaints on stderr */
static int rx_note(struct udp_rx *s)
{
	if (s->notes == MAX_NOTES)
		errmsg("further per-datagram messages suppressed");
	return s->notes++ < MAX_NOTES;
}

static int bit_test_set(uint8_t *bm, uint32_t i)
{
	int was = bm[i / 8] >> (i % 8) & 1;

	bm[i / 8] |= (uint8_t)(1u << (i % 8));
	return was;
}

/* data datagrams seen with seq >= from */
static uint64_t seen_from(const struct udp_rx *s, uint32_t from)
{
	uint64_t c = 0, i;

	if (!s->distinct)
		return 0;
	for (i = from; i <= s->max_seq; i++)
		c += s->seen[i / 8] >> (i % 8) & 1;
	return c;
}

/*
 * Check one datagram (n bytes in b, real = its size before truncation).
 * The first well-formed one fixes the seed and marker all others must
 * carry.  A data datagram whose magic, length and sequence number are
 * plausible counts as arrived (for lost/dup) even if it is corrupt.
 */
static void udp_datagram(struct udp_rx *s, const uint8_t *b, size_t n,
			 size_t real, uint8_t *ref)
{
	int end = n >= UDP_HDR && !memcmp(b, "SKE", 3);
	uint32_t seq, len;
	size_t mlen, j;

	if (!end) {
		s->received++;
		s->bytes += real;
	}
	if (real > n || n < UDP_HDR || (!end && memcmp(b, "SKD", 3)))
		goto malformed;
	mlen = b[3];
	seq = get_be32(b + 12);
	len = get_be32(b + 16);
	if (n < UDP_HDR + mlen || len != n || (!end && seq >= MAX_DGRAMS))
		goto malformed;
	if (!end) {
		if (bit_test_set(s->seen, seq)) {
			s->dup++;
		} else {
			s->distinct++;
			if (seq > s->max_seq)
				s->max_seq = seq;
		}
	}
	if (!s->have_ref) {
		s->have_ref = 1;
		s->seed = get_be64(b + 4);
		s->mlen = mlen;
		memcpy(s->marker, b + UDP_HDR, mlen);
	} else if (s->seed != get_be64(b + 4) || s->mlen != mlen ||
		   memcmp(s->marker, b + UDP_HDR, mlen)) {
		if (rx_note(s))
			errmsg("%s datagram %u: seed or marker differs from the first one",
			       end ? "end" : "data", seq);
		goto bad_seq;
	}
	if (end) {
		if (n != UDP_HDR + mlen || (s->end_seen && seq != s->total))
			goto malformed;
		s->end_seen = 1;
		s->total = seq;
		s->ends++;
		return;
	}
	n -= UDP_HDR + mlen;
	b += UDP_HDR + mlen;
	fill(ref, dgram_key(s->seed, seq), 0, n, s->marker, mlen);
	if (!memcmp(ref, b, n))
		return;
	for (j = 0; ref[j] == b[j]; j++)
		;
	if (rx_note(s))
		errmsg("datagram %u (%zu payload bytes): first mismatch at payload"
		       " offset %zu: expected 0x%02x got 0x%02x",
		       seq, n, j, ref[j], b[j]);
bad_seq:
	if (!end && s->first_bad < 0)
		s->first_bad = seq;
	s->corrupt++;
	return;
malformed:
	if (rx_note(s))
		errmsg("malformed datagram of %zu bytes (magic, length, sequence"
		       " number or end count)", real);
	s->corrupt++;
}

static int recv_udp(const struct opts *o, int fd, const char *fam)
{
	struct udp_rx s = { .first_bad = -1 };
	size_t cap = UDP_MAX6 + 1;
	uint8_t *buf = malloc(cap), *ref = malloc(cap);
	const char *reason = NULL;
	int64_t grace_end = 0;
	uint64_t lost = 0, extra = 0;

	s.seen = calloc(MAX_DGRAMS / 8, 1);
	if (!buf || !ref || !s.seen) {
		errmsg("out of memory");
		reason = "nomem";
		goto out;
	}
	for (;;) {
		int tmo = o->timeout_ms;
		ssize_t n;

		if (s.end_seen) {
			int64_t left = grace_end - now_ms();

			if (s.distinct - seen_from(&s, s.total) >= s.total || left <= 0)
				break;
			if (left < tmo)
				tmo = (int)left;
		}
		n = recv_wait(fd, buf, cap, MSG_TRUNC, tmo);
		if (n < 0 && errno == ETIMEDOUT && s.end_seen)
			break;
		if (n < 0) {
			reason = errno != ETIMEDOUT ? "recv" :
				 s.received ? "no_end" : "timeout";
			errmsg("%s", errno != ETIMEDOUT ? strerror(errno) :
			       s.received ? "timed out waiting for the end datagram" :
			       "timed out, nothing received");
			break;
		}
		udp_datagram(&s, buf, (size_t)n < cap ? (size_t)n : cap,
			     (size_t)n, ref);
		if (s.end_seen && !grace_end)
			grace_end = now_ms() + UDP_GRACE_MS;
	}
	if (s.end_seen) {
		extra = seen_from(&s, s.total);
		lost = s.total - (s.distinct - extra);
		s.corrupt += extra;
		if (extra)
			errmsg("%" PRIu64 " datagrams with seq >= %u (end count)",
			       extra, s.total);
	}
	if (reason)
		;
	else if (s.corrupt)
		reason = "corrupt";
	else if (lost)
		reason = "lost";
	else if (o->have_n && o->n != s.total)
		reason = "expect";
	if (reason && !strcmp(reason, "expect"))
		errmsg("-n %" PRIu64 " but the sender sent %u datagrams", o->n, s.total);
out:
	printf("result=%s proto=udp family=%s seed=0x%016" PRIx64 " marker=%zu"
	       " datagrams=%u received=%" PRIu64 " lost=%" PRIu64 " corrupt=%" PRIu64
	       " dup=%" PRIu64 " bytes=%" PRIu64 " ends=%" PRIu64,
	       reason ? "fail" : "ok", fam, s.seed, s.mlen, s.total, s.received,
	       lost, s.corrupt, s.dup, s.bytes, s.ends);
	if (s.first_bad >= 0)
		printf(" first_corrupt_seq=%" PRId64, s.first_bad);
	if (reason)
		printf(" reason=%s", reason);
	printf("\n");
	free(buf);
	free(ref);
	free(s.seen);
	return reason ? 1 : 0;
}

static int do_recv(const struct opts *o)
{
	struct sockaddr_storage ss;
	int fd = make_listener(o, &ss), rc;

	if (fd == -2)
		return 2;
	if (fd < 0) {
		printf("result=fail proto=%s reason=listen\n", o->udp ? "udp" : "tcp");
		return 1;
	}
	rc = o->udp ? recv_udp(o, fd, family_name(&ss)) :
		      recv_tcp(o, fd, family_name(&ss));
	close(fd);
	return rc;
}

/* ---- sender ------------------------------------------------------------- */

/* --hopopts: an IPv6 hop-by-hop options header (one PadN option) on every
 * packet of the socket, so the packets carry an extension header in front
 * of what follows the IPv6 header (ESP, in transport mode).
 */
static int set_hopopts(int fd)
{
	static const uint8_t hbh[8] = { 0, 0, 1, 4, 0, 0, 0, 0 };

	return setsockopt(fd, IPPROTO_IPV6, IPV6_HOPOPTS, hbh, sizeof(hbh));
}

/* connect, retrying ECONNREFUSED (receiver not up yet) until the timeout */
static int connect_to(const struct opts *o, const struct sockaddr_storage *ss,
		      socklen_t len)
{
	int64_t end = now_ms() + o->timeout_ms;

	for (;;) {
		int fd = socket(ss->ss_family, (o->udp ? SOCK_DGRAM : SOCK_STREAM) |
				SOCK_CLOEXEC, 0);
		int err = 0, r;
		socklen_t el = sizeof(err);

		if (fd < 0) {
			errmsg("socket: %s", strerror(errno));
			return -1;
		}
		if (set_nonblock(fd) || (o->hopopts && set_hopopts(fd))) {
			err = errno;
		} else if (connect(fd, (const struct sockaddr *)ss, len) == 0) {
			return fd;
		} else if (errno != EINPROGRESS && errno != EINTR) {
			err = errno;
		} else {
			r = wait_fd(fd, POLLOUT, o->timeout_ms);
			if (r == 0)
				err = ETIMEDOUT;
			else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
				err = errno;
			if (!err)
				return fd;
		}
		close(fd);
		if (err != ECONNREFUSED || now_ms() + 100 > end) {
			errmsg("connect to %s port %ld: %s", o->host, o->port, strerror(err));
			return -1;
		}
		sleep_us(100000);
	}
}

static int send_tcp(const struct opts *o, int fd, const char *fam)
{
	uint8_t *buf = malloc(o->wsizes.max > TCP_HDR + MARK_MAX ?
			      o->wsizes.max : TCP_HDR + MARK_MAX);
	uint64_t off = 0, writes = 0;
	const char *reason = NULL, *peer = "none";
	struct list_it it;
	int one = 1;
	char v;

	if (!buf) {
		errmsg("out of memory");
		reason = "nomem";
		goto out;
	}
	/* small writes should become small segments on the wire */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memcpy(buf, "SKT", 3);
	buf[3] = (uint8_t)o->mlen;
	put_be64(buf + 4, o->seed);
	put_be32(buf + 12, (uint32_t)o->n);
	memcpy(buf + TCP_HDR, o->marker, o->mlen);
	if (send_all(fd, buf, TCP_HDR + o->mlen, o->timeout_ms)) {
		reason = "send";
		goto err;
	}
	list_start(&it, &o->wsizes);
	while (off < o->n) {
		size_t w = list_next(&it);

		if (w > o->n - off)
			w = (size_t)(o->n - off);
		fill(buf, o->seed, off, w, o->marker, o->mlen);
		if (o->corrupt_at >= 0 && (uint64_t)o->corrupt_at >= off &&
		    (uint64_t)o->corrupt_at < off + w)
			buf[o->corrupt_at - (int64_t)off] ^= 0xff;
		if (send_all(fd, buf, w, o->timeout_ms)) {
			reason = errno == ETIMEDOUT ? "timeout" : "send";
			goto err;
		}
		off += w;
		writes++;
	}
	if (shutdown(fd, SHUT_WR)) {
		reason = "shutdown";
		goto err;
	}
	/* the receiver answers 'Y'/'N' after our EOF, then closes */
	for (;;) {
		ssize_t n = recv_wait(fd, &v, 1, 0, o->timeout_ms);

		if (n < 0) {
			reason = errno == ETIMEDOUT ? "timeout" : "recv";
			goto err;
		}
		if (n == 0)
			break;
		peer = v == 'Y' ? "ok" : "fail";
	}
	if (strcmp(peer, "ok"))
		reason = "peer";
	goto out;
err:
	errmsg("%s after %" PRIu64 " payload bytes: %s", reason, off, strerror(errno));
out:
	printf("result=%s proto=tcp family=%s seed=0x%016" PRIx64 " marker=%zu"
	       " bytes=%" PRIu64 " writes=%" PRIu64 " peer=%s",
	       reason ? "fail" : "ok", fam, o->seed, o->mlen, off, writes, peer);
	if (reason)
		printf(" reason=%s", reason);
	printf("\n");
	free(buf);
	return reason ? 1 : 0;
}

/* one datagram; ECONNREFUSED (an earlier one hit a closed port) is retried */
static int send_dgram(const struct opts *o, int fd, const uint8_t *b, size_t len,
		      int end, uint64_t *refused)
{
	int64_t deadline = now_ms() + o->timeout_ms;

	for (;;) {
		int err;

		if (!send_all(fd, b, len, o->timeout_ms))
			return 0;
		err = errno;
		if (err == EMSGSIZE) {
			errmsg("datagram of %zu bytes rejected with EMSGSIZE: larger than"
			       " the UDP maximum (65507 IPv4, 65527 IPv6) or than the"
			       " path/interface MTU with DF (IP_PMTUDISC_DO)", len);
			return -2;
		}
		if (err == ECONNREFUSED && end)
			return 0;	/* receiver is done and gone */
		if ((err != ECONNREFUSED && err != ENOBUFS) || now_ms() > deadline) {
			errmsg("send (%zu bytes): %s", len, strerror(err));
			return -1;
		}
		if (err == ECONNREFUSED && !(*refused)++)
			errmsg("receiver port closed (ECONNREFUSED), retrying");
		sleep_us(err == ENOBUFS ? 1000 : 10000);
	}
}

static int send_udp(const struct opts *o, int fd, const char *fam)
{
	size_t hl = UDP_HDR + o->mlen;
	uint8_t *buf = malloc(o->usizes.max > hl ? o->usizes.max : hl);
	uint64_t i = 0, total = o->usizes.count * o->repeat, bytes = 0, clamped = 0;
	uint64_t refused = 0, ends = 0;
	const char *reason = NULL;
	struct list_it it;

	if (!buf) {
		errmsg("out of memory");
		reason = "nomem";
		goto out;
	}
	memcpy(buf, "SKD", 3);
	buf[3] = (uint8_t)o->mlen;
	put_be64(buf + 4, o->seed);
	memcpy(buf + UDP_HDR, o->marker, o->mlen);
	list_start(&it, &o->usizes);
	for (i = 0; i < total; i++) {
		size_t sz = list_next(&it);

		int r, flip;

		if (sz < hl) {
			sz = hl;
			clamped++;
		}
		put_be32(buf + 12, (uint32_t)i);
		put_be32(buf + 16, (uint32_t)sz);
		fill(buf + hl, dgram_key(o->seed, (uint32_t)i), 0, sz - hl,
		     o->marker, o->mlen);
		if (o->drop_at >= 0 && (uint64_t)o->drop_at == i)
			continue;
		flip = o->corrupt_at >= 0 && (uint64_t)o->corrupt_at == i;
		if (flip)
			buf[sz - 1] ^= 0xff;
		r = send_dgram(o, fd, buf, sz, 0, &refused);
		if (flip)
			buf[sz - 1] ^= 0xff;	/* may be in the reused header */
		if (r) {
			reason = r == -2 ? "emsgsize" : "send";
			goto out;
		}
		bytes += sz;
		if (o->interval_us)
			sleep_us(o->interval_us);
	}
	memcpy(buf, "SKE", 3);
	put_be32(buf + 12, (uint32_t)total);
	put_be32(buf + 16, (uint32_t)hl);
	for (; ends < END_COPIES; ends++) {
		if (ends)
			sleep_us(END_GAP_US);
		if (send_dgram(o, fd, buf, hl, 1, &refused)) {
			reason = "send";
			goto out;
		}
	}
out:
	printf("result=%s proto=udp family=%s seed=0x%016" PRIx64 " marker=%zu"
	       " datagrams=%" PRIu64 " bytes=%" PRIu64 " clamped=%" PRIu64
	       " ends=%" PRIu64 " refused=%" PRIu64,
	       reason ? "fail" : "ok", fam, o->seed, o->mlen, i, bytes, clamped,
	       ends, refused);
	if (reason)
		printf(" reason=%s", reason);
	printf("\n");
	free(buf);
	return reason ? 1 : 0;
}

static int do_send(const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc;

	if (parse_addr(o->host, o->v6, (uint16_t)o->port, &ss, &len)) {
		errmsg("-c: '%s' is not a numeric %saddress", o->host,
		       o->v6 ? "IPv6 " : "");
		return 2;
	}
	if (o->udp) {
		uint32_t max = ss.ss_family == AF_INET6 ? UDP_MAX6 : UDP_MAX4;

		if (o->usizes.max > max) {
			errmsg("-l: datagram size %u exceeds the %s UDP maximum %u",
			       o->usizes.max, family_name(&ss), max);
			return 2;
		}
	}
	fd = connect_to(o, &ss, len);
	if (fd < 0) {
		printf("result=fail proto=%s family=%s reason=connect\n",
		       o->udp ? "udp" : "tcp", family_name(&ss));
		return 1;
	}
	rc = o->udp ? send_udp(o, fd, family_name(&ss)) :
		      send_tcp(o, fd, family_name(&ss));
	close(fd);
	return rc;
}

/* ---- command line ------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s recv -p PORT [-6] [-u] [-b ADDR] [-t TIMEOUT_S] [-n EXPECT]\n"
"       %s send -c HOST -p PORT [-6] [-u] [-s SEED] [-n BYTES]\n"
"                    [-w WRITESIZES] [-l UDPSIZES] [-r N] [-i USEC]\n"
"                    [-t TIMEOUT_S] [--marker STRING] [--hopopts]\n"
"                    [--corrupt-at N] [--drop-at N]\n"
"\n"
"Send a seeded pseudo-random byte stream, verify every byte on the receiver.\n"
"\n"
"recv: prints \"port=N\" (flushed) as soon as it listens, then one summary.\n"
"  -p PORT     port to listen on; 0 = any free port (read it from port=N)\n"
"  -6          IPv6: bind [::] (IPV6_V6ONLY) instead of 0.0.0.0\n"
"  -b ADDR     bind this numeric local address instead of the wildcard\n"
"  -u          UDP instead of TCP\n"
"  -t SEC      give up after SEC seconds without progress (default 30)\n"
"  -n EXPECT   also require TCP payload bytes / UDP datagrams == EXPECT\n"
"  TCP: accepts one connection, verifies until EOF, answers Y/N to the sender.\n"
"  UDP: verifies each datagram; after the first end datagram waits up to 1 s\n"
"       for stragglers. Fails on any lost or corrupt datagram (dups allowed).\n"
"\n"
"send:\n"
"  -c HOST     numeric IPv4/IPv6 address of the receiver (fe80::1%%eth0 ok)\n"
"  -p PORT     receiver port\n"
"  -6          require IPv6 (an IPv6 HOST implies it)\n"
"  -u          UDP instead of TCP\n"
"  -s SEED     PRNG seed, decimal or 0x hex (default: from clock and pid)\n"
"  -n BYTES    TCP payload bytes, suffix K/M/G ok (default 1M, max 4G-1)\n"
"  -w LIST     TCP write() sizes, cycled (default 1,7,100,1000,1448,4096,65536;\n"
"              max 4M); TCP_NODELAY is set so small writes stay small\n"
"  -l LIST     UDP datagram sizes including the %d-byte header plus the marker\n"
"              length; smaller sizes are raised to that minimum (counted as\n"
"              clamped=); max 65507 (IPv4) / 65527 (IPv6); default 1-1472\n"
"  -r N        UDP: send the whole size list N times (default 1)\n"
"  -i USEC     UDP: sleep USEC microseconds after each datagram (default 200)\n"
"  -t SEC      connect/progress timeout; refused connects are retried (30)\n"
"  --marker S  put ASCII string S (1-%d bytes) at every %d-byte boundary of\n"
"              the payload; carried in the header, verified by the receiver\n"
"  --hopopts   IPv6: a hop-by-hop options header (PadN) on every packet\n"
"              (IPV6_HOPOPTS; needs CAP_NET_RAW)\n"
"  --corrupt-at N  self-test: TCP flips payload byte N, UDP flips the last\n"
"              byte of datagram N; the receiver must report result=fail\n"
"  --drop-at N self-test: UDP does not send datagram N (receiver: lost=1)\n"
"  TCP exits 0 only if the receiver answered Y; UDP exits 0 once all\n"
"  datagrams and the 5 end datagrams (20 ms apart) were sent.\n"
"\n"
"LIST: comma-separated sizes and LO-HI ranges, e.g. 1-64,1380-1450,2000\n"
"Output: one line \"result=ok|fail KEY=VALUE...\" on stdout; errors on stderr.\n"
"Exit: 0 success, 1 verification or network failure, 2 usage error.\n",
		prog, prog, UDP_HDR, MARK_MAX, MARK_EVERY);
}

static int bad_arg(int opt, const char *arg)
{
	if (opt == 'C' || opt == 'D')
		errmsg("invalid argument for --%s: '%s'",
		       opt == 'C' ? "corrupt-at" : "drop-at", arg);
	else
		errmsg("invalid argument for -%c: '%s' (try --help)", opt, arg);
	return 2;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option recv_long[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option send_long[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "marker", required_argument, NULL, 'M' },
		{ "corrupt-at", required_argument, NULL, 'C' },
		{ "drop-at", required_argument, NULL, 'D' },
		{ "hopopts", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ws = "1,7,100,1000,1448,4096,65536", *us = "1-1472";
	uint64_t v;
	int c;

	o->port = -1;
	o->timeout_ms = 30000;
	o->n = 1 << 20;
	o->repeat = 1;
	o->interval_us = 200;
	o->corrupt_at = -1;
	o->drop_at = -1;
	o->marker = "";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, o->recv ? "p:6ub:t:n:h" :
				"c:p:6us:n:w:l:r:i:t:h",
				o->recv ? recv_long : send_long, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_u64(optarg, 65535, 0, &v) || (!o->recv && !v))
				return bad_arg(c, optarg);
			o->port = (long)v;
			break;
		case '6': o->v6 = 1; break;
		case 'u': o->udp = 1; break;
		case 'b': o->bind = optarg; break;
		case 'c': o->host = optarg; break;
		case 't':
			if (parse_u64(optarg, 86400, 0, &v) || !v)
				return bad_arg(c, optarg);
			o->timeout_ms = (int)v * 1000;
			break;
		case 'n':
			if (parse_u64(optarg, UINT32_MAX, 1, &v))
				return bad_arg(c, optarg);
			o->n = v;
			o->have_n = 1;
			break;
		case 's':
			if (parse_u64(optarg, UINT64_MAX, 0, &o->seed))
				return bad_arg(c, optarg);
			o->have_seed = 1;
			break;
		case 'w': ws = optarg; break;
		case 'l': us = optarg; break;
		case 'r':
			if (parse_u64(optarg, MAX_DGRAMS, 0, &o->repeat) || !o->repeat)
				return bad_arg(c, optarg);
			break;
		case 'i':
			if (parse_u64(optarg, 10000000, 0, &o->interval_us))
				return bad_arg(c, optarg);
			break;
		case 'M':
			o->marker = optarg;
			o->mlen = strlen(optarg);
			if (!o->mlen || o->mlen > MARK_MAX) {
				errmsg("--marker: length must be 1..%d", MARK_MAX);
				return 2;
			}
			break;
		case 'C':
		case 'D':
			if (parse_u64(optarg, INT64_MAX, 0, &v))
				return bad_arg(c, optarg);
			*(c == 'C' ? &o->corrupt_at : &o->drop_at) = (int64_t)v;
			break;
		case 'H': o->hopopts = 1; break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			if (optopt > ' ' && !strchr("MCD", optopt))
				errmsg("%s: invalid option or missing argument: -%c"
				       " (try --help)", argv[0], optopt);
			else
				errmsg("%s: invalid option or missing argument: %s"
				       " (try --help)", argv[0], argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		errmsg("unexpected argument '%s' (try --help)", argv[optind]);
		return 2;
	}
	if (o->port < 0 || (!o->recv && !o->host)) {
		errmsg("%s is required (try --help)", o->port < 0 ? "-p PORT" : "-c HOST");
		return 2;
	}
	if (o->recv)
		return 0;
	if (o->hopopts && !o->v6 && !strchr(o->host, ':')) {
		errmsg("--hopopts is for IPv6 only");
		return 2;
	}
	if (o->drop_at >= 0 && !o->udp) {
		errmsg("--drop-at is for UDP (-u) only");
		return 2;
	}
	if (parse_list(ws, 1, MAX_WRITE, &o->wsizes) ||
	    parse_list(us, 0, UDP_MAX6, &o->usizes))
		return 2;
	if (o->udp && o->usizes.count * o->repeat > MAX_DGRAMS) {
		errmsg("too many datagrams (%" PRIu64 " x %" PRIu64 ", max %u)",
		       o->usizes.count, o->repeat, MAX_DGRAMS);
		return 2;
	}
	if (!o->have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		o->seed = mix64((uint64_t)ts.tv_sec << 32 ^ (uint64_t)ts.tv_nsec ^
				(uint64_t)getpid() << 48);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int rc;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "recv") && strcmp(argv[1], "send")) {
		errmsg("unknown command '%s' (recv or send; try --help)", argv[1]);
		return 2;
	}
	o.recv = !strcmp(argv[1], "recv");
	signal(SIGPIPE, SIG_IGN);
	rc = parse_opts(argc - 1, argv + 1, &o);
	if (!rc)
		rc = o.recv ? do_recv(&o) : do_send(&o);
	free(o.wsizes.r);
	free(o.usizes.r);
	return rc;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * The guest end of the COM2 channel check (tests/bochs/host/com2-check.py is
 * the host end and the judge). The guest sends a known greeting, then serves
 * the host's commands, one line each:
 *   echo TEXT   reply TEXT
 *   ping N      N times: read one byte, write it back; then "pinged N NS"
 *   send N      write N pattern bytes, wait until sent; then "sent N NS"
 *   recv N      read N pattern bytes, count mismatches; "recvd N BAD NS"
 *   bye         end
 * NS is guest time (CLOCK_MONOTONIC), so the host gets both clocks. The
 * pattern is the same formula on both ends, so each checks the other.
 *
 * "gdbwire" checks the line with real gdb on the host (host/gdb-wire.py):
 * the guest plays the first steps of a remote stub (gdb's "Remote Serial
 * Protocol" docs): it NAKs gdb's first packet, which gdb must resend
 * unchanged, then answers it and vMustReplyEmpty with empty replies, which
 * gdb must acknowledge with '+'. Checksums are verified on both sides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "report.h"

#define COM2_GREETING "vtice-com2 hello"
/* Guest time. The host driver starts 1-3 s (wall) after the marker, and an
 * idle guest's clock runs 1-2x faster than the wall clock here. A dead host
 * must cost less than run.sh's 240 s stall limit, so the scenarios after
 * this one still run. */
#define FIRST_WAIT_MS 120000
#define WAIT_MS 30000
#define MAX_TRANSFER (1 << 20)

struct line_reader {
	int fd;
	char buf[4096];
	size_t len;
};

static unsigned char pattern_byte(unsigned long i)
{
	return (unsigned char)((i * 131 + 7) ^ (i >> 8));
}

/* 115200 8N1, raw, no flow control: the stub will own a bare 16550. */
static int open_line(const char *dev)
{
	struct termios tio;
	int fd = open(dev, O_RDWR | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (tcgetattr(fd, &tio) < 0)
		goto err;
	cfmakeraw(&tio);
	cfsetispeed(&tio, B115200);
	cfsetospeed(&tio, B115200);
	tio.c_cflag |= CLOCAL | CREAD;
	tio.c_cflag &= ~CRTSCTS;
	tio.c_cc[VMIN] = 1;
	tio.c_cc[VTIME] = 0;
	if (tcsetattr(fd, TCSANOW, &tio) < 0)
		goto err;
	tcflush(fd, TCIOFLUSH);
	return fd;
err:
	close(fd);
	return -1;
}

/* Reads up to len bytes, waiting at most ms for the first; 0 on timeout. */
static ssize_t read_some(int fd, void *buf, size_t len, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&p, 1, ms);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n;
	return read(fd, buf, len);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One line without its newline into out; -1 on timeout, error or overlong. */
static int read_line(struct line_reader *r, char *out, size_t size, int ms)
{
	for (;;) {
		char *nl = memchr(r->buf, '\n', r->len);
		ssize_t n;

		if (nl) {
			size_t n_line = (size_t)(nl - r->buf);

			if (n_line >= size)
				return -1;
			memcpy(out, r->buf, n_line);
			out[n_line] = '\0';
			r->len -= n_line + 1;
			memmove(r->buf, nl + 1, r->len);
			return 0;
		}
		if (r->len == sizeof(r->buf))
			return -1;
		n = read_some(r->fd, r->buf + r->len, sizeof(r->buf) - r->len, ms);
		if (n <= 0)
			return -1;
		r->len += (size_t)n;
	}
}

/* Exactly len raw bytes: first those already buffered, then the line. */
static int read_exact(struct line_reader *r, unsigned char *out, size_t len, int ms)
{
	size_t got = len < r->len ? len : r->len;

	memcpy(out, r->buf, got);
	r->len -= got;
	memmove(r->buf, r->buf + got, r->len);
	while (got < len) {
		ssize_t n = read_some(r->fd, out + got, len - got, ms);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int reply(int fd, const char *fmt, ...)
{
	char text[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return write_all(fd, text, (size_t)n);
}

static int serve_ping(struct line_reader *r, unsigned long count)
{
	uint64_t t0 = now_ns();
	unsigned char byte;

	for (unsigned long i = 0; i < count; i++)
		if (read_exact(r, &byte, 1, WAIT_MS) < 0 || write_all(r->fd, &byte, 1) < 0)
			return -1;
	return reply(r->fd, "pinged %lu %llu\n", count, (unsigned long long)(now_ns() - t0));
}

static int serve_send(struct line_reader *r, unsigned long count)
{
	unsigned char *data = malloc(count);
	uint64_t t0;
	int rc = -1;

	if (!data)
		return -1;
	for (unsigned long i = 0; i < count; i++)
		data[i] = pattern_byte(i);
	t0 = now_ns();
	if (write_all(r->fd, data, count) == 0 && tcdrain(r->fd) == 0)
		rc = reply(r->fd, "sent %lu %llu\n", count, (unsigned long long)(now_ns() - t0));
	free(data);
	return rc;
}

/* Times from the first byte's arrival, so the host's reaction does not count. */
static int serve_recv(struct line_reader *r, unsigned long count, unsigned long *bad)
{
	unsigned char *data = malloc(count);
	uint64_t t0;
	int rc = -1;

	if (!data)
		return -1;
	if (read_exact(r, data, 1, WAIT_MS) < 0)
		goto out;
	t0 = now_ns();
	if (read_exact(r, data + 1, count - 1, WAIT_MS) < 0)
		goto out;
	*bad = 0;
	for (unsigned long i = 0; i < count; i++)
		*bad += data[i] != pattern_byte(i);
	rc = reply(r->fd, "recvd %lu %lu %llu\n", count, *bad, (unsigned long long)(now_ns() - t0));
out:
	free(data);
	return rc;
}

struct com2_names {
	char echo[96], recv[96], session[96];
};

/* Serves commands until "bye"; returns 0, or -1 with *why set. */
static int serve(const struct com2_names *names, struct line_reader *r, const char **why)
{
	char line[1024];
	int first = 1;

	for (;;) {
		unsigned long n = 0, bad = 0;

		if (read_line(r, line, sizeof(line), first ? FIRST_WAIT_MS : WAIT_MS) < 0) {
			*why = first ? "no command from the host" : "the host went quiet";
			return -1;
		}
		first = 0;
		if (!strcmp(line, "bye"))
			return 0;
		if (!strncmp(line, "echo ", 5)) {
			size_t len = strlen(line);

			line[len] = '\n';
			if (write_all(r->fd, line + 5, len - 4) < 0)
				return *why = "echo write failed", -1;
			report(names->echo, PASS, "echoed %zu bytes", len - 5);
			continue;
		}
		if (sscanf(line, "%*s %lu", &n) != 1 || n == 0 || n > MAX_TRANSFER) {
			*why = "malformed command";
			fprintf(stderr, "com2: bad command '%s'\n", line);
			return -1;
		}
		if (!strncmp(line, "ping ", 5) && serve_ping(r, n) == 0)
			continue;
		if (!strncmp(line, "send ", 5) && serve_send(r, n) == 0)
			continue;
		if (!strncmp(line, "recv ", 5) && serve_recv(r, n, &bad) == 0) {
			report(names->recv, bad ? FAIL : PASS, "%lu bytes from the host, %lu wrong", n, bad);
			continue;
		}
		fprintf(stderr, "com2: command '%s' failed\n", line);
		return *why = "a command failed", -1;
	}
}

/* com2 NAME DEVICE: NAME.echo per echo, NAME.recv per recv, NAME.session. */
int cmd_com2(int argc, char **argv)
{
	struct line_reader r = { 0 };
	struct com2_names names;
	const char *why = NULL;

	if (argc < 2) {
		fprintf(stderr, "usage: com2 NAME DEVICE\n");
		return 2;
	}
	snprintf(names.echo, sizeof(names.echo), "%s.echo", argv[0]);
	snprintf(names.recv, sizeof(names.recv), "%s.recv", argv[0]);
	snprintf(names.session, sizeof(names.session), "%s.session", argv[0]);
	r.fd = open_line(argv[1]);
	if (r.fd < 0)
		return report(names.session, FAIL, "cannot open %s as a 115200 raw line: %s",
			      argv[1], strerror(errno));
	if (write_all(r.fd, COM2_GREETING "\n", sizeof(COM2_GREETING)) < 0)
		return report(names.session, FAIL, "greeting write failed: %s", strerror(errno));
	if (serve(&names, &r, &why) < 0)
		return report(names.session, FAIL, "%s", why);
	tcdrain(r.fd);
	close(r.fd);
	return report(names.session, PASS, "greeting sent, commands served until bye");
}

/* One RSP packet's payload (between '$' and '#'), checksum verified; the
 * '+' bytes seen before it are counted in *acks. -1 on timeout or a bad
 * checksum. gdb sends '+' first and after every reply it accepts. */
static int read_packet(struct line_reader *r, char *payload, size_t size, int *acks)
{
	unsigned char c, sum = 0;
	char hex[3] = { 0 };
	size_t n = 0;

	do {
		if (read_exact(r, &c, 1, WAIT_MS) < 0)
			return -1;
		*acks += c == '+';
	} while (c != '$');
	for (;;) {
		if (read_exact(r, &c, 1, WAIT_MS) < 0 || n + 1 >= size)
			return -1;
		if (c == '#')
			break;
		payload[n++] = (char)c;
		sum += c;
	}
	payload[n] = '\0';
	if (read_exact(r, (unsigned char *)hex, 2, WAIT_MS) < 0)
		return -1;
	return strtoul(hex, NULL, 16) == sum ? 0 : -1;
}

/* Reads one '+' (gdb accepting our last reply); -1 on anything else. */
static int expect_ack(struct line_reader *r)
{
	unsigned char c;

	return read_exact(r, &c, 1, WAIT_MS) == 0 && c == '+' ? 0 : -1;
}

static const char *gdb_wire_steps(struct line_reader *r)
{
	char first[1024], again[1024], next[1024];
	int acks = 0;

	if (read_packet(r, first, sizeof(first), &acks) < 0)
		return "no first packet with a valid checksum from gdb";
	if (strncmp(first, "qSupported", 10))
		return "gdb's first packet is not qSupported";
	if (write_all(r->fd, "-", 1) < 0 || read_packet(r, again, sizeof(again), &acks) < 0)
		return "gdb did not resend after a NAK";
	if (strcmp(first, again))
		return "gdb resent a different packet after the NAK";
	if (write_all(r->fd, "+$#00", 5) < 0 || expect_ack(r) < 0)
		return "gdb did not acknowledge the empty qSupported reply";
	if (read_packet(r, next, sizeof(next), &acks) < 0 || strcmp(next, "vMustReplyEmpty"))
		return "gdb's second packet is not vMustReplyEmpty";
	if (write_all(r->fd, "+$#00", 5) < 0 || expect_ack(r) < 0)
		return "gdb did not acknowledge the empty vMustReplyEmpty reply";
	return NULL;
}

/* gdbwire NAME DEVICE: NAME.wire; gdb is left waiting for its next reply. */
int cmd_gdbwire(int argc, char **argv)
{
	struct line_reader r = { 0 };
	const char *why = "gdb sent nothing";
	char name[96];
	ssize_t n;

	if (argc < 2) {
		fprintf(stderr, "usage: gdbwire NAME DEVICE\n");
		return 2;
	}
	snprintf(name, sizeof(name), "%s.wire", argv[0]);
	r.fd = open_line(argv[1]);
	if (r.fd < 0)
		return report(name, FAIL, "cannot open %s as a 115200 raw line: %s", argv[1],
			      strerror(errno));
	/* gdb speaks first, so the line must be open and raw before the host
	 * driver starts: this is init.sh's start_host_driver, printed here. */
	printf("VTICE-HOST %s START\n", argv[0]);
	fflush(stdout);
	/* gdb takes a while to start: only its first byte gets the long wait. */
	n = read_some(r.fd, r.buf, sizeof(r.buf), FIRST_WAIT_MS);
	if (n > 0) {
		r.len = (size_t)n;
		why = gdb_wire_steps(&r);
	}
	close(r.fd);
	if (why)
		return report(name, FAIL, "%s", why);
	return report(name, PASS, "qSupported NAKed and resent unchanged; empty replies to it "
		      "and vMustReplyEmpty acknowledged by gdb");
}

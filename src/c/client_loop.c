/* One load-generator worker: its own epoll set (edge-triggered), read buffer and first
 * failure. Every connection belongs to exactly one worker, so a cconn is never shared;
 * the pattern is written before the workers start and only read after. */
#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define MAX_EVENTS 512

unsigned char sb_pattern[2 * PAT_PERIOD];

void sb_make_pattern(void) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < PAT_PERIOD; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sb_pattern[i] = sb_pattern[i + PAT_PERIOD] = (unsigned char)(x >> 32);
    }
}

static size_t pat_off(long c, uint64_t pos) { return (size_t)((pos + (uint64_t)c * 7919u) % PAT_PERIOD); }

/* Marks c failed; keeps the worker's first reason and claims "first failure" for the worker
 * if no other worker has (the record names the run's first failure). The probe's failure
 * is reported as client_delay_s null with its own reason (client.c), so it claims nothing.
 * Returns 1 (the connection is done). */
__attribute__((format(printf, 3, 4))) static int fail(cworker *w, cconn *c, const char *fmt, ...) {
    c->failed = 1;
    if (w->reason[0] || c == &w->probe) return 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->reason, sizeof w->reason, fmt, ap);
    va_end(ap);
    int none = -1;
    atomic_compare_exchange_strong(&w->sh->first_fail, &none, w->id);
    return 1;
}

/* Writes and verifies as far as the socket allows; returns 1 when the connection is done. */
static int pump(cworker *w, cconn *c, long idx, uint64_t target, int endless, double t0) {
    for (int rounds = 0; rounds < 1 << 16; rounds++) {
        int progress = 0;
        if (endless || c->sent < target) {
            uint64_t room = SB_CHUNK_BYTES - c->sent % SB_CHUNK_BYTES; /* never cross a chunk boundary */
            uint64_t left = endless ? room : target - c->sent;
            size_t n = (size_t)(left < room ? left : room);
            if (endless && c->sent - c->verified > 4 * SB_CHUNK_BYTES) n = 0; /* keep the echo flowing */
            if (n > 0) {
                ssize_t wr = write(c->fd, sb_pattern + pat_off(idx, c->sent), n);
                if (wr > 0) c->sent += (uint64_t)wr, progress = 1, w->any_connected = 1;
                else if (wr < 0 && errno != EAGAIN && errno != EINTR)
                    return fail(w, c, "connection %ld: write failed after %llu bytes: %s", idx,
                                (unsigned long long)c->sent, strerror(errno));
            }
        }
        ssize_t r = read(c->fd, w->rbuf, sizeof w->rbuf);
        if (r > 0) {
            if (c->verified + (uint64_t)r > c->sent)
                return fail(w, c, "connection %ld: %llu bytes echoed but only %llu sent (duplication)", idx,
                            (unsigned long long)(c->verified + (uint64_t)r), (unsigned long long)c->sent);
            if (memcmp(w->rbuf, sb_pattern + pat_off(idx, c->verified), (size_t)r) != 0) {
                size_t k = 0;
                while (k < (size_t)r && w->rbuf[k] == sb_pattern[pat_off(idx, c->verified + k)]) k++;
                return fail(w, c,
                            "connection %ld: echoed byte at offset %llu is %u, expected %u (loss, reordering or corruption)",
                            idx, (unsigned long long)(c->verified + k), w->rbuf[k],
                            sb_pattern[pat_off(idx, c->verified + k)]);
            }
            c->verified += (uint64_t)r;
            progress = 1;
            if (!endless && c->verified == target) {
                c->done_s = sb_now() - t0;
                return 1;
            }
        } else if (r == 0) {
            return fail(w, c, "connection %ld: closed by the server after %llu of %llu bytes echoed", idx,
                        (unsigned long long)c->verified, (unsigned long long)target);
        } else if (errno != EAGAIN && errno != EINTR) {
            return fail(w, c, "connection %ld: read failed after %llu bytes: %s", idx, (unsigned long long)c->verified,
                        strerror(errno));
        }
        if (!progress) return 0;
    }
    return 0;
}

static void start_probe(cworker *w, double now) {
    w->probe.fd = sb_open_conn(&w->sh->dst, 0);
    w->probe_start = now;
    w->probe_state = 1;
    if (w->probe.fd < 0) {
        w->probe_state = 2;
        return;
    }
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = PROBE_TAG};
    epoll_ctl(w->ep, EPOLL_CTL_ADD, w->probe.fd, &ev);
}

void *sb_client_worker(void *arg) {
    cworker *w = arg;
    cshared *sh = w->sh;
    struct epoll_event evs[MAX_EVENTS];
    while (sh->saturate ? (sb_now() < sh->t_end_sat || w->probe_state == 1) : w->done < w->assigned) {
        double now = sb_now();
        if (now > sh->deadline) {
            w->timed_out = 1;
            break;
        }
        if (sh->saturate && w->id == 0 && w->probe_state == 0 && now >= sh->t_probe) start_probe(w, now);
        int k = epoll_wait(w->ep, evs, MAX_EVENTS, 100);
        for (int e = 0; e < k; e++) {
            uint64_t tag = evs[e].data.u64;
            if (tag == STOP_TAG) return NULL; /* another worker saw an invalid connection */
            if (tag == PROBE_TAG) {
                if (w->probe_state == 1 && pump(w, &w->probe, sh->n, SB_CHUNK_BYTES, 0, w->probe_start)) {
                    if (!w->probe.failed) w->client_delay = sb_now() - w->probe_start;
                    w->probe_state = 2;
                    close(w->probe.fd);
                }
                continue;
            }
            cconn *c = &sh->cs[tag];
            if (c->done_s >= 0 || c->failed) continue;
            if (pump(w, c, (long)tag, sh->d, sh->saturate, sh->t0)) {
                w->done++;
                close(c->fd);
                c->fd = -1;
                if (c->failed && !sh->saturate) { /* invalid already: stop every worker early */
                    uint64_t one = 1;
                    ssize_t wr = write(sh->stop_fd, &one, sizeof one);
                    (void)wr; /* adding 1 to an eventfd cannot overflow it here */
                    return NULL;
                }
            }
        }
        if (sh->saturate && w->done == w->assigned) break;
    }
    return NULL;
}

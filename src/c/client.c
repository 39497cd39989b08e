/* The echo_flood load generator (one thread, non-blocking sockets, edge-triggered epoll).
 * flood:    N connections opened at once; each sends D bytes in 32 KiB chunks and checks
 *           every echoed byte against a pattern (a position- and connection-dependent
 *           table, so loss, reordering, duplication and cross-talk all show as a mismatch).
 *           elapsed_s = first connect to last verified byte.
 * saturate: N connections send without end for --duration-s; half way through one more
 *           connection sends 32 KiB and waits for its echo: client_delay_s.
 * Source addresses: when N exceeds what one address can hold (the ephemeral port range),
 * connections are spread over 127.0.0.1, 127.0.0.2, ... (no system setting changes). */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define PAT_PERIOD 65521 /* prime, > the chunk: no chunk-aligned shift maps the pattern onto itself */
#define MAX_EVENTS 512
#define FD_MARGIN 32
#define PROBE_TAG ((uint64_t)-1)

typedef struct {
    int fd;
    uint64_t sent, verified;
    double done_s; /* completion time since the first connect; <0 while open */
    int connected, failed;
} cconn;

static unsigned char pattern[2 * PAT_PERIOD];
static unsigned char rbuf[SB_CHUNK_BYTES];
static char reason[512];
static int any_connected; /* some connection got a byte through */

static void make_pattern(void) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < PAT_PERIOD; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pattern[i] = pattern[i + PAT_PERIOD] = (unsigned char)(x >> 32);
    }
}

static size_t pat_off(long c, uint64_t pos) { return (size_t)((pos + (uint64_t)c * 7919u) % PAT_PERIOD); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int port_range(void) {
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int lo = 32768, hi = 60999;
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2) lo = 32768, hi = 60999;
        fclose(f);
    }
    return hi - lo + 1;
}

static int open_conn(const struct sockaddr_in *dst, int src_index) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (src_index > 0) { /* 127.0.0.(1+k): its own ephemeral port space */
#ifdef IP_BIND_ADDRESS_NO_PORT
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
#endif
        struct sockaddr_in s = {.sin_family = AF_INET};
        s.sin_addr.s_addr = htonl(0x7F000001u + (uint32_t)src_index);
        if (bind(fd, (struct sockaddr *)&s, sizeof s) < 0) {
            close(fd);
            return -1;
        }
    }
    if (connect(fd, (const struct sockaddr *)dst, sizeof *dst) < 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes and verifies as far as the socket allows; returns 1 when the connection is done. */
static int pump(cconn *c, long idx, uint64_t target, int endless, double t0) {
    for (int rounds = 0; rounds < 1 << 16; rounds++) {
        int progress = 0;
        if (endless || c->sent < target) {
            uint64_t left = endless ? SB_CHUNK_BYTES - c->sent % SB_CHUNK_BYTES : target - c->sent;
            size_t n = (size_t)(left < SB_CHUNK_BYTES - c->sent % SB_CHUNK_BYTES ? left : SB_CHUNK_BYTES - c->sent % SB_CHUNK_BYTES);
            if (endless && c->sent - c->verified > 4 * SB_CHUNK_BYTES) n = 0; /* keep the echo flowing */
            if (n > 0) {
                ssize_t w = write(c->fd, pattern + pat_off(idx, c->sent), n);
                if (w > 0) c->sent += (uint64_t)w, progress = 1, any_connected = 1;
                else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                    snprintf(reason, sizeof reason, "connection %ld: write failed after %llu bytes: %s", idx,
                             (unsigned long long)c->sent, strerror(errno));
                    c->failed = 1;
                    return 1;
                }
            }
        }
        ssize_t r = read(c->fd, rbuf, sizeof rbuf);
        if (r > 0) {
            if (c->verified + (uint64_t)r > c->sent) {
                snprintf(reason, sizeof reason, "connection %ld: %llu bytes echoed but only %llu sent (duplication)", idx,
                         (unsigned long long)(c->verified + (uint64_t)r), (unsigned long long)c->sent);
                c->failed = 1;
                return 1;
            }
            if (memcmp(rbuf, pattern + pat_off(idx, c->verified), (size_t)r) != 0) {
                size_t k = 0;
                while (k < (size_t)r && rbuf[k] == pattern[pat_off(idx, c->verified + k)]) k++;
                snprintf(reason, sizeof reason,
                         "connection %ld: echoed byte at offset %llu is %u, expected %u (loss, reordering or corruption)",
                         idx, (unsigned long long)(c->verified + k), rbuf[k], pattern[pat_off(idx, c->verified + k)]);
                c->failed = 1;
                return 1;
            }
            c->verified += (uint64_t)r;
            progress = 1;
            if (!endless && c->verified == target) {
                c->done_s = sb_now() - t0;
                return 1;
            }
        } else if (r == 0) {
            snprintf(reason, sizeof reason, "connection %ld: closed by the server after %llu of %llu bytes echoed", idx,
                     (unsigned long long)c->verified, (unsigned long long)target);
            c->failed = 1;
            return 1;
        } else if (errno != EAGAIN && errno != EINTR) {
            snprintf(reason, sizeof reason, "connection %ld: read failed after %llu bytes: %s", idx,
                     (unsigned long long)c->verified, strerror(errno));
            c->failed = 1;
            return 1;
        }
        if (!progress) return 0;
    }
    return 0;
}

int run_client(const sb_params *p) {
    long n = p->connections;
    uint64_t d = (uint64_t)p->bytes_per_connection;
    int saturate = strcmp(p->mode, "saturate") == 0;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max; /* as far as the hard limit allows */
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)(n + FD_MARGIN) > rl.rlim_cur) {
        fprintf(stderr,
                "error: --connections %ld needs %ld open files but the open-files hard limit (RLIMIT_NOFILE) is %llu; "
                "raise it (ulimit -Hn as root, /etc/security/limits.conf or the container's nofile limit)\n",
                n, n + FD_MARGIN, (unsigned long long)rl.rlim_cur);
        return EXIT_USAGE;
    }
    int per_source = port_range() - 1024; /* leave room for everyone else's connections */
    if (per_source < 1024) per_source = 1024;
    int sources = (int)((n + per_source - 1) / per_source);
    if (sources > 250) sources = 250;
    make_pattern();
    signal(SIGPIPE, SIG_IGN);
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->port)};
    inet_pton(AF_INET, p->host, &dst.sin_addr);
    cconn *cs = calloc((size_t)n, sizeof *cs);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    if (!cs || ep < 0) {
        fprintf(stderr, "error: out of memory for %ld connections\n", n);
        return EXIT_RUN_FAILED;
    }
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    double t0 = sb_now(), deadline = t0 + (saturate ? p->duration_s + 30 : p->client_timeout_s);
    double t_end_sat = t0 + p->duration_s, t_probe = t0 + p->duration_s / 2;
    long open_failed = 0, done = 0;
    for (long i = 0; i < n; i++) {
        cs[i].done_s = -1;
        cs[i].fd = open_conn(&dst, sources > 1 ? (int)(i % sources) : 0);
        if (cs[i].fd < 0) {
            if (!open_failed) snprintf(reason, sizeof reason, "connection %ld: cannot connect: %s", i, strerror(errno));
            open_failed++;
            cs[i].failed = 1;
            done++;
            continue;
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)i};
        epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
    }
    if (open_failed == n) {
        fprintf(stderr, "error: cannot connect to %s:%ld: %s\n", p->host, p->port, reason);
        return EXIT_RUN_FAILED;
    }
    cconn probe = {.fd = -1, .done_s = -1};
    double probe_start = 0, client_delay = -1;
    int probe_state = 0; /* 0 not started, 1 running, 2 done */
    struct epoll_event evs[MAX_EVENTS];
    int timed_out = 0;
    while (saturate ? (sb_now() < t_end_sat || probe_state == 1) : done < n) {
        double now = sb_now();
        if (now > deadline) {
            timed_out = 1;
            break;
        }
        if (saturate && probe_state == 0 && now >= t_probe) {
            probe.fd = open_conn(&dst, 0);
            probe_start = now;
            probe_state = 1;
            if (probe.fd >= 0) {
                struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = PROBE_TAG};
                epoll_ctl(ep, EPOLL_CTL_ADD, probe.fd, &ev);
            } else {
                probe_state = 2;
            }
        }
        int k = epoll_wait(ep, evs, MAX_EVENTS, 100);
        for (int e = 0; e < k; e++) {
            uint64_t tag = evs[e].data.u64;
            if (tag == PROBE_TAG) {
                if (probe_state == 1 && pump(&probe, n, SB_CHUNK_BYTES, 0, probe_start)) {
                    if (!probe.failed) client_delay = sb_now() - probe_start;
                    probe_state = 2;
                    close(probe.fd);
                }
                continue;
            }
            cconn *c = &cs[tag];
            if (c->done_s >= 0 || c->failed) continue;
            if (pump(c, (long)tag, d, saturate, t0)) {
                done++;
                close(c->fd);
                c->fd = -1;
                if (c->failed && !saturate) goto finished; /* invalid already: stop early */
            }
        }
        if (saturate && done == n) break;
    }
finished:;
    double elapsed = sb_now() - t0;
    getrusage(RUSAGE_SELF, &ru1);
    double ucpu = (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) + (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6;
    double scpu = (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) + (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6;
    uint64_t written = 0, verified = 0;
    long completed = 0, failed = 0;
    double *times = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) {
        written += cs[i].sent;
        verified += cs[i].verified;
        if (cs[i].failed) failed++;
        if (cs[i].done_s >= 0) times[completed++] = cs[i].done_s;
        if (cs[i].fd >= 0) close(cs[i].fd);
    }
    if (probe_state == 1 && probe.fd >= 0) close(probe.fd);
    written += probe.sent;
    verified += probe.verified;
    if (!any_connected && failed > 0 && completed == 0) {
        fprintf(stderr, "error: cannot connect to %s:%ld: %s\n", p->host, p->port, reason);
        return EXIT_RUN_FAILED;
    }
    int ok = !failed && !timed_out && (saturate || completed == n);
    if (saturate && !failed && client_delay < 0) {
        /* the server is too saturated to answer one more client in time: a finding, not an
         * error; client_delay_s stays null and the reason says why */
        ok = 1;
        snprintf(reason, sizeof reason, "the client-delay probe got no full echo within %.0f s (client_delay_s null)",
                 deadline - t_probe);
    } else if (timed_out && !failed)
        snprintf(reason, sizeof reason, "timed out after %.3f s with %ld of %ld connections complete", elapsed, completed, n);
    qsort(times, (size_t)completed, sizeof(double), cmp_double);
    printf("{\"benchmark\":\"echo_flood\",\"role\":\"client\",\"language\":\"c\",\"variant\":\"%s\","
           "\"params\":{\"connections\":%ld,\"bytes_per_connection\":%llu,\"mode\":\"%s\",\"duration_s\":%.17g,"
           "\"client_timeout_s\":%.17g,\"host\":\"%s\"},\"metrics\":{\"elapsed_s\":%.9f,",
           p->variant, n, (unsigned long long)d, p->mode, p->duration_s, p->client_timeout_s, p->host, elapsed);
    printf("\"connections_completed\":%ld,\"connections_failed\":%ld,\"bytes_written\":%llu,\"bytes_read\":%llu,"
           "\"bytes_verified\":%llu,\"chunk_bytes\":%d,\"source_addresses\":%d,",
           completed, failed, (unsigned long long)written, (unsigned long long)verified, (unsigned long long)verified,
           SB_CHUNK_BYTES, sources);
    if (completed > 0 && !saturate)
        printf("\"completion_median_s\":%.9f,\"completion_p99_s\":%.9f,\"completion_max_s\":%.9f,",
               times[(completed - 1) / 2], times[(long)((double)(completed - 1) * 0.99)], times[completed - 1]);
    else
        printf("\"completion_median_s\":null,\"completion_p99_s\":null,\"completion_max_s\":null,");
    if (client_delay >= 0) printf("\"client_delay_s\":%.9f,", client_delay);
    else printf("\"client_delay_s\":null,");
    printf("\"client_cpu_user_s\":%.6f,\"client_cpu_system_s\":%.6f,\"client_cpu_share\":%.6f},", ucpu, scpu,
           elapsed > 0 ? (ucpu + scpu) / elapsed : 0.0);
    if (ok && !(saturate && client_delay < 0)) printf("\"validation\":{\"ok\":true,\"reason\":null},\"runtime\":");
    else {
        printf("\"validation\":{\"ok\":%s,\"reason\":\"", ok ? "true" : "false");
        for (char *q = reason; *q; q++)
            if (*q != '"' && *q != '\\') putchar(*q);
        printf("\"},\"runtime\":");
    }
    sb_runtime_json(stdout);
    printf("}\n");
    fflush(stdout);
    free(times);
    free(cs);
    return EXIT_OK;
}

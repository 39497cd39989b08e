#define _GNU_SOURCE
/* The C echo server: one thread, non-blocking sockets, edge-triggered epoll (the native
 * floor of echo_flood, standing in for the original's C++ framework). Lifecycle as
 * docs/sockets.md: bind 127.0.0.1 port P, one listening line, stop on
 * stdin EOF / the line "stop" / SIGTERM / idle timeout, then one record line. */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_EVENTS 256
#define STDIN_TAG ((uint64_t)-1)
#define SIGNAL_TAG ((uint64_t)-2)
#define LISTEN_TAG ((uint64_t)-3)

typedef struct {
    int fd;
    char *pend; /* bytes read but not yet written back (allocated only while pending) */
    int pend_off, pend_len;
} conn;

static uint64_t bytes_read, bytes_written, accepted, conn_errors;
static long open_conns;
static char buf[SB_CHUNK_BYTES];

static void conn_close(conn *c) {
    close(c->fd);
    free(c->pend);
    free(c);
    open_conns--;
}

/* Echo until the socket would block; returns 0 while the connection lives, -1 once closed. */
static int conn_serve(conn *c) {
    for (int rounds = 0; rounds < 1 << 20; rounds++) {
        while (c->pend_len > 0) {
            ssize_t w = write(c->fd, c->pend + c->pend_off, (size_t)c->pend_len);
            if (w < 0) {
                if (errno == EAGAIN || errno == EINTR) return 0; /* EPOLLOUT resumes us */
                conn_errors++;
                conn_close(c);
                return -1;
            }
            bytes_written += (uint64_t)w;
            c->pend_off += (int)w;
            c->pend_len -= (int)w;
        }
        free(c->pend);
        c->pend = NULL;
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n == 0) {
            conn_close(c);
            return -1;
        }
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return 0;
            conn_errors++;
            conn_close(c);
            return -1;
        }
        bytes_read += (uint64_t)n;
        ssize_t w = write(c->fd, buf, (size_t)n);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            conn_errors++;
            conn_close(c);
            return -1;
        }
        if (w < 0) w = 0;
        bytes_written += (uint64_t)w;
        if (w < n) {
            c->pend = malloc((size_t)(n - w));
            if (!c->pend) {
                conn_errors++;
                conn_close(c);
                return -1;
            }
            memcpy(c->pend, buf + w, (size_t)(n - w));
            c->pend_off = 0;
            c->pend_len = (int)(n - w);
        }
    }
    return 0;
}

int run_server(const sb_params *p) {
    double t0 = sb_now();
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->port)};
    inet_pton(AF_INET, SB_LOOPBACK, &a.sin_addr);
    socklen_t alen = sizeof a;
    if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, SB_BACKLOG) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &alen) < 0) {
        fprintf(stderr, "error: cannot listen on %s:%ld: %s\n", SB_LOOPBACK, p->port, strerror(errno));
        return EXIT_RUN_FAILED;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = LISTEN_TAG};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    ev.data.u64 = SIGNAL_TAG;
    epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
    ev.data.u64 = STDIN_TAG;
    int stdin_watched = epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev) == 0; /* a file or /dev/null: not watched */
    int port = ntohs(a.sin_port);
    printf("{\"event\":\"listening\",\"benchmark\":\"echo_flood\",\"role\":\"server\",\"language\":\"c\","
           "\"address\":\"%s\",\"port\":%d}\n",
           SB_LOOPBACK, port);
    fflush(stdout);

    const char *reason = NULL;
    char line[256];
    size_t line_len = 0;
    double idle_since = sb_now();
    struct epoll_event evs[MAX_EVENTS];
    while (!reason) {
        int n = epoll_wait(ep, evs, MAX_EVENTS, 200);
        if (n < 0 && errno != EINTR) break;
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64;
            if (tag == LISTEN_TAG) {
                for (int k = 0; k < 1 << 16; k++) { /* bounded accept burst */
                    int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) conn_errors++;
                        break;
                    }
                    conn *c = calloc(1, sizeof *c);
                    c->fd = fd;
                    accepted++;
                    open_conns++;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    struct epoll_event cev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
                    conn_serve(c);
                }
            } else if (tag == SIGNAL_TAG) {
                reason = "signal";
            } else if (tag == STDIN_TAG) {
                char ib[256];
                ssize_t r = read(0, ib, sizeof ib);
                if (r <= 0) {
                    reason = "stdin_eof";
                    break;
                }
                for (ssize_t k = 0; k < r; k++) {
                    if (ib[k] == '\n') {
                        line[line_len] = 0;
                        if (strcmp(line, "stop") == 0) reason = "stop_line";
                        line_len = 0;
                    } else if (line_len < sizeof line - 1) {
                        line[line_len++] = ib[k];
                    }
                }
            } else {
                conn_serve((conn *)evs[i].data.ptr);
            }
        }
        if (open_conns > 0) idle_since = sb_now();
        else if (sb_now() - idle_since >= p->idle_timeout_s) reason = "idle_timeout";
    }
    (void)stdin_watched;
    /* Sockets still open are closed by exit; their conn structs go with the process. */
    close(ls);
    printf("{\"benchmark\":\"echo_flood\",\"role\":\"server\",\"language\":\"c\",\"variant\":\"%s\","
           "\"params\":{\"port\":%ld,\"idle_timeout_s\":%.17g},"
           "\"metrics\":{\"elapsed_s\":%.9f,\"port\":%d,\"connections_accepted\":%llu,\"bytes_read\":%llu,"
           "\"bytes_written\":%llu,\"connection_errors\":%llu,\"stop_reason\":\"%s\"},"
           "\"validation\":{\"ok\":true,\"reason\":null},\"runtime\":",
           p->variant, p->port, p->idle_timeout_s, sb_now() - t0, port, (unsigned long long)accepted,
           (unsigned long long)bytes_read, (unsigned long long)bytes_written, (unsigned long long)conn_errors,
           reason ? reason : "signal");
    sb_runtime_json(stdout, 1);
    printf("}\n");
    fflush(stdout);
    return EXIT_OK;
}

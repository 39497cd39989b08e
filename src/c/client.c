/* The echo_flood load generator: non-blocking sockets, edge-triggered epoll, --threads T
 * worker threads (default 1; client_loop.c holds one worker's loop).
 * flood:    N connections opened at once; each sends D bytes in 32 KiB chunks and checks
 *           every echoed byte against a pattern (a position- and connection-dependent
 *           table, so loss, reordering, duplication and cross-talk all show as a mismatch).
 *           elapsed_s = first connect to last verified byte.
 * saturate: N connections send without end for --duration-s; half way through one more
 *           connection sends 32 KiB and waits for its echo: client_delay_s.
 * Threads: the main thread opens every connection (so t0 and "all N opened at once" do not
 * depend on T), connection i goes to worker i % T, then the workers run (worker 0 on the
 * main thread, and it alone runs the probe). The first failure's reason is the record's;
 * in a flood one invalid connection stops every worker.
 * Source addresses: when N exceeds what one address can hold (the ephemeral port range),
 * connections are spread over 127.0.0.1, 127.0.0.2, ... (no system setting changes). */
#include "client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define FD_MARGIN 32

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

int sb_open_conn(const struct sockaddr_in *dst, int src_index) {
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

static double seconds(struct timeval a, struct timeval b) {
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_usec - a.tv_usec) / 1e6;
}

int run_client(const sb_params *p) {
    long n = p->connections;
    uint64_t d = (uint64_t)p->bytes_per_connection;
    int saturate = strcmp(p->mode, "saturate") == 0;
    int nt = (int)(p->threads < n ? p->threads : n); /* a worker without connections would only idle */
    long need = n + FD_MARGIN + nt;                  /* + one epoll descriptor per worker */
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max; /* as far as the hard limit allows */
    setrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)need > rl.rlim_cur) {
        fprintf(stderr,
                "error: --connections %ld needs %ld open files but the open-files hard limit (RLIMIT_NOFILE) is %llu; "
                "raise it (ulimit -Hn as root, /etc/security/limits.conf or the container's nofile limit)\n",
                n, need, (unsigned long long)rl.rlim_cur);
        return EXIT_USAGE;
    }
    int per_source = port_range() - 1024; /* leave room for everyone else's connections */
    if (per_source < 1024) per_source = 1024;
    int sources = (int)((n + per_source - 1) / per_source);
    if (sources > 250) sources = 250;
    sb_make_pattern();
    signal(SIGPIPE, SIG_IGN);
    cshared sh = {.n = n, .d = d, .saturate = saturate, .dst = {.sin_family = AF_INET}};
    sh.dst.sin_port = htons((uint16_t)p->port);
    inet_pton(AF_INET, p->host, &sh.dst.sin_addr);
    atomic_init(&sh.first_fail, -1);
    sh.cs = calloc((size_t)n, sizeof *sh.cs);
    cworker *ws = calloc((size_t)nt, sizeof *ws);
    pthread_t *tids = calloc((size_t)nt, sizeof *tids);
    sh.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (!sh.cs || !ws || !tids || sh.stop_fd < 0) {
        fprintf(stderr, "error: out of memory for %ld connections\n", n);
        return EXIT_RUN_FAILED;
    }
    for (int t = 0; t < nt; t++) {
        ws[t] = (cworker){.sh = &sh, .id = t, .ep = epoll_create1(EPOLL_CLOEXEC), .probe = {.fd = -1, .done_s = -1},
                          .client_delay = -1};
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = STOP_TAG}; /* level-triggered: wakes every wait */
        if (ws[t].ep < 0 || epoll_ctl(ws[t].ep, EPOLL_CTL_ADD, sh.stop_fd, &ev) < 0) {
            fprintf(stderr, "error: cannot create epoll instance %d of %d: %s\n", t + 1, nt, strerror(errno));
            return EXIT_RUN_FAILED;
        }
    }
    char reason[REASON_BYTES] = "";
    struct rusage ru0, ru1;
    getrusage(RUSAGE_SELF, &ru0);
    sh.t0 = sb_now();
    sh.deadline = sh.t0 + (saturate ? p->duration_s + 30 : p->client_timeout_s);
    sh.t_end_sat = sh.t0 + p->duration_s, sh.t_probe = sh.t0 + p->duration_s / 2;
    long open_failed = 0;
    for (long i = 0; i < n; i++) {
        cconn *c = &sh.cs[i];
        cworker *w = &ws[i % nt];
        c->done_s = -1;
        c->fd = sb_open_conn(&sh.dst, sources > 1 ? (int)(i % sources) : 0);
        w->assigned++;
        if (c->fd < 0) {
            if (!open_failed) snprintf(reason, sizeof reason, "connection %ld: cannot connect: %s", i, strerror(errno));
            open_failed++;
            c->failed = 1;
            w->done++;
            continue;
        }
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)i};
        epoll_ctl(w->ep, EPOLL_CTL_ADD, c->fd, &ev);
    }
    if (open_failed == n) {
        fprintf(stderr, "error: cannot connect to %s:%ld: %s\n", p->host, p->port, reason);
        return EXIT_RUN_FAILED;
    }
    for (int t = 1; t < nt; t++) {
        int rc = pthread_create(&tids[t], NULL, sb_client_worker, &ws[t]);
        if (rc) { /* no record: exiting ends the workers already started */
            fprintf(stderr, "error: cannot start worker thread %d of %d: %s\n", t + 1, nt, strerror(rc));
            return EXIT_RUN_FAILED;
        }
    }
    sb_client_worker(&ws[0]);
    for (int t = 1; t < nt; t++) pthread_join(tids[t], NULL);
    double elapsed = sb_now() - sh.t0;
    getrusage(RUSAGE_SELF, &ru1); /* the whole process: every worker thread's CPU time */
    double ucpu = seconds(ru0.ru_utime, ru1.ru_utime), scpu = seconds(ru0.ru_stime, ru1.ru_stime);
    int timed_out = 0, any_connected = 0;
    for (int t = 0; t < nt; t++) {
        timed_out |= ws[t].timed_out, any_connected |= ws[t].any_connected;
        close(ws[t].ep);
    }
    int ff = atomic_load(&sh.first_fail);
    if (!reason[0] && ff >= 0) memcpy(reason, ws[ff].reason, sizeof reason); /* else a failed open came first */
    cconn *probe = &ws[0].probe;
    double client_delay = ws[0].client_delay;
    uint64_t written = 0, verified = 0;
    long completed = 0, failed = 0;
    double *times = malloc(sizeof(double) * (size_t)n);
    for (long i = 0; i < n; i++) {
        written += sh.cs[i].sent;
        verified += sh.cs[i].verified;
        if (sh.cs[i].failed) failed++;
        if (sh.cs[i].done_s >= 0) times[completed++] = sh.cs[i].done_s;
        if (sh.cs[i].fd >= 0) close(sh.cs[i].fd);
    }
    if (ws[0].probe_state == 1 && probe->fd >= 0) close(probe->fd);
    written += probe->sent;
    verified += probe->verified;
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
                 sh.deadline - sh.t_probe);
    } else if (timed_out && !failed)
        snprintf(reason, sizeof reason, "timed out after %.3f s with %ld of %ld connections complete", elapsed, completed, n);
    qsort(times, (size_t)completed, sizeof(double), cmp_double);
    printf("{\"benchmark\":\"echo_flood\",\"role\":\"client\",\"language\":\"c\",\"variant\":\"%s\","
           "\"params\":{\"connections\":%ld,\"bytes_per_connection\":%llu,\"mode\":\"%s\",\"duration_s\":%.17g,"
           "\"client_timeout_s\":%.17g,\"client_threads\":%ld,\"host\":\"%s\"},\"metrics\":{\"elapsed_s\":%.9f,",
           p->variant, n, (unsigned long long)d, p->mode, p->duration_s, p->client_timeout_s, p->threads, p->host,
           elapsed);
    printf("\"connections_completed\":%ld,\"connections_failed\":%ld,\"bytes_written\":%llu,\"bytes_read\":%llu,"
           "\"bytes_verified\":%llu,\"chunk_bytes\":%d,\"source_addresses\":%d,\"client_threads\":%d,",
           completed, failed, (unsigned long long)written, (unsigned long long)verified, (unsigned long long)verified,
           SB_CHUNK_BYTES, sources, nt);
    if (completed > 0 && !saturate)
        printf("\"completion_median_s\":%.9f,\"completion_p99_s\":%.9f,\"completion_max_s\":%.9f,",
               times[(completed - 1) / 2], times[(long)((double)(completed - 1) * 0.99)], times[completed - 1]);
    else
        printf("\"completion_median_s\":null,\"completion_p99_s\":null,\"completion_max_s\":null,");
    if (client_delay >= 0) printf("\"client_delay_s\":%.9f,", client_delay);
    else printf("\"client_delay_s\":null,");
    /* the share of the CPU time its nt threads could have used: near 1 = the load generator was the limit */
    printf("\"client_cpu_user_s\":%.6f,\"client_cpu_system_s\":%.6f,\"client_cpu_share\":%.6f},", ucpu, scpu,
           elapsed > 0 ? (ucpu + scpu) / (elapsed * nt) : 0.0);
    if (ok && !(saturate && client_delay < 0)) printf("\"validation\":{\"ok\":true,\"reason\":null},\"runtime\":");
    else {
        printf("\"validation\":{\"ok\":%s,\"reason\":\"", ok ? "true" : "false");
        for (char *q = reason; *q; q++)
            if (*q != '"' && *q != '\\') putchar(*q);
        printf("\"},\"runtime\":");
    }
    sb_runtime_json(stdout, (int)p->threads); /* as configured, like GOMAXPROCS; metrics: those that ran */
    printf("}\n");
    fflush(stdout);
    close(sh.stop_fd);
    free(times);
    free(tids);
    free(ws);
    free(sh.cs);
    return EXIT_OK;
}

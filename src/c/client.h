/* The load generator's parts shared by client.c (limits, connections, threads, the record)
 * and client_loop.c (one worker thread: its epoll set, pump, the saturate probe). */
#ifndef SB_CLIENT_H
#define SB_CLIENT_H
#include "common.h"

#include <netinet/in.h>
#include <stdatomic.h>

#define PAT_PERIOD 65521 /* prime, > the chunk: no chunk-aligned shift maps the pattern onto itself */
#define PROBE_TAG ((uint64_t)-1)
#define STOP_TAG ((uint64_t)-2)
#define REASON_BYTES 512

typedef struct {
    int fd;
    uint64_t sent, verified;
    double done_s; /* completion time since the first connect; <0 while open */
    int failed;
} cconn;

/* What every worker sees: read-only while they run, except first_fail. */
typedef struct {
    cconn *cs;
    long n;
    uint64_t d;
    int saturate;
    double t0, deadline, t_probe, t_end_sat;
    struct sockaddr_in dst;
    int stop_fd;           /* eventfd in every worker's epoll set: written once to stop them all */
    atomic_int first_fail; /* id of the worker whose failure came first, -1 = none yet */
} cshared;

typedef struct {
    cshared *sh;
    int id, ep;
    long assigned, done; /* connections of this worker (those that failed to open count as done) */
    int timed_out, any_connected; /* any_connected: some connection got a byte through */
    char reason[REASON_BYTES];    /* this worker's first failure */
    cconn probe;                  /* worker 0 in saturate mode: the client-delay probe */
    int probe_state;              /* 0 not started, 1 running, 2 done */
    double probe_start, client_delay;
    unsigned char rbuf[SB_CHUNK_BYTES];
} cworker;

extern unsigned char sb_pattern[2 * PAT_PERIOD];
void sb_make_pattern(void);
int sb_open_conn(const struct sockaddr_in *dst, int src_index);
void *sb_client_worker(void *arg); /* runs one worker to its end; returns NULL */
#endif

/* serverbench C: the echo_flood server and its load generator (client).
 * Shared declarations: command-line parsing (mirrors spec/cli.json), JSON output, time. */
#ifndef SB_COMMON_H
#define SB_COMMON_H
#include <stdint.h>
#include <stdio.h>

#define SB_PROGRAM_VERSION "0.1.0"
#define SB_CHUNK_BYTES 32768 /* the original's chunk: every write is at most this */
#define SB_BACKLOG 4096      /* listen backlog (the kernel caps it at net.core.somaxconn) */
#define SB_LOOPBACK "127.0.0.1"

enum { EXIT_OK = 0, EXIT_RUN_FAILED = 1, EXIT_USAGE = 2 };

typedef struct {
    /* server */
    long port;
    double idle_timeout_s;
    /* client */
    long connections;
    long bytes_per_connection;
    const char *mode; /* "flood" | "saturate" */
    double duration_s;
    double client_timeout_s;
    const char *host;
    long threads; /* worker threads of the load generator */
    const char *variant;
    const char *role;
} sb_params;

/* Parses argv after the program name; prints one "error: ..." line and returns EXIT_USAGE
 * on bad input; returns -1 when --version/--help was handled (exit 0). */
int sb_parse(int argc, char **argv, sb_params *p);
double sb_now(void);        /* CLOCK_MONOTONIC seconds */
void sb_runtime_json(FILE *f, int schedulers); /* schedulers: threads running the event loops */
int run_server(const sb_params *p);
int run_client(const sb_params *p);
#endif

/* serverbench-c: the C language of serverbench (echo_flood server and load generator). */
#include "common.h"

int main(int argc, char **argv) {
    sb_params p;
    int rc = sb_parse(argc - 1, argv + 1, &p);
    if (rc == -1) return EXIT_OK;
    if (rc) return rc;
    return p.role[0] == 's' ? run_server(&p) : run_client(&p);
}

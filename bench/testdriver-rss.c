/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A bare libvirt client for bench/footprint.sh: opens URI (a test:///FILE driver with N running
 * domains), lists the running domains, prints "ready N" and waits for SIGTERM. Its memory is what
 * libvirt, its test driver and those domains cost inside a process, so that placementd's own share is
 * what placementd adds on top. Links libvirt only.
 */
#include <libvirt/libvirt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        virConnectPtr conn;
        virDomainPtr *doms = NULL;
        sigset_t set;
        int n, sig;

        if (argc != 2) {
                fprintf(stderr, "Usage: testdriver-rss URI\n");
                return 2;
        }
        /* placementd registers an event implementation too: the driver then keeps its event state */
        if (virEventRegisterDefaultImpl() < 0)
                return 1;
        conn = virConnectOpen(argv[1]);
        if (!conn)
                return 1;
        n = virConnectListAllDomains(conn, &doms, VIR_CONNECT_LIST_DOMAINS_ACTIVE);
        if (n < 0)
                return 1;
        for (int i = 0; i < n; i++)
                virDomainFree(doms[i]);
        free(doms);
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigprocmask(SIG_BLOCK, &set, NULL);
        printf("ready %d\n", n);
        fflush(stdout);
        sigwait(&set, &sig);
        virConnectClose(conn);
        return 0;
}

// Does listing the folder a rename left bring the rename's second half?
//
// One thread renames N files from a/ to b/; the main thread reads inotify.
// A read that ends on a lone IN_MOVED_FROM is followed by a second read,
// plain (mode 0) or after one getdents64 of a/ (mode 1), and the program
// counts how often the partner IN_MOVED_TO is there. EXTRA other inotify
// listeners on both folders make such reads more frequent (the kernel
// queues each listener's events in turn).
//
//   cc -O2 -pthread Benchmarks/probes/rename-halves.c -o /tmp/rename-halves
//   /tmp/rename-halves 20 0; /tmp/rename-halves 20 1      # EXTRA MODE
//
// fileshare's observer relies on mode 1 always finding it: the kernel
// notifies both halves before renameat2 unlocks the folders, and
// getdents64 waits for that lock (MovePairing, awaitRenames).
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];
static const int count = 2000;
static volatile int done = 0;

static void *renamer(void *unused) {
    char from[512], to[512];
    for (int i = 0; i < count; i++) {
        snprintf(from, sizeof from, "%s/a/f%d", root, i);
        snprintf(to, sizeof to, "%s/b/f%d", root, i);
        rename(from, to);
    }
    done = 1;
    return unused;
}

static void watch(int fd, const char *folder) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, folder);
    inotify_add_watch(fd, path, IN_MOVE);
}

int main(int argc, char **argv) {
    int extra = argc > 1 ? atoi(argv[1]) : 0, mode = argc > 2 ? atoi(argv[2]) : 0;
    char path[512];
    snprintf(root, sizeof root, "/tmp/rename-halves.%d", getpid());
    mkdir(root, 0755);
    snprintf(path, sizeof path, "%s/a", root);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/b", root);
    mkdir(path, 0755);
    for (int i = 0; i < count; i++) {
        snprintf(path, sizeof path, "%s/a/f%d", root, i);
        close(open(path, O_CREAT | O_WRONLY, 0644));
    }
    for (int i = 0; i < extra; i++) {
        int other = inotify_init1(IN_NONBLOCK);
        watch(other, "a");
        watch(other, "b");
    }
    int fd = inotify_init1(IN_NONBLOCK);
    watch(fd, "a");
    watch(fd, "b");
    pthread_t thread;
    pthread_create(&thread, 0, renamer, 0);
    static char buffer[65536];
    int reads = 0, lone = 0, found = 0;
    for (;;) {
        struct pollfd ready = {fd, POLLIN, 0};
        if (poll(&ready, 1, 200) <= 0 && done) break;
        ssize_t length = read(fd, buffer, sizeof buffer);
        if (length <= 0) continue;
        reads++;
        struct inotify_event *last = 0;
        for (char *at = buffer; at < buffer + length; at += sizeof(*last) + last->len) last = (void *)at;
        if (!(last->mask & IN_MOVED_FROM)) continue;
        lone++;
        uint32_t cookie = last->cookie;
        if (mode == 1) {
            snprintf(path, sizeof path, "%s/a", root);
            int folder = open(path, O_RDONLY | O_DIRECTORY);
            char entries[1024];
            getdents64(folder, entries, sizeof entries);
            close(folder);
        }
        length = read(fd, buffer, sizeof buffer);
        for (char *at = buffer; length > 0 && at < buffer + length;) {
            struct inotify_event *event = (void *)at;
            if ((event->mask & IN_MOVED_TO) && event->cookie == cookie) found++;
            at += sizeof(*event) + event->len;
        }
    }
    pthread_join(thread, 0);
    printf("extra listeners %d, %s: %d reads, %d ended on a lone first half, %d found the partner on the next read\n",
           extra, mode ? "listing a/ first" : "plain", reads, lone, found);
    snprintf(path, sizeof path, "rm -rf %s", root);
    return system(path);
}

#define _GNU_SOURCE
#include "CFileshareShim.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/fs.h>

_Static_assert(CFS_O_PATH == O_PATH, "O_PATH");
_Static_assert(CFS_RENAME_NOREPLACE == RENAME_NOREPLACE, "RENAME_NOREPLACE");
_Static_assert(CFS_RENAME_EXCHANGE == RENAME_EXCHANGE, "RENAME_EXCHANGE");
_Static_assert(CFS_AT_REMOVEDIR == AT_REMOVEDIR, "AT_REMOVEDIR");
_Static_assert(CFS_AT_FDCWD == AT_FDCWD, "AT_FDCWD");
_Static_assert(CFS_IN_MODIFY == IN_MODIFY && CFS_IN_ATTRIB == IN_ATTRIB && CFS_IN_CLOSE_WRITE == IN_CLOSE_WRITE
    && CFS_IN_MOVED_FROM == IN_MOVED_FROM && CFS_IN_MOVED_TO == IN_MOVED_TO && CFS_IN_CREATE == IN_CREATE
    && CFS_IN_DELETE == IN_DELETE && CFS_IN_DELETE_SELF == IN_DELETE_SELF && CFS_IN_MOVE_SELF == IN_MOVE_SELF
    && CFS_IN_UNMOUNT == IN_UNMOUNT && CFS_IN_Q_OVERFLOW == IN_Q_OVERFLOW && CFS_IN_IGNORED == IN_IGNORED
    && CFS_IN_ONLYDIR == IN_ONLYDIR && CFS_IN_EXCL_UNLINK == IN_EXCL_UNLINK && CFS_IN_ISDIR == IN_ISDIR,
    "inotify masks");

#define RETRY(expr) ({ long _r; do { _r = (long)(expr); } while (_r == -1 && errno == EINTR); _r; })

static void fill(const struct statx *sx, cfs_stat *out) {
    out->dev = ((uint64_t)sx->stx_dev_major << 32) | sx->stx_dev_minor;
    out->ino = sx->stx_ino;
    out->size = sx->stx_size;
    out->mtime_ns = (int64_t)sx->stx_mtime.tv_sec * 1000000000LL + sx->stx_mtime.tv_nsec;
    out->ctime_ns = (int64_t)sx->stx_ctime.tv_sec * 1000000000LL + sx->stx_ctime.tv_nsec;
    out->btime_ns = (sx->stx_mask & STATX_BTIME)
        ? (int64_t)sx->stx_btime.tv_sec * 1000000000LL + sx->stx_btime.tv_nsec : 0;
    out->mode = sx->stx_mode;
    out->nlink = sx->stx_nlink;
    out->uid = sx->stx_uid;
    switch (sx->stx_mode & S_IFMT) {
    case S_IFREG: out->kind = CFS_KIND_FILE; break;
    case S_IFDIR: out->kind = CFS_KIND_DIRECTORY; break;
    case S_IFLNK: out->kind = CFS_KIND_SYMLINK; break;
    default: out->kind = CFS_KIND_OTHER; break;
    }
}

static const unsigned int wanted = STATX_TYPE | STATX_MODE | STATX_NLINK | STATX_UID | STATX_INO
    | STATX_SIZE | STATX_MTIME | STATX_CTIME | STATX_BTIME;

int cfs_lstat_at(int dirfd, const char *path, cfs_stat *out) {
    struct statx sx;
    if (RETRY(statx(dirfd, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, wanted, &sx)) != 0) return -errno;
    fill(&sx, out);
    return 0;
}

int cfs_fstat(int fd, cfs_stat *out) {
    struct statx sx;
    if (RETRY(statx(fd, "", AT_EMPTY_PATH, wanted, &sx)) != 0) return -errno;
    fill(&sx, out);
    return 0;
}

int cfs_has_no_writers_at(int dirfd, const char *path) {
    int fd = (int)RETRY(openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    if (fd < 0) return -errno;
    int result;
    // A lease break signals the lease's holder, SIGIO by default, whose
    // default action ends the process: a program that opens the file for
    // writing in the microseconds the lease lives would kill the server.
    // SIGURG's default action is to ignore it.
    fcntl(fd, F_SETSIG, SIGURG);
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        // Nobody is told of lease breaks: the lease lives for microseconds.
        fcntl(fd, F_SETOWN, 0);
        fcntl(fd, F_SETLEASE, F_UNLCK);
        result = 1;
    } else if (errno == EAGAIN || errno == EBUSY) {
        result = 0;
    } else {
        result = -errno;
    }
    close(fd);
    return result;
}

int cfs_inotify_init(void) {
    int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int cfs_inotify_add_watch(int fd, const char *path, uint32_t mask) {
    int wd = (int)RETRY(inotify_add_watch(fd, path, mask));
    return wd < 0 ? -errno : wd;
}

int cfs_inotify_rm_watch(int fd, int wd) {
    return inotify_rm_watch(fd, wd) == 0 ? 0 : -errno;
}

int cfs_eventfd(void) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int cfs_eventfd_signal(int fd) {
    uint64_t one = 1;
    return RETRY(write(fd, &one, sizeof one)) == sizeof one ? 0 : -errno;
}

int cfs_eventfd_drain(int fd) {
    uint64_t value;
    return RETRY(read(fd, &value, sizeof value)) == sizeof value ? 0 : -errno;
}

int cfs_poll2(int fd1, int fd2, int timeout_ms) {
    struct pollfd fds[2] = { { fd1, POLLIN, 0 }, { fd2, POLLIN, 0 } };
    int n = poll(fds, fd2 >= 0 ? 2 : 1, timeout_ms);
    if (n < 0) return errno == EINTR ? 0 : -errno;
    int result = 0;
    if (fds[0].revents) result |= 1;
    if (fd2 >= 0 && fds[1].revents) result |= 2;
    return result;
}

int cfs_open_directory_at(int dirfd, const char *path) {
    int fd = (int)RETRY(openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return fd < 0 ? -errno : fd;
}

int cfs_close(int fd) { return close(fd) == 0 ? 0 : -errno; }

ssize_t cfs_read(int fd, void *buffer, size_t count) {
    ssize_t n = RETRY(read(fd, buffer, count));
    return n < 0 ? -errno : n;
}

ssize_t cfs_getdents(int fd, void *buffer, size_t count) {
    ssize_t n = RETRY(syscall(SYS_getdents64, fd, buffer, count));
    return n < 0 ? -errno : n;
}

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

size_t cfs_dirent_at(const void *buffer, size_t offset, const char **name, uint8_t *type, uint64_t *ino) {
    const struct linux_dirent64 *d = (const struct linux_dirent64 *)((const char *)buffer + offset);
    *name = d->d_name;
    *type = d->d_type;
    *ino = d->d_ino;
    return d->d_reclen;
}

ssize_t cfs_get_xattr(const char *path, const char *name, void *value, size_t size) {
    ssize_t n = RETRY(lgetxattr(path, name, value, size));
    return n < 0 ? -errno : n;
}

int cfs_set_xattr(const char *path, const char *name, const void *value, size_t size) {
    return RETRY(lsetxattr(path, name, value, size, 0)) == 0 ? 0 : -errno;
}

int cfs_create_xattr(const char *path, const char *name, const void *value, size_t size) {
    return RETRY(lsetxattr(path, name, value, size, XATTR_CREATE)) == 0 ? 0 : -errno;
}

ssize_t cfs_fget_xattr(int fd, const char *name, void *value, size_t size) {
    ssize_t n = RETRY(fgetxattr(fd, name, value, size));
    return n < 0 ? -errno : n;
}

int cfs_fset_xattr(int fd, const char *name, const void *value, size_t size) {
    return RETRY(fsetxattr(fd, name, value, size, 0)) == 0 ? 0 : -errno;
}

// getxattrat(2): the same number on every architecture (the unified table).
#define CFS_SYS_GETXATTRAT 464
struct cfs_xattr_args {
    uint64_t value;
    uint32_t size;
    uint32_t flags;
};
static int cfs_no_getxattrat = 0;

ssize_t cfs_get_xattr_at(int dirfd, const char *name, const char *attribute, void *value, size_t size) {
    if (!__atomic_load_n(&cfs_no_getxattrat, __ATOMIC_RELAXED)) {
        struct cfs_xattr_args args = {(uint64_t)(uintptr_t)value, (uint32_t)size, 0};
        long n = RETRY(syscall(CFS_SYS_GETXATTRAT, dirfd, name, AT_SYMLINK_NOFOLLOW, attribute, &args, sizeof args));
        if (n >= 0) return n;
        if (errno != ENOSYS) return -errno;
        __atomic_store_n(&cfs_no_getxattrat, 1, __ATOMIC_RELAXED);
    }
    char path[64 + 4096];
    if (snprintf(path, sizeof path, "/proc/self/fd/%d/%s", dirfd, name) >= (int)sizeof path) return -ENAMETOOLONG;
    ssize_t n = RETRY(lgetxattr(path, attribute, value, size));
    return n < 0 ? -errno : n;
}

int cfs_fremove_xattr(int fd, const char *name) {
    return RETRY(fremovexattr(fd, name)) == 0 ? 0 : -errno;
}

int64_t cfs_copy_file(int in, int out) {
    if (ioctl(out, FICLONE, in) == 0) {
        struct stat st;
        if (fstat(out, &st) != 0) return -errno;
        return (int64_t)st.st_size;
    }
    int64_t total = 0;
    for (;;) {
        ssize_t n = RETRY(copy_file_range(in, NULL, out, NULL, 1 << 30, 0));
        if (n < 0 && total == 0 && (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL)) break;
        if (n < 0) return -errno;
        if (n == 0) return total;
        total += n;
    }
    // No copy_file_range between these two: read and write.
    char buffer[65536];
    for (;;) {
        ssize_t n = RETRY(read(in, buffer, sizeof buffer));
        if (n < 0) return -errno;
        if (n == 0) return total;
        ssize_t done = 0;
        while (done < n) {
            ssize_t w = RETRY(write(out, buffer + done, (size_t)(n - done)));
            if (w < 0) return -errno;
            done += w;
        }
        total += n;
    }
}

ssize_t cfs_readlink_at(int dirfd, const char *path, char *buffer, size_t size) {
    if (size == 0) return -EINVAL;
    ssize_t n = RETRY(readlinkat(dirfd, path, buffer, size - 1));
    if (n < 0) return -errno;
    buffer[n] = 0;
    return n;
}

int cfs_symlink_at(const char *target, int dirfd, const char *path) {
    return RETRY(symlinkat(target, dirfd, path)) == 0 ? 0 : -errno;
}

int cfs_fchmod(int fd, unsigned int mode) {
    return RETRY(fchmod(fd, (mode_t)mode)) == 0 ? 0 : -errno;
}

int64_t cfs_filesystem_type(const char *path) {
    struct statfs s;
    if (RETRY(statfs(path, &s)) != 0) return -errno;
    return (int64_t)(uint64_t)s.f_type;
}

int64_t cfs_generation_at(int dirfd, const char *path) {
    int fd = (int)RETRY(openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY));
    if (fd < 0) return -errno;
    int generation = 0;
    int r = ioctl(fd, FS_IOC_GETVERSION, &generation);
    int saved = errno;
    close(fd);
    return r == 0 ? (int64_t)(uint32_t)generation : -saved;
}

uint32_t cfs_handle_fingerprint_at(int dirfd, const char *path) {
    // The handle's bytes hold the inode number and its generation on ext4,
    // XFS, btrfs and tmpfs (what NFS uses to tell a reused number apart);
    // no parent, so a rename keeps it.
    union {
        struct file_handle handle;
        unsigned char bytes[sizeof(struct file_handle) + MAX_HANDLE_SZ];
    } buffer;
    buffer.handle.handle_bytes = MAX_HANDLE_SZ;
    int mount = 0;
    if (name_to_handle_at(dirfd, path, &buffer.handle, &mount, 0) != 0) return 0;
    uint32_t hash = 2166136261u;
    const unsigned char *type = (const unsigned char *)&buffer.handle.handle_type;
    for (size_t i = 0; i < sizeof(buffer.handle.handle_type); i++) hash = (hash ^ type[i]) * 16777619u;
    for (unsigned int i = 0; i < buffer.handle.handle_bytes; i++) {
        hash = (hash ^ buffer.handle.f_handle[i]) * 16777619u;
    }
    return hash == 0 ? 1 : hash;
}

int64_t cfs_read_proc_number(const char *path) {
    FILE *f = fopen(path, "re");
    if (!f) return -errno;
    long long value = -1;
    int ok = fscanf(f, "%lld", &value);
    fclose(f);
    return ok == 1 ? value : -EINVAL;
}

#include <sys/resource.h>

int cfs_get_open_file_limit(uint64_t *soft, uint64_t *hard) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -errno;
    *soft = (uint64_t)limit.rlim_cur;
    *hard = (uint64_t)limit.rlim_max;
    return 0;
}

int cfs_set_open_file_soft_limit(uint64_t soft) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return -errno;
    limit.rlim_cur = (rlim_t)soft;
    return setrlimit(RLIMIT_NOFILE, &limit) == 0 ? 0 : -errno;
}

#include <malloc.h>
void cfs_release_free_memory(void) { malloc_trim(0); }

#include <linux/openat2.h>
#include <sys/statvfs.h>

#ifndef RESOLVE_CACHED
#define RESOLVE_CACHED 0x20
#endif

static int open_resolving(int dirfd, const char *path, int flags, unsigned int mode, unsigned long long resolve) {
    struct open_how how = { 0 };
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.mode = ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? mode : 0;
    how.resolve = resolve;
    long fd;
    do { fd = syscall(SYS_openat2, dirfd, path, &how, sizeof how); } while (fd < 0 && errno == EINTR);
    return fd >= 0 ? (int)fd : -errno;
}

int cfs_open_beneath(int dirfd, const char *path, int flags, unsigned int mode) {
    // Kernels before 5.6 answer -ENOSYS: the caller's component walk with O_NOFOLLOW is the fallback.
    return open_resolving(dirfd, path, flags, mode, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
}

int cfs_open_beneath_cached(int dirfd, const char *path, int flags) {
    int fd = open_resolving(dirfd, path, flags, 0, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_CACHED);
    // Kernels without openat2 (ENOSYS) or RESOLVE_CACHED (EINVAL): the caller opens the waiting way.
    return (fd == -ENOSYS || fd == -EINVAL) ? -EAGAIN : fd;
}

int cfs_open_within(int dirfd, const char *path, int flags, unsigned int mode) {
    return open_resolving(dirfd, path, flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS);
}

int cfs_open_within_cached(int dirfd, const char *path, int flags) {
    int fd = open_resolving(dirfd, path, flags, 0, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_CACHED);
    return (fd == -ENOSYS || fd == -EINVAL) ? -EAGAIN : fd;
}

int cfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags) {
    long r;
    do { r = syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, flags); } while (r < 0 && errno == EINTR);
    return r == 0 ? 0 : -errno;
}

int cfs_mkdirat(int dirfd, const char *name, unsigned int mode) {
    return mkdirat(dirfd, name, mode) == 0 ? 0 : -errno;
}

int cfs_unlinkat(int dirfd, const char *name, int flags) {
    return unlinkat(dirfd, name, flags) == 0 ? 0 : -errno;
}

int64_t cfs_available_bytes(int fd) {
    struct statvfs s;
    if (fstatvfs(fd, &s) != 0) return -errno;
    return (int64_t)s.f_bavail * (int64_t)s.f_frsize;
}

int64_t cfs_used_bytes(int fd) {
    struct statvfs s;
    if (fstatvfs(fd, &s) != 0) return -errno;
    return (int64_t)(s.f_blocks - s.f_bfree) * (int64_t)s.f_frsize;
}

ssize_t cfs_pwrite_all(int fd, const void *buffer, size_t count, int64_t offset) {
    size_t done = 0;
    while (done < count) {
        ssize_t n = pwrite(fd, (const char *)buffer + done, count - done, (off_t)(offset + (int64_t)done));
        if (n < 0) { if (errno == EINTR) continue; return -errno; }
        done += (size_t)n;
    }
    return (ssize_t)done;
}

ssize_t cfs_pread(int fd, void *buffer, size_t count, int64_t offset) {
    ssize_t n;
    do { n = pread(fd, buffer, count, (off_t)offset); } while (n < 0 && errno == EINTR);
    return n < 0 ? -errno : n;
}

#include <sys/uio.h>

ssize_t cfs_pread_cached(int fd, void *buffer, size_t count, int64_t offset) {
    struct iovec vector = { .iov_base = buffer, .iov_len = count };
    ssize_t n;
    do { n = preadv2(fd, &vector, 1, (off_t)offset, RWF_NOWAIT); } while (n < 0 && errno == EINTR);
    if (n >= 0) return n;
    // EOPNOTSUPP (a file system that cannot say) and ENOSYS: as if nothing were cached.
    return (errno == EOPNOTSUPP || errno == ENOSYS) ? -EAGAIN : -errno;
}

int cfs_fsync(int fd) { return fsync(fd) == 0 ? 0 : -errno; }
int cfs_ftruncate(int fd, int64_t size) { return ftruncate(fd, (off_t)size) == 0 ? 0 : -errno; }

// Packaging/build-release writes this header (`#define FILESHARE_COMMIT "…"`)
// for the length of a release build and removes it after; a build from source
// has none, and says so.
#if __has_include("build-commit.h")
#include "build-commit.h"
#endif

const char *cfs_build_commit(void) {
#ifdef FILESHARE_COMMIT
    return FILESHARE_COMMIT;
#else
    return NULL;
#endif
}

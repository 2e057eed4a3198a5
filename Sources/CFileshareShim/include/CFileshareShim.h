// What Glibc does not expose to Swift, or exposes awkwardly: statx with birth
// time, read leases, inotify and eventfd, extended attributes, statfs, rlimits.
// Every function returns 0 (or a non-negative result) on success and -errno on
// failure, so the Swift side turns errors into typed values in one place.
#ifndef CFILESHARE_SHIM_H
#define CFILESHARE_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Kinds, as reported by `cfs_stat.kind`.
enum {
    CFS_KIND_FILE = 0,
    CFS_KIND_DIRECTORY = 1,
    CFS_KIND_SYMLINK = 2,
    CFS_KIND_OTHER = 3,
};

/// Flags Glibc keeps behind `_GNU_SOURCE` (so Swift never sees them) or in
/// headers Swift does not import, named once; `shim.c` checks each against
/// the system's own definition at compile time.
enum {
    /// open: a descriptor for the path only (stat, openat), no read or write.
    CFS_O_PATH = 010000000,
    /// renameat2: fail with EEXIST instead of replacing.
    CFS_RENAME_NOREPLACE = 1,
    /// renameat2: swap the two names.
    CFS_RENAME_EXCHANGE = 2,
    /// unlinkat: remove a folder.
    CFS_AT_REMOVEDIR = 0x200,
    /// *at calls: the current directory.
    CFS_AT_FDCWD = -100,
};

/// inotify event masks.
enum {
    CFS_IN_MODIFY = 0x00000002,
    CFS_IN_ATTRIB = 0x00000004,
    CFS_IN_CLOSE_WRITE = 0x00000008,
    CFS_IN_MOVED_FROM = 0x00000040,
    CFS_IN_MOVED_TO = 0x00000080,
    CFS_IN_CREATE = 0x00000100,
    CFS_IN_DELETE = 0x00000200,
    CFS_IN_DELETE_SELF = 0x00000400,
    CFS_IN_MOVE_SELF = 0x00000800,
    CFS_IN_UNMOUNT = 0x00002000,
    CFS_IN_Q_OVERFLOW = 0x00004000,
    CFS_IN_IGNORED = 0x00008000,
    CFS_IN_ONLYDIR = 0x01000000,
    CFS_IN_EXCL_UNLINK = 0x04000000,
    CFS_IN_ISDIR = 0x40000000,
};

typedef struct cfs_stat {
    uint64_t dev;
    uint64_t ino;
    uint64_t size;
    int64_t mtime_ns;
    int64_t ctime_ns;
    /// Birth time in nanoseconds since the epoch, or 0 when the file system
    /// does not record it.
    int64_t btime_ns;
    uint32_t mode;
    uint32_t nlink;
    uint32_t uid;
    uint8_t kind;
} cfs_stat;

/// statx(dirfd, path, AT_SYMLINK_NOFOLLOW) with birth time when available.
int cfs_lstat_at(int dirfd, const char *path, cfs_stat *out);
/// statx of an open descriptor.
int cfs_fstat(int fd, cfs_stat *out);

/// Whether any process has the file open for writing, asked by taking a read
/// lease and releasing it at once. Returns 1 when no writer holds it open,
/// 0 when one does, and -errno when leases cannot answer (not the owner
/// without CAP_LEASE, a network file system, leases disabled).
int cfs_has_no_writers_at(int dirfd, const char *path);

/// inotify_init1(IN_NONBLOCK | IN_CLOEXEC).
int cfs_inotify_init(void);
int cfs_inotify_add_watch(int fd, const char *path, uint32_t mask);
int cfs_inotify_rm_watch(int fd, int wd);

/// eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC).
int cfs_eventfd(void);
int cfs_eventfd_signal(int fd);
int cfs_eventfd_drain(int fd);

/// poll() on up to two descriptors for readability, timeout in milliseconds
/// (-1 waits forever). Returns a bit set: 1 for the first, 2 for the second.
int cfs_poll2(int fd1, int fd2, int timeout_ms);

/// open(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC).
int cfs_open_directory_at(int dirfd, const char *path);
int cfs_close(int fd);
ssize_t cfs_read(int fd, void *buffer, size_t count);

/// Directory reading with getdents64: fills `buffer` and returns the number
/// of bytes, 0 at the end, -errno on failure.
ssize_t cfs_getdents(int fd, void *buffer, size_t count);
/// Walks one getdents64 record: returns the record length, stores the name
/// pointer and the d_type.
size_t cfs_dirent_at(const void *buffer, size_t offset, const char **name, uint8_t *type, uint64_t *ino);

/// Extended attributes, without following symbolic links.
ssize_t cfs_get_xattr(const char *path, const char *name, void *value, size_t size);
int cfs_set_xattr(const char *path, const char *name, const void *value, size_t size);
/// lsetxattr with XATTR_CREATE: -EEXIST when the attribute is there already.
int cfs_create_xattr(const char *path, const char *name, const void *value, size_t size);
/// Extended attributes of an open descriptor (size 0 asks for the length).
ssize_t cfs_fget_xattr(int fd, const char *name, void *value, size_t size);
int cfs_fset_xattr(int fd, const char *name, const void *value, size_t size);
int cfs_fremove_xattr(int fd, const char *name);
/// The extended attribute of `name` in the open folder `dirfd`, without
/// following a final symbolic link: getxattrat (Linux 6.13) where the kernel
/// has it, else lgetxattr through /proc/self/fd.
ssize_t cfs_get_xattr_at(int dirfd, const char *name, const char *attribute, void *value, size_t size);

/// Copies the whole of `in` to the (empty) `out`, sharing extents (FICLONE) where the file system can and with
/// copy_file_range otherwise. Returns the bytes copied or -errno.
int64_t cfs_copy_file(int in, int out);
/// readlinkat into `buffer` (NUL-terminated); returns the length or -errno.
ssize_t cfs_readlink_at(int dirfd, const char *path, char *buffer, size_t size);
int cfs_symlink_at(const char *target, int dirfd, const char *path);
/// fchmod, for copies that keep the original's permissions.
int cfs_fchmod(int fd, unsigned int mode);

/// statfs f_type of the file system holding `path`.
int64_t cfs_filesystem_type(const char *path);

/// The inode generation (FS_IOC_GETVERSION), for file systems without birth time.
int64_t cfs_generation_at(int dirfd, const char *path);

/// A fingerprint of the kernel's file handle of `path` (name_to_handle_at,
/// symbolic links not followed): it changes when an inode number is reused,
/// where birth times can be equal. 0 when the file system gives no handle.
uint32_t cfs_handle_fingerprint_at(int dirfd, const char *path);

/// Gives memory freed after a large scan back to the system (malloc_trim).
void cfs_release_free_memory(void);

/// Reads an inotify sysctl value from /proc/sys/fs/inotify, or -errno.
int64_t cfs_read_proc_number(const char *path);

/// The process's limits on open descriptors (RLIMIT_NOFILE): 0 or -errno.
/// Glibc declares the resource as an enum Swift imports awkwardly.
int cfs_get_open_file_limit(uint64_t *soft, uint64_t *hard);
/// Sets the soft limit on open descriptors, keeping the hard one: 0 or -errno.
int cfs_set_open_file_soft_limit(uint64_t soft);

/// openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS): `path` cannot leave
/// `dirfd`, neither by `..` nor by a symbolic link. -ENOSYS on old kernels.
int cfs_open_beneath(int dirfd, const char *path, int flags, unsigned int mode);
/// `cfs_open_beneath` that never waits on the disk (RESOLVE_CACHED, Linux
/// 5.12): -EAGAIN when the path is not all in the kernel's cache of names,
/// and on kernels without it; not for O_CREAT, O_TRUNC or O_TMPFILE.
int cfs_open_beneath_cached(int dirfd, const char *path, int flags);
/// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): `path` cannot leave
/// `dirfd`, and no symbolic link on the way (the last name included) is
/// followed: -ELOOP where one is. The server's requests open paths this way.
/// -ENOSYS on old kernels.
int cfs_open_within(int dirfd, const char *path, int flags, unsigned int mode);
/// `cfs_open_within` that never waits on the disk, as `cfs_open_beneath_cached`.
int cfs_open_within_cached(int dirfd, const char *path, int flags);
/// renameat2 (flags: `CFS_RENAME_NOREPLACE`, `CFS_RENAME_EXCHANGE`).
int cfs_renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
int cfs_mkdirat(int dirfd, const char *name, unsigned int mode);
/// unlinkat (flags: `CFS_AT_REMOVEDIR`).
int cfs_unlinkat(int dirfd, const char *name, int flags);
/// Bytes available to unprivileged users on the file system of `fd`.
int64_t cfs_available_bytes(int fd);
/// Bytes in use on the file system of `fd`.
int64_t cfs_used_bytes(int fd);
ssize_t cfs_pwrite_all(int fd, const void *buffer, size_t count, int64_t offset);
ssize_t cfs_pread(int fd, void *buffer, size_t count, int64_t offset);
/// preadv2(RWF_NOWAIT): reads only what is in the page cache, -EAGAIN when
/// none of it is (and where the file system or kernel cannot say); -errno.
ssize_t cfs_pread_cached(int fd, void *buffer, size_t count, int64_t offset);
int cfs_fsync(int fd);
int cfs_ftruncate(int fd, int64_t size);
/// The commit a release was built from, as `Packaging/build-release` gives
/// it; NULL in a build from source.
const char *cfs_build_commit(void);

#ifdef __cplusplus
}
#endif
#endif

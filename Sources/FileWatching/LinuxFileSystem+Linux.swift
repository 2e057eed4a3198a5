#if os(Linux)
    import CFileshareShim
    import Glibc

    /// The Linux file-system seam: `statx` with birth time, `getdents64`, inotify
    /// watches added through the open directory descriptor (so the watch is on
    /// exactly the directory that is then listed), and read leases to tell
    /// whether anyone still has a file open for writing.
    final class LinuxFileSystem: FileSystemAccess {
        /// What every directory watch asks the kernel for.
        static let watchMask = UInt32(
            CFS_IN_MODIFY | CFS_IN_ATTRIB | CFS_IN_CLOSE_WRITE | CFS_IN_MOVED_FROM | CFS_IN_MOVED_TO | CFS_IN_CREATE
                | CFS_IN_DELETE | CFS_IN_DELETE_SELF | CFS_IN_MOVE_SELF | CFS_IN_ONLYDIR | CFS_IN_EXCL_UNLINK)

        let rootFD: Int32
        let rootPath: String
        /// The inotify descriptor, or `nil` when the tree is polled.
        let inotifyFD: Int32?
        private let useProcFD: Bool
        private var buffer: UnsafeMutableRawBufferPointer
        /// Whether read leases answer on this file system; switched off after
        /// the first refusal that is not "someone is writing".
        private var leasesWork = true

        /// Opens the root. Throws when it is missing, not a directory, or unreadable.
        init(rootPath: String, inotifyFD: Int32?) throws(FileWatchingError) {
            let fd = cfs_open_directory_at(AT_FDCWD, rootPath)
            if fd < 0 {
                throw LinuxFileSystem.rootError(Errno(rawValue: -fd), path: rootPath)
            }
            self.rootFD = fd
            self.rootPath = rootPath
            self.inotifyFD = inotifyFD
            self.useProcFD = access("/proc/self/fd", F_OK) == 0
            self.buffer = .allocate(byteCount: 64 * 1024, alignment: 8)
        }

        deinit {
            _ = cfs_close(rootFD)
            buffer.deallocate()
        }

        static func rootError(_ errno: Errno, path: String) -> FileWatchingError {
            switch errno {
            case .notFound:
                FileWatchingError(
                    code: .notFound, message: "\(path): no such directory; create it or give another DIR",
                    path: path, systemError: errno)
            case .notDirectory, .loop:
                FileWatchingError(
                    code: .notADirectory, message: "\(path): not a directory; give the folder to watch",
                    path: path, systemError: errno)
            case .accessDenied, .permission:
                FileWatchingError(
                    code: .permissionDenied,
                    message: "\(path): permission denied; grant read and execute access (chmod u+rx)",
                    path: path, systemError: errno)
            default:
                FileWatchingError(code: .io, message: "\(path): \(errno)", path: path, systemError: errno)
            }
        }

        /// The metadata of the root itself.
        func rootMetadata() -> Result<FileMetadata, Errno> {
            Result { () throws(Errno) in convert(try FileStatus(descriptor: rootFD), dirFD: rootFD, name: nil) }
        }

        /// The observer's facts of a status.
        private func convert(_ status: FileStatus, dirFD: Int32, name: UnsafePointer<CChar>?) -> FileMetadata {
            FileMetadata(
                kind: status.kind, identity: FileIdentity(status: status, name: name, in: dirFD),
                size: status.size, modified: status.modified, created: status.born ?? 0)
        }

        private func withCPath<T>(_ path: ItemPath, _ body: (UnsafePointer<CChar>) -> T) -> T {
            if path.isRoot { return body(".") }
            var bytes = path.bytes
            bytes.append(0)
            return bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { body($0) }
            }
        }

        func metadata(at path: ItemPath) -> Result<FileMetadata, Errno> {
            withCPath(path) { cPath in
                Result { () throws(Errno) in
                    convert(try FileStatus(path: cPath, in: rootFD), dirFD: rootFD, name: cPath)
                }
            }
        }

        func listDirectory(at path: ItemPath, watch: Bool) -> DirectoryListing {
            let fd = withCPath(path) { cfs_open_directory_at(rootFD, $0) }
            if fd < 0 {
                return DirectoryListing(watch: .notRequested, entries: .failure(Errno(rawValue: -fd)))
            }
            defer { _ = cfs_close(fd) }
            let listed = (try? FileStatus(descriptor: fd)).map { (device: $0.device, inode: $0.inode) }
            var outcome = WatchOutcome.notRequested
            if watch, let inotifyFD {
                let wd: Int32
                if useProcFD {
                    wd = cfs_inotify_add_watch(inotifyFD, "/proc/self/fd/\(fd)", LinuxFileSystem.watchMask)
                } else {
                    let absolute = path.isRoot ? rootPath : rootPath + "/" + path.description
                    wd = cfs_inotify_add_watch(inotifyFD, absolute, LinuxFileSystem.watchMask)
                }
                outcome = wd < 0 ? .failed(Errno(rawValue: -wd)) : .watching(wd)
            }
            var entries: [DirectoryEntry] = []
            while true {
                let count = cfs_getdents(fd, buffer.baseAddress, buffer.count)
                if count < 0 {
                    return DirectoryListing(
                        watch: outcome, entries: .failure(Errno(rawValue: Int32(-count))), listed: listed)
                }
                if count == 0 { break }
                var offset = 0
                while offset < count {
                    var namePointer: UnsafePointer<CChar>? = nil
                    var type: UInt8 = 0
                    var inode: UInt64 = 0
                    let length = cfs_dirent_at(buffer.baseAddress, offset, &namePointer, &type, &inode)
                    offset += Int(length)
                    guard let namePointer else { continue }
                    let nameLength = strlen(namePointer)
                    if namePointer[0] == 0x2E && (nameLength == 1 || (nameLength == 2 && namePointer[1] == 0x2E)) {
                        continue
                    }
                    let name = namePointer.withMemoryRebound(to: UInt8.self, capacity: nameLength) {
                        Array(UnsafeBufferPointer(start: $0, count: nameLength))
                    }
                    let metadata = Result { () throws(Errno) in
                        convert(try FileStatus(path: namePointer, in: fd), dirFD: fd, name: namePointer)
                    }
                    entries.append(DirectoryEntry(name: name, metadata: metadata))
                }
            }
            return DirectoryListing(watch: outcome, entries: .success(entries), listed: listed)
        }

        func removeWatch(_ descriptor: Int32) {
            if let inotifyFD { _ = cfs_inotify_rm_watch(inotifyFD, descriptor) }
        }

        /// `statfs` magic numbers of file systems whose changes on other machines
        /// raise no inotify events.
        static let remoteFileSystems: [Int64: String] = [
            0x6969: "nfs", 0x517B: "smb", 0xFF53_4D42: "cifs", 0xFE53_4D42: "smb2", 0x6573_5546: "fuse",
            0x0102_1997: "9p", 0x00C3_6400: "ceph", 0x5346_414F: "afs", 0x0BD0_0BD0: "lustre", 0x0BAD_1DEA: "gpfs",
            0x7461_636F: "ocfs2", 0x0116_1970: "gfs2",
        ]

        func eventsUnsupported(at path: ItemPath) -> String? {
            let absolute = path.isRoot ? rootPath : rootPath + "/" + path.description
            let type = cfs_filesystem_type(absolute)
            guard type >= 0, let name = LinuxFileSystem.remoteFileSystems[type] else { return nil }
            return name
        }

        static let identityAttributeName = "user.fileshare.id"

        func identityAttribute(at path: ItemPath) -> ItemID? {
            let absolute = path.isRoot ? rootPath : rootPath + "/" + path.description
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = cfs_get_xattr(absolute, LinuxFileSystem.identityAttributeName, &buffer, buffer.count)
            guard count > 0 else { return nil }
            return ItemID(String(decoding: buffer[..<Int(count)], as: UTF8.self))
        }

        func setIdentityAttribute(_ id: ItemID, at path: ItemPath) {
            let absolute = path.isRoot ? rootPath : rootPath + "/" + path.description
            let value = Array(id.description.utf8)
            _ = cfs_set_xattr(absolute, LinuxFileSystem.identityAttributeName, value, value.count)
        }

        func createIdentityAttribute(_ id: ItemID, at path: ItemPath) -> Bool {
            let absolute = path.isRoot ? rootPath : rootPath + "/" + path.description
            let value = Array(id.description.utf8)
            return cfs_create_xattr(absolute, LinuxFileSystem.identityAttributeName, value, value.count) != -EEXIST
        }

        func readBytes(at path: ItemPath, offset: Int64, count: Int) -> [UInt8]? {
            let fd = withCPath(path) { openat(rootFD, $0, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) }
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: count)
            var filled = 0
            while filled < count {
                let read = bytes.withUnsafeMutableBytes {
                    pread(fd, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
                }
                if read < 0 && errno == EINTR { continue }
                guard read >= 0 else { return nil }
                if read == 0 { break }
                filled += read
            }
            bytes.removeSubrange(filled...)
            return bytes
        }

        /// The kernel reports a rename's two halves while it still holds the
        /// lock of both directories (`vfs_rename` notifies before
        /// `renameat2` unlocks them), and `getdents64` takes the directory's
        /// lock to list it: a listing that returns came after every rename
        /// it waited for, and their events are queued. One small read is
        /// enough to take the lock; what it lists is not used.
        func awaitRenames(inDirectory path: ItemPath, identity: FileIdentity) -> Bool {
            let fd = withCPath(path) { cfs_open_directory_at(rootFD, $0) }
            guard fd >= 0 else { return false }
            defer { _ = cfs_close(fd) }
            guard let status = try? FileStatus(descriptor: fd),
                status.device == identity.device && status.inode == identity.inode
            else { return false }
            return withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { buffer in
                cfs_getdents(fd, buffer.baseAddress, buffer.count) >= 0
            }
        }

        func hasNoWriters(at path: ItemPath) -> Bool? {
            guard leasesWork, !path.isRoot else { return nil }
            let result = withCPath(path) { cfs_has_no_writers_at(rootFD, $0) }
            switch result {
            case 1: return true
            case 0: return false
            case -2: return nil  // ENOENT: gone, the caller will see it
            default:
                // EACCES (not the owner, no CAP_LEASE), EINVAL (no leases on this
                // file system): fall back to the stability window from now on.
                leasesWork = false
                return nil
            }
        }
    }
#endif

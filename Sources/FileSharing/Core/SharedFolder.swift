// The disk layer on Linux: openat2, renameat2, statx and extended attributes
// through the C shim. Another platform gets its own beside it.
#if os(Linux)
    import CFileshareShim
    import FileWatching
    import Glibc
    import Logging

    /// The shared folder on disk: every access goes through the root's
    /// descriptor with `openat2(RESOLVE_BENEATH)`, so no path (`..`, a symbolic
    /// link) leads out of it, and the server's own files (staging for uploads)
    /// live in a hidden folder inside it, on the same file system, so a finished
    /// upload is renamed into place atomically.
    ///
    /// Every method makes blocking system calls: callers run them off the event loops.
    final class SharedFolder: Sendable {
        /// The folder's absolute path.
        let rootPath: String
        /// Where the server's own files are: `.fileshare` inside the root,
        /// or the state folder a read-only share was given.
        let privatePath: String
        let rootFD: Int32
        let stagingFD: Int32
        /// What is kept of what the server replaces and deletes: versions and the trash.
        let history: FolderHistory
        /// The dead properties of items listed, while their change time stays.
        let deadPropertyCache: DeadPropertyCache
        /// Where the server keeps its own files, relative to the root.
        static let privateFolder = ".fileshare"

        /// What the file system says about an item.
        typealias Metadata = FileStatus

        /// Opens (and creates, if missing) the shared folder, its private
        /// staging folder, and its versions and trash.
        /// - Parameter sharedByServers: Whether other servers share the folder
        ///   (through a database): their uploads under way stage files too,
        ///   so only what is an hour old is cleaned at start.
        /// - Parameter stateFolder: Where the server's own files go, when not
        ///   in `.fileshare` inside the root (a read-only share: nothing is
        ///   staged, versioned or trashed there).
        init(
            rootPath: String, stateFolder: String? = nil, history options: HistoryOptions = HistoryOptions(),
            sharedByServers: Bool = false, deadPropertyCache: DeadPropertyCache = DeadPropertyCache(), logger: Logger
        ) throws(FolderError) {
            self.deadPropertyCache = deadPropertyCache
            mkdir(rootPath, 0o755)
            let fd = Glibc.open(rootPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else {
                let errno = Glibc.errno
                throw FolderError(
                    .io, "cannot open \(rootPath): \(Errno(rawValue: errno))", operation: .open, path: .root,
                    systemError: Errno(rawValue: errno))
            }
            self.rootFD = fd
            guard let resolved = realpath(rootPath, nil) else {
                close(fd)
                throw FolderError(.io, "cannot resolve \(rootPath)", operation: .open, path: .root)
            }
            self.rootPath = String(cString: resolved)
            free(resolved)
            let staging: Int32
            if let stateFolder {
                privatePath = stateFolder
                staging = SharedFolder.openStaging(in: stateFolder)
            } else {
                privatePath = self.rootPath + "/" + SharedFolder.privateFolder
                _ = cfs_mkdirat(fd, SharedFolder.privateFolder, 0o700)
                _ = cfs_mkdirat(fd, SharedFolder.privateFolder + "/staging", 0o700)
                staging = openat(
                    fd, SharedFolder.privateFolder + "/staging", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            guard staging >= 0 else {
                let errno = Glibc.errno
                close(fd)
                throw FolderError(
                    .io, "cannot create the staging folder in \(privatePath): \(Errno(rawValue: errno))",
                    operation: .stage,
                    path: .root, systemError: Errno(rawValue: errno))
            }
            self.stagingFD = staging
            do {
                history = try FolderHistory(privatePath: privatePath, options: options, logger: logger)
            } catch {
                close(staging)
                close(fd)
                throw error
            }
            cleanStaging(olderThan: sharedByServers ? 3600 : nil)
        }

        deinit {
            close(stagingFD)
            close(rootFD)
        }

        /// Makes `folder` (and the folders above it, for the server only)
        /// and its `staging` folder, and opens the latter; -1 and `errno` on failure.
        private static func openStaging(in folder: String) -> Int32 {
            var path = ""
            for part in folder.split(separator: "/", omittingEmptySubsequences: true) {
                path += "/" + part
                _ = mkdir(path, 0o700)
            }
            _ = mkdir(folder + "/staging", 0o700)
            return Glibc.open(folder + "/staging", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }

        // MARK: Errors

        /// The error of a failed system call on `path`.
        static func error(_ errno: Int32, _ path: SharePath, doing operation: FolderError.Operation = .open)
            -> FolderError
        {
            FolderError(errno: errno, operation: operation, path: path)
        }

        /// The result of a shim call (`-errno` on failure), or its failure as a folder error.
        @discardableResult
        static func check<Result: FixedWidthInteger & SignedInteger>(
            _ result: Result, _ path: SharePath, doing operation: FolderError.Operation = .open
        ) throws(FolderError) -> Result {
            do { return try valueOrErrno(result) } catch {
                throw FolderError(errno: error.rawValue, operation: operation, path: path)
            }
        }

        /// Calls a libc function (-1 and `errno` on failure, retried while
        /// interrupted), its failure as a folder error.
        static func call<Result: FixedWidthInteger & SignedInteger>(
            _ path: SharePath, doing operation: FolderError.Operation = .open, _ body: () -> Result
        ) throws(FolderError) -> Result {
            do { return try valueOrErrno(body) } catch {
                throw FolderError(errno: error.rawValue, operation: operation, path: path)
            }
        }

        // MARK: Opening and reading

        /// Opens a path beneath the root (following symbolic links only while they stay inside).
        func open(_ path: SharePath, flags: Int32 = O_RDONLY, mode: UInt32 = 0o644) throws(FolderError) -> Int32 {
            let result =
                path.isRoot
                ? cfs_open_within(rootFD, ".", flags, mode)
                : cfs_open_within(rootFD, path.description, flags, mode)
            try SharedFolder.check(result, path)
            return result
        }

        /// ``open(_:flags:mode:)`` when it needs no wait on the disk (every
        /// name on the way is in the kernel's cache), under the same rules;
        /// `nil` when it would wait. The one method here that may run on an
        /// event loop: a cached open of a small file then costs no trip to
        /// the thread pool. Not for flags that create or truncate.
        /// `described` is `path.description` when the caller has it already
        /// (a small read's answer needs it for its audit too: made once).
        func openCached(_ path: SharePath, described: String? = nil, flags: Int32 = O_RDONLY) throws(FolderError)
            -> Int32?
        {
            // The text opened must be the path checked (its names' rules).
            assert(described == nil || described == path.description, "openCached: \(described ?? "") is not \(path)")
            // `withCString`: a native String's own bytes; passed as it is,
            // the String was copied into a new C array for every open.
            let result = (path.isRoot ? "." : described ?? path.description).withCString {
                cfs_open_within_cached(rootFD, $0, flags)
            }
            if result == -EAGAIN { return nil }
            try SharedFolder.check(result, path)
            return result
        }

        /// The metadata of a path (of the target, for a link that stays inside).
        func metadata(_ path: SharePath) throws(FolderError) -> Metadata {
            let fd = try open(path, flags: Int32(CFS_O_PATH))
            defer { close(fd) }
            return try SharedFolder.metadata(fd: fd, path: path)
        }

        /// The metadata of a path, or `nil` when nothing is there.
        func metadataIfPresent(_ path: SharePath) throws(FolderError) -> Metadata? {
            do {
                return try metadata(path)
            } catch  where error.code == .notFound {
                return nil
            }
        }

        static func metadata(fd: Int32, path: SharePath) throws(FolderError) -> Metadata {
            do throws(Errno) {
                return try FileStatus(descriptor: fd)
            } catch {
                throw SharedFolder.error(error.rawValue, path, doing: .read)
            }
        }

        // MARK: Folders

        /// Opens the folder that holds `path`, creating missing folders when asked.
        func parent(of path: SharePath, creating: Bool) throws(FolderError) -> Int32 {
            let parent = path.parent
            if !creating { return try open(parent, flags: O_RDONLY | O_DIRECTORY) }
            var current = try open(.root, flags: O_RDONLY | O_DIRECTORY)
            var prefix = SharePath.root
            for name in parent.components {
                prefix = prefix.child(name)
                var next = cfs_open_within(rootFD, prefix.description, O_RDONLY | O_DIRECTORY, 0)
                if next == -ENOENT {
                    let made = cfs_mkdirat(current, name, 0o755)
                    if made < 0 && made != -EEXIST {
                        close(current)
                        throw SharedFolder.error(-made, prefix, doing: .makeFolder)
                    }
                    next = cfs_open_within(rootFD, prefix.description, O_RDONLY | O_DIRECTORY, 0)
                }
                close(current)
                if next < 0 {
                    throw next == -ENOTDIR
                        ? FolderError(
                            .parentNotFolder, "'\(prefix)' is a file, not a folder", operation: .makeFolder,
                            path: prefix)
                        : SharedFolder.error(-next, prefix)
                }
                current = next
            }
            return current
        }

        /// Creates a folder; 409 when something is there.
        func makeDirectory(_ path: SharePath) throws(FolderError) {
            guard !path.isRoot else {
                throw FolderError(.exists, "the shared folder already exists", operation: .makeFolder, path: path)
            }
            let parentFD = try parent(of: path, creating: true)
            defer { close(parentFD) }
            let result = cfs_mkdirat(parentFD, path.name, 0o755)
            try SharedFolder.check(result, path, doing: .makeFolder)
        }

        /// Removes a file, or a folder with everything in it: into the trash, in one rename.
        func remove(_ path: SharePath) throws(FolderError) {
            guard !path.isRoot else {
                throw FolderError(
                    .rootUnchangeable, "the shared folder itself cannot be deleted", operation: .remove, path: path)
            }
            let parentFD = try parent(of: path, creating: false)
            defer { close(parentFD) }
            try history.moveToTrash(path.name, in: parentFD, path: path)
        }

        static func removeEntry(_ name: String, in directory: Int32, path: SharePath) throws(FolderError) {
            let file = cfs_unlinkat(directory, name, 0)
            if file == 0 { return }
            guard file == -EISDIR else { throw error(-file, path, doing: .remove) }
            let fd = try SharedFolder.call(path, doing: .remove) {
                openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            var names: [String] = []
            do {
                defer { close(fd) }
                names = try entries(fd: fd, path: path)
                for child in names { try removeEntry(child, in: fd, path: path) }
            }
            let result = cfs_unlinkat(directory, name, Int32(CFS_AT_REMOVEDIR))
            try SharedFolder.check(result, path, doing: .remove)
        }

        /// The names in an open folder (`.` and `..` left out), from the
        /// first: read through a description of its own, since `getdents64`
        /// goes on from where the descriptor's last read stopped — a second
        /// listing of a long-lived descriptor (the staging folder's) would
        /// be empty, and two at once would split the names between them.
        static func entries(fd: Int32, path: SharePath) throws(FolderError) -> [String] {
            let own = try SharedFolder.call(path, doing: .read) {
                openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            defer { close(own) }
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64 * 1024, alignment: 8)
            defer { buffer.deallocate() }
            var names: [String] = []
            while true {
                let count = cfs_getdents(own, buffer, 64 * 1024)
                try SharedFolder.check(count, path, doing: .read)
                if count == 0 { return names }
                var offset = 0
                while offset < count {
                    var name: UnsafePointer<CChar>? = nil
                    var type: UInt8 = 0
                    var inode: UInt64 = 0
                    offset += Int(cfs_dirent_at(buffer, offset, &name, &type, &inode))
                    guard let name else { continue }
                    let text = String(cString: name)
                    if text != "." && text != ".." { names.append(text) }
                }
            }
        }

        /// Renames or moves; 409 when the destination exists and `overwrite`
        /// is false. What it replaces is kept: a file as a version, a folder
        /// (or a file replaced by a folder) in the trash.
        func move(from: SharePath, to: SharePath, overwrite: Bool) throws(FolderError) {
            guard !from.isRoot, !to.isRoot else {
                throw FolderError(
                    .rootUnchangeable, "the shared folder itself cannot be moved", operation: .move, path: .root)
            }
            if to.isSame(asOrUnder: from) && to != from {
                throw FolderError(.intoItself, "a folder cannot be moved into itself", operation: .move, path: to)
            }
            let source = try parent(of: from, creating: false)
            defer { close(source) }
            let moved = try metadataNoFollow(name: from.name, in: source, path: from)
            let destination = try parent(of: to, creating: true)
            defer { close(destination) }
            var result = cfs_renameat2(source, from.name, destination, to.name, UInt32(CFS_RENAME_NOREPLACE))
            if result == -EEXIST && overwrite {
                let target = try metadataNoFollow(name: to.name, in: destination, path: to)
                // rename(2) replaces a file with a file in one step; a folder on
                // either side goes to the trash first.
                if target.kind == .directory || moved.kind == .directory {
                    try history.moveToTrash(to.name, in: destination, path: to)
                    result = cfs_renameat2(source, from.name, destination, to.name, UInt32(CFS_RENAME_NOREPLACE))
                } else {
                    let kept = try history.keepReplaced(to.name, in: destination, path: to)
                    result = cfs_renameat2(source, from.name, destination, to.name, 0)
                    if result != 0 { history.forget(kept) }
                }
            }
            if result == -EEXIST {
                throw FolderError(
                    .exists, "'\(to)' already exists; send \"overwrite\": true to replace it", operation: .move,
                    path: to,
                    systemError: Errno(rawValue: EEXIST))
            }
            try SharedFolder.check(result, to, doing: .move)
        }

        func metadataNoFollow(name: String, in directory: Int32, path: SharePath) throws(FolderError) -> Metadata {
            do throws(Errno) {
                return try FileStatus(name: name, in: directory)
            } catch {
                throw SharedFolder.error(error.rawValue, path, doing: .read)
            }
        }

        // MARK: Staging

        /// Removes a staging file or folder (a failed or cancelled upload or copy).
        func discardStaged(named name: String) {
            if cfs_unlinkat(stagingFD, name, 0) == -EISDIR {
                try? SharedFolder.removeEntry(name, in: stagingFD, path: .root)
            }
        }

        /// The metadata of a staging file, or `nil` when it is gone.
        func stagingMetadata(named name: String) throws(FolderError) -> Metadata? {
            do throws(Errno) {
                return try FileStatus(name: name, in: stagingFD)
            } catch  where error == .notFound {
                return nil
            } catch {
                throw SharedFolder.error(error.rawValue, .root, doing: .stage)
            }
        }

        /// Copies the WebDAV properties of a staging file to an open file.
        func copyStagingProperties(from name: String, to fd: Int32) {
            let source = openat(stagingFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
            guard source >= 0 else { return }
            defer { close(source) }
            DeadProperties.copy(from: source, to: fd)
        }

        /// Opens a staging file for reading its properties; `nil` when it is gone.
        func openStagingForProperties(named name: String) -> Int32? {
            let fd = openat(stagingFD, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
            return fd >= 0 ? fd : nil
        }

        /// Whether a staging file exists (for resumable uploads after a restart).
        func stagingFileSize(named name: String) -> Int64? {
            (try? FileStatus(name: name, in: stagingFD))?.size
        }

        /// Removes what interrupted uploads and copies left behind, except
        /// resumable uploads (``ResumableUploads`` keeps those until they
        /// expire); empty files WebDAV clients created are put in place.
        /// - Parameter seconds: Only what was not changed for this long (`nil`: everything).
        private func cleanStaging(olderThan seconds: Int64?) {
            recoverPlaceholders()
            guard let names = try? SharedFolder.entries(fd: stagingFD, path: .root) else { return }
            let now = Int64(time(nil))
            for name in names where !name.hasPrefix(ResumableUploads.prefix) {
                if let seconds, let status = try? FileStatus(name: name, in: stagingFD),
                    now - status.modified / 1_000_000_000 < seconds
                {
                    continue
                }
                try? SharedFolder.removeEntry(name, in: stagingFD, path: .root)
            }
        }

        /// Bytes free for new files.
        var availableBytes: Int64 { max(0, cfs_available_bytes(rootFD)) }
    }
#endif

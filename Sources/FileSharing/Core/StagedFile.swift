// The disk layer on Linux: openat2, renameat2, statx and extended attributes
// through the C shim. Another platform gets its own beside it.
#if os(Linux)
    import CFileshareShim
    import FileWatching
    import Foundation
    import Glibc
    import NIOCore
    import Synchronization

    /// A file (or a folder, for a copy) on its way into the shared folder: made
    /// in the staging folder (on the same file system), written, checked,
    /// flushed, and renamed into place in one step, so nobody ever sees it half
    /// written. Every other way out removes it: ``discard()``, or the last
    /// reference going away before ``commit(to:replacing:creatingParents:)``.
    ///
    /// A resumable upload's file is the exception: it stays in the staging
    /// folder between requests until it is committed or discarded.
    ///
    /// Every method makes blocking system calls: callers run them off the event loops.
    final class StagedFile: Sendable {
        /// What may be at the destination when the file is put in place.
        enum Replacement: Sendable {
            /// Nothing: the destination must be free.
            case nothing
            /// A file (replaced in one rename); a folder there is an error.
            case file
            /// Anything: a folder there is removed first.
            case anything
        }

        /// The open descriptor: the file's, or the folder's.
        let descriptor: Int32
        /// The name in the staging folder.
        let name: String
        private let folder: SharedFolder
        private let keepsOnExit: Bool
        /// Whether the file is in place, or removed: either way nothing is left to do.
        private let settled = Atomic<Bool>(false)

        private init(descriptor: Int32, name: String, folder: SharedFolder, keepsOnExit: Bool) {
            self.descriptor = descriptor
            self.name = name
            self.folder = folder
            self.keepsOnExit = keepsOnExit
        }

        /// A new, empty file in the staging folder.
        /// - Parameters:
        ///   - prefix: What the name starts with (it says what made it, for a person looking at the folder).
        ///   - mode: The permissions the file will have.
        static func create(in folder: SharedFolder, prefix: String, mode: mode_t = 0o644) throws(FolderError)
            -> StagedFile
        {
            try create(in: folder, named: prefix + UUID().uuidString, mode: mode, keepsOnExit: false)
        }

        /// A new, empty file in the staging folder under a chosen name; with
        /// `keepsOnExit` it stays there until committed or discarded (a resumable upload).
        static func create(in folder: SharedFolder, named name: String, mode: mode_t = 0o644, keepsOnExit: Bool)
            throws(FolderError)
            -> StagedFile
        {
            let fd = try SharedFolder.call(.root, doing: .stage) {
                openat(folder.stagingFD, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            }
            return StagedFile(descriptor: fd, name: name, folder: folder, keepsOnExit: keepsOnExit)
        }

        /// A file staged before (a resumed upload); it stays until committed or
        /// discarded. `nil` when there is none of that name.
        static func reopen(in folder: SharedFolder, named name: String) -> StagedFile? {
            let fd = openat(folder.stagingFD, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { return nil }
            return StagedFile(descriptor: fd, name: name, folder: folder, keepsOnExit: true)
        }

        /// A new folder in the staging folder (a copy of a folder is built in it).
        static func makeFolder(in folder: SharedFolder, prefix: String, mode: UInt32) throws(FolderError) -> StagedFile
        {
            let name = prefix + UUID().uuidString
            let made = cfs_mkdirat(folder.stagingFD, name, mode)
            try SharedFolder.check(made, .root, doing: .stage)
            let fd = openat(folder.stagingFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 {
                let failure = errno
                try? SharedFolder.removeEntry(name, in: folder.stagingFD, path: .root)
                throw SharedFolder.error(failure, .root, doing: .stage)
            }
            return StagedFile(descriptor: fd, name: name, folder: folder, keepsOnExit: false)
        }

        deinit {
            close(descriptor)
            if !keepsOnExit && !settled.load(ordering: .acquiring) { folder.discardStaged(named: name) }
        }

        /// The bytes written so far.
        func size() throws(FolderError) -> Int64 {
            try SharedFolder.metadata(fd: descriptor, path: .root).size
        }

        /// Writes `bytes` at `offset`.
        func write(_ bytes: ByteBuffer, at offset: Int64, path: SharePath) throws(FolderError) {
            let result = bytes.withUnsafeReadableBytes { raw in
                cfs_pwrite_all(descriptor, raw.baseAddress, raw.count, offset)
            }
            try SharedFolder.check(result, path, doing: .write)
        }

        /// Flushes the content to the disk, and puts the file in place at `path`
        /// in one rename. Returns whether it replaced something.
        /// - Parameters:
        ///   - replacing: What may be at `path`.
        ///   - creatingParents: Whether missing folders on the way are made (else
        ///     a missing one is ``FolderError/Code/parentMissing``).
        func commit(to path: SharePath, replacing: Replacement, creatingParents: Bool) throws(FolderError) -> Bool {
            guard !path.isRoot else {
                throw replacing == .file
                    ? FolderError(.isFolder, "the shared folder is a folder", operation: .commit, path: path)
                    : FolderError(
                        .rootUnchangeable, "the shared folder itself cannot be replaced", operation: .commit, path: path
                    )
            }
            let synced = cfs_fsync(descriptor)
            try SharedFolder.check(synced, path, doing: .commit)
            let parentFD =
                creatingParents ? try folder.parent(of: path, creating: true) : try folder.existingParent(of: path)
            defer { close(parentFD) }
            let replaced = try place(at: path, in: parentFD, replacing: replacing)
            settled.store(true, ordering: .releasing)
            return replaced
        }

        /// Exchanges this staged folder with the folder at `path` in one
        /// `renameat2(RENAME_EXCHANGE)` (a reader sees the old tree or the new
        /// one, never a mix), and keeps the tree swapped out as a version of
        /// `id`. When it cannot be kept, the exchange is undone: nothing is lost.
        func exchangeFolder(at path: SharePath, id: ItemID) throws(FolderError) {
            let parentFD = try folder.existingParent(of: path)
            defer { close(parentFD) }
            let existing = try folder.metadataNoFollow(name: path.name, in: parentFD, path: path)
            guard existing.kind == .directory else {
                throw FolderError(.unsupportedKind, "'\(path)' is not a folder", operation: .commit, path: path)
            }
            let exchanged = cfs_renameat2(folder.stagingFD, name, parentFD, path.name, UInt32(CFS_RENAME_EXCHANGE))
            try SharedFolder.check(exchanged, path, doing: .commit)
            do {
                try folder.history.keepReplacedFolder(name, in: folder.stagingFD, id: id, path: path)
            } catch {
                _ = cfs_renameat2(folder.stagingFD, name, parentFD, path.name, UInt32(CFS_RENAME_EXCHANGE))
                throw error
            }
            _ = cfs_fsync(parentFD)
            settled.store(true, ordering: .releasing)
        }

        /// Puts the file in place as Finder's kept metadata for `path` (see
        /// `SharedFolder+ClientMetadata`); returns whether it replaced one.
        func commitAsClientMetadata(for path: SharePath) throws(FolderError) -> Bool {
            let replaced = try folder.commitClientMetadata(staging: name, to: path)
            settled.store(true, ordering: .releasing)
            return replaced
        }

        /// Removes the staged file now.
        func discard() {
            guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
            folder.discardStaged(named: name)
        }

        private func place(at path: SharePath, in parentFD: Int32, replacing: Replacement) throws(FolderError) -> Bool {
            let stagingFD = folder.stagingFD
            let first = cfs_renameat2(stagingFD, name, parentFD, path.name, UInt32(CFS_RENAME_NOREPLACE))
            if first == 0 { return false }
            guard first == -EEXIST else { throw SharedFolder.error(-first, path, doing: .commit) }
            let existing = try folder.metadataNoFollow(name: path.name, in: parentFD, path: path)
            switch replacing {
            case .nothing:
                throw FolderError(
                    .exists, "'\(path)' already exists", operation: .commit, path: path,
                    systemError: Errno(rawValue: EEXIST))
            case .file:
                if existing.kind == .directory {
                    throw FolderError(.isFolder, "'\(path)' is a folder", operation: .commit, path: path)
                }
            case .anything:
                // rename(2) replaces a file with a file in one step; a folder on
                // either side goes to the trash first.
                let staged = try SharedFolder.metadata(fd: descriptor, path: path)
                if existing.kind == .directory || staged.kind == .directory {
                    try folder.history.moveToTrash(path.name, in: parentFD, path: path)
                    let second = cfs_renameat2(stagingFD, name, parentFD, path.name, UInt32(CFS_RENAME_NOREPLACE))
                    try SharedFolder.check(second, path, doing: .commit)
                    return true
                }
            }
            // The file replaced lives on as a version: its inode is linked
            // into the store before the rename unlinks it here.
            let staged = try? SharedFolder.metadata(fd: descriptor, path: path)
            let kept = try folder.history.keepReplaced(path.name, in: parentFD, path: path, replacement: staged)
            let second = cfs_renameat2(stagingFD, name, parentFD, path.name, 0)
            if second != 0 { folder.history.forget(kept) }
            try SharedFolder.check(second, path, doing: .commit)
            return true
        }
    }
#endif

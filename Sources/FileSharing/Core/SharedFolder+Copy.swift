// The disk layer on Linux: openat2, renameat2, statx and extended attributes
// through the C shim. Another platform gets its own beside it.
#if os(Linux)
    import CFileshareShim
    import FileWatching
    import Foundation
    import Glibc

    extension SharedFolder {
        /// Whether something is at `path` (not following a final symbolic link); `nil` when not.
        func existingKind(_ path: SharePath) throws(FolderError) -> ItemKind? {
            if path.isRoot { return .directory }
            let parentFD = try open(path.parent, flags: O_RDONLY | O_DIRECTORY)
            defer { close(parentFD) }
            do throws(Errno) {
                return try FileStatus(name: path.name, in: parentFD).kind
            } catch  where error == .notFound {
                return nil
            } catch {
                throw SharedFolder.error(error.rawValue, path, doing: .read)
            }
        }

        /// Opens the folder that holds `path`; ``FolderError/Code/parentMissing``
        /// when it is missing (WebDAV never creates parents).
        func existingParent(of path: SharePath) throws(FolderError) -> Int32 {
            do throws(FolderError) {
                return try open(path.parent, flags: O_RDONLY | O_DIRECTORY)
            } catch  where error.code == .notFound {
                throw FolderError(
                    .parentMissing, "the folder '\(path.parent)' does not exist; create it first", operation: .open,
                    path: path.parent,
                    systemError: error.systemError)
            }
        }

        /// Copies a file or folder (with everything in it unless `shallow`) into
        /// place in one rename: the copy is staged, flushed, and renamed over
        /// the destination (replaced only when `overwrite`). Returns whether
        /// something was replaced.
        func copy(from source: SharePath, to destination: SharePath, shallow: Bool, overwrite: Bool) throws(FolderError)
            -> Bool
        {
            guard !destination.isRoot else {
                throw FolderError(
                    .rootUnchangeable, "the shared folder itself cannot be replaced", operation: .copy,
                    path: destination)
            }
            if destination.isSame(asOrUnder: source) {
                throw FolderError(
                    .intoItself, "a folder cannot be copied into itself", operation: .copy, path: destination)
            }
            let sourceFD = try open(source, flags: O_RDONLY | O_NONBLOCK)
            defer { close(sourceFD) }
            let metadata = try SharedFolder.metadata(fd: sourceFD, path: source)
            close(try existingParent(of: destination))
            let staged = try stage(copyOf: sourceFD, kind: metadata.kind, shallow: shallow, path: source)
            return try staged.commit(
                to: destination, replacing: overwrite ? .anything : .nothing, creatingParents: false)
        }

        /// A staged copy of an open file or folder.
        private func stage(copyOf fd: Int32, kind: ItemKind, shallow: Bool, path: SharePath) throws(FolderError)
            -> StagedFile
        {
            let mode = (try? FileStatus(descriptor: fd))?.permissions ?? 0
            switch kind {
            case .file:
                let staged = try StagedFile.create(in: self, prefix: "copy-", mode: mode_t(mode))
                try SharedFolder.copyContent(of: fd, to: staged.descriptor, path: path)
                return staged
            case .directory:
                let staged = try StagedFile.makeFolder(
                    in: self, prefix: "copy-", mode: mode == 0 ? 0o755 : mode | 0o700)
                DeadProperties.copy(from: fd, to: staged.descriptor)
                if !shallow { try copyChildren(of: fd, into: staged.descriptor, path: path) }
                return staged
            case .symlink, .other:
                throw FolderError(.unsupportedKind, "'\(path)' is not a file or folder", operation: .copy, path: path)
            }
        }

        /// A file's bytes and properties into an empty open file, flushed.
        private static func copyContent(of fd: Int32, to out: Int32, path: SharePath) throws(FolderError) {
            let copied = cfs_copy_file(fd, out)
            try SharedFolder.check(copied, path, doing: .copy)
            DeadProperties.copy(from: fd, to: out)
            let synced = cfs_fsync(out)
            try SharedFolder.check(synced, path, doing: .copy)
        }

        /// Copies what an open folder holds into the open folder `out`.
        private func copyChildren(of fd: Int32, into out: Int32, path: SharePath) throws(FolderError) {
            for child in try SharedFolder.entries(fd: fd, path: path) {
                guard let childKind = (try? FileStatus(name: child, in: fd))?.kind else { continue }
                let childPath = path.child(child)
                switch childKind {
                case .symlink:
                    var target = [CChar](repeating: 0, count: 4097)
                    guard cfs_readlink_at(fd, child, &target, target.count) >= 0 else { continue }
                    let made = cfs_symlink_at(target, out, child)
                    try SharedFolder.check(made, childPath, doing: .copy)
                case .file, .directory:
                    let flags = childKind == .directory ? O_RDONLY | O_DIRECTORY : O_RDONLY | O_NONBLOCK
                    let inner = try SharedFolder.call(childPath, doing: .copy) {
                        openat(fd, child, flags | O_NOFOLLOW | O_CLOEXEC)
                    }
                    defer { close(inner) }
                    try copyItem(inner, kind: childKind, named: child, into: out, path: childPath)
                case .other:
                    continue  // fifos, sockets and devices are not copied
                }
            }
        }

        /// Copies an open item as `name` into the open folder `directory` (inside a staged copy).
        private func copyItem(_ fd: Int32, kind: ItemKind, named name: String, into directory: Int32, path: SharePath)
            throws(FolderError)
        {
            let mode = (try? FileStatus(descriptor: fd))?.permissions ?? 0
            switch kind {
            case .file:
                let out = try SharedFolder.call(path, doing: .copy) {
                    openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(mode))
                }
                defer { close(out) }
                try SharedFolder.copyContent(of: fd, to: out, path: path)
            case .directory:
                let made = cfs_mkdirat(directory, name, mode == 0 ? 0o755 : mode | 0o700)
                try SharedFolder.check(made, path, doing: .copy)
                let out = try SharedFolder.call(path, doing: .copy) {
                    openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                }
                defer { close(out) }
                DeadProperties.copy(from: fd, to: out)
                try copyChildren(of: fd, into: out, path: path)
            case .symlink, .other:
                throw FolderError(.unsupportedKind, "'\(path)' is not a file or folder", operation: .copy, path: path)
            }
        }

        // MARK: Empty files held back

        /// The attribute that names where a held-back empty file belongs.
        static let placeholderTarget = "user.fileshare.target"

        /// An empty file in the staging folder that will become `path`: WebDAV
        /// clients create a file empty before they write it (Finder's empty PUT,
        /// Windows' LOCK on a new name), and holding the empty file back until
        /// its content comes means one `added` event for one new file.
        func createPlaceholder(for path: SharePath) throws(FolderError) -> String {
            let name = "dav-empty-" + UUID().uuidString
            let fd = try SharedFolder.call(.root, doing: .stage) {
                openat(stagingFD, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
            }
            defer { close(fd) }
            let target = Array(path.description.utf8)
            _ = target.withUnsafeBytes { cfs_fset_xattr(fd, SharedFolder.placeholderTarget, $0.baseAddress, $0.count) }
            return name
        }

        /// Puts a held-back empty file in place, unless something took its name
        /// meanwhile (then it is dropped: what is there wins).
        func materializePlaceholder(named name: String, at path: SharePath) throws(FolderError) {
            let fd = openat(stagingFD, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
            if fd >= 0 {
                _ = cfs_fremove_xattr(fd, SharedFolder.placeholderTarget)
                _ = cfs_fsync(fd)
                close(fd)
            }
            defer { discardStaged(named: name) }
            let parentFD = try existingParent(of: path)
            defer { close(parentFD) }
            let result = cfs_renameat2(stagingFD, name, parentFD, path.name, UInt32(CFS_RENAME_NOREPLACE))
            if result < 0 && result != -EEXIST { throw SharedFolder.error(-result, path, doing: .commit) }
        }

        /// Empty files held back when the server stopped: put in place now.
        func recoverPlaceholders() {
            guard let names = try? SharedFolder.entries(fd: stagingFD, path: .root) else { return }
            for name in names where name.hasPrefix("dav-empty-") {
                var buffer = [UInt8](repeating: 0, count: 8192)
                let fd = openat(stagingFD, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
                guard fd >= 0 else { continue }
                let count = buffer.withUnsafeMutableBytes {
                    cfs_fget_xattr(fd, SharedFolder.placeholderTarget, $0.baseAddress, $0.count)
                }
                close(fd)
                guard count > 0, let text = String(validating: buffer[..<count], as: UTF8.self),
                    let path = try? SharePath(plain: text), !path.isRoot
                else {
                    discardStaged(named: name)
                    continue
                }
                try? materializePlaceholder(named: name, at: path)
            }
        }
    }

    extension SharedFolder {
        /// A member of a folder, as WebDAV shows it.
        typealias DAVChild = (name: String, metadata: Metadata, properties: DeadProperties.Entries)

        /// A folder's shared members for WebDAV: hidden names left out, and
        /// symbolic links too (requests never follow one: WebDAV, which has
        /// no way to show a link, leaves them out as ZIP archives do), with
        /// the WebDAV properties when asked.
        func davChildren(of path: SharePath, properties: Bool = false) throws(FolderError) -> [DAVChild] {
            let directory = try open(path, flags: O_RDONLY | O_DIRECTORY)
            defer { close(directory) }
            var result: [DAVChild] = []
            for name in try SharedFolder.entries(fd: directory, path: path) where !name.hasPrefix(".") {
                guard let metadata = try? FileStatus(name: name, in: directory),
                    metadata.kind == .file || metadata.kind == .directory
                else { continue }
                result.append((name, metadata, []))
            }
            guard properties else { return result }
            let kept = deadPropertyCache.properties(of: result.map(\.metadata))
            var read: [(status: FileStatus, properties: DeadProperties.Entries)] = []
            for index in result.indices {
                if let properties = kept[index] {
                    result[index].properties = properties
                    continue
                }
                result[index].properties = DeadProperties.read(name: result[index].name, in: directory)
                read.append((result[index].metadata, result[index].properties))
            }
            deadPropertyCache.keep(read)
            return result
        }
    }
#endif

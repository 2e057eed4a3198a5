// The disk layer on Linux: openat2, renameat2, statx and extended attributes
// through the C shim. Another platform gets its own beside it.
#if os(Linux)
    import CFileshareShim
    import FileWatching
    import Glibc

    /// Finder's `._name` and `.DS_Store` files, kept apart in
    /// `.fileshare/dav-metadata/` (a mirror of the folders they belong to):
    /// Finder fails a copy when it cannot write them, and nobody else should see
    /// them. They move and go with their folder when it is moved or deleted
    /// through WebDAV.
    extension SharedFolder {
        static let clientMetadataFolder = "dav-metadata"
        /// The largest such file kept (they hold resource forks and Finder info).
        static let clientMetadataLimit: Int64 = 16 * 1024 * 1024

        private func clientMetadataRoot() throws(FolderError) -> Int32 {
            let relative = SharedFolder.privateFolder + "/" + SharedFolder.clientMetadataFolder
            _ = cfs_mkdirat(rootFD, relative, 0o700)
            let fd = cfs_open_within(rootFD, relative, O_RDONLY | O_DIRECTORY, 0)
            try SharedFolder.check(fd, .root, doing: .open)
            return fd
        }

        /// Opens the kept file for `path` (`nil` when there is none).
        func openClientMetadata(_ path: SharePath) throws(FolderError) -> Int32? {
            let root = try clientMetadataRoot()
            defer { close(root) }
            let fd = cfs_open_within(root, path.description, O_RDONLY | O_NONBLOCK, 0)
            if fd == -ENOENT || fd == -ENOTDIR { return nil }
            try SharedFolder.check(fd, path)
            return fd
        }

        /// Puts a complete staging file in place as the kept file for `path`; returns whether it replaced one.
        func commitClientMetadata(staging name: String, to path: SharePath) throws(FolderError) -> Bool {
            let root = try clientMetadataRoot()
            var directory = root
            defer { close(directory) }
            for component in path.parent.components {
                _ = cfs_mkdirat(directory, component, 0o700)
                let next = cfs_open_within(directory, component, O_RDONLY | O_DIRECTORY, 0)
                try SharedFolder.check(next, path)
                close(directory)
                directory = next
            }
            let existed = (try? FileStatus(name: path.name, in: directory)) != nil
            let result = cfs_renameat2(stagingFD, name, directory, path.name, 0)
            try SharedFolder.check(result, path, doing: .commit)
            return existed
        }

        /// Removes the kept files at or under `path`; returns whether there was one.
        @discardableResult
        func removeClientMetadata(_ path: SharePath) -> Bool {
            guard let root = try? clientMetadataRoot() else { return false }
            defer { close(root) }
            let parent =
                path.isRoot
                ? -1
                : cfs_open_within(root, path.parent.isRoot ? "." : path.parent.description, O_RDONLY | O_DIRECTORY, 0)
            guard parent >= 0 else { return false }
            defer { close(parent) }
            return (try? SharedFolder.removeEntry(path.name, in: parent, path: path)) != nil
        }

        /// Moves the kept files of `from` (a file's, or a folder's whole mirror) to `to`.
        func moveClientMetadata(from: SharePath, to: SharePath) {
            guard !from.isRoot, !to.isRoot, let root = try? clientMetadataRoot() else { return }
            defer { close(root) }
            let source = cfs_open_within(
                root, from.parent.isRoot ? "." : from.parent.description, O_RDONLY | O_DIRECTORY, 0)
            guard source >= 0 else { return }
            defer { close(source) }
            var directory = cfs_open_within(root, ".", O_RDONLY | O_DIRECTORY, 0)
            guard directory >= 0 else { return }
            for component in to.parent.components {
                _ = cfs_mkdirat(directory, component, 0o700)
                let next = cfs_open_within(directory, component, O_RDONLY | O_DIRECTORY, 0)
                close(directory)
                guard next >= 0 else { return }
                directory = next
            }
            defer { close(directory) }
            try? SharedFolder.removeEntry(to.name, in: directory, path: to)
            _ = cfs_renameat2(source, from.name, directory, to.name, 0)
        }
    }
#endif

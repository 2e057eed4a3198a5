#if os(Linux)
    import CFileshareShim

    extension FileStatus {
        init(_ raw: cfs_stat) {
            let kind: ItemKind =
                switch Int32(raw.kind) {
                case Int32(CFS_KIND_FILE): .file
                case Int32(CFS_KIND_DIRECTORY): .directory
                case Int32(CFS_KIND_SYMLINK): .symlink
                default: .other
                }
            self.init(
                kind: kind, device: raw.dev, inode: raw.ino, size: Int64(bitPattern: raw.size), modified: raw.mtime_ns,
                changed: raw.ctime_ns, born: raw.btime_ns != 0 ? raw.btime_ns : nil, permissions: raw.mode & 0o7777,
                linkCount: raw.nlink, owner: raw.uid)
        }

        /// The status of an open descriptor (`statx` with `AT_EMPTY_PATH`).
        /// - Throws: ``Errno`` when the call fails.
        public init(descriptor: Int32) throws(Errno) {
            var raw = cfs_stat()
            try valueOrErrno(cfs_fstat(descriptor, &raw))
            self.init(raw)
        }

        /// The status of `name` in the open folder `directory`, not following a
        /// final symbolic link.
        /// - Throws: ``Errno`` when the call fails.
        public init(name: String, in directory: Int32) throws(Errno) {
            var raw = cfs_stat()
            try valueOrErrno(cfs_lstat_at(directory, name, &raw))
            self.init(raw)
        }

        /// The status of `path` (relative to `directory`, a C string), not following a final symbolic link.
        init(path: UnsafePointer<CChar>, in directory: Int32) throws(Errno) {
            var raw = cfs_stat()
            try valueOrErrno(cfs_lstat_at(directory, path, &raw))
            self.init(raw)
        }
    }
#endif

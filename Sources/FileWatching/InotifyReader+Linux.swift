#if os(Linux)
    import CFileshareShim

    /// Reads raw inotify records and turns them into ``SourceEvent`` values.
    final class InotifyReader: EventSource {
        let fd: Int32
        var descriptor: Int32 { fd }
        private let buffer: UnsafeMutableRawBufferPointer

        /// Creates an inotify instance.
        init() throws(FileWatchingError) {
            let fd = cfs_inotify_init()
            if fd < 0 {
                let errno = Errno(rawValue: -fd)
                if errno == .tooManyFiles {
                    throw FileWatchingError(
                        code: .watchLimit,
                        message: "no inotify instance is left for this user; raise the limit with "
                            + "`sysctl fs.inotify.max_user_instances=1024`",
                        systemError: errno)
                }
                throw FileWatchingError(code: .io, message: "inotify_init1 failed: \(errno)", systemError: errno)
            }
            self.fd = fd
            // Large enough for thousands of events per read.
            self.buffer = .allocate(byteCount: 256 * 1024, alignment: 8)
        }

        deinit {
            _ = cfs_close(fd)
            buffer.deallocate()
        }

        /// Reads what is queued now without blocking, appending to `events`.
        /// Returns the number of events read (0 when the queue is empty).
        func readAvailable(into events: inout [SourceEvent]) -> Int {
            let count = cfs_read(fd, buffer.baseAddress, buffer.count)
            guard count > 0 else { return 0 }
            var offset = 0
            var read = 0
            let base = buffer.baseAddress!
            while offset + 16 <= count {
                let wd = base.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                let mask = base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                let cookie = base.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self)
                let length = Int(base.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                var name: [UInt8]? = nil
                if length > 0 {
                    let start = base.advanced(by: offset + 16).assumingMemoryBound(to: UInt8.self)
                    var end = 0
                    while end < length && start[end] != 0 { end += 1 }
                    name = Array(UnsafeBufferPointer(start: start, count: end))
                }
                offset += 16 + length
                read += 1
                InotifyReader.translate(wd: wd, mask: mask, cookie: cookie, name: name, into: &events)
            }
            return read
        }

        static func translate(wd: Int32, mask: UInt32, cookie: UInt32, name: [UInt8]?, into events: inout [SourceEvent])
        {
            let isDirectory = mask & UInt32(CFS_IN_ISDIR) != 0
            func add(_ kind: SourceEvent.Kind) {
                events.append(SourceEvent(watch: wd, kind: kind, name: name, isDirectory: isDirectory))
            }
            if mask & UInt32(CFS_IN_Q_OVERFLOW) != 0 { add(.overflow); return }
            if mask & UInt32(CFS_IN_CREATE) != 0 { add(.created) }
            if mask & UInt32(CFS_IN_MOVED_FROM) != 0 { add(.movedFrom(cookie: cookie)) }
            if mask & UInt32(CFS_IN_MOVED_TO) != 0 { add(.movedTo(cookie: cookie)) }
            if mask & UInt32(CFS_IN_MODIFY) != 0 { add(.modified) }
            if mask & UInt32(CFS_IN_ATTRIB) != 0 { add(.attributes) }
            if mask & UInt32(CFS_IN_CLOSE_WRITE) != 0 { add(.closedWrite) }
            if mask & UInt32(CFS_IN_DELETE) != 0 { add(.deleted) }
            if mask & UInt32(CFS_IN_DELETE_SELF) != 0 { add(.selfDeleted) }
            if mask & UInt32(CFS_IN_MOVE_SELF) != 0 { add(.selfMoved) }
            if mask & UInt32(CFS_IN_UNMOUNT) != 0 { add(.unmounted) }
            if mask & UInt32(CFS_IN_IGNORED) != 0 { add(.watchRemoved) }
        }
    }
#endif

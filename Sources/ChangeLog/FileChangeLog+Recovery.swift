import Logging

#if canImport(Glibc)
    import Glibc
#endif

extension FileChangeLog {
    /// Finds the segments, checks the newest record by record, and (when
    /// writing) cuts a torn tail back to the last whole record.
    static func recover(folder: String, mode: Mode, options: Options, logger: Logger) throws(ChangeLogError)
        -> (State, Writer?)
    {
        let names: [String]
        do {
            names = try LogFiles.names(in: folder)
        } catch  where error.code == .notFound {
            throw ChangeLogError(
                code: .notFound,
                message: "there is no change log in \(folder); 'fileshare serve' keeps one for the folder it shares",
                path: folder, errno: ENOENT)
        }
        var segments = names.compactMap(LogSegment.firstSeq(fileName:)).sorted().map { LogSegment(firstSeq: $0) }
        guard let last = segments.last else {
            guard mode == .writing else { return (State(segments: [], latest: 0, nextSeq: 1), nil) }
            let writer = try createSegment(folder: folder, firstSeq: 1)
            return (State(segments: [LogSegment(firstSeq: 1)], latest: 0, nextSeq: 1), writer)
        }
        let path = folder + "/" + last.fileName
        let fd = try LogFiles.open(path, mode == .writing ? O_RDWR : O_RDONLY)
        var writer: Writer? = nil
        defer { if writer == nil { Glibc.close(fd) } }
        let size = try LogFiles.size(fd, path: path)
        let header = try LogFiles.read(fd, count: RecordCodec.headerSize, at: 0, path: path)
        var recent: [ChangeRecord] = []
        var expected = last.firstSeq
        var end = Int64(RecordCodec.headerSize)
        var segment = last
        if RecordCodec.firstSeq(header: header[...]) == last.firstSeq {
            var scanner = SegmentScanner(fd: fd, path: path, offset: end)
            scanning: while true {
                switch try scanner.next() {
                case .record(let record, let offset):
                    guard record.seq == expected else {
                        end = offset
                        break scanning
                    }
                    if segment.firstTime == nil { segment.firstTime = record.time }
                    segment.noteOffset(offset, of: record.seq)
                    recent.append(record)
                    expected += 1
                case .end:
                    end = scanner.offset
                    break scanning
                }
            }
        } else if mode == .writing {
            // The header never reached the disk: the process stopped while
            // beginning this segment, before any record went into it.
            try LogFiles.truncate(fd, to: 0, path: path)
            try LogFiles.write(fd, RecordCodec.header(firstSeq: last.firstSeq), at: 0, path: path)
            if size > 0 {
                logger.warning("change log: a segment without a whole header rewritten", metadata: ["file": "\(path)"])
            }
        }
        if mode == .writing {
            if end < size {
                logger.warning(
                    "change log: cut back a torn tail",
                    metadata: ["file": "\(path)", "bytes": "\(size - end)", "latest": "\(expected - 1)"])
                try LogFiles.truncate(fd, to: end, path: path)
            }
            try LogFiles.syncData(fd, path: path)
            writer = Writer(fd: fd, path: path, size: end)
        }
        segments[segments.count - 1] = segment
        var state = State(segments: segments, latest: expected - 1, nextSeq: expected)
        state.keepRecent(recent.suffix(options.memoryRecords), options: options)
        return (state, writer)
    }

    static func createSegment(folder: String, firstSeq: UInt64) throws(ChangeLogError) -> Writer {
        let path = folder + "/" + LogSegment.fileName(firstSeq: firstSeq)
        let fd = try LogFiles.open(path, O_RDWR | O_CREAT | O_TRUNC)
        do {
            try LogFiles.write(fd, RecordCodec.header(firstSeq: firstSeq), at: 0, path: path)
            try LogFiles.syncData(fd, path: path)
        } catch {
            Glibc.close(fd)
            throw error
        }
        LogFiles.syncFolder(folder)
        return Writer(fd: fd, path: path, size: Int64(RecordCodec.headerSize))
    }
}

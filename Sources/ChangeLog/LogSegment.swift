/// One file of a log: the records from `firstSeq` on, until the next
/// segment's first. Only the newest segment is written to.
struct LogSegment: Sendable {
    /// The number of its first record (its name says it too).
    let firstSeq: UInt64
    /// The time of its first record, once known (for retention by age).
    var firstTime: Int64?
    /// Every 256th record's number and offset, so a read far into the
    /// segment starts near its record instead of at the header.
    var checkpoints: [(seq: UInt64, offset: Int64)] = []

    static let checkpointEvery: UInt64 = 256

    init(firstSeq: UInt64, firstTime: Int64? = nil) {
        self.firstSeq = firstSeq
        self.firstTime = firstTime
    }

    /// `seg-00000000000000000001.log`: sorting the names sorts the segments.
    static func fileName(firstSeq: UInt64) -> String {
        let digits = String(firstSeq)
        return "seg-" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".log"
    }

    /// The first record's number in a segment's file name, or `nil` for another file.
    static func firstSeq(fileName name: String) -> UInt64? {
        guard name.hasPrefix("seg-"), name.hasSuffix(".log"), name.utf8.count == 28 else { return nil }
        return UInt64(name.dropFirst(4).dropLast(4))
    }

    var fileName: String { LogSegment.fileName(firstSeq: firstSeq) }

    /// The offset to start reading at to reach record `seq`.
    func startOffset(for seq: UInt64) -> Int64 {
        var best = Int64(RecordCodec.headerSize)
        var low = 0
        var high = checkpoints.count
        while low < high {
            let middle = (low + high) / 2
            if checkpoints[middle].seq <= seq {
                best = checkpoints[middle].offset
                low = middle + 1
            } else {
                high = middle
            }
        }
        return best
    }

    /// Notes a record's offset if it is a checkpoint and newer than those known.
    mutating func noteOffset(_ offset: Int64, of seq: UInt64) {
        guard seq % LogSegment.checkpointEvery == 0, checkpoints.last.map({ $0.seq < seq }) ?? true else { return }
        checkpoints.append((seq, offset))
    }
}

/// Reads a segment's frames in order, a megabyte at a time.
struct SegmentScanner {
    let fd: Int32
    let path: String
    private(set) var offset: Int64
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false

    init(fd: Int32, path: String, offset: Int64) {
        self.fd = fd
        self.path = path
        self.offset = offset
    }

    enum Step {
        case record(ChangeRecord, offset: Int64)
        /// The whole records end here (`offset` is where the next would start).
        case end(damaged: Bool)
    }

    /// The next frame; `offset` afterwards is the end of what was read whole.
    mutating func next() throws(ChangeLogError) -> Step {
        while true {
            switch RecordCodec.decode(buffer[position...]) {
            case .record(let record, let size):
                let start = offset
                position += size
                offset += Int64(size)
                return .record(record, offset: start)
            case .damaged:
                return .end(damaged: true)
            case .incomplete:
                if atEnd { return .end(damaged: position < buffer.count) }
                let chunk = try LogFiles.read(
                    fd, count: 1 << 20, at: offset + Int64(buffer.count - position), path: path)
                if chunk.count < 1 << 20 { atEnd = true }
                buffer.removeFirst(position)
                position = 0
                buffer.append(contentsOf: chunk)
            }
        }
    }
}

import CFileshareShim

#if canImport(Glibc)
    import Glibc
#endif

/// One step of taking a document in, as the journal records it.
struct JournalRecord: Sendable, Equatable {
    enum Step: Sendable, Equatable {
        /// The plan, written before anything moves: where the item is, what
        /// it is on disk (device and inode), where it goes, and the verdict.
        case claim(InboxClaim)
        /// The item is at its destination.
        case moved
        /// The handler is about to be called.
        case handling
        /// Nothing is left to do for it.
        case done
    }

    var sequence: UInt64
    var step: Step
}

/// What the processor decided for one item of the Inbox.
struct InboxClaim: Sendable, Equatable {
    /// Paths relative to the processed folder.
    var source: String
    var destination: String
    var device: UInt64
    var inode: UInt64
    var isFolder: Bool
    /// The accepted type's identifier, or `nil` when refused.
    var typeIdentifier: String?
    /// Why it was refused (empty when accepted).
    var reason: String

    var isAccepted: Bool { typeIdentifier != nil }
}

/// An append-only journal with a checksum on every line, flushed to the disk
/// after every record: each step of taking a document in is recorded before
/// (claim, handling) or after (moved, done) it happens, so a process killed
/// at any instant can tell, at its next start, what was done and finish the
/// rest. A torn last line (the write the kill interrupted) is ignored: what
/// it would have said is read back from the disk.
struct InboxJournal {
    let path: String
    private let fd: Int32

    /// Opens (creating) the journal.
    init(path: String) throws(InboxError) {
        self.path = path
        fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        if fd < 0 { throw InboxError(.io, "cannot open the journal \(path): \(String(cString: strerror(errno)))") }
    }

    func close() { _ = Glibc.close(fd) }

    /// Appends a record and flushes it to the disk.
    func append(_ record: JournalRecord) throws(InboxError) {
        let line = Array(InboxJournal.encode(record).utf8)
        let written = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == line.count, fdatasync(fd) == 0 else {
            throw InboxError(.io, "cannot write the journal \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Empties the journal once nothing is pending.
    func truncate() throws(InboxError) {
        guard ftruncate(fd, 0) == 0, fsync(fd) == 0 else {
            throw InboxError(.io, "cannot empty the journal \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// The records of a journal file; lines that are torn or damaged are left out.
    static func load(path: String) -> [JournalRecord] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
        return decode(bytes)
    }

    static func decode(_ bytes: [UInt8]) -> [JournalRecord] {
        var records: [JournalRecord] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            if let record = decode(line: String(decoding: bytes[start..<index], as: UTF8.self)) {
                records.append(record)
            }
            start = index + 1
        }
        return records  // a last line without its newline was torn: ignored
    }

    // MARK: Encoding

    static func encode(_ record: JournalRecord) -> String {
        var fields = [String(record.sequence)]
        switch record.step {
        case .claim(let claim):
            fields += [
                "claim", claim.source, claim.destination, String(claim.device), String(claim.inode),
                claim.isFolder ? "folder" : "file",
                claim.typeIdentifier ?? "", claim.reason,
            ]
        case .moved: fields.append("moved")
        case .handling: fields.append("handling")
        case .done: fields.append("done")
        }
        let body = fields.map(escape).joined(separator: "\t")
        return body + "\t" + checksum(body) + "\n"
    }

    static func decode(line: String) -> JournalRecord? {
        guard let tab = line.lastIndex(of: "\t") else { return nil }
        let body = String(line[..<tab])
        guard line[line.index(after: tab)...] == checksum(body) else { return nil }
        let fields = body.split(separator: "\t", omittingEmptySubsequences: false).map { unescape(String($0)) }
        guard fields.count >= 2, let sequence = UInt64(fields[0]) else { return nil }
        switch fields[1] {
        case "claim":
            guard fields.count == 9, let device = UInt64(fields[4]), let inode = UInt64(fields[5]) else { return nil }
            let claim = InboxClaim(
                source: fields[2], destination: fields[3], device: device, inode: inode,
                isFolder: fields[6] == "folder",
                typeIdentifier: fields[7].isEmpty ? nil : fields[7], reason: fields[8])
            return JournalRecord(sequence: sequence, step: .claim(claim))
        case "moved": return JournalRecord(sequence: sequence, step: .moved)
        case "handling": return JournalRecord(sequence: sequence, step: .handling)
        case "done": return JournalRecord(sequence: sequence, step: .done)
        default: return nil
        }
    }

    /// FNV-1a, 64 bits, in hexadecimal.
    static func checksum(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    static func escape(_ text: String) -> String {
        var result = ""
        for character in text.unicodeScalars {
            switch character {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }

    static func unescape(_ text: String) -> String {
        var result = ""
        var escaped = false
        for character in text.unicodeScalars {
            if escaped {
                switch character {
                case "t": result += "\t"
                case "n": result += "\n"
                case "r": result += "\r"
                default: result.unicodeScalars.append(character)
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

/// Where each item of the journal stands: its latest claim and the steps done.
struct JournalState: Sendable {
    struct Entry: Sendable {
        var claim: InboxClaim
        var moved = false
        var handling = false
        var done = false
    }

    private(set) var entries: [UInt64: Entry] = [:]
    private(set) var lastSequence: UInt64 = 0

    init(_ records: [JournalRecord] = []) {
        for record in records { apply(record) }
    }

    mutating func apply(_ record: JournalRecord) {
        lastSequence = max(lastSequence, record.sequence)
        switch record.step {
        case .claim(let claim):
            // A later claim for the same item (a new name after a clash) replaces the plan.
            if var entry = entries[record.sequence] {
                entry.claim = claim
                entries[record.sequence] = entry
            } else {
                entries[record.sequence] = Entry(claim: claim)
            }
        case .moved: entries[record.sequence]?.moved = true
        case .handling: entries[record.sequence]?.handling = true
        case .done: entries[record.sequence]?.done = true
        }
    }

    /// The items not finished, oldest first.
    var pending: [(sequence: UInt64, entry: Entry)] {
        entries.filter { !$0.value.done }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}

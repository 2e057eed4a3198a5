import CFileshareShim
import DocumentTypes

/// The accepted types, and the truth of names, every upload is checked
/// against: through the page and the JSON API (`PUT /api/files/P`,
/// resumable uploads) and through WebDAV (`PUT /dav/P`, and the empty files
/// WebDAV clients create first).
///
/// A staged file is judged by its content under the name it will have; a
/// refusal is an ``UploadRefusal`` with the ``Refusal/reason`` (each face
/// answers it with 415). A name that lies about the content (a PDF sent as
/// `notes.txt`) is refused even when every type is accepted, or corrected
/// (``MisleadingNames``). An upload can be refused before it is complete
/// when its first bytes already tell as much as the whole file would
/// (``certainRefusal(prefix:name:totalSize:)``).
struct UploadTypePolicy: Sendable {
    /// The accepted types.
    let accepted: AcceptedTypes
    /// What becomes of a name that lies about the content.
    let misleadingNames: MisleadingNames
    /// How many first bytes identification looks at: 64 KiB, or more when a
    /// declared byte signature looks further. A prefix this long is
    /// identified as the whole file is, except for what lies beyond it in a
    /// ZIP archive (its central directory) or after an ID3 tag. `Int.max`
    /// when a declared signature looks beyond ``longestPrefix``.
    let prefixLength: Int
    /// Whether an accepted type is told by a ZIP archive's entries (an EPUB,
    /// an Office document, a comic book archive): then the central directory
    /// at the end of the archive may decide, so a prefix cannot.
    private let acceptsZipBasedTypes: Bool

    /// The policy of `accepted` (`nil` for every type).
    init(_ accepted: AcceptedTypes?, misleadingNames: MisleadingNames = .refuse) {
        let accepted = accepted ?? .all()
        self.accepted = accepted
        self.misleadingNames = misleadingNames
        var reach = 64 * 1024
        var zipBased = false
        for type in accepted.registry.types {
            for signature in type.signatures {
                switch signature {
                case .bytes(let patterns):
                    for pattern in patterns {
                        reach = max(reach, pattern.offset + pattern.window - 1 + pattern.bytes.count)
                    }
                case .zip:
                    if accepted.accepts(type.identifier) { zipBased = true }
                case .textPrefix, .xmlRoot, .isoBrand:
                    break
                }
            }
        }
        // A declared signature far into the file: no prefix is held in memory to
        // tell; the complete file is checked.
        prefixLength = reach <= Self.longestPrefix ? reach : Int.max
        acceptsZipBasedTypes = zipBased
    }

    /// The most first bytes read to refuse an upload early: 1 MiB.
    static let longestPrefix = 1 << 20

    /// The accepted identifiers, as configured; `nil` when every type is accepted.
    var identifiers: [String]? {
        accepted.acceptsEverything ? nil : accepted.identifiers.map(\.rawValue)
    }

    /// Where the staged file open at `fd` goes: `path`, or `path` with the
    /// corrected name when its name lies and names are corrected; 415
    /// unless it is of an accepted type, judged under the name it will have
    /// (the last component of `path`).
    ///
    /// - Throws: ``UploadRefusal`` with the reason, or saying the file cannot be read.
    func check(stagedFile fd: Int32, for path: SharePath) throws(UploadRefusal) -> SharePath {
        let decision: AcceptedTypes.Decision
        do {
            decision = try accepted.check(fileDescriptor: fd, name: path.name, misleadingNames: misleadingNames)
        } catch {
            throw UploadRefusal(.unreadable, "cannot tell the type of the upload to '\(path)': \(error)")
        }
        switch decision {
        case .accepted: return path
        case .corrected(_, let name):
            do {
                return try path.parent.appending(name)
            } catch {
                throw UploadRefusal(
                    .refused, "the name of '\(path.name)' cannot be corrected to '\(name)': \(error.message)")
            }
        case .refused(let refusal): throw UploadRefusal(refusal)
        }
    }

    /// Whether an empty file at `path` is accepted: judged by its name alone.
    func acceptsEmptyFile(at path: SharePath) -> Bool {
        refusalOfEmptyFile(at: path) == nil
    }

    /// Throws when an empty file at `path` is refused (by its name).
    func checkEmptyFile(at path: SharePath) throws(UploadRefusal) {
        if let refusal = refusalOfEmptyFile(at: path) { throw UploadRefusal(refusal) }
    }

    private func refusalOfEmptyFile(at path: SharePath) -> Refusal? {
        if case .refused(let refusal) = accepted.check(prefix: [], name: path.name, totalSize: 0) { return refusal }
        return nil
    }

    /// Throws when the first bytes of the staged file open at `fd` (of which
    /// `available` are written) already make a refusal certain; nothing
    /// when they do not, or cannot yet: the complete file is checked anyway.
    ///
    /// - Parameters:
    ///   - fd: The staged file, open for reading.
    ///   - available: How many bytes of it are written.
    ///   - path: Where the file will be.
    ///   - totalSize: The complete file's size, if announced.
    /// - Throws: ``UploadRefusal`` with the reason.
    func checkPrefix(ofStagedFile fd: Int32, available: Int64, for path: SharePath, totalSize: Int64?)
        throws(UploadRefusal)
    {
        let count = Int(min(available, Int64(prefixLength)))
        guard count > 0 else { return }
        var prefix = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let read = prefix.withUnsafeMutableBytes {
                cfs_pread(fd, $0.baseAddress! + filled, count - filled, Int64(filled))
            }
            guard read > 0 else { break }
            filled += read
        }
        prefix.removeLast(count - filled)
        let size = totalSize.flatMap { Int(exactly: $0) }
        if let refusal = certainRefusal(prefix: prefix, name: path.name, totalSize: size) {
            throw UploadRefusal(refusal)
        }
    }

    /// The refusal a file's first bytes make certain, or `nil` when they
    /// accept it or the rest of the file could still change the decision.
    ///
    /// Certain when the prefix is the whole file; or when it is at least
    /// ``prefixLength`` long (identification of the whole file reads no
    /// more), unless it starts an ID3 tag (what follows the tag decides) or
    /// a ZIP archive while an accepted type is told by ZIP entries.
    ///
    /// - Parameters:
    ///   - prefix: The first bytes.
    ///   - name: The name the file will have.
    ///   - totalSize: The whole file's size, if known.
    func certainRefusal(prefix: [UInt8], name: String, totalSize: Int?) -> Refusal? {
        let isWhole = totalSize == prefix.count
        guard isWhole || prefix.count >= prefixLength else { return nil }
        let decision = accepted.check(
            prefix: prefix, name: name, totalSize: totalSize, misleadingNames: misleadingNames)
        guard case .refused(let refusal) = decision else { return nil }
        if isWhole { return refusal }
        if prefix.starts(with: [0x49, 0x44, 0x33]) { return nil }  // "ID3"
        if acceptsZipBasedTypes && prefix.starts(with: [0x50, 0x4B, 0x03, 0x04]) { return nil }  // "PK\3\4"
        return refusal
    }
}

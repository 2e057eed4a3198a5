#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// Writes a ZIP archive as a stream: each call returns the next bytes of the
/// archive, to send at once, so memory stays flat whatever the size of the
/// content.
///
/// ```swift
/// var zip = ZipStreamWriter()
/// for entry in entries {
///     out.write(try zip.beginEntry(name: entry.name, kind: entry.kind, modified: entry.modified,
///                                  expectedSize: entry.size))
///     for chunk in entry.chunks {
///         zip.update(chunk)
///         out.write(chunk)
///     }
///     out.write(try zip.endEntry())
/// }
/// out.write(try zip.finish())
/// ```
///
/// The caller writes, in order, every byte the writer returns and every chunk
/// it passes to ``update(_:)-(UnsafeRawBufferPointer)``: the writer counts
/// them to know where each entry starts.
///
/// ## Format
///
/// Files are *stored* (method 0, no compression), with bit 3 of the flags set:
/// the CRC-32 and the sizes follow the data in a data descriptor, so a file
/// may grow or shrink while it is read. Bit 11 marks names as UTF-8. Folders
/// are entries whose name ends with `/`. Every entry carries its modification
/// time twice: as an MS-DOS date and time in the machine's local time
/// (two-second resolution), and as a Unix time in the extended timestamp
/// extra field (0x5455) when it fits in 32 bits. Unix permissions go in the
/// external attributes.
///
/// ## ZIP64
///
/// ZIP64 structures are written where the classic fields are too small, and
/// only there:
/// - A file whose expected size is unknown, or 3 GiB or more, gets the ZIP64
///   extended information extra field (0x0001) in its local header, and then
///   a data descriptor with 8-byte sizes (a reader decides the form of the
///   descriptor from the local header, so the choice is made up front; the
///   3 GiB margin covers a file that grows while it is read).
/// - In the central directory, sizes and offsets of 0xFFFFFFFF or more move to
///   the ZIP64 extra field (the sizes also for every entry whose local header
///   was ZIP64).
/// - The ZIP64 end of central directory record and its locator precede the
///   end of central directory record when there are 65,535 entries or more,
///   or the central directory's size or offset is 0xFFFFFFFF or more.
///
/// A file announced smaller than 3 GiB that still reaches 4 GiB gets a data
/// descriptor with 8-byte sizes (the only form that holds them) and ZIP64
/// central fields: readers that go by the central directory (Info-ZIP
/// `unzip`, Python's `zipfile`) read it; a reader that streams from the
/// local headers might not. Announce the size `stat` gives, or cap the bytes
/// sent at it.
///
/// `ZipStreamWriter(forceZip64: true)` writes every one of these structures
/// for every entry, whatever the sizes, so tests can check readers against
/// them on small data.
///
/// The writer keeps the central directory in memory until ``finish()``:
/// about 60 bytes plus the name for each entry, and nothing that depends on
/// the size of the content.
public struct ZipStreamWriter: Sendable {
    /// Whether every ZIP64 structure is written, whatever the sizes.
    public let forcesZip64: Bool
    /// How many bytes of archive the writer has accounted for so far: the
    /// bytes it returned and the chunks passed to ``update(_:)-(UnsafeRawBufferPointer)``.
    public private(set) var bytesWritten: UInt64 = 0
    /// How many entries have ended so far.
    public private(set) var entryCount: UInt64 = 0

    private var centralDirectory: [UInt8] = []
    private var entry: OpenEntry?
    private var isFinished = false

    /// Creates a writer for a new archive.
    ///
    /// - Parameter forceZip64: Write every ZIP64 structure even where the
    ///   classic fields are large enough; meant for tests.
    public init(forceZip64: Bool = false) {
        forcesZip64 = forceZip64
    }

    /// Begins an entry and returns its local file header.
    ///
    /// For a file, pass its content to ``update(_:)-(UnsafeRawBufferPointer)``
    /// next, then call ``endEntry()``; for a folder, call ``endEntry()`` at once.
    ///
    /// - Parameters:
    ///   - name: The path in the archive, components separated by `/`; see
    ///     ``validate(name:kind:)``. A folder's name gets a trailing `/` if it
    ///     has none.
    ///   - kind: Whether the entry is a file or a folder.
    ///   - modified: The modification time.
    ///   - expectedSize: The size the file is expected to have (from `stat`),
    ///     or `nil` if unknown. A file expected at 3 GiB or more, or of
    ///     unknown size, is written in ZIP64 form. The actual size may differ.
    ///   - permissions: The Unix permission bits (`0o7777` at most), or `nil`
    ///     for `0o644` (files) and `0o755` (folders).
    /// - Returns: The bytes of the local file header.
    /// - Throws: ``ZipStreamError`` with code ``ZipStreamError/Code/invalidName``
    ///   if the name is not safe, or ``ZipStreamError/Code/invalidState`` if an
    ///   entry is still open or the archive is finished.
    public mutating func beginEntry(
        name: String,
        kind: ZipEntryKind = .file,
        modified: Date,
        expectedSize: UInt64? = nil,
        permissions: UInt16? = nil
    ) throws(ZipStreamError) -> [UInt8] {
        try beginEntry(
            name: name, kind: kind, modified: Self.seconds(since1970: modified), expectedSize: expectedSize,
            permissions: permissions)
    }

    /// Begins an entry and returns its local file header.
    ///
    /// For a file, pass its content to ``update(_:)-(UnsafeRawBufferPointer)``
    /// next, then call ``endEntry()``; for a folder, call ``endEntry()`` at once.
    ///
    /// - Parameters:
    ///   - name: The path in the archive, components separated by `/`; see
    ///     ``validate(name:kind:)``. A folder's name gets a trailing `/` if it
    ///     has none.
    ///   - kind: Whether the entry is a file or a folder.
    ///   - modified: The modification time, in seconds since 1970-01-01 UTC
    ///     (`st_mtim.tv_sec`).
    ///   - expectedSize: The size the file is expected to have (from `stat`),
    ///     or `nil` if unknown. A file expected at 3 GiB or more, or of
    ///     unknown size, is written in ZIP64 form. The actual size may differ.
    ///   - permissions: The Unix permission bits (`0o7777` at most), or `nil`
    ///     for `0o644` (files) and `0o755` (folders).
    /// - Returns: The bytes of the local file header.
    /// - Throws: ``ZipStreamError`` with code ``ZipStreamError/Code/invalidName``
    ///   if the name is not safe, or ``ZipStreamError/Code/invalidState`` if an
    ///   entry is still open or the archive is finished.
    public mutating func beginEntry(
        name: String,
        kind: ZipEntryKind = .file,
        modified: Int64,
        expectedSize: UInt64? = nil,
        permissions: UInt16? = nil
    ) throws(ZipStreamError) -> [UInt8] {
        guard !isFinished else {
            throw ZipStreamError(
                code: .invalidState, message: "The archive is finished: no entry can be added.", entryName: name)
        }
        if let open = entry {
            let openName = String(decoding: open.name, as: UTF8.self)
            throw ZipStreamError(
                code: .invalidState,
                message: "Entry \"\(name)\" begun while \"\(openName)\" is open: call endEntry() first.",
                entryName: name)
        }
        let encodedName = try Self.encodedName(name, kind: kind)
        let mode = permissions.map { $0 & 0o7777 } ?? (kind == .file ? 0o644 : 0o755)
        let isZip64 = kind == .file && (forcesZip64 || expectedSize.map { $0 >= Self.zip64SizeThreshold } ?? true)
        let opened = OpenEntry(
            name: encodedName, kind: kind, modified: DOSDateTime(secondsSince1970: modified),
            unixTime: Int32(exactly: modified), mode: mode, headerOffset: bytesWritten, isZip64: isZip64)
        let header = opened.localHeader()
        entry = opened
        bytesWritten += UInt64(header.count)
        return header
    }

    /// Adds the next chunk of the open file's content: its CRC-32 and size.
    ///
    /// The caller writes the chunk itself, right after this call or before;
    /// the writer does not keep it.
    ///
    /// - Parameter bytes: The next bytes of the file, in order.
    /// - Precondition: A file entry is open (``beginEntry(name:kind:modified:expectedSize:permissions:)-(_,_,Int64,_,_)``
    ///   was called with kind ``ZipEntryKind/file``, and ``endEntry()`` not yet).
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        precondition(entry?.kind == .file, "ZipStreamWriter.update(_:) called with no file entry open")
        entry!.crc.update(bytes)
        entry!.size += UInt64(bytes.count)
        bytesWritten += UInt64(bytes.count)
    }

    /// Adds the next chunk of the open file's content: its CRC-32 and size.
    ///
    /// The caller writes the chunk itself, right after this call or before;
    /// the writer does not keep it. Contiguous collections (`[UInt8]`,
    /// `ArraySlice`, `Data`, NIO's `ByteBuffer.readableBytesView`) are read in
    /// place; other sequences are copied first.
    ///
    /// - Parameter bytes: The next bytes of the file, in order.
    /// - Precondition: A file entry is open.
    @inlinable
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// Ends the open entry and returns its data descriptor (CRC-32 and sizes),
    /// or no bytes for a folder.
    ///
    /// - Returns: The bytes that follow the entry's content.
    /// - Throws: ``ZipStreamError`` with code ``ZipStreamError/Code/invalidState``
    ///   if no entry is open.
    public mutating func endEntry() throws(ZipStreamError) -> [UInt8] {
        guard let ended = entry else {
            throw ZipStreamError(code: .invalidState, message: "endEntry() called with no entry open.")
        }
        entry = nil
        let descriptor = ended.dataDescriptor()
        bytesWritten += UInt64(descriptor.count)
        ended.appendCentralRecord(to: &centralDirectory, forcingZip64: forcesZip64)
        entryCount += 1
        return descriptor
    }

    /// Ends the archive and returns its central directory and end records.
    ///
    /// - Returns: The last bytes of the archive.
    /// - Throws: ``ZipStreamError`` with code ``ZipStreamError/Code/invalidState``
    ///   if an entry is open or the archive is already finished.
    public mutating func finish() throws(ZipStreamError) -> [UInt8] {
        guard !isFinished else {
            throw ZipStreamError(code: .invalidState, message: "finish() called twice.")
        }
        if let open = entry {
            let openName = String(decoding: open.name, as: UTF8.self)
            throw ZipStreamError(
                code: .invalidState, message: "finish() called while \"\(openName)\" is open: call endEntry() first.",
                entryName: openName)
        }
        isFinished = true
        var bytes: [UInt8] = []
        swap(&bytes, &centralDirectory)
        Self.appendEndRecords(
            to: &bytes, entryCount: entryCount, directoryOffset: bytesWritten, directorySize: UInt64(bytes.count),
            forcingZip64: forcesZip64)
        bytesWritten += UInt64(bytes.count)
        return bytes
    }

    /// Files expected at this size or more are written in ZIP64 form from
    /// their local header on: 1 GiB below the 32-bit limit, for files that
    /// grow while they are read.
    static let zip64SizeThreshold: UInt64 = 3 << 30

    /// Whole seconds since 1970 (rounded down), clamped to `Int64`.
    static func seconds(since1970 date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        if seconds.isNaN { return 0 }
        if seconds >= 0x1p63 { return .max }
        if seconds < -0x1p63 { return .min }
        return Int64(seconds)
    }
}

import ZipStream

/// How a test ZIP archive is written.
enum ZipStyle: String, CaseIterable, Sendable {
    /// Sizes and CRC in each local header, as `zip -0` writes.
    case classic
    /// As the server's "folder as ZIP" writes: sizes in data descriptors after the data.
    case streamed
    /// Streamed, with every ZIP64 structure.
    case zip64
}

/// A ZIP archive of stored entries, in the given style. A name ending with
/// `/` is a folder.
func zipArchive(_ entries: [(name: String, content: [UInt8])], style: ZipStyle = .classic) -> [UInt8] {
    switch style {
    case .classic: return classicZip(entries)
    case .streamed: return streamedZip(entries, forceZip64: false)
    case .zip64: return streamedZip(entries, forceZip64: true)
    }
}

/// Entries given as text.
func zipArchive(texts entries: [(name: String, text: String)], style: ZipStyle = .classic) -> [UInt8] {
    zipArchive(entries.map { ($0.name, Array($0.text.utf8)) }, style: style)
}

private func streamedZip(_ entries: [(name: String, content: [UInt8])], forceZip64: Bool) -> [UInt8] {
    var zip = ZipStreamWriter(forceZip64: forceZip64)
    var out: [UInt8] = []
    do {
        for entry in entries {
            let isFolder = entry.name.hasSuffix("/")
            out += try zip.beginEntry(
                name: entry.name, kind: isFolder ? .directory : .file, modified: 1_700_000_000,
                expectedSize: UInt64(entry.content.count))
            if !isFolder {
                zip.update(entry.content)
                out += entry.content
            }
            out += try zip.endEntry()
        }
        out += try zip.finish()
    } catch {
        fatalError("ZipStreamWriter refused a test archive: \(error)")
    }
    return out
}

private func classicZip(_ entries: [(name: String, content: [UInt8])]) -> [UInt8] {
    var out = Bytes()
    var directory = Bytes()
    for entry in entries {
        let offset = out.bytes.count
        let crc = Int(CRC32.checksum(of: entry.content))
        let name = Array(entry.name.utf8)
        out.add([0x50, 0x4B, 0x03, 0x04])
        out.le16(10)
        out.le16(0x0800)
        out.le16(0)
        out.le16(0x6000)
        out.le16(0x5821)
        out.le32(crc)
        out.le32(entry.content.count)
        out.le32(entry.content.count)
        out.le16(name.count)
        out.le16(0)
        out.add(name)
        out.add(entry.content)

        directory.add([0x50, 0x4B, 0x01, 0x02])
        directory.le16(0x031E)
        directory.le16(10)
        directory.le16(0x0800)
        directory.le16(0)
        directory.le16(0x6000)
        directory.le16(0x5821)
        directory.le32(crc)
        directory.le32(entry.content.count)
        directory.le32(entry.content.count)
        directory.le16(name.count)
        directory.le16(0)
        directory.le16(0)
        directory.le16(0)
        directory.le16(0)
        directory.le32(entry.name.hasSuffix("/") ? (0o40755 << 16 | 0x10) : (0o100644 << 16))
        directory.le32(offset)
        directory.add(name)
    }
    let directoryOffset = out.bytes.count
    out.add(directory.bytes)
    out.add([0x50, 0x4B, 0x05, 0x06])
    out.le16(0)
    out.le16(0)
    out.le16(entries.count)
    out.le16(entries.count)
    out.le32(directory.bytes.count)
    out.le32(directoryOffset)
    out.le16(0)
    return out.bytes
}

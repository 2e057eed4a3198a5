extension ZipStreamWriter {
    /// Checks that `name` may name an entry of this kind, without writing anything.
    ///
    /// A valid name is relative, its components separated by `/`, none of
    /// them empty, `.` or `..`; it holds no NUL and is at most 65,535 bytes
    /// long in UTF-8. A backslash counts as a separator too (Windows tools
    /// treat it as one), and a leading drive letter (`C:`) is refused, so the
    /// archive never extracts outside its folder, on any system. A folder's
    /// name may end with `/`; a file's may not.
    ///
    /// - Parameters:
    ///   - name: The name the entry would have in the archive.
    ///   - kind: Whether the entry is a file or a folder.
    /// - Throws: ``ZipStreamError`` with code ``ZipStreamError/Code/invalidName``.
    public static func validate(name: String, kind: ZipEntryKind) throws(ZipStreamError) {
        _ = try encodedName(name, kind: kind)
    }

    /// The bytes stored for `name`: its UTF-8, with a trailing `/` for a folder.
    static func encodedName(_ name: String, kind: ZipEntryKind) throws(ZipStreamError) -> [UInt8] {
        func invalid(_ reason: String) -> ZipStreamError {
            ZipStreamError(code: .invalidName, message: "Invalid entry name \"\(name)\": \(reason).", entryName: name)
        }
        let slash = UInt8(ascii: "/")
        let backslash = UInt8(ascii: "\\")
        var bytes = Array(name.utf8)
        if bytes.last == slash {
            guard kind == .directory else { throw invalid("a file name cannot end with /") }
            bytes.removeLast()
        }
        guard !bytes.isEmpty else { throw invalid("it is empty") }
        guard !bytes.contains(0) else { throw invalid("it contains a NUL character") }
        guard bytes[0] != slash && bytes[0] != backslash else { throw invalid("it is an absolute path") }
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"),
            (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[0] & 0xDF)
        {
            throw invalid("it starts with a drive letter")
        }
        for component in bytes.split(separator: slash, omittingEmptySubsequences: false)
            .flatMap({ $0.split(separator: backslash, omittingEmptySubsequences: false) })
        {
            guard !component.isEmpty else { throw invalid("it has an empty component") }
            guard !component.elementsEqual([UInt8(ascii: ".")]) else { throw invalid("it has a \".\" component") }
            guard !component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) else {
                throw invalid("it has a \"..\" component")
            }
        }
        if kind == .directory { bytes.append(slash) }
        guard bytes.count <= Int(UInt16.max) else { throw invalid("it is longer than 65,535 bytes") }
        return bytes
    }
}

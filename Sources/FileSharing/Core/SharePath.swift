public import FileWatching

/// A path inside the shared folder, checked: no `.` or `..`, no `/` or NUL
/// inside a name (encoded or not), valid UTF-8, and no hidden name (the
/// server's own files live under a hidden name).
public struct SharePath: Sendable, Hashable, CustomStringConvertible {
    /// The names, root first.
    public let components: [String]

    /// The root of the shared folder.
    public static let root = SharePath(checked: [])

    private init(checked components: [String]) { self.components = components }

    public var description: String { components.joined(separator: "/") }

    /// Whether this is the root.
    public var isRoot: Bool { components.isEmpty }

    /// The name (last component).
    public var name: String { components.last ?? "" }

    /// The folder that holds this item.
    public var parent: SharePath { SharePath(checked: Array(components.dropLast())) }

    /// The same path for the observer.
    public var itemPath: ItemPath { ItemPath(description) }

    /// This path with one more name.
    public func appending(_ name: String) throws(SharePathError) -> SharePath {
        try SharePath.check(name)
        return SharePath(checked: components + [name])
    }

    /// This path with one more name, read from the disk (so not checked
    /// again: it is used to name what failed, never to open anything).
    func child(_ name: String) -> SharePath { SharePath(checked: components + [name]) }

    /// Whether `self` is `other` or lies under it.
    public func isSame(asOrUnder other: SharePath) -> Bool {
        components.count >= other.components.count
            && Array(components.prefix(other.components.count)) == other.components
    }

    /// Parses a percent-encoded, `/`-separated path from a URL.
    public init(percentEncoded raw: Substring) throws(SharePathError) {
        var names: [String] = []
        // One allocation for the names: grown one by one, the array was
        // allocated again for the 2nd and the 3rd (a small read's path has 2–4).
        names.reserveCapacity(raw.utf8.reduce(1) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 })
        // Split on the bytes: a Substring's own split compares Characters,
        // a few percent of every small read (and `/` is never part of one).
        // Walked name by name, without the array of slices `split` makes.
        let utf8 = raw.utf8
        var next = utf8.startIndex
        while next < utf8.endIndex {
            let start = next
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
            next = end < utf8.endIndex ? utf8.index(after: end) : end
            guard start < end else { continue }
            let segment = raw[start..<end]
            let name: String
            if segment.utf8.contains(UInt8(ascii: "%")) {
                guard let decoded = String(validating: try SharePath.percentDecode(segment), as: UTF8.self) else {
                    throw SharePathError(.invalid, "a name in the path is not valid UTF-8")
                }
                name = decoded
            } else {
                // Nothing to decode: the segment is valid UTF-8 already (it is part of a String).
                name = String(segment)
            }
            try SharePath.check(name)
            names.append(name)
        }
        self.init(checked: names)
    }

    /// ``description``, for the path ``init(percentEncoded:)`` parsed from
    /// `raw`: `raw` itself when its names are the path's as they are (none
    /// decoded, none empty and skipped), else the names joined. A small
    /// read's path is such, and joining its names again was 2.6 % of the
    /// server's time for each (`perf`); here one pass over the bytes.
    func description(parsedFrom raw: Substring) -> String {
        var slashes = 0
        for byte in raw.utf8 {
            if byte == UInt8(ascii: "%") { return description }
            if byte == UInt8(ascii: "/") { slashes += 1 }
        }
        guard slashes + 1 == components.count else { return description }
        let text = String(raw)
        assert(text == description, "'\(raw)' is not the path \(components) was parsed from")
        return text
    }

    /// Parses a plain (not percent-encoded) path, as JSON bodies and query values carry it.
    public init(plain: String) throws(SharePathError) {
        var names: [String] = []
        // On the bytes, as ``init(percentEncoded:)`` splits.
        for bytes in plain.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let name = String(Substring(bytes))
            try SharePath.check(name)
            names.append(name)
        }
        self.init(checked: names)
    }

    /// Whether `name` is one of the files Finder writes beside the user's
    /// (`._name` AppleDouble files, `.DS_Store`): hidden, and kept by the
    /// WebDAV face apart from the shared folder.
    static func isClientMetadata(_ name: String) -> Bool {
        (name.hasPrefix("._") && name.utf8.count > 2) || name == ".DS_Store"
    }

    /// Parses a percent-encoded path whose last name is client metadata
    /// (see `isClientMetadata`); `nil` for any other path.
    static func clientMetadata(percentEncoded raw: Substring) -> SharePath? {
        // The last name: after the last '/' but for trailing ones. Found on
        // the bytes, from the end: splitting the whole path made an array of
        // every name, 1 % of each WebDAV GET.
        let slash = UInt8(ascii: "/")
        var end = raw.endIndex
        while end > raw.startIndex, raw.utf8[raw.utf8.index(before: end)] == slash {
            end = raw.utf8.index(before: end)
        }
        let start = raw.utf8[..<end].lastIndex(of: slash).map { raw.utf8.index(after: $0) } ?? raw.startIndex
        guard start < end else { return nil }
        let last = raw[start..<end]
        // A name without escapes is its own decoding: judged as it is, before
        // anything is decoded (every WebDAV GET asks). Both kinds start with '.'.
        if !last.utf8.contains(UInt8(ascii: "%")),
            last.utf8.first != UInt8(ascii: ".") || !isClientMetadata(String(last))
        {
            return nil
        }
        guard let bytes = try? percentDecode(last),
            let name = String(validating: bytes, as: UTF8.self), isClientMetadata(name),
            !name.utf8.contains(0), !name.utf8.contains(UInt8(ascii: "/")), name.utf8.count <= 255,
            let parent = try? SharePath(percentEncoded: raw[raw.startIndex..<last.startIndex])
        else { return nil }
        return SharePath(checked: parent.components + [name])
    }

    /// Finder's AppleDouble file beside this item (`._name`).
    var appleDouble: SharePath? {
        isRoot ? nil : SharePath(checked: parent.components + ["._" + name])
    }

    static func check(_ name: String) throws(SharePathError) {
        if name == "." || name == ".." {
            throw SharePathError(.invalid, "'\(name)' is not allowed in a path")
        }
        if name.utf8.contains(0) { throw SharePathError(.invalid, "a name in the path contains NUL") }
        if name.utf8.contains(UInt8(ascii: "/")) {
            throw SharePathError(.invalid, "a name in the path contains an encoded '/'")
        }
        if name.isEmpty { throw SharePathError(.invalid, "an empty name") }
        if name.hasPrefix(".") { throw SharePathError(.hidden, "names starting with '.' are not shared") }
        if name.utf8.count > 255 { throw SharePathError(.invalid, "a name longer than 255 bytes") }
    }

    static func percentDecode(_ segment: Substring) throws(SharePathError) -> [UInt8] {
        var bytes: [UInt8] = []
        var utf8 = segment.utf8.makeIterator()
        while let byte = utf8.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue) else {
                    throw SharePathError(.invalid, "a bad percent escape in the path")
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A path a client gave that the share does not allow. It knows no HTTP:
/// each face answers it its own way (`400` for an invalid path, `403` for
/// a hidden name, on `/api` and `/dav` alike).
public struct SharePathError: Error, Sendable, CustomStringConvertible {
    /// Why the path is not allowed.
    public enum Reason: Sendable, Hashable {
        /// Not a path at all: `.` or `..`, NUL or an encoded `/` in a name,
        /// an empty name, a bad percent escape, invalid UTF-8, a name over 255 bytes.
        case invalid
        /// A name starting with `.`: never shared (the server's own files are such).
        case hidden
    }

    /// Why the path is not allowed.
    public var reason: Reason
    /// For a person: what is wrong with the path.
    public var message: String

    /// Creates an error.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}

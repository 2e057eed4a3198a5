// The disk layer on Linux: openat2, renameat2, statx and extended attributes
// through the C shim. Another platform gets its own beside it.
#if os(Linux)
    import CFileshareShim
    import FileWatching
    import Glibc

    /// A property's name: namespace URI (`""` for none) and local name.
    struct PropertyName: Sendable, Hashable, CustomStringConvertible {
        var namespace: String
        var name: String

        static func dav(_ name: String) -> PropertyName { PropertyName(namespace: "DAV:", name: name) }

        var description: String { namespace + name }
    }

    /// The properties clients set with PROPPATCH, kept in one extended attribute
    /// of the file or folder itself: they follow it through every rename and
    /// move (by anyone, not only through WebDAV), survive restarts, and go away
    /// with it. A copy made through WebDAV carries them.
    enum DeadProperties {
        /// The attribute that holds them.
        static let attribute = "user.fileshare.dav"
        /// What one item may hold (ext4 keeps an inode's attributes in one 4 KiB
        /// block; larger values fail there with a clear 507).
        static let maximumBytes = 64 * 1024

        /// Each property: its name and its element, serialized (self-contained).
        typealias Entries = [(name: PropertyName, xml: String)]

        static func encode(_ entries: Entries) -> [UInt8] {
            var bytes: [UInt8] = Array("FSDP1".utf8)
            func field(_ text: String) {
                let utf8 = Array(text.utf8)
                var length = UInt32(utf8.count).littleEndian
                withUnsafeBytes(of: &length) { bytes.append(contentsOf: $0) }
                bytes.append(contentsOf: utf8)
            }
            for entry in entries {
                field(entry.name.namespace)
                field(entry.name.name)
                field(entry.xml)
            }
            return bytes
        }

        /// The entries, or none when the value is not ours or damaged.
        static func decode(_ bytes: [UInt8]) -> Entries {
            guard bytes.count >= 5, bytes[0..<5].elementsEqual("FSDP1".utf8) else { return [] }
            var position = 5
            func field() -> String? {
                guard position + 4 <= bytes.count else { return nil }
                let length =
                    Int(bytes[position]) | Int(bytes[position + 1]) << 8 | Int(bytes[position + 2]) << 16 | Int(
                        bytes[position + 3]) << 24
                position += 4
                guard position + length <= bytes.count else { return nil }
                defer { position += length }
                return String(decoding: bytes[position..<position + length], as: UTF8.self)
            }
            var entries: Entries = []
            while position < bytes.count {
                guard let namespace = field(), let name = field(), let xml = field() else { return [] }
                entries.append((PropertyName(namespace: namespace, name: name), xml))
            }
            return entries
        }

        /// The properties of an open file or folder.
        static func read(fd: Int32) -> Entries {
            decode(value { cfs_fget_xattr(fd, attribute, $0, $1) } ?? [])
        }

        /// The properties of `name` in an open folder, without opening it (one system call).
        static func read(name: String, in directory: Int32) -> Entries {
            decode(value { cfs_get_xattr_at(directory, name, attribute, $0, $1) } ?? [])
        }

        /// An attribute's value (`nil` when there is none, or it is larger than `maximumBytes`).
        private static func value(_ get: (UnsafeMutableRawPointer?, Int) -> Int) -> [UInt8]? {
            // Most items have none: one call into a buffer on the stack answers that.
            let small = withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 1) { buffer -> [UInt8]?? in
                let count = get(buffer.baseAddress, buffer.count)
                if count == -Int(ERANGE) { return .none }
                return .some(count > 0 ? Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])) : nil)
            }
            if let small { return small }
            let size = get(nil, 0)
            guard size > 0, size <= maximumBytes else { return nil }
            var buffer = [UInt8](repeating: 0, count: size)
            let count = buffer.withUnsafeMutableBytes { get($0.baseAddress, $0.count) }
            return count > 0 ? Array(buffer[..<count]) : nil
        }

        /// Replaces the properties of an open file or folder.
        static func write(_ entries: Entries, fd: Int32, path: SharePath) throws(FolderError) {
            if entries.isEmpty {
                let result = cfs_fremove_xattr(fd, attribute)
                if result < 0 && result != -ENODATA { throw error(-result, path) }
                return
            }
            let bytes = encode(entries)
            guard bytes.count <= maximumBytes else {
                throw FolderError(
                    .noSpace, "the properties of '\(path)' would take more than \(maximumBytes) bytes",
                    operation: .properties, path: path)
            }
            let result = bytes.withUnsafeBytes { cfs_fset_xattr(fd, attribute, $0.baseAddress, $0.count) }
            try SharedFolder.check(result, path)
        }

        /// Copies the properties (and the observer's identity attribute, so a
        /// copy can be told a duplicate) from one open item to another.
        static func copy(from source: Int32, to destination: Int32) {
            for name in [attribute, "user.fileshare.id"] {
                guard let bytes = value({ cfs_fget_xattr(source, name, $0, $1) }) else { continue }
                _ = bytes.withUnsafeBytes { cfs_fset_xattr(destination, name, $0.baseAddress, $0.count) }
            }
        }

        private static func error(_ errno: Int32, _ path: SharePath) -> FolderError {
            switch errno {
            case ENOTSUP:
                FolderError(
                    .unsupported,
                    "the file system of the shared folder does not keep extended attributes, where properties are stored",
                    operation: .properties, path: path, systemError: Errno(rawValue: errno))
            case ENOSPC, E2BIG, EDQUOT:
                FolderError(
                    .noSpace,
                    "no room for more properties on '\(path)': the file system limits them (ext4: 4 KiB per item)",
                    operation: .properties, path: path, systemError: Errno(rawValue: errno))
            default: SharedFolder.error(errno, path, doing: .properties)
            }
        }
    }
#endif

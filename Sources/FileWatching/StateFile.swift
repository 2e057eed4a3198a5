/// The observer's state on disk: the tree (names, ids, identities, sizes and
/// times), the root it belongs to, and a checksum over everything.
///
/// Written to a temporary file beside the target, flushed, and renamed over
/// it, so a crash at any instant leaves the last good state; read back only
/// when the magic, version, root and checksum all agree, so a damaged file
/// or one from another root is never taken for a previous view.
///
/// Layout (little-endian): magic `FSSTATE2`, root path, root identity, item
/// count, one record per item in pre-order (parent record, kind, flags (being
/// written, birth is a generation), name,
/// id, device, inode, handle fingerprint, birth, size, modification time),
/// FNV-1a 64 checksum of all that precedes it. A `FSSTATE1` file (records
/// without the fingerprint) is read too: its items take the fingerprints of
/// the disk's items that match them otherwise (``Tree/lacksGenerations``).
enum StateFile {
    static let magic = Array("FSSTATE2".utf8)
    /// The layout before the handle fingerprint.
    static let magicWithoutGenerations = Array("FSSTATE1".utf8)

    /// Why a saved state cannot be used.
    struct Unusable: Error, CustomStringConvertible {
        var description: String
    }

    static func encode(_ tree: Tree, root: String, rootIdentity: FileIdentity) -> [UInt8] {
        var out = ByteWriter()
        out.bytes.reserveCapacity(64 + tree.count * 64 + tree.names.count)
        out.append(magic)
        out.append(UInt32(root.utf8.count))
        out.append(Array(root.utf8))
        out.append(rootIdentity.device)
        out.append(rootIdentity.inode)
        out.append(UInt64(bitPattern: rootIdentity.birth))
        // Files not reported yet are not in the consumer's view: left out,
        // they are reported by the next run.
        var unreported = 0
        tree.walk(from: Tree.rootIndex) { if tree.has($0, flag: Tree.Flag.unreported) { unreported += 1 } }
        out.append(UInt64(tree.count + 1 - unreported))
        var record: [Tree.Index: UInt32] = [:]
        record.reserveCapacity(tree.count + 1)
        var next: UInt32 = 0
        tree.walk(from: Tree.rootIndex) { index in
            guard !tree.has(index, flag: Tree.Flag.unreported) else { return }
            record[index] = next
            next += 1
            let node = tree[index]
            out.append(index == Tree.rootIndex ? UInt32.max : record[node.parent]!)
            out.append(node.kindRaw)
            out.append(node.flags & (Tree.Flag.birthIsGeneration | Tree.Flag.writing))
            out.append(UInt16(node.nameLength))
            out.append(tree.names[Int(node.nameOffset)..<Int(node.nameOffset) + Int(node.nameLength)])
            out.append(node.id)
            out.append(tree.devices[Int(node.device)])
            out.append(node.inode)
            out.append(node.generation)
            out.append(UInt64(bitPattern: node.birth))
            out.append(UInt64(bitPattern: node.size))
            out.append(UInt64(bitPattern: node.modified))
        }
        out.append(fnv1a(out.bytes[...]))
        return out.bytes
    }

    /// Rebuilds a tree, checking that it belongs to `root` (same path and identity).
    static func decode(_ bytes: [UInt8], root: String, rootIdentity: FileIdentity) throws(Unusable) -> Tree {
        guard bytes.count >= magic.count + 8,
            Array(bytes[..<magic.count]) == magic || Array(bytes[..<magic.count]) == magicWithoutGenerations
        else {
            throw Unusable(description: "not a fileshare state file, or one of another version")
        }
        let hasGenerations = Array(bytes[..<magic.count]) == magic
        let body = bytes[..<(bytes.count - 8)]
        var tail = ByteReader(bytes[(bytes.count - 8)...])
        guard let checksum = tail.uint64(), checksum == fnv1a(body) else {
            throw Unusable(description: "the state file is damaged (its checksum does not match)")
        }
        var input = ByteReader(body.dropFirst(magic.count))
        guard let rootLength = input.uint32(), let rootBytes = input.bytes(Int(rootLength)),
            let device = input.uint64(), let inode = input.uint64(), let birth = input.uint64(),
            let count = input.uint64()
        else { throw Unusable(description: "the state file is damaged (truncated header)") }
        let savedRoot = String(decoding: rootBytes, as: UTF8.self)
        guard savedRoot == root else {
            throw Unusable(description: "the state file belongs to another folder (\(savedRoot))")
        }
        guard
            device == rootIdentity.device && inode == rootIdentity.inode
                && Int64(bitPattern: birth) == rootIdentity.birth
        else {
            throw Unusable(description: "the state file belongs to another folder that was at \(savedRoot) before")
        }
        var tree: Tree? = nil
        var indices: [Tree.Index] = []
        indices.reserveCapacity(Int(min(count, 1 << 26)))
        for _ in 0..<count {
            guard let parent = input.uint32(), let kindRaw = input.uint8(), let flags = input.uint8(),
                let nameLength = input.uint16(), let name = input.bytes(Int(nameLength)),
                let id = input.uint64(), let device = input.uint64(), let inode = input.uint64(),
                let generation = hasGenerations ? input.uint32() : 0, let birth = input.uint64(),
                let size = input.uint64(), let modified = input.uint64(),
                let kind = ItemKind(rawValue: kindRaw)
            else { throw Unusable(description: "the state file is damaged (truncated record)") }
            let birthValue = Int64(bitPattern: birth)
            let metadata = FileMetadata(
                kind: kind,
                identity: FileIdentity(device: device, inode: inode, birth: birthValue, generation: generation),
                size: Int64(bitPattern: size), modified: Int64(bitPattern: modified),
                created: flags & Tree.Flag.birthIsGeneration != 0 ? 0 : birthValue)
            if parent == UInt32.max {
                guard tree == nil, kind == .directory else {
                    throw Unusable(description: "the state file is damaged (a second root)")
                }
                tree = Tree(root: metadata, id: ItemID(rawValue: id))
                tree!.reserveCapacity(Int(min(count, 1 << 26)))
                indices.append(Tree.rootIndex)
                continue
            }
            guard tree != nil, Int(parent) < indices.count, tree![indices[Int(parent)]].kind == .directory,
                !name.isEmpty, tree!.index(of: ItemID(rawValue: id)) == nil
            else { throw Unusable(description: "the state file is damaged (an impossible record)") }
            let index = tree!.append(
                name: Array(name), in: indices[Int(parent)], metadata: metadata, id: ItemID(rawValue: id))
            if flags & Tree.Flag.writing != 0 && kind == .file { tree!.set(index, flag: Tree.Flag.writing, true) }
            indices.append(index)
        }
        guard var tree, input.isAtEnd else {
            throw Unusable(description: "the state file is damaged (trailing bytes)")
        }
        tree.lacksGenerations = !hasGenerations
        return tree
    }

    /// FNV-1a, 64 bits.
    static func fnv1a(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBufferPointer { buffer in
            for byte in buffer {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01B3
            }
        }
        return hash
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append<C: Collection>(_ data: C) where C.Element == UInt8 {
        bytes.append(contentsOf: data)
    }
}

struct ByteReader {
    private var data: ArraySlice<UInt8>

    init(_ data: ArraySlice<UInt8>) { self.data = data }

    var isAtEnd: Bool { data.isEmpty }

    mutating func bytes(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, data.count >= count else { return nil }
        defer { data = data.dropFirst(count) }
        return data.prefix(count)
    }

    private mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T? {
        guard let raw = bytes(MemoryLayout<T>.size) else { return nil }
        var value: T = 0
        for (shift, byte) in raw.enumerated() { value |= T(byte) << (shift * 8) }
        return value
    }

    mutating func uint8() -> UInt8? { integer(UInt8.self) }
    mutating func uint16() -> UInt16? { integer(UInt16.self) }
    mutating func uint32() -> UInt32? { integer(UInt32.self) }
    mutating func uint64() -> UInt64? { integer(UInt64.self) }
}

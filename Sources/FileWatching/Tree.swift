/// The observer's model of the watched tree, kept compact: one 64-byte record
/// per item, names in one shared byte arena, each folder's children as a
/// sorted array of record indices, and an index from ids to records.
///
/// Hand-written rather than built from dictionaries of strings because the
/// observer holds every item of trees with hundreds of thousands of files, and
/// the memory goal is under 120 bytes per item.
struct Tree {
    typealias Index = Int32

    struct Node {
        var size: Int64
        var modified: Int64
        /// Birth time, or the generation when `flags` has `birthIsGeneration`.
        var birth: Int64
        var inode: UInt64
        var id: UInt64
        var parent: Index
        var nameOffset: UInt32
        var device: UInt32
        /// The identity's handle fingerprint (``FileIdentity/generation``).
        var generation: UInt32
        var nameLength: UInt16
        var kindRaw: UInt8
        var flags: UInt8

        var kind: ItemKind { ItemKind(rawValue: kindRaw) ?? .other }
    }

    /// Bits of `Node.flags`.
    enum Flag {
        static let writing: UInt8 = 1 << 0
        /// The directory and everything under it is polled, not watched.
        static let polled: UInt8 = 1 << 1
        /// Seen during the current rescan.
        static let visited: UInt8 = 1 << 2
        static let birthIsGeneration: UInt8 = 1 << 3
        static let free: UInt8 = 1 << 4
        /// A new file not reported yet: it is reported once complete, as
        /// added or as a duplicate of another item.
        static let unreported: UInt8 = 1 << 5
    }

    static let rootIndex: Index = 0

    private(set) var nodes: ContiguousArray<Node> = []
    private(set) var children: ContiguousArray<[Index]> = []
    private(set) var names: [UInt8] = []
    private var garbageNameBytes = 0
    private var freeList: [Index] = []
    private(set) var devices: [UInt64] = []
    private var ids = IDTable()
    /// The items whose id is not the one their identity gives (a copy's, a
    /// document's kept through saves that replaced its inode, one read from
    /// an identity attribute), by identity: where else an item found at a
    /// new name may be looked up by what it is. The others are found by
    /// the id their identity gives; most items are those.
    private var foreign: [FileIdentity: Index] = [:]
    /// Live items, the root excluded.
    private(set) var count = 0
    /// Read from a state file written before identities had handle
    /// fingerprints: each item's is 0 until the disk's is adopted.
    var lacksGenerations = false

    init(root: FileMetadata, id: ItemID) {
        nodes.append(
            Node(
                size: 0, modified: 0, birth: 0, inode: 0, id: 0, parent: -1, nameOffset: 0, device: 0,
                generation: 0, nameLength: 0, kindRaw: ItemKind.directory.rawValue, flags: 0))
        children.append([])
        set(Tree.rootIndex, metadata: root)
        nodes[0].id = id.rawValue
        addID(Tree.rootIndex)
    }

    /// Reserves room for about `items` items.
    mutating func reserveCapacity(_ items: Int) {
        nodes.reserveCapacity(items + 1)
        children.reserveCapacity(items + 1)
        ids = IDTable(capacity: items + 1)
        for index in nodes.indices where nodes[index].flags & Flag.free == 0 { addID(Index(index)) }
        names.reserveCapacity(items * 16)
    }

    subscript(index: Index) -> Node { nodes[Int(index)] }

    /// The name an item takes while the observer holds it between two
    /// renames (``ObserverCore/InFlight``): it starts with a NUL byte,
    /// which no file name can hold.
    static func inFlightName(_ position: Int) -> [UInt8] {
        [0] + Array(String(position).utf8)
    }

    /// Whether `index` or a folder above it is held between two renames
    /// (``inFlightName(_:)``): not there for queries.
    func isInFlight(_ index: Index) -> Bool {
        var current = index
        while current != Tree.rootIndex && current >= 0 {
            if hasInFlightName(current) { return true }
            current = nodes[Int(current)].parent
        }
        return false
    }

    /// Whether `index` itself has an in-flight name (``inFlightName(_:)``):
    /// enough for the items of a folder reached by path, which is not in
    /// flight, as no path leads through such a name.
    func hasInFlightName(_ index: Index) -> Bool {
        let node = nodes[Int(index)]
        return node.nameLength > 0 && names[Int(node.nameOffset)] == 0
    }

    func isLive(_ index: Index) -> Bool {
        index >= 0 && Int(index) < nodes.count && nodes[Int(index)].flags & Flag.free == 0
    }

    func has(_ index: Index, flag: UInt8) -> Bool { nodes[Int(index)].flags & flag != 0 }

    mutating func set(_ index: Index, flag: UInt8, _ on: Bool) {
        if on { nodes[Int(index)].flags |= flag } else { nodes[Int(index)].flags &= ~flag }
    }

    func id(of index: Index) -> ItemID { ItemID(rawValue: nodes[Int(index)].id) }

    /// The item with this identity whose id its identity does not give.
    func foreignIndex(of identity: FileIdentity) -> Index? { foreign[identity] }

    /// Whether `index`'s id is not the one its identity gives.
    private func hasForeignID(_ index: Index) -> Bool {
        let id = nodes[Int(index)].id
        var identity = identity(of: index)
        if id == ItemID.derived(from: identity, discriminator: 0).rawValue { return false }
        // Derived before identities had handle fingerprints (``lacksGenerations``).
        guard identity.generation != 0 else { return true }
        identity.generation = 0
        return id != ItemID.derived(from: identity, discriminator: 0).rawValue
    }

    private mutating func noteForeign(_ index: Index) {
        guard index != Tree.rootIndex, hasForeignID(index) else { return }
        let identity = identity(of: index)
        if let other = foreign[identity], isLive(other), other != index, self.identity(of: other) == identity {
            return  // a hard link's: the first name found is kept
        }
        foreign[identity] = index
    }

    private mutating func forgetForeign(_ index: Index) {
        guard !foreign.isEmpty, Int(nodes[Int(index)].device) < devices.count else { return }
        let identity = identity(of: index)
        if foreign[identity] == index { foreign[identity] = nil }
    }

    func index(of id: ItemID) -> Index? {
        nodes.withUnsafeBufferPointer { nodes in ids.find(id.rawValue) { nodes[Int($0)].id } }
    }

    /// The number of ids indexed (the root's included).
    var idCount: Int { ids.count }

    private mutating func addID(_ index: Index) {
        let id = nodes[Int(index)].id
        nodes.withUnsafeBufferPointer { nodes in ids.insert(id, record: index) { nodes[Int($0)].id } }
    }

    private mutating func removeID(_ index: Index) {
        let id = nodes[Int(index)].id
        nodes.withUnsafeBufferPointer { nodes in ids.remove(id) { nodes[Int($0)].id } }
    }

    func childIndices(of index: Index) -> [Index] { children[Int(index)] }

    // MARK: Metadata

    func metadata(of index: Index) -> FileMetadata {
        let node = nodes[Int(index)]
        return FileMetadata(
            kind: node.kind,
            identity: FileIdentity(
                device: devices[Int(node.device)], inode: node.inode, birth: node.birth, generation: node.generation),
            size: node.size, modified: node.modified,
            created: node.flags & Flag.birthIsGeneration != 0 ? 0 : node.birth)
    }

    func identity(of index: Index) -> FileIdentity {
        let node = nodes[Int(index)]
        return FileIdentity(
            device: devices[Int(node.device)], inode: node.inode, birth: node.birth, generation: node.generation)
    }

    mutating func set(_ index: Index, metadata: FileMetadata) {
        let i = Int(index)
        // (A new record has no device yet, so no identity.)
        let renewed = Int(nodes[i].device) >= devices.count || identity(of: index) != metadata.identity
        if renewed { forgetForeign(index) }
        defer { if renewed { noteForeign(index) } }
        nodes[i].size = metadata.size
        nodes[i].modified = metadata.modified
        nodes[i].birth = metadata.identity.birth
        nodes[i].inode = metadata.identity.inode
        nodes[i].generation = metadata.identity.generation
        nodes[i].kindRaw = metadata.kind.rawValue
        nodes[i].device = deviceIndex(metadata.identity.device)
        if metadata.created == 0 && metadata.identity.birth != 0 {
            nodes[i].flags |= Flag.birthIsGeneration
        } else {
            nodes[i].flags &= ~Flag.birthIsGeneration
        }
    }

    private mutating func deviceIndex(_ device: UInt64) -> UInt32 {
        if let last = devices.last, last == device { return UInt32(devices.count - 1) }
        if let found = devices.firstIndex(of: device) { return UInt32(found) }
        devices.append(device)
        return UInt32(devices.count - 1)
    }

    // MARK: Names

    func name(of index: Index) -> [UInt8] {
        let node = nodes[Int(index)]
        return Array(names[Int(node.nameOffset)..<Int(node.nameOffset) + Int(node.nameLength)])
    }

    /// Compares a node's name with `name`, bytewise.
    private func compareName(of index: Index, with name: UnsafeBufferPointer<UInt8>) -> Int {
        let node = nodes[Int(index)]
        return names.withUnsafeBufferPointer { arena in
            let start = Int(node.nameOffset)
            let length = Int(node.nameLength)
            let common = min(length, name.count)
            if common > 0 {
                let result = memcmpBytes(arena.baseAddress! + start, name.baseAddress!, common)
                if result != 0 { return result }
            }
            return length - name.count
        }
    }

    private mutating func storeName(_ name: [UInt8]) -> UInt32 {
        precondition(name.count <= Int(UInt16.max), "a file name longer than 65535 bytes")
        if garbageNameBytes > 1 << 20 && garbageNameBytes > names.count / 2 { compactNames() }
        let offset = UInt32(names.count)
        names.append(contentsOf: name)
        return offset
    }

    private mutating func compactNames() {
        var fresh: [UInt8] = []
        fresh.reserveCapacity(names.count - garbageNameBytes + 1024)
        for i in nodes.indices where nodes[i].flags & Flag.free == 0 {
            let offset = Int(nodes[i].nameOffset)
            let length = Int(nodes[i].nameLength)
            nodes[i].nameOffset = UInt32(fresh.count)
            fresh.append(contentsOf: names[offset..<offset + length])
        }
        names = fresh
        garbageNameBytes = 0
    }

    // MARK: Lookup

    /// The position of `name` among the children of `parent`: found, or where it would go.
    private func search(_ parent: Index, _ name: [UInt8]) -> (found: Bool, position: Int) {
        let list = children[Int(parent)]
        return name.withUnsafeBufferPointer { key in
            var low = 0
            var high = list.count
            while low < high {
                let mid = (low + high) / 2
                let order = compareName(of: list[mid], with: key)
                if order == 0 { return (true, mid) }
                if order < 0 { low = mid + 1 } else { high = mid }
            }
            return (false, low)
        }
    }

    func child(of parent: Index, named name: [UInt8]) -> Index? {
        let (found, position) = search(parent, name)
        return found ? children[Int(parent)][position] : nil
    }

    func index(at path: ItemPath) -> Index? {
        var current = Tree.rootIndex
        for component in path.components {
            guard nodes[Int(current)].kind == .directory, let next = child(of: current, named: component) else {
                return nil
            }
            current = next
        }
        return current
    }

    func path(of index: Index) -> ItemPath {
        var chain: [Index] = []
        var current = index
        var length = 0
        while current != Tree.rootIndex && current >= 0 {
            chain.append(current)
            length += Int(nodes[Int(current)].nameLength) + 1
            current = nodes[Int(current)].parent
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for node in chain.reversed() {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "/")) }
            let n = nodes[Int(node)]
            bytes.append(contentsOf: names[Int(n.nameOffset)..<Int(n.nameOffset) + Int(n.nameLength)])
        }
        return ItemPath(bytes: bytes)
    }

    /// Whether `index` is `ancestor` or lies under it.
    func isSame(_ index: Index, asOrUnder ancestor: Index) -> Bool {
        var current = index
        while current >= 0 {
            if current == ancestor { return true }
            current = nodes[Int(current)].parent
        }
        return false
    }

    /// Calls `body` for `start` and everything under it, parents before children.
    func walk(from start: Index, _ body: (Index) -> Void) {
        var stack: [Index] = [start]
        while let index = stack.popLast() {
            body(index)
            let list = children[Int(index)]
            if !list.isEmpty { stack.append(contentsOf: list.reversed()) }
        }
    }

    /// The public view of one item.
    func item(at index: Index) -> Item {
        let node = self[index]
        let metadata = metadata(of: index)
        return Item(
            path: path(of: index), id: id(of: index), kind: node.kind, size: node.size,
            modificationTime: metadata.modified, creationTime: metadata.created,
            isWriting: node.flags & Flag.writing != 0,
            childCount: node.kind == .directory ? children[Int(index)].count : nil, inode: node.inode)
    }

    // MARK: Changes

    /// Adds an item under `parent`, which must not already have a child of that name.
    @discardableResult
    mutating func insert(name: [UInt8], in parent: Index, metadata: FileMetadata, id: ItemID) -> Index {
        let (found, position) = search(parent, name)
        precondition(!found, "inserting a name that is already there")
        let node = Node(
            size: 0, modified: 0, birth: 0, inode: 0, id: id.rawValue, parent: parent,
            nameOffset: storeName(name), device: 0, generation: 0, nameLength: UInt16(name.count),
            kindRaw: metadata.kind.rawValue, flags: 0)
        let index: Index
        if let reused = freeList.popLast() {
            index = reused
            nodes[Int(index)] = node
        } else {
            index = Index(nodes.count)
            nodes.append(node)
            children.append([])
        }
        set(index, metadata: metadata)
        children[Int(parent)].insert(index, at: position)
        addID(index)
        count += 1
        return index
    }

    /// Appends a child whose name is known to sort after every existing one
    /// (the initial scan sorts each listing first).
    @discardableResult
    mutating func append(name: [UInt8], in parent: Index, metadata: FileMetadata, id: ItemID) -> Index {
        if let last = children[Int(parent)].last {
            let order = name.withUnsafeBufferPointer { compareName(of: last, with: $0) }
            if order >= 0 { return insert(name: name, in: parent, metadata: metadata, id: id) }
        }
        let index = Index(nodes.count)
        nodes.append(
            Node(
                size: 0, modified: 0, birth: 0, inode: 0, id: id.rawValue, parent: parent,
                nameOffset: storeName(name), device: 0, generation: 0, nameLength: UInt16(name.count),
                kindRaw: metadata.kind.rawValue, flags: 0))
        children.append([])
        set(index, metadata: metadata)
        children[Int(parent)].append(index)
        addID(index)
        count += 1
        return index
    }

    /// Moves an item to `name` under `parent`; the destination must be free.
    mutating func move(_ index: Index, to parent: Index, name: [UInt8]) {
        detach(index)
        let (found, position) = search(parent, name)
        precondition(!found, "moving onto a name that is taken")
        let i = Int(index)
        garbageNameBytes += Int(nodes[i].nameLength)
        nodes[i].nameOffset = storeName(name)
        nodes[i].nameLength = UInt16(name.count)
        nodes[i].parent = parent
        children[Int(parent)].insert(index, at: position)
    }

    private mutating func detach(_ index: Index) {
        let parent = nodes[Int(index)].parent
        guard parent >= 0 else { return }
        let (found, position) = search(parent, name(of: index))
        if found && children[Int(parent)][position] == index {
            children[Int(parent)].remove(at: position)
        } else if let position = children[Int(parent)].firstIndex(of: index) {
            children[Int(parent)].remove(at: position)
        }
    }

    /// Changes the id of an item.
    mutating func setID(_ index: Index, to id: ItemID) {
        removeID(index)
        forgetForeign(index)
        nodes[Int(index)].id = id.rawValue
        addID(index)
        noteForeign(index)
    }

    /// Removes an item and everything under it; `body` sees each removed
    /// index (children before parents) while its record is still readable.
    mutating func remove(_ index: Index, _ body: (Index) -> Void = { _ in }) {
        precondition(index != Tree.rootIndex, "the root cannot be removed")
        detach(index)
        var order: [Index] = []
        walk(from: index) { order.append($0) }
        for node in order.reversed() {
            body(node)
            let i = Int(node)
            if self.index(of: ItemID(rawValue: nodes[i].id)) == node { removeID(node) }
            forgetForeign(node)
            garbageNameBytes += Int(nodes[i].nameLength)
            nodes[i].flags = Flag.free
            nodes[i].parent = -1
            nodes[i].nameLength = 0
            children[i] = []
            freeList.append(node)
            count -= 1
        }
    }
}

import FileshareTestSupport
import Testing

@testable import FileWatching

@Suite("Tree storage")
struct TreeTests {
    @Test("the id table agrees with a dictionary through random inserts and removals", arguments: 0..<20)
    func idTable(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var ids: [UInt64] = []  // record -> id
        var table = IDTable()
        var reference: [UInt64: Int32] = [:]
        for _ in 0..<5000 {
            if reference.isEmpty || Int.random(in: 0..<3, using: &random) > 0 {
                // Small ids collide in the low bits, to exercise probing.
                let id = Bool.random(using: &random) ? UInt64.random(in: 0..<64, using: &random) << 8 : random.next()
                guard reference[id] == nil else { continue }
                let record = Int32(ids.count)
                ids.append(id)
                table.insert(id, record: record) { ids[Int($0)] }
                reference[id] = record
            } else {
                let id = reference.keys.randomElement(using: &random)!
                table.remove(id) { ids[Int($0)] }
                reference[id] = nil
            }
            #expect(table.count == reference.count)
        }
        for (id, record) in reference { #expect(table.find(id) { ids[Int($0)] } == record) }
        for id in ids where reference[id] == nil { #expect(table.find(id) { ids[Int($0)] } == nil) }
    }

    @Test("children stay sorted by name bytes; moves and removals keep the tree whole")
    func structure() {
        let root = FileMetadata(
            kind: .directory, identity: FileIdentity(device: 1, inode: 1, birth: 1), size: 0, modified: 0, created: 1)
        var tree = Tree(root: root, id: ItemID(rawValue: 1))
        func metadata(_ inode: UInt64, _ kind: ItemKind = .file) -> FileMetadata {
            FileMetadata(
                kind: kind, identity: FileIdentity(device: 1, inode: inode, birth: 1), size: 0, modified: 0, created: 1)
        }
        let folder = tree.insert(
            name: Array("b".utf8), in: Tree.rootIndex, metadata: metadata(2, .directory), id: ItemID(rawValue: 2))
        for (i, name) in ["z", "a", "é", "A", "m"].enumerated() {
            tree.insert(
                name: Array(name.utf8), in: folder, metadata: metadata(UInt64(10 + i)),
                id: ItemID(rawValue: UInt64(10 + i)))
        }
        #expect(
            tree.childIndices(of: folder).map { String(decoding: tree.name(of: $0), as: UTF8.self) } == [
                "A", "a", "m", "z", "é",
            ])
        let m = tree.index(at: "b/m")!
        tree.move(m, to: Tree.rootIndex, name: Array("moved".utf8))
        #expect(tree.path(of: m) == "moved")
        #expect(tree.index(of: ItemID(rawValue: 14)) == m)
        tree.remove(folder)
        #expect(tree.count == 1)
        #expect(tree.index(of: ItemID(rawValue: 10)) == nil)
        #expect(tree.index(at: "b/a") == nil)
        #expect(tree.idCount == 2)
    }
}

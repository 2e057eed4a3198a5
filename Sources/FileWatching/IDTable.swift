/// The index from ids to tree records: open addressing with linear probing,
/// storing only the 4-byte record index (the id itself is read from the
/// record). A `Dictionary<UInt64, Int32>` costs about 28 bytes per item at
/// its load factor; this costs under 6, and the tree holds every item.
struct IDTable {
    private var slots: [Int32]
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 16) {
        var size = 16
        while size * 4 < capacity * 5 { size *= 2 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
    }

    /// The record holding `id`, given how to read a record's id.
    func find(_ id: UInt64, idOf: (Int32) -> UInt64) -> Int32? {
        var position = Int(truncatingIfNeeded: id) & mask
        while true {
            let slot = slots[position]
            if slot < 0 { return nil }
            if idOf(slot) == id { return slot }
            position = (position + 1) & mask
        }
    }

    /// Adds a record whose id is not in the table yet.
    mutating func insert(_ id: UInt64, record: Int32, idOf: (Int32) -> UInt64) {
        if (count + 1) * 5 > slots.count * 4 { grow(idOf: idOf) }
        var position = Int(truncatingIfNeeded: id) & mask
        while slots[position] >= 0 { position = (position + 1) & mask }
        slots[position] = record
        count += 1
    }

    /// Removes the record holding `id`, if there is one.
    mutating func remove(_ id: UInt64, idOf: (Int32) -> UInt64) {
        var position = Int(truncatingIfNeeded: id) & mask
        while true {
            let slot = slots[position]
            if slot < 0 { return }
            if idOf(slot) == id { break }
            position = (position + 1) & mask
        }
        // Backward-shift deletion: no tombstones, probe chains stay short.
        var hole = position
        var next = (hole + 1) & mask
        while slots[next] >= 0 {
            let home = Int(truncatingIfNeeded: idOf(slots[next])) & mask
            // Move the entry into the hole if its home is not between the hole and it.
            let distanceToHole = (next - home) & mask
            let distanceToNext = (next - hole) & mask
            if distanceToHole >= distanceToNext {
                slots[hole] = slots[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slots[hole] = -1
        count -= 1
    }

    private mutating func grow(idOf: (Int32) -> UInt64) {
        let old = slots
        slots = [Int32](repeating: -1, count: old.count * 2)
        mask = slots.count - 1
        count = 0
        for record in old where record >= 0 {
            var position = Int(truncatingIfNeeded: idOf(record)) & mask
            while slots[position] >= 0 { position = (position + 1) & mask }
            slots[position] = record
            count += 1
        }
    }
}

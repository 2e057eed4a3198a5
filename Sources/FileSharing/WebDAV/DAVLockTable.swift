/// A WebDAV write lock (RFC 4918 section 6).
package struct DAVLock: Sendable, Equatable {
    /// `opaquelocktoken:` and a UUID.
    package var token: String
    /// The locked path.
    package var root: SharePath
    /// Depth infinity (the folder and everything in it) or 0.
    package var isDeep: Bool
    package var isExclusive: Bool
    /// The `DAV:owner` element as the client sent it, serialized, if any.
    package var owner: String?
    /// Who took it (the authenticated user).
    package var user: String?
    /// The longest `owner` kept: a lock is held in memory and in the
    /// journal, so 1,000 locks of a user take 4 MiB at most for their owners.
    static let maximumOwnerBytes = 4096
    /// Seconds granted.
    package var timeout: Int64
    /// When it ends, on the table's clock (nanoseconds).
    package var expires: Int64

    /// Creates a lock.
    package init(
        token: String, root: SharePath, isDeep: Bool, isExclusive: Bool, owner: String?, user: String?,
        timeout: Int64, expires: Int64
    ) {
        self.token = token
        self.root = root
        self.isDeep = isDeep
        self.isExclusive = isExclusive
        self.owner = owner
        self.user = user
        self.timeout = timeout
        self.expires = expires
    }

    /// Whether the lock applies to `path`: its root, or under it when deep.
    package func covers(_ path: SharePath) -> Bool {
        path == root || (isDeep && path.isSame(asOrUnder: root))
    }
}

/// The locks of a share: a pure state machine over an injected clock (the
/// caller passes `now`), so timeouts are tested without waiting. The server
/// keeps it behind a lock.
package struct DAVLockTable: Sendable {
    /// At most this many locks at once by default (a client looping on LOCK gets 503).
    package static let defaultCapacity = 10_000
    /// At most this many locks held by one user by default: Finder and
    /// Windows lock a file before they save it, so one user holding every
    /// lock of the table would stop everyone's saves.
    package static let defaultCapacityPerUser = 1_000
    /// ``defaultCapacityPerUser`` as a person reads it ("1,000").
    static var perUserLimitText: String {
        let digits = Array(String(defaultCapacityPerUser))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }
    /// The longest lock granted, and the one granted when none is asked.
    static let maximumTimeout: Int64 = 24 * 3600
    static let defaultTimeout: Int64 = 3600

    package private(set) var locks: [String: DAVLock] = [:]
    /// At most this many locks at once.
    let capacity: Int
    /// At most this many locks taken by one user (those taken without
    /// credentials count as one user's).
    let capacityPerUser: Int
    /// How many locks each user holds, kept with `locks`.
    private var counts: [String?: Int] = [:]
    /// The tokens of the locks added, changed or removed since the last
    /// ``takeChanges()``: what a store must write, without comparing tables.
    private var changed: Set<String> = []

    init(capacity: Int = DAVLockTable.defaultCapacity, capacityPerUser: Int = DAVLockTable.defaultCapacityPerUser) {
        self.capacity = capacity
        self.capacityPerUser = capacityPerUser
    }

    /// A table holding `locks` (as a store read them), whatever their number.
    package init(
        capacity: Int = DAVLockTable.defaultCapacity, capacityPerUser: Int = DAVLockTable.defaultCapacityPerUser,
        locks: [DAVLock]
    ) {
        self.init(capacity: capacity, capacityPerUser: capacityPerUser)
        for lock in locks { put(lock) }
        changed = []
    }

    enum LockResult: Equatable {
        case locked(DAVLock)
        case conflict(DAVLock)
        /// The table holds ``capacity`` locks.
        case full
        /// The user holds ``capacityPerUser`` locks.
        case fullForUser
    }

    /// How many locks `user` holds (ended ones too, until they are dropped).
    func count(of user: String?) -> Int { counts[user] ?? 0 }

    /// The tokens of the locks changed since the last call (each either in
    /// ``locks`` now, or removed), and forgets them.
    mutating func takeChanges() -> Set<String> {
        defer { changed = [] }
        return changed
    }

    /// Adds or replaces a lock, keeping the counts.
    private mutating func put(_ lock: DAVLock) {
        if let old = locks.updateValue(lock, forKey: lock.token) { counts[old.user, default: 1] -= 1 }
        counts[lock.user, default: 0] += 1
        changed.insert(lock.token)
    }

    /// Removes a lock, keeping the counts.
    private mutating func remove(_ token: String) {
        guard let old = locks.removeValue(forKey: token) else { return }
        let left = (counts[old.user] ?? 1) - 1
        counts[old.user] = left > 0 ? left : nil
        changed.insert(token)
    }

    /// Drops the locks whose time is over; returns them.
    mutating func expire(now: Int64) -> [DAVLock] {
        let ended = locks.values.filter { $0.expires <= now }
        for lock in ended { remove(lock.token) }
        return ended
    }

    /// The locks that apply to `path` (on it, or deep on a folder above it).
    func locks(covering path: SharePath, now: Int64) -> [DAVLock] {
        locks.values.filter { $0.expires > now && $0.covers(path) }.sorted { $0.token < $1.token }
    }

    /// The locks that apply to `path` or to anything under it.
    func locks(coveringOrUnder path: SharePath, now: Int64) -> [DAVLock] {
        locks.values.filter { $0.expires > now && ($0.covers(path) || $0.root.isSame(asOrUnder: path)) }
            .sorted { $0.token < $1.token }
    }

    func lock(token: String, now: Int64) -> DAVLock? {
        guard let lock = locks[token], lock.expires > now else { return nil }
        return lock
    }

    /// Adds a lock unless one that applies to the same resources conflicts:
    /// an exclusive lock conflicts with any other, a shared one with exclusive
    /// ones; or unless the table, or the lock's user, holds as many as allowed.
    mutating func add(_ lock: DAVLock, now: Int64) -> LockResult {
        let overlapping =
            lock.isDeep ? locks(coveringOrUnder: lock.root, now: now) : locks(covering: lock.root, now: now)
        if let conflict = overlapping.first(where: { lock.isExclusive || $0.isExclusive }) {
            return .conflict(conflict)
        }
        if count(of: lock.user) >= capacityPerUser || locks.count >= capacity {
            // Ended locks still count until the next round of expiry: dropped now, they make room.
            _ = expire(now: now)
        }
        guard count(of: lock.user) < capacityPerUser else { return .fullForUser }
        guard locks.count < capacity else { return .full }
        put(lock)
        return .locked(lock)
    }

    /// Extends a lock that applies to `path`; `nil` when there is none with that token.
    mutating func refresh(token: String, path: SharePath, timeout: Int64, now: Int64) -> DAVLock? {
        guard var lock = self.lock(token: token, now: now), lock.covers(path) else { return nil }
        lock.timeout = timeout
        lock.expires = now + timeout * 1_000_000_000
        put(lock)
        return lock
    }

    /// Removes a lock that applies to `path`.
    mutating func unlock(token: String, path: SharePath, now: Int64) -> DAVLock? {
        guard let lock = self.lock(token: token, now: now), lock.covers(path) else { return nil }
        remove(token)
        return lock
    }

    /// Removes the locks on `path` and under it (the resource was deleted or moved away).
    mutating func removeAll(under path: SharePath) {
        for lock in locks.values where lock.root.isSame(asOrUnder: path) { remove(lock.token) }
    }

    /// The locks that stop a change of `paths` by a request that submitted
    /// `tokens`: every lock applying to a changed path (or, for `deep` paths,
    /// under it) must have its token submitted. `members` are folders whose
    /// membership changes (an item is added to or removed from them): a
    /// depth-0 lock on such a folder protects its list of members too.
    func missingTokens(
        changing paths: [SharePath], deep: [SharePath], members: [SharePath], tokens: Set<String>, now: Int64
    ) -> DAVLock? {
        var needed: [DAVLock] = []
        for path in paths { needed += locks(covering: path, now: now) }
        for path in deep { needed += locks(coveringOrUnder: path, now: now) }
        for folder in members { needed += locks(covering: folder, now: now) }
        return needed.first { !tokens.contains($0.token) }
    }
}

/// The `If` request header (RFC 4918 section 10.4): lists of conditions on
/// state tokens and entity tags, untagged (about the request's resource) or
/// tagged with a resource's URL.
struct DAVIfHeader: Sendable, Equatable {
    struct Condition: Sendable, Equatable {
        enum Kind: Sendable, Equatable {
            case token(String)
            case entityTag(String)
        }
        var negated: Bool
        var kind: Kind
    }

    struct List: Sendable, Equatable {
        /// The tagged resource's URL as written, or `nil` for the request's resource.
        var resource: String?
        var conditions: [Condition]
    }

    var lists: [List]

    /// The state tokens the request submits (those not under `Not`).
    var submittedTokens: Set<String> {
        var tokens = Set<String>()
        for list in lists {
            for condition in list.conditions where !condition.negated {
                if case .token(let token) = condition.kind { tokens.insert(token) }
            }
        }
        return tokens
    }

    /// Parses the header; throws 400 when it is malformed.
    init(parsing text: String) throws(ShareError) {
        let bytes = Array(text.utf8)
        var position = 0
        var lists: [List] = []
        var tag: String? = nil
        var sawTagged = false
        var sawUntagged = false
        func bad(_ what: String) -> ShareError { ShareError(.badRequest, "the If header is malformed: \(what)") }
        func skipSpace() {
            while position < bytes.count && (bytes[position] == 0x20 || bytes[position] == 0x09) { position += 1 }
        }
        func read(until end: UInt8) throws(ShareError) -> String {
            let start = position
            while position < bytes.count && bytes[position] != end { position += 1 }
            guard position < bytes.count else { throw bad("an unterminated \(Character(UnicodeScalar(end)))") }
            let value = String(decoding: bytes[start..<position], as: UTF8.self)
            position += 1
            return value
        }
        while true {
            skipSpace()
            guard position < bytes.count else { break }
            switch bytes[position] {
            case UInt8(ascii: "<"):
                position += 1
                tag = try read(until: UInt8(ascii: ">"))
                sawTagged = true
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "(") else {
                    throw bad("a resource tag without a list")
                }
            case UInt8(ascii: "("):
                position += 1
                if tag == nil { sawUntagged = true }
                var conditions: [Condition] = []
                while true {
                    skipSpace()
                    guard position < bytes.count else { throw bad("an unterminated list") }
                    if bytes[position] == UInt8(ascii: ")") {
                        position += 1
                        break
                    }
                    var negated = false
                    if bytes.count - position >= 3,
                        String(decoding: bytes[position..<position + 3], as: UTF8.self).lowercased() == "not"
                    {
                        negated = true
                        position += 3
                        skipSpace()
                    }
                    guard position < bytes.count else { throw bad("an unterminated list") }
                    if bytes[position] == UInt8(ascii: "<") {
                        position += 1
                        conditions.append(Condition(negated: negated, kind: .token(try read(until: UInt8(ascii: ">")))))
                    } else if bytes[position] == UInt8(ascii: "[") {
                        position += 1
                        conditions.append(
                            Condition(negated: negated, kind: .entityTag(try read(until: UInt8(ascii: "]")))))
                    } else {
                        throw bad("a condition must be a <state token> or an [entity tag]")
                    }
                }
                guard !conditions.isEmpty else { throw bad("an empty list") }
                lists.append(List(resource: tag, conditions: conditions))
            default:
                throw bad("unexpected '\(Character(UnicodeScalar(bytes[position])))'")
            }
        }
        guard !lists.isEmpty else { throw bad("no condition list") }
        guard !(sawTagged && sawUntagged) else { throw bad("tagged and untagged lists mixed") }
        self.lists = lists
    }
}

/// A WebDAV write lock (RFC 4918 section 6).
struct DAVLock: Sendable, Equatable {
    /// `opaquelocktoken:` and a UUID.
    var token: String
    /// The locked path.
    var root: SharePath
    /// Depth infinity (the folder and everything in it) or 0.
    var isDeep: Bool
    var isExclusive: Bool
    /// The `DAV:owner` element as the client sent it, serialized, if any.
    var owner: String?
    /// Who took it (the authenticated user).
    var user: String?
    /// Seconds granted.
    var timeout: Int64
    /// When it ends, on the table's clock (nanoseconds).
    var expires: Int64

    /// Whether the lock applies to `path`: its root, or under it when deep.
    func covers(_ path: SharePath) -> Bool {
        path == root || (isDeep && path.isSame(asOrUnder: root))
    }
}

/// The locks of a share: a pure state machine over an injected clock (the
/// caller passes `now`), so timeouts are tested without waiting. The server
/// keeps it behind a lock.
struct DAVLockTable: Sendable {
    /// At most this many locks at once by default (a client looping on LOCK gets 503).
    static let defaultCapacity = 10_000
    /// The longest lock granted, and the one granted when none is asked.
    static let maximumTimeout: Int64 = 24 * 3600
    static let defaultTimeout: Int64 = 3600

    private(set) var locks: [String: DAVLock] = [:]
    /// At most this many locks at once.
    let capacity: Int

    init(capacity: Int = DAVLockTable.defaultCapacity) { self.capacity = capacity }

    /// A table holding `locks` (as a store read them), whatever their number.
    init(capacity: Int = DAVLockTable.defaultCapacity, locks: [DAVLock]) {
        self.capacity = capacity
        for lock in locks { self.locks[lock.token] = lock }
    }

    enum LockResult: Equatable {
        case locked(DAVLock)
        case conflict(DAVLock)
        case full
    }

    /// Drops the locks whose time is over; returns them.
    mutating func expire(now: Int64) -> [DAVLock] {
        let ended = locks.values.filter { $0.expires <= now }
        for lock in ended { locks[lock.token] = nil }
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
    /// an exclusive lock conflicts with any other, a shared one with exclusive ones.
    mutating func add(_ lock: DAVLock, now: Int64) -> LockResult {
        let overlapping =
            lock.isDeep ? locks(coveringOrUnder: lock.root, now: now) : locks(covering: lock.root, now: now)
        if let conflict = overlapping.first(where: { lock.isExclusive || $0.isExclusive }) {
            return .conflict(conflict)
        }
        guard locks.count < capacity else { return .full }
        locks[lock.token] = lock
        return .locked(lock)
    }

    /// Extends a lock that applies to `path`; `nil` when there is none with that token.
    mutating func refresh(token: String, path: SharePath, timeout: Int64, now: Int64) -> DAVLock? {
        guard var lock = self.lock(token: token, now: now), lock.covers(path) else { return nil }
        lock.timeout = timeout
        lock.expires = now + timeout * 1_000_000_000
        locks[token] = lock
        return lock
    }

    /// Removes a lock that applies to `path`.
    mutating func unlock(token: String, path: SharePath, now: Int64) -> DAVLock? {
        guard let lock = self.lock(token: token, now: now), lock.covers(path) else { return nil }
        locks[token] = nil
        return lock
    }

    /// Removes the locks on `path` and under it (the resource was deleted or moved away).
    mutating func removeAll(under path: SharePath) {
        for lock in locks.values where lock.root.isSame(asOrUnder: path) { locks[lock.token] = nil }
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

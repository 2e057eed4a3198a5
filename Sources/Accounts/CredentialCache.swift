import Crypto
import Foundation
import Synchronization

/// Remembers, for a short time, which name and password were verified, so
/// that bcrypt (slow on purpose: hundreds of milliseconds) runs once per
/// sign-in and not once per request: scripts and WebDAV clients send their
/// Basic credentials with every request.
///
/// An entry is keyed by HMAC-SHA-256 of the name and password under a key
/// made at random when the process starts: the cache holds no password,
/// and a key seen in memory cannot be tested against guesses offline
/// without the process's key. Only successes are kept (a wrong password
/// always costs a bcrypt, and the sign-in throttle counts it).
///
/// The cache is bounded (``capacity`` entries, the oldest dropped first),
/// an entry lasts ``lifetime`` at most, and ``removeAll()`` empties it:
/// the server calls it whenever the users file changes, so a changed
/// password or a removed user takes effect at the next request.
public final class CredentialCache: Sendable {
    /// The most entries kept.
    public let capacity: Int
    /// How long a verified password is trusted without running bcrypt again.
    public let lifetime: Duration
    /// HMAC-SHA-256 under the process's key, keyed once: each digest starts
    /// from a copy (keying per call was a third of a cached check).
    private let keyed: HMAC<SHA256>
    private let state: Mutex<State>
    private let emptied = Atomic<Int>(0)

    struct State {
        var entries: [Digest: Entry] = [:]
        /// Keys in the order they were added, for dropping the oldest.
        var order: [Digest] = []
    }

    /// An entry's key: the 32 bytes of the HMAC, held as four words (a
    /// `Data` of them cost an allocation and a slower hash on every request).
    struct Digest: Hashable {
        var words: (UInt64, UInt64, UInt64, UInt64)

        static func == (a: Digest, b: Digest) -> Bool { a.words == b.words }

        func hash(into hasher: inout Hasher) {
            hasher.combine(words.0)
            hasher.combine(words.1)
            hasher.combine(words.2)
            hasher.combine(words.3)
        }
    }

    struct Entry {
        var user: String
        var expires: ContinuousClock.Instant
    }

    /// Creates an empty cache with a fresh random key.
    public init(capacity: Int = 1024, lifetime: Duration = .seconds(300)) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime
        keyed = HMAC<SHA256>(key: SymmetricKey(size: .bits256))
        state = Mutex(State())
    }

    /// Whether `name` and `password` were verified within the lifetime, at `now`.
    public func contains(name: String, password: String, now: ContinuousClock.Instant) -> Bool {
        expiry(name: name, password: password, now: now) != nil
    }

    /// Until when `name` and `password` are vouched for, when they were
    /// verified within the lifetime; `nil` otherwise (at `now`).
    public func expiry(name: String, password: String, now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let digest = self.digest(name: name, password: password)
        return state.withLock { state in
            guard let entry = state.entries[digest] else { return nil }
            guard entry.expires > now, entry.user == name else {
                state.entries.removeValue(forKey: digest)
                state.order.removeAll { $0 == digest }
                return nil
            }
            return entry.expires
        }
    }

    /// How many times the cache was emptied (``removeAll()``): what was
    /// found in it before is vouched for only while this is unchanged.
    public var generation: Int { emptied.load(ordering: .acquiring) }

    /// Remembers that `password` is `name`'s, from `now` for ``lifetime``.
    public func insert(name: String, password: String, now: ContinuousClock.Instant) {
        let digest = self.digest(name: name, password: password)
        let entry = Entry(user: name, expires: now + lifetime)
        state.withLock { state in
            if state.entries.updateValue(entry, forKey: digest) == nil { state.order.append(digest) }
            while state.order.count > capacity {
                state.entries.removeValue(forKey: state.order.removeFirst())
            }
        }
    }

    /// Forgets everything (the users file changed).
    public func removeAll() {
        state.withLock { $0 = State() }
        emptied.add(1, ordering: .releasing)
    }

    /// The number of entries kept now.
    public var count: Int { state.withLock { $0.entries.count } }

    private func digest(name: String, password: String) -> Digest {
        // The name's length first, so "ab"+"c" and "a"+"bc" never share a
        // key; all of it given to the HMAC in one piece (each `update` goes
        // through `DataProtocol`'s regions: three of them were half the cost).
        var name = name
        var password = password
        return name.withUTF8 { name in
            password.withUTF8 { password in
                withUnsafeTemporaryAllocation(byteCount: 4 + name.count + password.count, alignment: 8) { message in
                    message.storeBytes(of: UInt32(name.count).bigEndian, toByteOffset: 0, as: UInt32.self)
                    UnsafeMutableRawBufferPointer(rebasing: message[4..<4 + name.count]).copyMemory(
                        from: UnsafeRawBufferPointer(name))
                    UnsafeMutableRawBufferPointer(rebasing: message[(4 + name.count)...]).copyMemory(
                        from: UnsafeRawBufferPointer(password))
                    var mac = keyed
                    mac.update(data: UnsafeRawBufferPointer(message))
                    return mac.finalize().withUnsafeBytes { bytes in
                        Digest(
                            words: (
                                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                                bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                                bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                            ))
                    }
                }
            }
        }
    }
}

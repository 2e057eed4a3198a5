import Synchronization

/// What the server's clients are doing to an item right now — locks taken
/// and released, uploads under way — for code in the same process that
/// presents the item, such as a `Documents` workspace: a document is not
/// editable while another client holds a WebDAV lock on it, and shows
/// progress while a new version of it arrives.
///
/// The server's changes (a file added, replaced, moved) reach such code
/// through its observer; this is what is under way before a change exists.
public struct FolderActivity: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// A WebDAV client took a lock at ``FolderActivity/path``; `coversBelow`
        /// for a depth-infinity lock, which covers everything under a folder.
        case locked(coversBelow: Bool)
        /// The lock at ``FolderActivity/path`` was released or expired.
        case unlocked(coversBelow: Bool)
        /// An upload to ``FolderActivity/path`` has `offset` of `length` bytes
        /// (`length` when the client announced it).
        case receiving(offset: Int64, length: Int64?)
        /// The upload to ``FolderActivity/path`` ended: put in place (a change
        /// follows), refused, or cut off.
        case received
    }

    /// The item's path relative to the shared folder ("" for the folder itself).
    public var path: String
    public var kind: Kind

    public init(path: String, kind: Kind) {
        self.path = path
        self.kind = kind
    }
}

/// Hands each activity to the handlers registered with
/// ``ShareServer/activities(buffer:)``, on the thread that reports it: handlers
/// must be quick and must not block (hand the work to a task).
final class ActivityFeed: Sendable {
    private let handlers = Mutex<(next: Int, all: [Int: @Sendable (FolderActivity) -> Void])>((0, [:]))
    /// Read without the lock on every upload chunk: most servers have no handler.
    private let active = Atomic<Bool>(false)

    /// Adds `handler`; returns its key for ``remove(_:)``.
    @discardableResult
    func add(_ handler: @escaping @Sendable (FolderActivity) -> Void) -> Int {
        handlers.withLock { handlers in
            handlers.next += 1
            handlers.all[handlers.next] = handler
            active.store(true, ordering: .releasing)
            return handlers.next
        }
    }

    func remove(_ key: Int) {
        handlers.withLock { handlers in
            handlers.all[key] = nil
            active.store(!handlers.all.isEmpty, ordering: .releasing)
        }
    }

    var isActive: Bool { active.load(ordering: .acquiring) }

    func publish(_ activity: FolderActivity) {
        guard isActive else { return }
        for handler in handlers.withLock({ Array($0.all.sorted { $0.key < $1.key }.map(\.value)) }) {
            handler(activity)
        }
    }

    /// What changed between two lock tables, as activities: the locks gone, then the new ones.
    static func lockChanges(from before: [String: DAVLock], to after: [String: DAVLock]) -> [FolderActivity] {
        let gone = before.filter { after[$0.key] == nil }.values.map {
            FolderActivity(path: $0.root.description, kind: .unlocked(coversBelow: $0.isDeep))
        }
        let new = after.filter { before[$0.key] == nil }.values.map {
            FolderActivity(path: $0.root.description, kind: .locked(coversBelow: $0.isDeep))
        }
        return gone.sorted { $0.path < $1.path } + new.sorted { $0.path < $1.path }
    }
}
